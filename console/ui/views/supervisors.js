// Supervisors, part of the Ingestion view (#/ingestion/supervisors[/<id>]):
// the list with state, a JSON submit form, and one supervisor's page with lag
// per partition (charted from samples taken while the page is open), its tasks,
// recent errors, suspend/resume/reset/terminate, spec and history.
import { get, post } from '../lib/api.js';
import { h, clear, fmt } from '../lib/dom.js';
import { dataTable } from '../lib/table.js';
import { lineChart } from '../lib/chart.js';
import { errorBox, confirmDialog, toast, jsonView, loading } from '../lib/ui.js';
import { mayDo, repeat } from './ingestion.js';

const enc = encodeURIComponent;
const SAMPLE_MS = 3000; // lag sampling period while the page is open
const MAX_SAMPLES = 200; // ten minutes of samples: the chart stays readable

function stateBadge(state, healthy) {
  const cls = state === 'RUNNING' && healthy !== false ? 'ok'
    : state === 'SUSPENDED' || state === 'PENDING' ? 'warn'
      : state?.startsWith('UNHEALTHY') || healthy === false ? 'bad' : '';
  return h('span', { class: `badge ${cls}` }, state || 'unknown');
}

// dataSourceOf reads a spec's datasource (Druid's specs nest it under spec or not).
function dataSourceOf(spec) {
  return spec?.spec?.dataSchema?.dataSource || spec?.dataSchema?.dataSource || spec?.dataSource || '';
}

// parseSpec reads ?system's specString once per row (a JSON string of the spec).
const parsed = new WeakMap();
function parseSpec(row) {
  if (!parsed.has(row)) {
    let spec = {};
    try { spec = JSON.parse(row.specString || '{}'); } catch { /* shown without its spec's fields */ }
    parsed.set(row, spec);
  }
  return parsed.get(row);
}

function ioConfigOf(spec) {
  return spec?.spec?.ioConfig || spec?.ioConfig || {};
}

export async function supervisorList(el, ctx) {
  const err = h('div');
  const table = dataTable({
    caption: 'Supervisors',
    filter: true,
    empty: 'No supervisors',
    rowKey: (s) => s.id,
    onRowClick: (s) => ctx.navigate(`#/ingestion/supervisors/${enc(s.id)}`),
    columns: [
      { key: 'id', label: 'Supervisor', render: (s) => h('a', { href: `#/ingestion/supervisors/${enc(s.id)}`, class: 'mono' }, s.id) },
      { key: 'type', label: 'Type' },
      { key: 'dataSource', label: 'Datasource', value: (s) => dataSourceOf(parseSpec(s)) },
      { key: 'topic', label: 'Topic', value: (s) => ioConfigOf(parseSpec(s)).topic || ioConfigOf(parseSpec(s)).stream || '' },
      { key: 'state', label: 'State', render: (s) => stateBadge(s.state, s.healthy), value: (s) => s.state },
      { key: 'detailedState', label: 'Detailed state' },
      { key: 'aggregateLag', label: 'Lag', align: 'right', render: (s) => (s.aggregateLag == null ? '—' : fmt.num(s.aggregateLag)) },
      { key: 'healthy', label: 'Healthy', render: (s) => (s.healthy ? 'yes' : h('span', { class: 'bad' }, 'no')) },
      { key: 'suspended', label: 'Suspended', render: (s) => (s.suspended ? 'yes' : 'no') },
    ],
    rows: [],
  });
  el.append(h('h2', {}, 'Supervisors'), err, table.el,
    specForm(ctx, { summary: 'Submit a supervisor spec (JSON)', button: 'Submit supervisor',
      onDone: (sid) => ctx.navigate(`#/ingestion/supervisors/${enc(sid)}`) }));
  await repeat(async () => {
    try {
      const rows = await get('/svc/indexer/v1/supervisor?system', { signal: ctx.signal });
      // The listing has no lag: each supervisor's status report does (one call
      // each, together; a failed one leaves its cell unknown).
      const reports = await Promise.allSettled(rows.map((r) =>
        get(`/svc/indexer/v1/supervisor/${enc(r.id)}/status`, { signal: ctx.signal })));
      reports.forEach((rep, i) => { rows[i].aggregateLag = rep.value?.payload?.aggregateLag ?? null; });
      table.setRows(rows);
      clear(err);
    } catch (e) {
      if (!ctx.signal.aborted) err.replaceChildren(errorBox(e));
    }
  }, 5000, ctx.signal);
}

