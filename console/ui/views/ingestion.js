// Ingestion view: the overlord's tasks, one task's page (status, live MSQ stage
// progress and counters, log tail, report, cancel), a SQL ingestion editor that
// submits INSERT/REPLACE to /svc/v2/sql/task and follows the task, and the
// supervisors (views/supervisors.js). Every call is a public /svc API call.
import { get, post } from '../lib/api.js';
import { h, clear, fmt } from '../lib/dom.js';
import { dataTable } from '../lib/table.js';
import { errorBox, confirmDialog, toast, jsonView, loading } from '../lib/ui.js';
import { can } from '../lib/perm.js';
import { supervisorList, supervisorPage } from './supervisors.js';

const enc = encodeURIComponent;
const ACTIVE = new Set(['RUNNING', 'PENDING', 'WAITING']);
const LOG_TAIL = 16384; // bytes of log shown: enough to see the end without loading a huge file

export const view = {
  id: 'ingestion',
  title: 'Ingestion',
  nav: true,
  async render(root, ctx) {
    const [section = 'tasks', id] = ctx.path;
    root.append(h('h1', {}, 'Ingestion'), tabs(section));
    const body = h('div', { class: 'c4-body' });
    root.append(body);
    if (section === 'tasks' && id) await taskPage(body, ctx, id);
    else if (section === 'supervisors' && id) await supervisorPage(body, ctx, id);
    else if (section === 'supervisors') await supervisorList(body, ctx);
    else if (section === 'sql') sqlEditor(body, ctx);
    else await taskList(body, ctx);
    root.dataset.ready = 'true';
  },
};

// mayDo asks perm.js; without a /self answer the API's own 403 is the guard.
export function mayDo(ctx, type, name, action) {
  return !ctx.self || can(ctx.self, type, name, action);
}

// repeat runs fn now and again ms after each run ends (never two at once, unlike
// setInterval), until the signal aborts or fn returns false (nothing left to follow).
export async function repeat(fn, ms, signal) {
  let again = await fn();
  const next = () => {
    if (signal.aborted || again === false) return;
    const t = setTimeout(async () => {
      if (signal.aborted) return;
      again = await fn();
      next();
    }, ms);
    signal.addEventListener('abort', () => clearTimeout(t), { once: true });
  };
  next();
}

// stateBadge shows a status as text with a colour class (never colour alone).
export function stateBadge(state) {
  const cls = { SUCCESS: 'ok', RUNNING: 'warn', PENDING: 'warn', WAITING: 'warn', FAILED: 'bad' }[state] || '';
  return h('span', { class: `badge ${cls}` }, state || 'unknown');
}

function tabs(current) {
  const tab = (key, label) =>
    h('a', { href: `#/ingestion/${key}`, class: current === key ? 'btn primary' : 'btn', 'aria-current': current === key ? 'page' : null }, label);
  return h('nav', { class: 'toolbar', 'aria-label': 'Ingestion sections' },
    tab('tasks', 'Tasks'), tab('supervisors', 'Supervisors'), tab('sql', 'SQL ingestion'));
}

// ---- Tasks list -------------------------------------------------------------

function taskDuration(t) {
  if (t.duration >= 0) return fmt.duration(t.duration);
  if (ACTIVE.has(t.statusCode || t.status)) return `${fmt.duration(Date.now() - Date.parse(t.createdTime))} so far`;
  return '';
}

