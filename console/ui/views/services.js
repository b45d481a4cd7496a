// services.js: every process the control plane knows (discovery, or the
// configured lists), with its roles, version and uptime, a historical's
// current and maximum size, a middle manager's running tasks, and the
// leader marked.
import { h, fmt } from '../lib/dom.js';
import { get } from '../lib/api.js';
import { dataTable } from '../lib/table.js';
import { errorBox, poll } from '../lib/ui.js';

const rolesOf = (s) => String(s.role || s.type || '').split(',').filter(Boolean);
const hostOf = (url) => String(url || '').replace(/^https?:\/\//, '').replace(/\/$/, '');

function sizeCell(s) {
  if (!rolesOf(s).includes('historical')) return h('span', { class: 'muted' }, '—');
  const pct = s.maxSize ? s.currSize / s.maxSize : 0;
  return h('span', { title: `${fmt.num(s.currSize)} of ${fmt.num(s.maxSize)} bytes` },
    `${fmt.bytes(s.currSize)} / ${fmt.bytes(s.maxSize)} `, h('span', { class: 'muted' }, `(${fmt.pct(pct)})`));
}

function tasksCell(s) {
  if (!s.worker) return h('span', { class: 'muted' }, '—');
  const w = s.worker;
  const running = w.runningTasks || [];
  return h('span', {},
    `${w.currCapacityUsed ?? running.length} / ${w.worker?.capacity ?? s.capacity ?? '?'} slots`,
    running.length ? h('ul', { class: 'plain' }, running.map((id) => h('li', {}, h('a', { class: 'mono', href: `#/ingestion/tasks/${encodeURIComponent(id)}` }, id)))) : null,
    w.blacklistedUntil ? h('div', { class: 'bad' }, `blacklisted until ${fmt.time(w.blacklistedUntil)}`) : null);
}

export const view = {
  id: 'services',
  title: 'Services',
  nav: true,
  async render(root, ctx) {
    const summary = h('p', { class: 'muted', id: 'services-summary' });
    const err = h('div');
    const table = dataTable({
      caption: 'Processes',
      filter: true,
      rowKey: (s) => s.host,
      empty: 'No process is known.',
      columns: [
        { key: 'host', label: 'Host', render: (s) => h('span', { class: 'mono' }, s.host) },
        { key: 'roles', label: 'Roles', value: (s) => rolesOf(s).join(', '),
          render: (s) => h('span', {}, rolesOf(s).map((r) => [h('span', { class: 'badge' }, r), ' '])) },
        { key: 'leader', label: 'Leader', value: (s) => s.leaderOf.join(', '),
          render: (s) => s.leaderOf.length ? h('span', { class: 'badge ok' }, `${s.leaderOf.join(' and ')} leader`) : '' },
        { key: 'state', label: 'State', value: (s) => s.state || 'live',
          render: (s) => h('span', { class: `badge ${(s.state || 'live') === 'live' ? 'ok' : 'bad'}` }, s.state || 'live') },
        { key: 'version', label: 'Version' },
        { key: 'uptime', label: 'Uptime', align: 'right', value: (s) => (s.startTime ? Date.now() - s.startTime : null),
          render: (s) => (s.startTime ? h('span', { title: `started ${fmt.time(s.startTime)} UTC` }, fmt.duration(Date.now() - s.startTime)) : '—') },
        { key: 'tier', label: 'Tier', value: (s) => s.tier || '' },
        { key: 'size', label: 'Current / max size', value: (s) => (rolesOf(s).includes('historical') ? s.currSize : null), render: sizeCell },
        { key: 'tasks', label: 'Running tasks', value: (s) => (s.worker ? s.worker.currCapacityUsed ?? 0 : null), render: tasksCell },
      ],
    });
    root.append(h('h1', {}, 'Services'), summary, err, table.el);
    poll(async () => {
      // The leaders and the workers add to the servers list; only the list
      // itself is needed to show anything.
      const [servers, leader, overlordLeader, workers] = await Promise.allSettled([
        get('/svc/coordinator/v1/servers?simple', { signal: ctx.signal }),
        get('/svc/coordinator/v1/leader', { signal: ctx.signal, text: true }),
        get('/svc/indexer/v1/leader', { signal: ctx.signal, text: true }),
        get('/svc/indexer/v1/workers', { signal: ctx.signal }),
      ]);
      if (ctx.signal.aborted) return;
      err.replaceChildren();
      if (servers.status === 'rejected') {
        err.append(errorBox(servers.reason));
        root.dataset.ready = 'true';
        return;
      }
      const coord = leader.status === 'fulfilled' ? hostOf(leader.value) : '';
      const ovl = overlordLeader.status === 'fulfilled' ? hostOf(overlordLeader.value) : '';
      const byHost = new Map((workers.status === 'fulfilled' ? workers.value : []).map((w) => [w.worker?.host, w]));
      for (const r of [leader, overlordLeader, workers]) if (r.status === 'rejected') err.append(errorBox(r.reason));
      const rows = servers.value.map((s) => ({
        ...s,
        leaderOf: [s.host === coord ? 'coordinator' : null, s.host === ovl ? 'overlord' : null].filter(Boolean),
        worker: rolesOf(s).includes('middleManager') ? byHost.get(s.host) || { runningTasks: [], currCapacityUsed: 0, worker: { capacity: s.capacity } } : null,
      }));
      table.setRows(rows);
      const live = rows.filter((s) => (s.state || 'live') === 'live').length;
      summary.textContent = `${rows.length} processes, ${live} live; coordinator leader ${coord || 'unknown'}${ovl && ovl !== coord ? `, overlord leader ${ovl}` : ''}.`;
      root.dataset.ready = 'true';
    }, 10000, ctx.signal);
  },
};