// specForm posts a supervisor spec as JSON: creating one, or updating the one
// of the same datasource (Druid's behaviour). With spec it starts as that
// spec (editing); onDone(id) runs after a successful post.
function specForm(ctx, { spec, summary, button, onDone }) {
  const area = h('textarea', { id: spec ? 'c4-sup-edit' : 'c4-sup-spec', class: 'mono', rows: '14', spellcheck: 'false',
    placeholder: '{"type":"kafka","spec":{"dataSchema":{…},"ioConfig":{…},"tuningConfig":{"type":"kafka"}}}' });
  if (spec) area.value = JSON.stringify(spec, null, 2);
  const out = h('div', { 'aria-live': 'polite' });
  const submit = async () => {
    let body;
    try {
      body = JSON.parse(area.value);
    } catch (e) {
      out.replaceChildren(h('p', { class: 'bad', role: 'alert' }, `Not valid JSON: ${e.message}`));
      return;
    }
    const ds = dataSourceOf(body);
    if (ds && !mayDo(ctx, 'DATASOURCE', ds, 'WRITE')) {
      out.replaceChildren(h('p', { class: 'bad', role: 'alert' }, `You may not write to datasource ${ds}.`));
      return;
    }
    try {
      const res = await post('/svc/indexer/v1/supervisor', body, { signal: ctx.signal });
      out.replaceChildren();
      toast(`Supervisor ${res.id} submitted`, 'ok');
      onDone(res.id);
    } catch (e) {
      out.replaceChildren(errorBox(e));
    }
  };
  return h('details', { class: 'card' }, h('summary', {}, summary),
    h('label', { for: area.id }, 'Supervisor spec (JSON)'), area,
    h('div', { class: 'toolbar' }, h('button', { class: 'btn primary', type: 'button', id: `${area.id}-submit`, onclick: submit }, button)),
    out);
}