async function taskList(el, ctx) {
  const state = ctx.query.get('state') || '';
  const datasource = ctx.query.get('datasource') || '';
  const go = (s, d) => {
    const q = new URLSearchParams();
    if (s) q.set('state', s);
    if (d) q.set('datasource', d);
    ctx.navigate(`#/ingestion/tasks${q.size ? '?' + q : ''}`);
  };
  const stateSel = h('select', { id: 'c4-task-state', onchange: () => go(stateSel.value, dsInput.value.trim()) },
    ['', 'running', 'pending', 'waiting', 'complete'].map((s) =>
      h('option', { value: s, selected: s === state ? '' : null }, s || 'all')));
  const dsInput = h('input', { id: 'c4-task-ds', type: 'search', value: datasource, placeholder: 'any' });
  dsInput.addEventListener('keydown', (e) => { if (e.key === 'Enter') go(stateSel.value, dsInput.value.trim()); });
  el.append(h('div', { class: 'toolbar' },
    h('label', { for: 'c4-task-state' }, 'State '), stateSel,
    h('label', { for: 'c4-task-ds' }, 'Datasource '), dsInput,
    h('a', { class: 'btn primary', href: '#/ingestion/sql' }, 'New SQL ingestion')));

  const table = dataTable({
    caption: 'Tasks',
    filter: true,
    empty: 'No tasks',
    rowKey: (t) => t.id,
    onRowClick: (t) => ctx.navigate(`#/ingestion/tasks/${enc(t.id)}`),
    columns: [
      { key: 'id', label: 'Task ID', render: (t) => h('a', { href: `#/ingestion/tasks/${enc(t.id)}`, class: 'mono' }, t.id) },
      { key: 'type', label: 'Type' },
      { key: 'dataSource', label: 'Datasource' },
      { key: 'status', label: 'State', render: (t) => stateBadge(t.status), value: (t) => t.status },
      { key: 'duration', label: 'Duration', align: 'right', render: taskDuration, value: (t) => t.duration },
      { key: 'createdTime', label: 'Created', render: (t) => fmt.time(t.createdTime), value: (t) => t.createdTime },
    ],
    rows: [],
  });
  const err = h('div');
  el.append(err, table.el);
  const q = new URLSearchParams();
  if (state) q.set('state', state);
  if (datasource) q.set('datasource', datasource);
  // Refreshing every 5 s keeps states and durations current while the page is open.
  await repeat(async () => {
    try {
      const rows = await get(`/svc/indexer/v1/tasks${q.size ? '?' + q : ''}`, { signal: ctx.signal });
      // Newest first, as a person looks for the task just submitted.
      rows.sort((a, b) => (b.createdTime || '').localeCompare(a.createdTime || ''));
      table.setRows(rows);
      clear(err);
    } catch (e) {
      if (!ctx.signal.aborted) err.replaceChildren(errorBox(e));
    }
  }, 5000, ctx.signal);
}

// ---- One task ---------------------------------------------------------------

async function taskPage(el, ctx, id) {
  el.append(h('p', {}, h('a', { href: '#/ingestion/tasks' }, '← All tasks')),
    h('h2', {}, 'Task ', h('span', { class: 'mono' }, id)));
  const follow = followTask(id, ctx);
  el.append(follow.el);
  await follow.ready;
  if (follow.unreadable()) return; // its error (403, 404) is already shown once
  // The submitted spec (payload) does not change: fetched once.
  try {
    const task = await get(`/svc/indexer/v1/task/${enc(id)}`, { signal: ctx.signal });
    el.append(h('details', { class: 'card' }, h('summary', {}, 'Task payload (spec)'), jsonView(task.payload ?? task)));
  } catch (e) {
    if (!ctx.signal.aborted) el.append(errorBox(e));
  }
}

