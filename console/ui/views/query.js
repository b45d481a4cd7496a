// views/query.js: the query view. A SQL editor (a transparent textarea over a
// highlighted <pre>, so typing, selection, undo and screen readers are the
// browser's own), run/cancel/EXPLAIN, the error's position marked in place,
// results as a sortable table with CSV/JSON copy and a chart over time, a
// history kept in localStorage, and a native JSON mode beside SQL. Every
// action is a public API call: POST /svc/v2/sql, DELETE /svc/v2/sql/{id},
// POST /svc/v2/, DELETE /svc/v2/{queryId}.
import { h, clear, fmt } from '../lib/dom.js';
import { sql, post, del, get, ApiError } from '../lib/api.js';
import { dataTable } from '../lib/table.js';
import { lineChart } from '../lib/chart.js';
import { errorBox, jsonView, toast, missingPermission } from '../lib/ui.js';
import { highlight, errorPosition, offsetOf, splitLeadingSets } from '../lib/sqlhighlight.js';
import { flattenNative } from '../lib/query-native.js';

// localStorage keys; with security on, suffixed with the user, so a shared
// browser does not show one user's queries to the next.
const STORE = {
  history: 'strata.console.query.history',
  draft: 'strata.console.query.draft', // {sql, native, mode, context}
};
const keysFor = (self) => {
  const who = self && self.securityEnabled && self.identity ? `:${self.identity}` : '';
  return { history: STORE.history + who, draft: STORE.draft + who };
};
const HISTORY_MAX = 50;
const CHART_SERIES_MAX = 5; // a chart's legend fits about five names
const CHARTS_MAX = 4; // charts, one per numeric column
// The Ingestion view's SQL editor draft (views/ingestion.js, a plain
// string), where an INSERT typed here is handed over.
const INGEST_DRAFT = 'strata.console.ingestSql';

// InputError is a mistake in what the user typed (not JSON, not an object),
// shown like the server's errors and not logged as a console bug.
// inEditor says the message's position is in the editor's text (a native
// query's JSON), not in the context box.
class InputError extends Error {
  constructor(message, inEditor = false) { super(message); this.inEditor = inEditor; }
}

// The editor's own styles (overlay geometry and token colours) live beside
// this view, loaded once; a stylesheet, not inline styles, so the console's
// Content-Security-Policy can forbid inline style.
function loadStyles() {
  if (document.getElementById('query-css')) return;
  document.head.append(h('link', { id: 'query-css', rel: 'stylesheet', href: '/console/lib/query-editor.css' }));
}

// Storage may be full or disabled (private windows): the view still works,
// it just forgets.
function load(key, fallback) {
  try { return JSON.parse(localStorage.getItem(key)) ?? fallback; } catch { return fallback; }
}
function save(key, value) {
  try { localStorage.setItem(key, JSON.stringify(value)); } catch { /* see load */ }
}

// newId names a query so Cancel can find it. crypto.randomUUID needs a secure
// context, which a console served over plain HTTP on a LAN address is not.
function newId() {
  const b = crypto.getRandomValues(new Uint8Array(16));
  return 'console-' + [...b].map((x) => x.toString(16).padStart(2, '0')).join('');
}

const NUMERIC_SQL = new Set(['BIGINT', 'INTEGER', 'SMALLINT', 'TINYINT', 'DOUBLE', 'FLOAT', 'REAL', 'DECIMAL']);
const TIME_SQL = new Set(['TIMESTAMP', 'DATE']);

// columnKinds says which columns are time and which numeric: from the SQL
// types when there are some, else (native answers) from the values.
function columnKinds(columns, types, rows) {
  return columns.map((name, i) => {
    const t = (types[i] || '').toUpperCase();
    if (t) return TIME_SQL.has(t) ? 'time' : NUMERIC_SQL.has(t) ? 'number' : 'other';
    const vals = rows.map((r) => r[i]).filter((v) => v !== null && v !== undefined);
    if (!vals.length) return 'other';
    if ((name === 'timestamp' || name === '__time') && vals.every((v) => !Number.isNaN(new Date(v).getTime()))) return 'time';
    return vals.every((v) => typeof v === 'number') ? 'number' : 'other';
  });
}

