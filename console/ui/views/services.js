// services.js: every process the control plane knows (discovery, or the
// configured parts: lib/cluster.js), with its roles, version and uptime, a historical's
// current and maximum size, a middle manager's running tasks, and the
// leader marked.
import { h, fmt } from '../lib/dom.js';
import { processes, rolesOf } from '../lib/cluster.js';
import { dataTable } from '../lib/table.js';
import { errorBox, poll } from '../lib/ui.js';

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
      let r;
      try {
        r = await processes(ctx.signal);
      } catch (e) {
        if (ctx.signal.aborted) return;
        err.replaceChildren(errorBox(e));
        root.dataset.ready = 'true';
        return;
      }
      if (ctx.signal.aborted) return;
      err.replaceChildren(...r.errors.map(errorBox));
      table.setRows(r.rows);
      const live = r.rows.filter((s) => (s.state || 'live') === 'live').length;
      const coord = r.coordinatorLeader, ovl = r.overlordLeader;
      summary.textContent = `${r.rows.length} processes, ${live} live; coordinator leader ${coord || 'unknown'}${ovl && ovl !== coord ? `, overlord leader ${ovl}` : ''}.` +
        (r.rows.some((s) => !s.listed) ? ' Without discovery (svc.discovery.coordinators) the cluster lists its historicals only: the leader, the middle managers and this router come from their own APIs, and brokers are not shown.' : '');
      root.dataset.ready = 'true';
    }, 10000, ctx.signal);
  },
};