// followTask renders a task's status, progress, log tail and report, refreshed
// every 2 s while the task is active and once more after it ends. onEnd(status)
// runs once when the task is seen complete. ready resolves after the first render.
export function followTask(id, ctx, { onEnd } = {}) {
  const statusEl = h('div', { class: 'card', 'aria-live': 'polite' }, loading());
  const actions = h('div', { class: 'toolbar' });
  const progressEl = h('div');
  const logPre = h('pre', { class: 'json mono', tabindex: '0', 'aria-label': 'Task log tail' }, '');
  const logNote = h('p', { class: 'muted' });
  const reportPre = h('div');
  // A grid only for the gaps between the cards (style.css spaces no stacked cards).
  const el = h('div', { style: 'display:grid;gap:.75rem;grid-template-columns:minmax(0,1fr)' },
    statusEl, actions, progressEl,
    h('section', { class: 'card' }, h('h3', {}, 'Log'), logNote, logPre,
      h('button', { class: 'btn', type: 'button', onclick: () => loadLog(0) }, 'Load the whole log')),
    h('details', { class: 'card' }, h('summary', {}, 'Report JSON'), reportPre));
  let ended = false;
  let cancelShown = false;
  let unreadable = false; // the status answered 403 or 404: nothing more to ask

  async function loadLog(offset, active = false) {
    try {
      const text = await get(`/svc/indexer/v1/task/${enc(id)}/log?offset=${offset}`, { text: true, signal: ctx.signal });
      // Keep the view pinned to the end only if the reader was already there.
      const atEnd = logPre.scrollTop + logPre.clientHeight >= logPre.scrollHeight - 4;
      logPre.textContent = text || '';
      logPre.hidden = false;
      logNote.textContent = offset < 0 ? `The end of the log (at most its last ${fmt.bytes(-offset)}).` : 'The whole log.';
      if (atEnd) logPre.scrollTop = logPre.scrollHeight;
    } catch (e) {
      if (e.status === 404) {
        logNote.textContent = active ? 'No log yet: the task has not started running.' : 'No log: the task never ran on a worker.';
        logPre.hidden = true;
      }
      else if (!ctx.signal.aborted) logNote.replaceChildren(errorBox(e));
    }
  }

  async function refresh() {
    let st;
    try {
      st = (await get(`/svc/indexer/v1/task/${enc(id)}/status`, { signal: ctx.signal })).status;
    } catch (e) {
      if (!ctx.signal.aborted) statusEl.replaceChildren(errorBox(e));
      unreadable = e.status === 404 || e.status === 403;
      return !unreadable; // keep trying on transient errors only
    }
    const active = ACTIVE.has(st.statusCode || st.status);
    statusEl.replaceChildren(statusBlock(st));
    if (active && !cancelShown && mayDo(ctx, 'DATASOURCE', st.dataSource, 'WRITE')) {
      cancelShown = true;
      actions.append(h('button', { class: 'btn danger', type: 'button', id: 'c4-cancel', onclick: () => cancel(st) }, 'Cancel task'));
    }
    if (!active) actions.replaceChildren();
    // An empty toolbar would leave a gap (.toolbar's display beats the hidden attribute).
    actions.style.display = actions.firstChild ? '' : 'none';
    // A running task's report is its live progress; 404 until the first one arrives.
    try {
      const report = await get(`/svc/indexer/v1/task/${enc(id)}/reports`, { signal: ctx.signal });
      progressEl.replaceChildren(reportSummary(report));
      reportPre.replaceChildren(jsonView(report));
    } catch (e) {
      if (e.status === 404) {
        progressEl.replaceChildren(h('p', { class: 'muted' }, active ? 'No progress report yet.' : 'This task left no report.'));
        reportPre.replaceChildren(h('p', { class: 'muted' }, 'No report.'));
      } else if (!ctx.signal.aborted) progressEl.replaceChildren(errorBox(e));
    }
    await loadLog(-LOG_TAIL, active);
    if (!active && !ended) {
      ended = true;
      onEnd?.(st);
    }
    return active;
  }

  async function cancel(st) {
    const ok = await confirmDialog({
      title: 'Cancel task',
      message: h('p', {}, 'Cancel task ', h('strong', { class: 'mono' }, id), ` (${st.type} on ${st.dataSource})? ` +
        'What it has not yet published is discarded.'),
      confirmLabel: 'Cancel task',
      danger: true,
    });
    if (!ok) return;
    try {
      await post(`/svc/indexer/v1/task/${enc(id)}/shutdown`, undefined, { signal: ctx.signal });
      toast(`Cancel requested for ${id}`);
      refresh();
    } catch (e) {
      actions.append(errorBox(e));
      actions.style.display = '';
    }
  }

  const ready = repeat(refresh, 2000, ctx.signal);
  return { el, ready, unreadable: () => unreadable };
}