// chartFor draws the numbers over time when there is a time column: a chart
// per numeric column (each on its own scale: counts beside sums of bytes
// would otherwise lie flat at zero), with a line per distinct value of the
// other columns (GROUP BY time and page: a line per page), at most
// CHART_SERIES_MAX lines and CHARTS_MAX charts.
function chartFor(columns, kinds, rows, width) {
  const ti = kinds.indexOf('time');
  const nums = kinds.flatMap((k, i) => (k === 'number' ? [i] : []));
  if (ti < 0 || !nums.length || !rows.length) return null;
  const dims = kinds.flatMap((k, i) => (k === 'other' ? [i] : []));
  const groupOf = (r) => dims.map((d) => String(r[d])).join(' · ');
  // A line per group only when the rows are series (a few values, several
  // points each); raw rows, whose other columns are nearly all distinct,
  // draw one line per number instead of a dot per row.
  const grouped = dims.length > 0 && new Set(rows.map(groupOf)).size * 2 <= rows.length;
  const shownNums = nums.slice(0, CHARTS_MAX);
  const w = shownNums.length > 1 ? Math.max(320, Math.min(width / 2 - 8, 640)) : Math.max(320, Math.min(width, 1100));
  let dropped = 0;
  const charts = shownNums.map((n) => {
    const series = new Map();
    for (const r of rows) {
      const x = new Date(r[ti]).getTime();
      if (Number.isNaN(x) || typeof r[n] !== 'number') continue;
      const name = grouped ? groupOf(r) : columns[n];
      if (!series.has(name)) series.set(name, { name, points: [] });
      series.get(name).points.push([x, r[n]]);
    }
    const all = [...series.values()];
    dropped = Math.max(dropped, all.length - CHART_SERIES_MAX);
    return lineChart({ series: all.slice(0, CHART_SERIES_MAX), width: w, height: 220, yLabel: columns[n] });
  });
  return h('figure', { class: 'card query-chart', id: 'query-chart' },
    h('div', { class: 'query-charts' }, charts),
    h('figcaption', { class: 'muted' },
      `${shownNums.map((n) => columns[n]).join(', ')} over ${columns[ti]}`,
      nums.length > shownNums.length ? ` (the first ${shownNums.length} of ${nums.length} numeric columns)` : '',
      dropped > 0 ? ` (the first ${CHART_SERIES_MAX} series of each)` : ''));
}

