// home.js: the cluster at a glance: the control nodes and their leader, the
// processes by role and health, the datasources with their availability,
// the tasks and the supervisors. Each card links into its view. A card the
// user may not read is left out (the API would answer 403).
import { h, fmt } from '../lib/dom.js';
import { get } from '../lib/api.js';
import { processes, rolesOf } from '../lib/cluster.js';
import { can, canAny } from '../lib/perm.js';
import { errorBox, poll } from '../lib/ui.js';


function statusBadge(ok, okText, badText) {
  return h('span', { class: `badge ${ok ? 'ok' : 'bad'}` }, ok ? okText : badText);
}

// leaderBadge says which control-plane leader a node is, if any.
function leaderBadge(host, coordinator, overlord) {
  const of = [host === coordinator ? 'coordinator' : null, host === overlord ? 'overlord' : null].filter(Boolean);
  return of.length ? h('span', { class: 'badge ok' }, `${of.join(' and ')} leader`) : h('span', { class: 'muted' }, 'follower');
}

function card(title, href, linkText, ...body) {
  return h('section', { class: 'card', 'aria-labelledby': `card-${title.toLowerCase()}` },
    h('h2', { id: `card-${title.toLowerCase()}` }, title),
    ...body,
    href ? h('a', { class: 'more', href }, linkText) : null);
}

function stat(label, value, cls) {
  return h('div', { class: 'stat' }, h('div', { class: `big ${cls || ''}` }, value), h('div', { class: 'label' }, label));
}

// settle runs the loads side by side; one card's failure (a 403, a node
// down) shows in that card and leaves the others.
async function settle(loads) {
  const keys = Object.keys(loads);
  const res = await Promise.allSettled(keys.map((k) => loads[k]()));
  const out = {};
  keys.forEach((k, i) => { out[k] = res[i].status === 'fulfilled' ? { value: res[i].value } : { error: res[i].reason }; });
  return out;
}

async function load(self, signal) {
  const state = can(self, 'STATE', 'STATE', 'READ');
  const loads = {
    datasources: () => get('/svc/coordinator/v1/datasources?simple', { signal }),
    tasks: () => get('/svc/indexer/v1/tasks', { signal }),
    supervisors: () => get('/svc/indexer/v1/supervisor?full', { signal }),
  };
  if (state) {
    loads.servers = () => processes(signal);
    loads.loadstatus = () => get('/svc/coordinator/v1/loadstatus', { signal });
  }
  const r = await settle(loads);
  // Without STATE READ the cluster-wide load status is refused; each
  // readable datasource's own (DATASOURCE READ) over all time stands in.
  if (!state && r.datasources.value) {
    const per = await settle(Object.fromEntries(r.datasources.value.map((d) => [d.name, () =>
      get(`/svc/coordinator/v1/datasources/${encodeURIComponent(d.name)}/loadstatus?forceMetadataRefresh=false&interval=1000-01-01_3000-01-01`, { signal })])));
    const merged = {};
    for (const [name, v] of Object.entries(per)) if (v.value) Object.assign(merged, v.value);
    r.loadstatus = { value: merged };
  }
  return r;
}

function clusterCard(r) {
  if (!r.servers) return null;
  if (r.servers.error) return card('Cluster', null, null, errorBox(r.servers.error));
  const servers = r.servers.value.rows;
  const leader = r.servers.value.coordinatorLeader;
  const overlordLeader = r.servers.value.overlordLeader;
  const control = servers.filter((s) => rolesOf(s).some((x) => x === 'coordinator' || x === 'overlord'));
  const byRole = {};
  for (const s of servers) {
    for (const role of rolesOf(s)) {
      const e = (byRole[role] ||= { live: 0, other: 0 });
      if (s.state === 'live' || s.state === undefined) e.live++; else e.other++;
    }
  }
  const unhealthy = servers.filter((s) => s.state && s.state !== 'live');
  return card('Cluster', '#/services', 'All services →',
    h('div', { class: 'stat-row' },
      stat('processes', fmt.num(servers.length)),
      stat('not live', fmt.num(unhealthy.length), unhealthy.length ? 'bad' : 'ok')),
    h('h3', {}, 'Control nodes'),
    h('ul', { class: 'plain', id: 'control-nodes' }, control.map((s) => h('li', {},
      h('span', { class: 'mono' }, s.host),
      leaderBadge(s.host, leader, overlordLeader)))),
    h('h3', {}, 'Processes by role'),
    h('ul', { class: 'plain', id: 'roles' }, Object.keys(byRole).sort().map((role) => h('li', {},
      h('span', {}, role),
      h('span', {}, `${byRole[role].live} live`, byRole[role].other ? h('span', { class: 'bad' }, `, ${byRole[role].other} not live`) : null)))));
}