function statusBlock(st) {
  const kv = (k, v) => [h('dt', {}, k), h('dd', {}, v)];
  return h('dl', { class: 'kv' },
    kv('State', stateBadge(st.status)),
    kv('Type', st.type),
    kv('Datasource', st.dataSource ? h('a', { href: `#/datasources/${enc(st.dataSource)}` }, st.dataSource) : '—'),
    kv('Created', fmt.time(st.createdTime)),
    kv('Duration', taskDuration(st) || '—'),
    kv('Location', st.location?.host ? `${st.location.host}:${st.location.port}` : '—'),
    st.errorMsg ? kv('Error', h('span', { class: 'bad', role: 'alert' }, st.errorMsg)) : null);
}

// ---- Reports ----------------------------------------------------------------

// reportSummary renders what a report holds: an MSQ controller's stages and
// counters, a native batch task's row stats, or a Kafka task's position.
export function reportSummary(report) {
  if (report?.multiStageQuery) return msqSummary(report.multiStageQuery.payload || {});
  const native = report?.ingestionStatsAndErrors?.payload;
  if (native) {
    const rs = native.rowStats?.buildSegments || {};
    return h('section', { class: 'card' }, h('h3', {}, 'Ingestion'), h('dl', { class: 'kv' },
      h('dt', {}, 'State'), h('dd', {}, native.ingestionState || '—'),
      h('dt', {}, 'Rows'), h('dd', {}, rowStatsText(rs)),
      h('dt', {}, 'Segments published'), h('dd', {}, fmt.num(native.segmentsPublished ?? 0)),
      native.errorMsg ? [h('dt', {}, 'Error'), h('dd', { class: 'bad' }, native.errorMsg)] : null));
  }
  const kp = report?.kafkaProgress?.payload;
  if (kp) {
    return h('section', { class: 'card' }, h('h3', {}, 'Reading ', kp.stream || ''), h('dl', { class: 'kv' },
      h('dt', {}, 'Records read'), h('dd', {}, fmt.num(kp.recordsRead ?? 0)),
      h('dt', {}, 'Current offsets'), h('dd', { class: 'mono' },
        Object.entries(kp.currentOffsets || {}).map(([p, o]) => `${p}: ${o}`).join(', ') || '—'),
      kp.rowStats ? [h('dt', {}, 'Rows'), h('dd', {}, rowStatsText(kp.rowStats))] : null));
  }
  return h('p', { class: 'muted' }, 'The report is shown as JSON below.');
}

function rowStatsText(rs) {
  return `${fmt.num(rs.processed ?? 0)} processed, ${fmt.num(rs.processedWithError ?? 0)} with errors, ` +
    `${fmt.num(rs.thrownAway ?? 0)} thrown away, ${fmt.num(rs.unparseable ?? 0)} unparseable`;
}

// sumCounters adds a stage's counters over its workers: {name: {field: total}}.
// Channel counters hold one number per partition, so arrays are summed too.
function sumCounters(byWorker) {
  const out = {};
  for (const counters of Object.values(byWorker || {})) {
    for (const [name, c] of Object.entries(counters)) {
      const acc = (out[name] ||= {});
      for (const [k, v] of Object.entries(c)) {
        const n = Array.isArray(v) ? v.reduce((a, b) => a + (+b || 0), 0) : v;
        if (typeof n === 'number') acc[k] = (acc[k] || 0) + n;
      }
    }
  }
  return out;
}

function sumOf(counters, prefix, field) {
  let n = 0;
  for (const [name, c] of Object.entries(counters)) if (name.startsWith(prefix)) n += c[field] || 0;
  return n;
}

