// cluster.js: every process of the cluster, for Home and Services. With
// discovery (svc.discovery.coordinators, and the quickstart, whose parts
// announce to its control node) /svc/coordinator/v1/servers?simple lists
// them all; without it (processes given static lists only) it lists the
// historicals only, so the configured parts the API does show are added: the control
// node that leads, the middle managers the overlord knows, and this router.
import { get } from './api.js';

export const rolesOf = (s) => String(s.role || s.type || '').split(',').filter(Boolean);
export const hostOf = (url) => String(url || '').replace(/^https?:\/\//, '').replace(/\/.*$/, '');

// processes answers {rows, coordinatorLeader, overlordLeader, errors}: rows
// as servers?simple has them, plus leaderOf (['coordinator', 'overlord']),
// worker (the overlord's entry for a middle manager) and listed (false for
// a process added from the configured parts). Only the servers list is
// required; the other answers' errors are returned to show.
export async function processes(signal) {
  const [servers, leader, overlordLeader, workers, status] = await Promise.allSettled([
    get('/svc/coordinator/v1/servers?simple', { signal }),
    get('/svc/coordinator/v1/leader', { signal, text: true }),
    get('/svc/indexer/v1/leader', { signal, text: true }),
    get('/svc/indexer/v1/workers', { signal }),
    get('/status', { signal }),
  ]);
  if (servers.status === 'rejected') throw servers.reason;
  const errors = [leader, overlordLeader, workers].filter((r) => r.status === 'rejected').map((r) => r.reason);
  const coord = leader.status === 'fulfilled' ? hostOf(leader.value) : '';
  const ovl = overlordLeader.status === 'fulfilled' ? hostOf(overlordLeader.value) : '';
  const workerList = workers.status === 'fulfilled' ? workers.value : [];
  const rows = servers.value.map((s) => ({ ...s, listed: true }));
  const byHost = new Map(rows.map((s) => [s.host, s]));
  const add = (host, role, extra = {}) => {
    if (!host || byHost.has(host)) return;
    const row = { host, role, type: role, state: 'live', version: '', listed: false, ...extra };
    rows.push(row);
    byHost.set(host, row);
  };
  if (coord) add(coord, coord === ovl ? 'coordinator,overlord' : 'coordinator');
  if (ovl) add(ovl, 'overlord');
  for (const w of workerList) add(w.worker?.host, 'middleManager', { capacity: w.worker?.capacity, version: w.worker?.version === '0' ? '' : w.worker?.version || '' });
  // This router answered the page; its /status says its version. Only when
  // the list has no router (no discovery): the page's host may be another
  // name of a listed one (localhost for the 127.0.0.1 it announces).
  const me = status.status === 'fulfilled' ? status.value : null;
  if (!rows.some((s) => rolesOf(s).includes('router'))) add(location.host, 'router', { version: me?.strataVersion || '' });
  const workerOf = new Map(workerList.map((w) => [w.worker?.host, w]));
  for (const s of rows) {
    s.leaderOf = [s.host === coord ? 'coordinator' : null, s.host === ovl ? 'overlord' : null].filter(Boolean);
    s.worker = rolesOf(s).includes('middleManager')
      ? workerOf.get(s.host) || { runningTasks: [], currCapacityUsed: 0, worker: { capacity: s.capacity } } : null;
  }
  return { rows, coordinatorLeader: coord, overlordLeader: ovl, errors };
}