function datasourcesCard(r) {
  if (r.datasources.error) return card('Datasources', null, null, errorBox(r.datasources.error));
  const list = r.datasources.value || [];
  const ls = r.loadstatus?.value || {};
  let segments = 0, bytes = 0;
  for (const d of list) {
    segments += d.properties?.segments?.count || 0;
    bytes += d.properties?.segments?.size || 0;
  }
  const rows = list.slice().sort((a, b) => a.name.localeCompare(b.name)).slice(0, 8).map((d) => {
    const pct = ls[d.name];
    const full = pct === undefined ? null : pct >= 100;
    return h('li', {},
      h('a', { href: `#/datasources/${encodeURIComponent(d.name)}` }, d.name),
      h('span', {}, pct === undefined ? h('span', { class: 'muted' }, 'availability unknown')
        : h('span', { class: full ? 'ok' : 'warn' }, `${fmt.pct(pct / 100)} available`)));
  });
  return card('Datasources', '#/datasources', 'All datasources →',
    h('div', { class: 'stat-row' },
      stat('datasources', fmt.num(list.length)),
      stat('segments', fmt.num(segments)),
      stat('size', fmt.bytes(bytes))),
    r.loadstatus?.error ? errorBox(r.loadstatus.error) : null,
    list.length ? h('ul', { class: 'plain', id: 'datasource-list' }, rows) : h('p', { class: 'muted' }, 'No datasources yet. Load data from the Ingestion view.'),
    list.length > 8 ? h('p', { class: 'muted' }, `and ${list.length - 8} more`) : null);
}

function tasksCard(r) {
  if (r.tasks.error) return card('Tasks', null, null, errorBox(r.tasks.error));
  const tasks = r.tasks.value || [];
  const count = (code) => tasks.filter((t) => (t.statusCode || t.status) === code).length;
  const running = tasks.filter((t) => (t.statusCode || t.status) === 'RUNNING');
  return card('Tasks', '#/ingestion', 'All tasks →',
    h('div', { class: 'stat-row' },
      stat('running', fmt.num(running.length)),
      stat('pending', fmt.num(count('PENDING') + count('WAITING'))),
      stat('succeeded', fmt.num(count('SUCCESS')), 'ok'),
      stat('failed', fmt.num(count('FAILED')), count('FAILED') ? 'bad' : '')),
    running.length ? h('ul', { class: 'plain' }, running.slice(0, 6).map((t) => h('li', {},
      h('a', { href: `#/ingestion/tasks/${encodeURIComponent(t.id)}`, class: 'mono' }, t.id),
      h('span', { class: 'muted' }, t.dataSource || '')))) : h('p', { class: 'muted' }, 'No task is running.'));
}

function supervisorsCard(r) {
  if (r.supervisors.error) return card('Supervisors', null, null, errorBox(r.supervisors.error));
  const sups = r.supervisors.value || [];
  const stateOf = (s) => s.detailedState || s.state || (s.suspended ? 'SUSPENDED' : 'RUNNING');
  const unhealthy = sups.filter((s) => s.healthy === false);
  return card('Supervisors', '#/ingestion', 'All supervisors →',
    h('div', { class: 'stat-row' },
      stat('supervisors', fmt.num(sups.length)),
      stat('suspended', fmt.num(sups.filter((s) => s.suspended).length)),
      stat('unhealthy', fmt.num(unhealthy.length), unhealthy.length ? 'bad' : '')),
    sups.length ? h('ul', { class: 'plain' }, sups.slice(0, 6).map((s) => h('li', {},
      h('a', { href: `#/ingestion/supervisors/${encodeURIComponent(s.id)}` }, s.id),
      statusBadge(s.healthy !== false && !s.suspended, stateOf(s), stateOf(s))))) : h('p', { class: 'muted' }, 'No supervisor.'));
}

export const view = {
  id: 'home',
  title: 'Home',
  nav: true,
  async render(root, ctx) {
    const grid = h('div', { class: 'grid', id: 'home-cards' });
    const updated = h('span', { class: 'muted', 'aria-live': 'off' });
    root.append(h('div', { class: 'toolbar' }, h('h1', {}, 'Cluster'), updated), grid);
    // Refreshed every 10 s while shown: a glance should be current.
    poll(async () => {
      const r = await load(ctx.self, ctx.signal);
      if (ctx.signal.aborted) return;
      // A refresh must not take the keyboard focus away: the link that had
      // it gets it back in the new cards.
      const focused = grid.contains(document.activeElement) ? document.activeElement.getAttribute('href') : null;
      grid.replaceChildren(...[clusterCard(r), datasourcesCard(r), tasksCard(r), supervisorsCard(r)].filter(Boolean));
      if (focused) grid.querySelector(`a[href="${CSS.escape(focused)}"]`)?.focus();
      if (!canAny(ctx.self, 'STATE', 'READ')) {
        grid.append(h('p', { class: 'muted' }, 'The processes of the cluster are shown to users with STATE READ.'));
      }
      updated.textContent = `updated ${fmt.time(Date.now())} UTC`;
      root.dataset.ready = 'true';
    }, 10000, ctx.signal);
  },
};