// stageProgress estimates a stage's completion in [0, 1]: by files read for
// external input, by rows read against the upstream stage's output otherwise,
// by rows pushed when generating segments. MSQ reports no totals beyond these.
function stageProgress(stage, counters, all) {
  const phase = stage.phase;
  if (phase === 'FINISHED' || phase === 'RESULTS_COMPLETE' || phase === 'RESULTS_READY') return 1;
  if (!phase || phase === 'NEW') return 0;
  const c = counters[stage.stageNumber] || {};
  const seg = c.segmentGenerationProgress;
  if (seg && seg.rowsMerged) return Math.min(0.99, (seg.rowsPushed || 0) / seg.rowsMerged);
  const totalFiles = sumOf(c, 'input', 'totalFiles');
  if (totalFiles) return Math.min(0.99, sumOf(c, 'input', 'files') / totalFiles);
  const ups = (stage.definition?.input || []).filter((i) => i.type === 'stage');
  const upRows = ups.reduce((a, i) => a + ((all[i.stage] || {}).output?.rows || 0), 0);
  if (upRows) return Math.min(0.99, sumOf(c, 'input', 'rows') / upRows);
  return phase === 'POST_READING' ? 0.9 : 0.5;
}

function counterText(c) {
  return Object.entries(c).filter(([k]) => k !== 'type')
    .map(([k, v]) => `${k} ${k.toLowerCase().includes('bytes') ? fmt.bytes(v) : fmt.num(v)}`).join(' · ');
}

function msqSummary(p) {
  const s = p.status || {};
  const counters = {};
  for (const [stage, byWorker] of Object.entries(p.counters || {})) counters[stage] = sumCounters(byWorker);
  const workers = Object.values(s.workers || {}).flat();
  const load = s.segmentLoadWaiterStatus || s.segmentLoadStatus;
  const err = s.errorReport;
  const stages = p.stages || [];

  const rows = stages.map((st) => {
    const c = counters[st.stageNumber] || {};
    const done = stageProgress(st, counters, counters);
    const inputs = (st.definition?.input || []).map((i) => (i.type === 'stage' ? `stage ${i.stage}` : i.inputSource?.type || i.type)).join(', ');
    return h('tr', {},
      h('td', { class: 'num' }, String(st.stageNumber)),
      h('td', {}, st.definition?.processor?.type || '—', st.sort ? h('span', { class: 'muted' }, ' (sort)') : null),
      h('td', {}, inputs || '—'),
      h('td', {}, stateBadge(st.phase || 'NEW')),
      h('td', {}, h('progress', { max: '1', value: String(done), 'aria-label': `Stage ${st.stageNumber} progress` }),
        ` ${Math.round(done * 100)}%`),
      h('td', { class: 'num' }, st.workerCount ?? '—'),
      h('td', { class: 'num' }, st.partitionCount ?? '—'),
      h('td', { class: 'num' }, fmt.num(sumOf(c, 'input', 'rows'))),
      h('td', { class: 'num' }, fmt.num(c.output?.rows || 0)),
      h('td', { class: 'num' }, st.duration >= 0 ? fmt.duration(st.duration) : '—'));
  });
  const head = ['Stage', 'Processor', 'Input', 'Phase', 'Progress', 'Workers', 'Partitions', 'Rows in', 'Rows out', 'Duration'];
  const countersList = stages.map((st) => {
    const c = counters[st.stageNumber] || {};
    return h('li', {}, h('strong', {}, `Stage ${st.stageNumber}: `),
      Object.entries(c).map(([name, v]) => h('div', { class: 'mono' }, `${name}: ${counterText(v)}`)));
  });

  return h('section', { class: 'card c4-msq' },
    h('h3', {}, 'Multi-stage query'),
    h('dl', { class: 'kv' },
      h('dt', {}, 'Status'), h('dd', {}, stateBadge(s.status)),
      h('dt', {}, 'Started'), h('dd', {}, s.startTime ? fmt.time(s.startTime) : 'not yet'),
      h('dt', {}, 'Duration'), h('dd', {}, s.durationMs >= 0 ? fmt.duration(s.durationMs) : '—'),
      h('dt', {}, 'Workers'), h('dd', {}, `${workers.length} (${s.runningTasks ?? '?'} tasks running, ${s.pendingTasks ?? '?'} pending)`),
      load ? [h('dt', {}, 'Segment load'), h('dd', {}, stateBadge(load.state),
        ` ${fmt.num(load.usedSegments ?? 0)} of ${fmt.num(load.totalSegments ?? 0)} segments used, ${fmt.num(load.pendingSegments ?? 0)} pending`)] : null,
      s.warnings?.length ? [h('dt', {}, 'Warnings'), h('dd', { class: 'warn' }, `${s.warnings.length} (see the report JSON)`)] : null),
    err ? h('div', { class: 'bad', role: 'alert' },
      h('strong', {}, `Error ${err.error?.errorCode || ''}`), err.stageNumber != null ? ` in stage ${err.stageNumber}` : '',
      err.error?.errorMessage ? `: ${err.error.errorMessage}` : '') : null,
    h('div', { style: 'overflow-x:auto' }, h('table', { class: 'data' }, h('caption', {}, 'Stages'),
      h('thead', {}, h('tr', {}, head.map((x) => h('th', { scope: 'col' }, x)))), h('tbody', {}, rows))),
    h('details', {}, h('summary', {}, 'Counters (summed over workers)'), h('ul', {}, countersList)));
}