export async function supervisorPage(el, ctx, id) {
  const base = `/svc/indexer/v1/supervisor/${enc(id)}`;
  const statusEl = h('div', { class: 'card', 'aria-live': 'polite' }, loading());
  const actions = h('div', { class: 'toolbar', id: 'c4-sup-actions' });
  const actionErr = h('div');
  const chartEl = h('div', { class: 'card' }, h('h3', {}, 'Lag per partition'), h('p', { class: 'muted' }, 'Sampling…'));
  const partsEl = h('div');
  const tasksEl = h('div');
  const errorsEl = h('div');
  const specEl = h('div');
  const editEl = h('div');
  const historyEl = h('div');
  el.append(h('p', {}, h('a', { href: '#/ingestion/supervisors' }, '← All supervisors')),
    h('h2', {}, 'Supervisor ', h('span', { class: 'mono' }, id)),
    // A grid only for the gaps between the cards.
    h('div', { style: 'display:grid;gap:.75rem;grid-template-columns:minmax(0,1fr)' },
      statusEl, actions, actionErr, chartEl, partsEl, tasksEl, errorsEl,
      h('details', { class: 'card' }, h('summary', {}, 'Spec JSON'), specEl),
      editEl,
      h('details', { class: 'card', open: '' }, h('summary', {}, 'History'), historyEl)));

  // samples[partition] = [[timeMs, lag], ...], taken while this page is open:
  // the API reports only the current lag, so the chart is what this page saw.
  const samples = {};
  let shownSuspended = null;
  // specSuspended is the stored spec's flag, which a suspend or resume changes
  // at once; the status report's follows when the runtime next runs.
  let specSuspended = null;
  let dataSource = '';

  async function act(verb, { title, message, confirmLabel, danger, requireText }) {
    const ok = await confirmDialog({ title, message, confirmLabel, danger, requireText });
    if (!ok) return;
    try {
      await post(`${base}/${verb}`, undefined, { signal: ctx.signal });
      toast(`${confirmLabel}: ${id}`);
      clear(actionErr);
      if (verb === 'terminate') {
        ctx.navigate('#/ingestion/supervisors');
        return;
      }
      await loadMeta();
      await refresh();
    } catch (e) {
      actionErr.replaceChildren(errorBox(e));
    }
  }

  function drawActions(suspended) {
    if (shownSuspended === suspended) return;
    shownSuspended = suspended;
    if (!mayDo(ctx, 'DATASOURCE', dataSource || id, 'WRITE')) {
      actions.replaceChildren(h('p', { class: 'muted' }, 'Read only: you may not change this supervisor.'));
      return;
    }
    const btn = (label, cls, onclick, elId) => h('button', { class: `btn ${cls}`, type: 'button', id: elId, onclick }, label);
    actions.replaceChildren(
      suspended
        ? btn('Resume', 'primary', () => act('resume', { title: 'Resume supervisor', message: `Resume ${id}? It starts reading tasks again from the stored offsets.`, confirmLabel: 'Resume' }), 'c4-sup-resume')
        : btn('Suspend', '', () => act('suspend', { title: 'Suspend supervisor', message: `Suspend ${id}? Its reading tasks publish what they have and stop; no new ones start until resumed.`, confirmLabel: 'Suspend' }), 'c4-sup-suspend'),
      btn('Reset', 'danger', () => act('reset', {
        title: 'Reset supervisor',
        message: h('p', {}, 'Reset ', h('strong', {}, id), '? Its stored offsets are cleared and its running tasks are stopped; ' +
          'reading restarts from the earliest or latest offset (useEarliestOffset), so data may be skipped or read twice. Type the supervisor id to confirm.'),
        confirmLabel: 'Reset', danger: true, requireText: id,
      }), 'c4-sup-reset'),
      btn('Terminate', 'danger', () => act('terminate', {
        title: 'Terminate supervisor',
        message: h('p', {}, 'Terminate ', h('strong', {}, id), '? Its tasks publish and stop, and the supervisor is removed (its history stays). Type the supervisor id to confirm.'),
        confirmLabel: 'Terminate', danger: true, requireText: id,
      }), 'c4-sup-terminate'));
  }

  async function refresh() {
    let rep;
    try {
      rep = await get(`${base}/status`, { signal: ctx.signal });
    } catch (e) {
      if (!ctx.signal.aborted) statusEl.replaceChildren(errorBox(e));
      unreadable = e.status === 404 || e.status === 403;
      return !unreadable; // keep trying on transient errors only
    }
    const p = rep.payload || {};
    dataSource = p.dataSource || dataSource;
    const kv = (k, v) => [h('dt', {}, k), h('dd', {}, v)];
    statusEl.replaceChildren(h('dl', { class: 'kv', id: 'c4-sup-status' },
      kv('State', stateBadge(p.state, p.healthy)),
      kv('Detailed state', p.detailedState || '—'),
      kv('Healthy', p.healthy ? 'yes' : h('span', { class: 'bad' }, 'no')),
      kv('Suspended', h('span', { id: 'c4-sup-suspended' }, (specSuspended ?? p.suspended) ? 'yes' : 'no')),
      kv('Datasource', p.dataSource ? h('a', { href: `#/datasources/${enc(p.dataSource)}` }, p.dataSource) : '—'),
      kv('Stream', p.stream || '—'),
      kv('Partitions / replicas', `${p.partitions ?? '—'} / ${p.replicas ?? '—'}`),
      kv('Task duration', p.durationSeconds ? fmt.duration(p.durationSeconds * 1000) : '—'),
      kv('Aggregate lag', p.aggregateLag == null ? 'unknown' : fmt.num(p.aggregateLag)),
      kv('Offsets updated', p.offsetsLastUpdated ? fmt.time(p.offsetsLastUpdated) : '—'),
      kv('Report generated', fmt.time(rep.generationTime))));
    drawActions(!!(specSuspended ?? p.suspended));

    const now = Date.now();
    for (const [part, lag] of Object.entries(p.minimumLag || {})) {
      const pts = (samples[part] ||= []);
      pts.push([now, lag]);
      if (pts.length > MAX_SAMPLES) pts.shift();
    }
    const series = Object.keys(samples).sort((a, b) => a - b).map((part) => ({ name: `partition ${part}`, points: samples[part] }));
    chartEl.replaceChildren(h('h3', {}, 'Lag per partition'), ...(series.length
      ? [lineChart({ series, yLabel: 'lag (messages)', xIsTime: true }),
        h('p', { class: 'muted' }, 'Sampled every 3 s while this page is open.')]
      : [h('p', { class: 'muted' }, 'No lag reported yet (no offsets known).')]));

    const parts = Object.keys({ ...(p.latestOffsets || {}), ...(p.minimumLag || {}) }).sort((a, b) => a - b);
    partsEl.replaceChildren(h('div', { style: 'overflow-x:auto' }, h('table', { class: 'data' }, h('caption', {}, 'Partitions'),
      h('thead', {}, h('tr', {}, ['Partition', 'Latest offset', 'Lag'].map((x) => h('th', { scope: 'col' }, x)))),
      h('tbody', {}, parts.length ? parts.map((part) => h('tr', {},
        h('td', {}, part), h('td', { class: 'num' }, fmt.num(p.latestOffsets?.[part] ?? 0)),
        h('td', { class: 'num' }, p.minimumLag?.[part] == null ? '—' : fmt.num(p.minimumLag[part])))) :
        h('tr', {}, h('td', { colspan: '3', class: 'muted' }, 'No partitions known yet.'))))));

    const taskRows = [...(p.activeTasks || []), ...(p.publishingTasks || []).map((t) => ({ ...t, type: t.type || 'PUBLISHING' }))];
    tasksEl.replaceChildren(h('div', { style: 'overflow-x:auto' }, h('table', { class: 'data' }, h('caption', {}, 'Tasks'),
      h('thead', {}, h('tr', {}, ['Task', 'Kind', 'Started', 'Remaining', 'Current offsets'].map((x) => h('th', { scope: 'col' }, x)))),
      h('tbody', {}, taskRows.length ? taskRows.map((t) => h('tr', {},
        h('td', {}, h('a', { href: `#/ingestion/tasks/${enc(t.id)}`, class: 'mono' }, t.id)),
        h('td', {}, t.type),
        h('td', {}, t.startTime ? fmt.time(t.startTime) : 'not started'),
        h('td', { class: 'num' }, t.remainingSeconds != null ? fmt.duration(t.remainingSeconds * 1000) : '—'),
        h('td', { class: 'mono' }, Object.entries(t.currentOffsets || {}).map(([k, v]) => `${k}: ${v}`).join(', ') || '—'))) :
        h('tr', {}, h('td', { colspan: '5', class: 'muted' }, 'No tasks reading or publishing.'))))));

    const errs = p.recentErrors || [];
    errorsEl.replaceChildren(errs.length ? h('section', { class: 'card' }, h('h3', {}, 'Recent errors'),
      h('ul', {}, errs.map((e) => h('li', {}, h('span', { class: 'muted' }, fmt.time(e.timestamp), ' '),
        h('span', { class: 'bad' }, e.exceptionClass || 'error'), ': ', e.message)))) : '');
    return true;
  }

  // loadMeta reads what changes only with an action: the spec and the history.
  async function loadMeta() {
    try {
      const spec = await get(base, { signal: ctx.signal });
      dataSource = dataSourceOf(spec) || dataSource;
      specSuspended = !!spec.suspended;
      drawActions(specSuspended);
      specEl.replaceChildren(jsonView(spec));
      // The edit form starts from the spec once: later refreshes keep the user's edits.
      if (!editEl.firstChild && mayDo(ctx, 'DATASOURCE', dataSource || id, 'WRITE')) {
        editEl.append(specForm(ctx, { spec, summary: 'Edit the spec', button: 'Update supervisor',
          onDone: () => { loadMeta(); refresh(); } }));
      }
    } catch (e) {
      if (!ctx.signal.aborted) specEl.replaceChildren(errorBox(e));
    }
    try {
      const hist = await get(`${base}/history?states=true`, { signal: ctx.signal });
      historyEl.replaceChildren(historyBlock(hist));
    } catch (e) {
      if (!ctx.signal.aborted) historyEl.replaceChildren(errorBox(e));
    }
  }

  let unreadable = false; // no such supervisor, or not the user's: said once, nothing more asked
  await repeat(refresh, SAMPLE_MS, ctx.signal);
  if (unreadable) {
    for (const part of statusEl.parentElement.children) if (part !== statusEl) part.hidden = true;
    return;
  }
  await loadMeta();
}

// historyBlock shows the spec versions (newest first) and the state changes.
function historyBlock(hist) {
  const versions = hist.versions || [];
  const states = hist.states || [];
  return h('div', { class: 'split' },
    h('section', {}, h('h3', {}, `Spec versions (${versions.length})`),
      h('ol', { id: 'c4-sup-versions' }, versions.map((v) => h('li', {},
        h('details', {}, h('summary', {}, fmt.time(v.version), v.spec?.suspended ? ' (suspended)' : ''), jsonView(v.spec)))))),
    h('section', {}, h('h3', {}, 'State changes'),
      states.length ? h('ol', { id: 'c4-sup-states' }, states.slice(0, 50).map((s) => h('li', {},
        h('span', { class: 'muted' }, fmt.time(s.time), ' '), stateBadge(s.state, s.healthy), ` ${s.detailedState}`))) :
        h('p', { class: 'muted' }, 'No state changes recorded.')));
}