function csvCell(v) {
  if (v === null || v === undefined) return '';
  const s = typeof v === 'object' ? JSON.stringify(v) : String(v);
  return /[",\r\n]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
}
const toCSV = (columns, rows) => [columns, ...rows].map((r) => r.map(csvCell).join(',')).join('\r\n') + '\r\n';
const toJSON = (columns, rows) => JSON.stringify(rows.map((r) => Object.fromEntries(columns.map((c, i) => [c, r[i]]))), null, 2);

function cell(v) {
  if (v === null || v === undefined) return h('span', { class: 'muted' }, 'null');
  return typeof v === 'object' ? JSON.stringify(v) : String(v);
}

export const view = {
  id: 'query',
  title: 'Query',
  nav: true,
  async render(root, ctx) {
    loadStyles();
    const KEY = keysFor(ctx.self);
    const draft = { mode: 'sql', sql: '', native: '', context: '', limit: '1000', ...load(KEY.draft, {}) };
    let mode = draft.mode === 'native' ? 'native' : 'sql';
    let running = null; // {ac, id, mode, cancelled}
    let downloadURL = null;

    // ---- editor ------------------------------------------------------------
    const paint = h('pre', { class: 'qe-paint mono', 'aria-hidden': 'true' });
    const input = h('textarea', {
      id: 'query-editor', class: 'qe-input mono', rows: 10, wrap: 'off', spellcheck: 'false',
      autocapitalize: 'off', autocomplete: 'off', 'aria-describedby': 'query-keys query-error',
    });
    const editorLabel = h('label', { for: 'query-editor', id: 'query-editor-label' });
    let errorAt = -1;
    const repaint = () => highlight(paint, input.value, { lang: mode === 'native' ? 'json' : 'sql', errorAt });
    const syncScroll = () => { paint.scrollTop = input.scrollTop; paint.scrollLeft = input.scrollLeft; };
    input.addEventListener('input', () => {
      errorAt = -1;
      input.removeAttribute('aria-invalid');
      repaint();
      syncScroll();
      saveDraft();
    });
    input.addEventListener('scroll', syncScroll);

    const contextIn = h('textarea', { id: 'query-context', class: 'mono', rows: 3, spellcheck: 'false',
      placeholder: '{"sqlTimeZone": "America/New_York"}', oninput: () => saveDraft() });
    contextIn.value = draft.context || '';
    const contextBox = h('details', { class: 'query-context' },
      h('summary', {}, 'Query context'),
      h('label', { for: 'query-context' }, 'Context keys added to every query (JSON object)'), contextIn);

    function saveDraft() {
      draft[mode] = input.value;
      draft.mode = mode;
      draft.context = contextIn.value;
      draft.limit = limitSel.value;
      save(KEY.draft, draft);
    }

    // ---- toolbar -----------------------------------------------------------
    const modeSQL = h('button', { type: 'button', class: 'btn', id: 'query-mode-sql', onclick: () => setMode('sql') }, 'SQL');
    const modeNative = h('button', { type: 'button', class: 'btn', id: 'query-mode-native', onclick: () => setMode('native') }, 'Native JSON');
    const runBtn = h('button', { type: 'button', class: 'btn primary', id: 'query-run', onclick: () => run(false),
      title: 'Run (Ctrl+Enter)' }, 'Run');
    const explainBtn = h('button', { type: 'button', class: 'btn', id: 'query-explain', onclick: () => run(true),
      title: 'EXPLAIN PLAN FOR the query: the native query it runs as' }, 'Explain');
    // Max rows asks the broker for one row more than shown (sqlOuterLimit, as
    // Druid's console does), so the view knows when there were more and the
    // browser is never handed millions of rows by a stray SELECT *.
    const limitSel = h('select', { id: 'query-limit', onchange: () => saveDraft() },
      ['100', '1000', '10000', '100000'].map((n) => h('option', { value: n }, fmt.num(+n))),
      h('option', { value: '' }, 'No limit'));
    limitSel.value = ['100', '1000', '10000', '100000', ''].includes(draft.limit) ? draft.limit : '1000';
    const cancelBtn = h('button', { type: 'button', class: 'btn danger', id: 'query-cancel', disabled: true, onclick: () => cancel() }, 'Cancel');
    const status = h('span', { id: 'query-status', class: 'muted', role: 'status', 'aria-live': 'polite' });
    const errorArea = h('div', { id: 'query-error' });
    const results = h('div', { id: 'query-results' });

    // ---- history -------------------------------------------------------------
    const historyList = h('ol', { id: 'query-history', class: 'query-history' });
    const clearBtn = h('button', { type: 'button', class: 'btn small', id: 'query-history-clear', onclick: () => {
      save(KEY.history, []);
      drawHistory();
      toast('Query history cleared');
    } }, 'Clear');

    // history reads the stored list, dropping anything that is not an entry
    // (storage edited by hand, or by an older console).
    function history() {
      const list = load(KEY.history, []);
      return Array.isArray(list) ? list.filter((e) => e && typeof e.text === 'string') : [];
    }

    function remember(entry) {
      const list = history().filter((e) => !(e.mode === entry.mode && e.text === entry.text));
      list.unshift(entry);
      save(KEY.history, list.slice(0, HISTORY_MAX));
      drawHistory();
    }

    function drawHistory() {
      const list = history();
      clear(historyList);
      clearBtn.disabled = !list.length;
      if (!list.length) historyList.append(h('li', { class: 'muted' }, 'Queries you run appear here.'));
      for (const e of list) {
        const oneLine = e.text.replace(/\s+/g, ' ').trim();
        const outcome = e.error ? 'failed' : e.explain ? `explained, ${fmt.ms(e.ms)}`
          : `${fmt.num(e.rows)} ${e.rows === 1 ? 'row' : 'rows'}, ${fmt.ms(e.ms)}`;
        historyList.append(h('li', {},
          h('button', { type: 'button', class: 'query-history-item', title: e.text, onclick: () => {
            setMode(e.mode === 'native' ? 'native' : 'sql');
            input.value = e.text;
            input.dispatchEvent(new Event('input'));
            input.focus();
          } },
          h('span', { class: 'mono' }, oneLine.length > 90 ? `${oneLine.slice(0, 90)}…` : oneLine),
          h('span', { class: 'muted query-note' }, `${e.mode === 'native' ? 'Native' : 'SQL'} · ${fmt.time(e.at)} UTC · ${outcome}`))));
      }
    }

    function setMode(m, { init = false } = {}) {
      if (running) return;
      if (!init) saveDraft();
      mode = m;
      input.value = draft[m] || '';
      errorAt = -1;
      input.removeAttribute('aria-invalid');
      editorLabel.textContent = m === 'native' ? 'Native query (JSON)' : 'SQL query';
      modeSQL.setAttribute('aria-pressed', String(m === 'sql'));
      modeNative.setAttribute('aria-pressed', String(m === 'native'));
      explainBtn.hidden = m !== 'sql';
      limitSel.disabled = m !== 'sql'; // native queries carry their own limit
      repaint();
      if (!init) saveDraft();
    }

    // ---- running -------------------------------------------------------------
    function setRunning(r) {
      running = r;
      runBtn.disabled = !!r;
      explainBtn.disabled = !!r;
      cancelBtn.disabled = !r;
      modeSQL.disabled = modeNative.disabled = !!r;
      results.setAttribute('aria-busy', String(!!r));
    }

    // userContext parses the context box; a mistake there is the user's to fix,
    // shown like any other error.
    function userContext() {
      const t = contextIn.value.trim();
      if (!t) return {};
      let v;
      try { v = JSON.parse(t); } catch (e) { throw new InputError(`Query context is not JSON: ${e.message}`); }
      if (!v || typeof v !== 'object' || Array.isArray(v)) throw new InputError('Query context must be a JSON object');
      return v;
    }

    // showError puts the error under the editor and, when the message names a
    // position, marks it in the editor and moves the caret there.
    // sent is the text the server parsed; toEditor maps an offset in it back
    // to the editor's text (EXPLAIN PLAN FOR was inserted before the query).
    function showError(err, text, sent = text, toEditor = (o) => o) {
      clear(errorArea);
      errorArea.append(errorBox(err));
      // Druid's 403 says only "Unauthorized"; its context names what the
      // user lacks, which is what they need to ask for.
      const need = missingPermission(err);
      if (need) errorArea.append(h('p', { id: 'query-error-need' }, `This needs ${need}, which your user does not have.`));
      // INSERT and REPLACE are tasks (Druid's query view runs them with the
      // MSQ engine): hand the statement to the Ingestion view's SQL editor,
      // which submits it and follows its task.
      if (mode === 'sql' && /run as tasks/.test(err && err.message)) {
        errorArea.append(h('p', {},
          h('button', { type: 'button', class: 'btn primary', id: 'query-to-ingestion', onclick: () => {
            try { localStorage.setItem(INGEST_DRAFT, text); } catch { /* the editor opens on its own draft */ }
            ctx.navigate('#/ingestion/sql');
          } }, 'Open in the SQL ingestion editor')));
      }
      const inEditor = !(err instanceof InputError) || err.inEditor;
      const at = inEditor ? offsetOf(sent, errorPosition(err && err.message)) : -1;
      const off = at >= 0 ? Math.min(toEditor(at), text.length) : -1;
      if (off >= 0 && input.value === text) {
        errorAt = off;
        input.setAttribute('aria-invalid', 'true');
        repaint();
        const before = text.slice(0, off).split('\n');
        const where = `line ${before.length}, column ${before[before.length - 1].length + 1}`;
        errorArea.append(h('p', { class: 'query-error-pos' },
          h('button', { type: 'button', class: 'btn small', id: 'query-error-goto', onclick: () => {
            input.focus();
            input.setSelectionRange(off, Math.min(off + 1, text.length));
          } }, `Go to ${where}`),
          ' The error is marked in the editor.'));
      }
    }

    async function run(explain) {
      if (running) return;
      const text = input.value;
      if (!text.trim()) { input.focus(); return; }
      clear(errorArea);
      errorAt = -1;
      repaint();
      const r = { ac: new AbortController(), id: newId(), mode, cancelled: false };
      setRunning(r);
      status.textContent = explain ? 'Explaining…' : 'Running…';
      const t0 = performance.now();
      let sent = text;
      const limit = mode === 'sql' ? Number(limitSel.value) : 0;
      let toEditor = (o) => o;
      try {
        const base = userContext();
        let columns, types, rows, queryId;
        if (mode === 'sql') {
          if (explain) {
            const { sets, query } = splitLeadingSets(text);
            if (!/^\s*EXPLAIN\b/i.test(query)) {
              const prefix = 'EXPLAIN PLAN FOR ';
              sent = `${sets}${prefix}${query}`;
              toEditor = (o) => (o < sets.length ? o : Math.max(sets.length, o - prefix.length));
            }
          }
          const qctx = { ...base, sqlQueryId: r.id };
          if (!explain && limit && qctx.sqlOuterLimit === undefined) qctx.sqlOuterLimit = limit + 1;
          ({ columns, types, rows, queryId } = await sql(sent, { context: qctx, signal: r.ac.signal }));
        } else {
          let q;
          try { q = JSON.parse(text); } catch (e) { throw new InputError(`The native query is not JSON: ${e.message}`, true); }
          if (!q || typeof q !== 'object' || Array.isArray(q)) throw new InputError('A native query is a JSON object with a queryType');
          // The query's own context wins over the context box; the queryId is
          // ours unless the query names one, so Cancel can find it.
          const qctx = { ...base, ...(q.context || {}) };
          if (!qctx.queryId) qctx.queryId = r.id;
          r.id = qctx.queryId;
          const answer = await post('/svc/v2/', { ...q, context: qctx }, { signal: r.ac.signal });
          ({ columns, rows } = flattenNative(answer));
          types = [];
          queryId = r.id;
        }
        const ms = performance.now() - t0;
        const more = limit > 0 && rows.length > limit;
        if (more) rows = rows.slice(0, limit);
        remember({ mode, text, at: Date.now(), ms, rows: rows.length, explain });
        const isPlan = columns.length === 3 && columns[0] === 'PLAN' && columns[1] === 'RESOURCES' && rows.length === 1;
        status.textContent = isPlan ? `Plan in ${fmt.ms(ms)}`
          : more ? `First ${fmt.num(rows.length)} rows in ${fmt.ms(ms)} (more not shown: raise Max rows)`
            : `${fmt.num(rows.length)} ${rows.length === 1 ? 'row' : 'rows'} in ${fmt.ms(ms)}`;
        status.title = queryId ? `Query ID ${queryId}` : '';
        if (isPlan) drawPlan(rows[0]);
        else drawResults(columns, types, rows);
      } catch (e) {
        if (e && e.name === 'AbortError' && !r.cancelled) return; // the view was left; nothing to show
        clear(results); // the previous query's rows would read as this one's
        if (r.cancelled) {
          status.textContent = `Cancelled after ${fmt.ms(performance.now() - t0)}`;
        } else {
          status.textContent = 'Failed';
          remember({ mode, text, at: Date.now(), error: true, explain });
          if (!(e instanceof ApiError) && !(e instanceof InputError)) console.error(e);
          showError(e, text, sent, toEditor);
        }
      } finally {
        if (running === r) setRunning(null);
      }
    }

    // cancel asks the server to stop the query by its id (the API call a
    // script would make), then drops our request, which also ends the query
    // should the DELETE have come before the server registered it.
    async function cancel() {
      const r = running;
      if (!r) return;
      r.cancelled = true;
      cancelBtn.disabled = true;
      status.textContent = 'Cancelling…';
      const path = r.mode === 'sql' ? `/svc/v2/sql/${encodeURIComponent(r.id)}` : `/svc/v2/${encodeURIComponent(r.id)}`;
      try {
        await del(path);
      } catch (e) {
        if (!(e instanceof ApiError && e.status === 404)) { clear(errorArea); errorArea.append(errorBox(e)); }
      }
      r.ac.abort();
    }

    // ---- results ---------------------------------------------------------------
    function exportButtons(columns, rows) {
      const fallback = h('span', { class: 'query-download' });
      const copy = async (kind) => {
        const text = kind === 'CSV' ? toCSV(columns, rows) : toJSON(columns, rows);
        try {
          if (!navigator.clipboard) throw new Error('no clipboard here');
          await navigator.clipboard.writeText(text);
          toast(`Copied ${fmt.num(rows.length)} rows as ${kind}`);
        } catch {
          // No clipboard (plain HTTP, or permission refused): offer the file.
          if (downloadURL) URL.revokeObjectURL(downloadURL);
          downloadURL = URL.createObjectURL(new Blob([text], { type: kind === 'CSV' ? 'text/csv' : 'application/json' }));
          clear(fallback).append(h('a', { href: downloadURL, download: `query-result.${kind.toLowerCase()}`, id: 'query-download' },
            `Download ${kind}`), h('span', { class: 'muted' }, ' (the clipboard is not available here)'));
          fallback.querySelector('a').focus();
        }
      };
      return [
        h('button', { type: 'button', class: 'btn small', id: 'query-copy-csv', onclick: () => copy('CSV') }, 'Copy as CSV'),
        h('button', { type: 'button', class: 'btn small', id: 'query-copy-json', onclick: () => copy('JSON') }, 'Copy as JSON'),
        fallback,
      ];
    }

    function drawResults(columns, types, rows) {
      clear(results);
      const kinds = columnKinds(columns, types, rows);
      const table = dataTable({
        columns: columns.map((name, i) => ({
          key: i, label: name, align: kinds[i] === 'number' ? 'right' : undefined,
          value: (row) => row[i], render: (row) => cell(row[i]),
        })),
        rows, filter: rows.length > 10, pageSize: 100, empty: 'The query answered no rows',
        caption: `Query results: ${fmt.num(rows.length)} rows`,
      });
      // h() skips a missing chart; the DOM's append would print "null".
      results.append(h('div', {},
        h('div', { class: 'toolbar' }, h('h2', {}, 'Results'), exportButtons(columns, rows)),
        chartFor(columns, kinds, rows, results.clientWidth || 800),
        table.el));
    }

    // drawPlan shows EXPLAIN's answer: each native query the statement runs as
    // (the PLAN column is Druid's JSON in a string), with a button to open it
    // in the native mode, and the resources and attributes.
    function drawPlan([plan, resources, attributes]) {
      clear(results);
      const parse = (s) => { try { return JSON.parse(s); } catch { return s; } };
      const plans = [].concat(parse(plan));
      const box = h('div', { id: 'query-plan' }, h('h2', {}, 'Plan'));
      plans.forEach((p, i) => {
        const q = p && p.query ? p.query : p;
        box.append(h('section', { class: 'card' },
          h('div', { class: 'toolbar' },
            h('h3', {}, `Native query${plans.length > 1 ? ` ${i + 1}` : ''}: ${q && q.queryType ? q.queryType : 'unknown'}`),
            q && q.queryType ? h('button', { type: 'button', class: 'btn small', onclick: () => openNative(q) }, 'Open in native mode') : null),
          jsonView(q),
          p && p.signature ? h('p', { class: 'muted' }, 'Signature: ', p.signature.map((c) => `${c.name} ${c.type}`).join(', ')) : null));
      });
      box.append(h('dl', { class: 'kv' },
        h('dt', {}, 'Resources'), h('dd', { class: 'mono' }, JSON.stringify(parse(resources))),
        h('dt', {}, 'Attributes'), h('dd', { class: 'mono' }, JSON.stringify(parse(attributes)))));
      results.append(box);
    }

    function openNative(q) {
      // The plan's ids were the EXPLAIN's own; a run gets fresh ones.
      const copy = structuredClone(q);
      if (copy.context) { delete copy.context.queryId; delete copy.context.sqlQueryId; }
      saveDraft();
      draft.native = JSON.stringify(copy, null, 2);
      setMode('native');
      input.focus();
    }

    // ---- tables ------------------------------------------------------------------
    // The datasources the user may read (the API filters them), each opening
    // onto its columns (INFORMATION_SCHEMA, asked on first open). A column's
    // button types its quoted name at the caret: "page" is the same in SQL and
    // in a native query's JSON.
    const tablesBox = h('div', { id: 'query-tables' }, h('p', { class: 'muted' }, 'Loading…'));
    const quote = (name) => `"${name.replace(/"/g, '""')}"`;
    const starter = (ds) => `SELECT *\nFROM ${quote(ds)}\nORDER BY __time DESC\nLIMIT 100`;

    function insertAtCaret(text) {
      input.focus();
      // execCommand keeps the browser's undo history; setRangeText is the
      // fallback where it is gone.
      if (!document.execCommand || !document.execCommand('insertText', false, text)) {
        input.setRangeText(text, input.selectionStart, input.selectionEnd, 'end');
        input.dispatchEvent(new Event('input'));
      }
    }

    async function loadTables() {
      let names = [];
      try {
        names = await get('/svc/v2/datasources', { signal: ctx.signal });
      } catch (e) {
        if (e.name !== 'AbortError') clear(tablesBox).append(errorBox(e));
        return [];
      }
      clear(tablesBox);
      if (!names.length) tablesBox.append(h('p', { class: 'muted' }, ctx.self && ctx.self.securityEnabled
        ? 'No datasource you may read.' : 'No datasources yet: load one from the Ingestion view.'));
      const list = h('ul', { class: 'query-tables' });
      for (const ds of names) {
        const cols = h('ul', { class: 'query-columns' });
        const details = h('details', { 'data-table': ds },
          h('summary', { class: 'mono' }, ds),
          h('button', { type: 'button', class: 'btn small', onclick: () => {
            if (mode !== 'sql') setMode('sql');
            input.value = starter(ds);
            input.dispatchEvent(new Event('input'));
            input.focus();
          } }, `SELECT * FROM ${ds}`),
          cols);
        let loaded = false;
        details.addEventListener('toggle', async () => {
          if (!details.open || loaded) return;
          loaded = true;
          cols.append(h('li', { class: 'muted' }, 'Loading…'));
          try {
            const { rows } = await sql(
              "SELECT COLUMN_NAME, DATA_TYPE FROM INFORMATION_SCHEMA.COLUMNS WHERE TABLE_SCHEMA = 'druid' AND TABLE_NAME = ? ORDER BY ORDINAL_POSITION",
              { parameters: [{ type: 'VARCHAR', value: ds }], signal: ctx.signal });
            clear(cols);
            for (const [name, type] of rows) {
              cols.append(h('li', {}, h('button', { type: 'button', class: 'query-column', 'aria-label': `Insert column ${name}`,
                onclick: () => insertAtCaret(quote(name)) }, h('span', { class: 'mono' }, name), h('span', { class: 'muted' }, type))));
            }
          } catch (e) {
            loaded = false; // a later open tries again
            if (e.name !== 'AbortError') clear(cols).append(h('li', {}, errorBox(e)));
          }
        });
        list.append(h('li', {}, details));
      }
      tablesBox.append(list);
      return names;
    }

    // ---- layout ------------------------------------------------------------------
    // Ctrl+Enter (Cmd+Enter on a Mac) runs from anywhere in the view, as in
    // Druid's console; Tab is left alone so the keyboard can leave the editor.
    root.addEventListener('keydown', (e) => {
      if (e.key === 'Enter' && (e.ctrlKey || e.metaKey)) {
        e.preventDefault();
        run(false);
      }
    });

    root.append(
      h('h1', {}, 'Query'),
      h('div', { class: 'query-layout' },
        h('div', { class: 'query-main' },
          h('div', { class: 'toolbar', role: 'group', 'aria-label': 'Query language' }, modeSQL, modeNative),
          editorLabel,
          h('div', { class: 'qe' }, paint, input),
          h('p', { id: 'query-keys', class: 'muted query-note' }, 'Ctrl+Enter runs the query.'),
          contextBox,
          h('div', { class: 'toolbar' }, runBtn, explainBtn, cancelBtn,
            h('label', { for: 'query-limit', id: 'query-limit-label' }, 'Max rows'), limitSel, status),
          errorArea,
          results),
        h('div', { class: 'query-side' },
          h('aside', { class: 'card query-aside', 'aria-labelledby': 'query-tables-title' },
            h('h2', { id: 'query-tables-title' }, 'Tables'), tablesBox),
          h('aside', { class: 'card query-aside', 'aria-labelledby': 'query-history-title' },
            h('div', { class: 'toolbar' }, h('h2', { id: 'query-history-title' }, 'History'), clearBtn),
            historyList))));

    setMode(mode, { init: true });
    drawHistory();
    const tables = await loadTables();
    if (!input.value.trim() && mode === 'sql') {
      input.value = tables.length ? starter(tables[0]) : 'SELECT 1 + 1 AS two';
      repaint();
    }
    root.dataset.ready = 'true';

    // A query left running when the user leaves the view is cancelled, as
    // nobody will see its answer.
    ctx.signal.addEventListener('abort', () => { if (running) cancel(); }, { once: true });
    return () => { if (downloadURL) URL.revokeObjectURL(downloadURL); };

  },
};