// ---- SQL ingestion ----------------------------------------------------------

const TEMPLATES = {
  inline: `INSERT INTO inline_example
SELECT TIME_PARSE("timestamp") AS __time, page, added
FROM TABLE(EXTERN(
  '{"type":"inline","data":"{\\"timestamp\\":\\"2026-01-01T00:00:00Z\\",\\"page\\":\\"Main\\",\\"added\\":3}\\n{\\"timestamp\\":\\"2026-01-01T01:00:00Z\\",\\"page\\":\\"Talk\\",\\"added\\":5}"}',
  '{"type":"json"}',
  '[{"name":"timestamp","type":"string"},{"name":"page","type":"string"},{"name":"added","type":"long"}]'))
PARTITIONED BY DAY`,
  local: `REPLACE INTO wiki OVERWRITE ALL
SELECT TIME_PARSE("timestamp") AS __time, page, "user", added, deleted
FROM TABLE(EXTERN(
  '{"type":"local","files":["/absolute/path/on/the/server/wiki.json"]}',
  '{"type":"json"}',
  '[{"name":"timestamp","type":"string"},{"name":"page","type":"string"},{"name":"user","type":"string"},{"name":"added","type":"long"},{"name":"deleted","type":"long"}]'))
PARTITIONED BY DAY`,
  http: `INSERT INTO events
SELECT TIME_PARSE("ts") AS __time, *
FROM TABLE(EXTERN(
  '{"type":"http","uris":["https://example.com/events.json"]}',
  '{"type":"json"}',
  '[{"name":"ts","type":"string"},{"name":"name","type":"string"},{"name":"value","type":"double"}]'))
PARTITIONED BY HOUR`,
};
// The editor's draft, kept across visits; the Query view hands an INSERT over
// by writing it here (views/query.js, INGEST_DRAFT): keep the two in step.
const DRAFT_KEY = 'strata.console.ingestSql';

// targetOf reads the datasource an INSERT or REPLACE writes, to check WRITE
// before submitting; null for anything else (the server decides).
export function targetOf(sql) {
  const s = sql.replace(/--[^\n]*|\/\*[\s\S]*?\*\//g, ' ');
  const m = /^\s*(?:INSERT|REPLACE)\s+INTO\s+("(?:[^"]|"")+"|[\w$]+)/i.exec(s);
  if (!m) return null;
  return m[1].startsWith('"') ? m[1].slice(1, -1).replace(/""/g, '"') : m[1];
}

function sqlEditor(el, ctx) {
  const area = h('textarea', {
    id: 'c4-sql', class: 'mono', rows: '14', spellcheck: 'false',
    placeholder: 'INSERT INTO … SELECT … FROM TABLE(EXTERN(…)) PARTITIONED BY DAY',
  });
  area.value = localStorage.getItem(DRAFT_KEY) ?? TEMPLATES.inline;
  const tmpl = h('select', { id: 'c4-sql-template' },
    h('option', { value: '' }, 'Choose…'),
    h('option', { value: 'inline' }, 'INSERT from inline JSON'),
    h('option', { value: 'local' }, 'REPLACE from a local file'),
    h('option', { value: 'http' }, 'INSERT from HTTP'));
  tmpl.addEventListener('change', () => {
    if (tmpl.value) area.value = TEMPLATES[tmpl.value];
    tmpl.value = '';
    check();
  });
  const maxTasks = h('input', { id: 'c4-max-tasks', type: 'number', min: '2', max: '10000', step: '1', value: '2' });
  const submit = h('button', { class: 'btn primary', type: 'button', id: 'c4-sql-submit' }, 'Run ingestion');
  const note = h('p', { class: 'muted', id: 'c4-sql-note' });
  const out = h('div', { id: 'c4-sql-out' });

  // check tells the user before submitting when it may not write the target.
  function check() {
    localStorage.setItem(DRAFT_KEY, area.value);
    const target = targetOf(area.value);
    const allowed = !target || mayDo(ctx, 'DATASOURCE', target, 'WRITE');
    submit.disabled = !allowed || !area.value.trim();
    note.textContent = !allowed ? `You may not write to datasource ${target}.` :
      target ? `Writes datasource ${target}. Ctrl+Enter runs it.` : 'Ctrl+Enter runs it.';
    note.className = allowed ? 'muted' : 'bad';
  }

  async function run() {
    if (submit.disabled) return;
    if (!maxTasks.reportValidity()) return;
    submit.disabled = true;
    out.replaceChildren(loading());
    try {
      const res = await post('/svc/v2/sql/task', { query: area.value, context: { maxNumTasks: Number(maxTasks.value) } }, { signal: ctx.signal });
      const done = h('div', { 'aria-live': 'polite', id: 'c4-sql-done' });
      const follow = followTask(res.taskId, ctx, {
        onEnd: (st) => done.replaceChildren(st.status === 'SUCCESS'
          ? h('p', { class: 'ok' }, 'Done. Datasource ',
            h('a', { href: `#/datasources/${enc(st.dataSource)}`, id: 'c4-sql-ds' }, st.dataSource), ' — ',
            h('a', { href: '#/query' }, 'query it'), '.')
          : h('p', { class: 'bad', role: 'alert' }, `The task ended ${st.status}${st.errorMsg ? ': ' + st.errorMsg : ''}.`)),
      });
      out.replaceChildren(h('p', {}, 'Task ', h('a', { href: `#/ingestion/tasks/${enc(res.taskId)}`, class: 'mono' }, res.taskId)),
        done, follow.el);
    } catch (e) {
      out.replaceChildren(errorBox(e));
      selectErrorPosition(area, e.message || '');
    } finally {
      check();
    }
  }

  area.addEventListener('input', check);
  area.addEventListener('keydown', (e) => {
    if (e.key === 'Enter' && (e.ctrlKey || e.metaKey)) {
      e.preventDefault();
      run();
    }
  });
  submit.addEventListener('click', run);
  el.append(
    h('h2', {}, 'SQL ingestion'),
    h('p', { class: 'muted' }, 'INSERT or REPLACE with EXTERN runs as a multi-stage query task; its progress shows below.'),
    h('div', { class: 'toolbar' }, h('label', { for: 'c4-sql-template' }, 'Template '), tmpl,
      h('label', { for: 'c4-max-tasks' }, 'Max tasks '), maxTasks),
    h('label', { for: 'c4-sql' }, 'SQL statement'), area,
    h('div', { class: 'toolbar' }, submit), note, out);
  check();
}

// selectErrorPosition selects the line and column a SQL error names
// ("(line [2], column [7])"), so the reader sees where it is.
function selectErrorPosition(area, message) {
  const m = /line \[(\d+)\], column \[(\d+)\]/.exec(message);
  if (!m) return;
  const lines = area.value.split('\n');
  const line = Math.min(+m[1], lines.length) - 1;
  let pos = 0;
  for (let i = 0; i < line; i++) pos += lines[i].length + 1;
  pos += Math.max(0, +m[2] - 1);
  area.focus();
  area.setSelectionRange(pos, Math.min(pos + 1, area.value.length));
}
