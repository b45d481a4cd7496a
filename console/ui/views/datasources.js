// datasources.js: every datasource with its segments, size, rows,
// availability, time range and retention rules (#/datasources), and one
// datasource's page (#/datasources/<name>): its rules edited with a form that
// posts the rules API's own JSON with the audit author and comment, the rules
// history, marking segments used or unused, and permanently deleting (kill)
// the unused segments of an interval. #/datasources/_default edits the
// cluster's default rules.

import { h, clear, fmt } from '../lib/dom.js';
import { get, post, del, sql } from '../lib/api.js';
import { dataTable } from '../lib/table.js';
import { errorBox, confirmDialog, auditFields, toast, jsonView, loading } from '../lib/ui.js';
import { can } from '../lib/perm.js';

const enc = encodeURIComponent;
const DEFAULT = '_default';
const C = '/svc/coordinator/v1';

// The ten rule types: kind (what happens to the segments) and scope (which
// segments), in the order the API's messages list them.
const RULE_TYPES = [
  ['loadForever', 'Load', 'forever'], ['loadByPeriod', 'Load', 'period'], ['loadByInterval', 'Load', 'interval'],
  ['dropForever', 'Drop', 'forever'], ['dropByPeriod', 'Drop', 'period'], ['dropBeforeByPeriod', 'Drop', 'before'],
  ['dropByInterval', 'Drop', 'interval'],
  ['broadcastForever', 'Broadcast', 'forever'], ['broadcastByPeriod', 'Broadcast', 'period'], ['broadcastByInterval', 'Broadcast', 'interval'],
];
const TYPE = Object.fromEntries(RULE_TYPES.map(([t, kind, scope]) => [t, { kind, scope }]));
const SCOPE_TEXT = { forever: 'forever', period: 'by period', before: 'before period', interval: 'by interval' };

// ruleText says a rule in words, for the tables and the history.
export function ruleText(r) {
  const t = TYPE[r.type];
  if (!t) return JSON.stringify(r);
  let where = '';
  if (t.scope === 'period') where = ` ${r.period}${r.includeFuture === false ? '' : ' (and the future)'}`;
  else if (t.scope === 'before') where = ` older than ${r.period}`;
  else if (t.scope === 'interval') where = ` ${fmt.interval(r.interval)}`;
  else where = ' forever';
  let what = t.kind.toLowerCase();
  if (t.kind === 'Load') {
    const tiers = r.tieredReplicants ?? (r.useDefaultTierForNull === false ? {} : { _default_tier: 2 });
    const list = Object.entries(tiers).map(([tier, n]) => `${n}× ${tier}`).join(', ');
    what = `load${list ? ` (${list})` : ' (no replicas)'}`;
  }
  return `${what}${where}`;
}

function rulesList(rules) {
  if (!rules || !rules.length) return h('span', { class: 'muted' }, 'none');
  return h('ol', { class: 'rules' }, rules.map((r) => h('li', {}, ruleText(r))));
}

// settle turns a promise into {value} or {error}, so one missing permission
// (loadstatus and rules need STATE READ) does not blank the whole page.
const settle = (p) => p.then((value) => ({ value }), (error) => ({ error }));
// The cluster-wide state (loadstatus, every datasource's rules) needs STATE
// READ: without it those calls are not made (the browser would log each 403)
// and the page says what it cannot show.
const stateReadable = (self) => can(self, 'STATE', 'STATE', 'READ');
const skipped = Promise.resolve({ value: null, skipped: true });

export const view = {
  id: 'datasources',
  title: 'Datasources',
  nav: true,
  async render(root, ctx) {
    if (ctx.path.length) return renderOne(root, ctx, ctx.path[0]);
    return renderList(root, ctx);
  },
};

// ---- the list --------------------------------------------------------------

async function renderList(root, ctx) {
  const { signal, self } = ctx;
  clear(root).append(h('h1', {}, 'Datasources'), loading());
  const [served, names, stats, load, rules] = await Promise.all([
    settle(get(`${C}/datasources?simple`, { signal })),
    settle(get(`${C}/metadata/datasources?includeUnused`, { signal })),
    settle(sql('SELECT datasource, COUNT(*) AS segments, SUM(num_rows) AS num_rows, ' +
      'SUM(CASE WHEN is_available = 1 THEN 1 ELSE 0 END) AS available FROM sys.segments WHERE is_active = 1 GROUP BY datasource', { signal })),
    stateReadable(self) ? settle(get(`${C}/loadstatus`, { signal })) : skipped,
    stateReadable(self) ? settle(get(`${C}/rules`, { signal })) : skipped,
  ]);
  if (signal.aborted) return undefined;
  if (served.error) {
    clear(root).append(h('h1', {}, 'Datasources'), errorBox(served.error));
    root.dataset.ready = 'true';
    return undefined;
  }
  const byName = new Map();
  const row = (name) => {
    if (!byName.has(name)) {
      byName.set(name, { name, segments: 0, size: 0, rows: null, availability: null, minTime: null, maxTime: null, rules: null, unusedOnly: false });
    }
    return byName.get(name);
  };
  for (const d of served.value || []) {
    const r = row(d.name);
    const s = d.properties?.segments || {};
    Object.assign(r, { segments: s.count || 0, size: s.size || 0, minTime: s.minTime || null, maxTime: s.maxTime || null });
  }
  // A datasource whose segments are all unused is only in the metadata list;
  // it is listed so that it can be marked used again or killed.
  for (const n of names.value || []) if (!byName.has(n)) row(n).unusedOnly = true;
  const sqlAvail = new Map();
  for (const [name, , rows, available] of stats.value?.rows || []) {
    if (!byName.has(name)) continue;
    row(name).rows = Number(rows);
    sqlAvail.set(name, Number(available));
  }
  for (const r of byName.values()) {
    if (load.value && r.name in load.value) r.availability = Number(load.value[r.name]) / 100;
    else if (sqlAvail.has(r.name) && r.segments) r.availability = sqlAvail.get(r.name) / r.segments; // without STATE READ
    if (rules.value) r.rules = rules.value[r.name]?.length ? { own: true, list: rules.value[r.name] } : { own: false, list: rules.value[DEFAULT] || [] };
  }

  const notes = [];
  if (stats.error) notes.push(h('div', { class: 'warn' }, 'Rows unknown: ', errorBox(stats.error)));
  if (rules.error || rules.skipped) notes.push(h('p', { class: 'muted' }, 'Retention rules are shown on each datasource\'s page (listing all of them needs STATE READ).'));

  const table = dataTable({
    caption: 'Datasources',
    filter: true,
    rowKey: (r) => r.name,
    empty: 'No datasources yet: load data from the Ingestion view.',
    onRowClick: (r) => ctx.navigate(`#/datasources/${enc(r.name)}`),
    columns: [
      { key: 'name', label: 'Datasource', render: (r) => h('a', { href: `#/datasources/${enc(r.name)}`, class: 'ds-name' }, r.name) },
      {
        key: 'availability', label: 'Availability',
        render: (r) => {
          if (r.unusedOnly) return h('span', { class: 'muted' }, 'all segments unused');
          if (r.availability === null) return '—';
          if (r.availability >= 1) return h('span', { class: 'ok' }, '✓ fully available');
          return h('span', { class: r.availability > 0 ? 'warn' : 'bad' }, `${fmt.pct(r.availability)} available`);
        },
      },
      { key: 'segments', label: 'Segments', align: 'right', render: (r) => fmt.num(r.segments) },
      { key: 'size', label: 'Total size', align: 'right', render: (r) => fmt.bytes(r.size) },
      { key: 'rows', label: 'Rows', align: 'right', render: (r) => fmt.num(r.rows) },
      {
        key: 'minTime', label: 'Time range', value: (r) => r.minTime,
        render: (r) => (r.minTime ? fmt.interval(`${r.minTime}/${r.maxTime}`) : '—'),
      },
      {
        key: 'rules', label: 'Retention', value: (r) => (r.rules ? r.rules.list.map(ruleText).join('; ') : ''),
        render: (r) => (!r.rules ? '—' : h('span', {}, r.rules.list.map(ruleText).join('; ') || 'none', r.rules.own ? '' : h('span', { class: 'muted' }, ' (cluster default)'))),
      },
      { key: 'links', label: 'Segments', value: () => '', render: (r) => h('a', { href: `#/segments?datasource=${enc(r.name)}` }, 'Show segments') },
    ],
    rows: [...byName.values()].sort((a, b) => (a.name < b.name ? -1 : 1)),
  });
  clear(root).append(
    h('h1', {}, 'Datasources'),
    h('div', { class: 'toolbar' },
      stateReadable(self) ? h('a', { href: `#/datasources/${DEFAULT}`, class: 'btn' }, 'Cluster default retention rules') : null),
    ...notes, table.el);
  root.dataset.ready = 'true';
  return undefined;
}

// ---- one datasource ----------------------------------------------------------

async function renderOne(root, ctx, name) {
  const { signal, self } = ctx;
  const isDefault = name === DEFAULT;
  // The rules API checks DATASOURCE WRITE on the name, _default included.
  const writable = can(self, 'DATASOURCE', name, 'WRITE');
  const summary = h('section', { class: 'card', 'aria-labelledby': 'ds-sum-h' });
  const rulesCard = h('section', { class: 'card', 'aria-labelledby': 'ds-rules-h' });
  const historyCard = h('section', { class: 'card', 'aria-labelledby': 'ds-hist-h' });
  clear(root).append(
    h('p', {}, h('a', { href: '#/datasources' }, '← All datasources')),
    h('h1', {}, isDefault ? 'Cluster default retention rules' : name),
    isDefault ? h('p', { class: 'muted' }, 'A datasource\'s segments take the first matching rule of its own list, then of this one.') : summary,
    h('div', { class: 'split' }, rulesCard, historyCard));

  const refreshSummary = isDefault ? async () => {} : () => drawSummary(summary, name, signal, stateReadable(self));
  await Promise.all([
    refreshSummary(),
    drawRules(rulesCard, historyCard, name, isDefault, writable, signal, stateReadable(self), can(self, 'DATASOURCE', DEFAULT, 'READ')),
  ]);
  if (!isDefault) {
    root.append(markCard(name, writable, signal, refreshSummary), killCard(name, writable, signal, refreshSummary));
  }
  root.dataset.ready = 'true';
  return undefined;
}

async function drawSummary(box, name, signal, state) {
  const [served, stats, load, unused] = await Promise.all([
    settle(get(`${C}/datasources/${enc(name)}`, { signal })),
    settle(sql('SELECT COUNT(*) AS segments, SUM(num_rows) AS num_rows, SUM(CASE WHEN is_available = 1 THEN 1 ELSE 0 END) AS available, ' +
      'SUM(CASE WHEN is_overshadowed = 1 THEN 1 ELSE 0 END) AS overshadowed FROM sys.segments WHERE datasource = ? AND is_published = 1',
    { signal, parameters: [{ type: 'VARCHAR', value: name }] })),
    state ? settle(get(`${C}/loadstatus`, { signal })) : skipped,
    settle(get(`${C}/metadata/datasources/${enc(name)}/unusedSegments`, { signal })),
  ]);
  if (signal.aborted) return;
  clear(box).append(h('h2', { id: 'ds-sum-h' }, 'Summary'));
  // 204 (no used segment) answers null; a datasource with only unused
  // segments is still worth its page.
  if (served.error && served.error.status !== 404) {
    box.append(errorBox(served.error));
    return;
  }
  const s = served.value?.segments || {};
  const [count, rows, available, overshadowed] = (stats.value?.rows?.[0] || []).map(Number);
  let avail = '—';
  if (load.value && name in load.value) avail = `${fmt.pct(Number(load.value[name]) / 100)} of segments loaded`;
  else if (count) avail = `${fmt.pct(available / count)} of segments available`;
  const unusedList = unused.value || [];
  if (!served.value && !unusedList.length && !unused.error) {
    // Neither used nor unused segments: a mistyped name, or one killed whole.
    box.append(h('p', { class: 'warn', id: 'ds-none' }, `No segments of ${name}: no such datasource, or every segment was deleted.`));
  }
  const unusedBytes = unusedList.reduce((n, e) => n + (Number((e.dataSegment || e).size) || 0), 0);
  box.append(h('dl', { class: 'kv' },
    h('dt', {}, 'Used segments'), h('dd', { id: 'ds-used-count' }, fmt.num(s.count || 0), overshadowed ? ` (${fmt.num(overshadowed)} overshadowed)` : ''),
    h('dt', {}, 'Total size'), h('dd', {}, fmt.bytes(s.size || 0), s.replicatedSize ? ` (${fmt.bytes(s.replicatedSize)} with replicas)` : ''),
    h('dt', {}, 'Rows'), h('dd', {}, stats.error ? errorBox(stats.error) : fmt.num(rows || 0)),
    h('dt', {}, 'Availability'), h('dd', {}, avail),
    h('dt', {}, 'Time range'), h('dd', {}, s.minTime ? fmt.interval(`${s.minTime}/${s.maxTime}`) : '—'),
    h('dt', {}, 'Unused segments'), h('dd', { id: 'ds-unused-count' }, unused.error ? errorBox(unused.error) : `${fmt.num(unusedList.length)} (${fmt.bytes(unusedBytes)})`),
    h('dt', {}, 'Tiers'), h('dd', {}, Object.entries(served.value?.tiers || {}).map(([t, v]) => `${t}: ${fmt.num(v.segmentCount)} segments, ${fmt.bytes(v.size)}`).join('; ') || '—')),
  h('p', {}, h('a', { href: `#/segments?datasource=${enc(name)}` }, `Segments of ${name} and their timeline →`)));
}

// ---- retention rules -----------------------------------------------------------

let fieldSeq = 0;
const fid = (what) => `rule-${what}-${++fieldSeq}`;

// field keeps a label on the line of its control when a toolbar wraps.
function field(...children) {
  const el = h('span', { class: 'field' }, children);
  Object.assign(el.style, { display: 'inline-flex', alignItems: 'center', gap: '0.4em', whiteSpace: 'nowrap' });
  el.dataset.shownAs = 'inline-flex';
  return el;
}

// show hides or shows el: style.display as well as hidden, since a display
// set on the element (or by a class) would override [hidden].
function show(el, on) {
  el.hidden = !on;
  el.style.display = on ? el.dataset.shownAs || '' : 'none';
}

// ruleEditor is one rule's fieldset; value() returns its JSON as the API takes it.
function ruleEditor(rule, { onRemove, onMove }) {
  const typeId = fid('type');
  const typeSel = h('select', { id: typeId, class: 'rule-type' },
    ['Load', 'Drop', 'Broadcast'].map((kind) => h('optgroup', { label: kind },
      RULE_TYPES.filter(([, k]) => k === kind).map(([t, , scope]) => h('option', { value: t, selected: t === rule.type }, `${kind} ${SCOPE_TEXT[scope]}`)))));
  const periodId = fid('period');
  const period = h('input', { id: periodId, class: 'rule-period', value: rule.period || 'P1M', size: 8, placeholder: 'P1M' });
  const futureId = fid('future');
  const future = h('input', { id: futureId, type: 'checkbox', class: 'rule-future', checked: rule.includeFuture !== false });
  const ivId = fid('interval');
  const iv = h('input', { id: ivId, class: 'rule-interval', value: rule.interval || '', size: 40, placeholder: '2024-01-01/2025-01-01' });
  const periodBox = field(h('label', { for: periodId }, 'Period'), period);
  const futureBox = field(future, h('label', { for: futureId }, 'Include the future'));
  const ivBox = field(h('label', { for: ivId }, 'Interval'), iv);

  // Tiered replicants: one line per tier.
  const tiersBox = h('div', { class: 'rule-tiers' });
  const tierLines = [];
  const addTier = (tier, n) => {
    const tId = fid('tier');
    const nId = fid('replicants');
    const tIn = h('input', { id: tId, class: 'rule-tier', value: tier, size: 16 });
    const nIn = h('input', { id: nId, class: 'rule-replicants', type: 'number', min: 0, max: 1000, value: String(n), size: 4 });
    const line = h('div', { class: 'toolbar' },
      field(h('label', { for: tId }, 'Tier'), tIn), field(h('label', { for: nId }, 'Replicas'), nIn),
      h('button', { type: 'button', class: 'btn', 'aria-label': 'Remove this tier', onclick: () => { tierLines.splice(tierLines.indexOf(entry), 1); line.remove(); changed(); } }, 'Remove tier'));
    const entry = { tIn, nIn };
    tierLines.push(entry);
    tiersBox.append(line);
  };
  const tiers = rule.tieredReplicants ?? (rule.useDefaultTierForNull === false ? {} : { _default_tier: 2 });
  for (const [t, n] of Object.entries(tiers)) addTier(t, n);
  const addTierBtn = h('button', { type: 'button', class: 'btn', onclick: () => { addTier('_default_tier', 1); changed(); } }, 'Add tier');
  const loadBox = h('div', {}, h('div', { class: 'muted' }, 'Replicas per tier'), tiersBox, addTierBtn);

  const legend = h('legend');
  const el = h('fieldset', { class: 'rule card' }, legend,
    h('div', { class: 'toolbar' }, field(h('label', { for: typeId }, 'Type'), typeSel), periodBox, futureBox, ivBox),
    loadBox,
    h('div', { class: 'toolbar' },
      h('button', { type: 'button', class: 'btn', onclick: () => onMove(-1) }, 'Move up'),
      h('button', { type: 'button', class: 'btn', onclick: () => onMove(1) }, 'Move down'),
      h('button', { type: 'button', class: 'btn danger', onclick: onRemove }, 'Remove rule')));

  let onChange = () => {};
  function changed() {
    const { kind, scope } = TYPE[typeSel.value];
    show(periodBox, scope === 'period' || scope === 'before');
    show(futureBox, scope === 'period');
    show(ivBox, scope === 'interval');
    show(loadBox, kind === 'Load');
    onChange();
  }
  el.addEventListener('input', changed);
  el.addEventListener('change', changed);
  changed();

  return {
    el,
    setIndex(i) { legend.textContent = `Rule ${i + 1}`; },
    set onChange(fn) { onChange = fn; },
    value() {
      const type = typeSel.value;
      const { kind, scope } = TYPE[type];
      const out = { type };
      if (scope === 'period' || scope === 'before') out.period = period.value.trim();
      if (scope === 'period') out.includeFuture = future.checked;
      if (scope === 'interval') out.interval = iv.value.trim();
      if (kind === 'Load') {
        out.tieredReplicants = {};
        for (const { tIn, nIn } of tierLines) out.tieredReplicants[tIn.value.trim()] = Number(nIn.value);
      }
      return out;
    },
  };
}

async function drawRules(card, historyCard, name, isDefault, writable, signal, state, defaultsReadable) {
  clear(card).append(h('h2', { id: 'ds-rules-h' }, 'Retention rules'), loading());
  clear(historyCard).append(h('h2', { id: 'ds-hist-h' }, 'Rules history'), loading());
  // The cluster defaults exist even when never set (a built-in loadForever):
  // a datasource's ?full list appends them after its own, and the listing of
  // all rules (STATE READ) holds them under _default.
  const [own, full, all] = await Promise.all([
    settle(get(`${C}/rules/${enc(name)}`, { signal })),
    isDefault ? Promise.resolve({ value: [] }) : settle(get(`${C}/rules/${enc(name)}?full`, { signal })),
    isDefault && state ? settle(get(`${C}/rules`, { signal })) : skipped,
  ]);
  if (signal.aborted) return;
  if (isDefault && all.value && !own.error) own.value = all.value[DEFAULT] || [];
  const defaults = full.error ? full : { value: (full.value || []).slice((own.value || []).length) };
  await drawHistory(historyCard, name, signal);
  clear(card).append(h('h2', { id: 'ds-rules-h' }, 'Retention rules'));
  if (own.error) {
    card.append(errorBox(own.error));
    return;
  }
  const current = own.value || [];
  card.append(h('div', { id: 'rules-current' }, current.length ? rulesList(current)
    : h('p', {}, 'No rules of its own: the cluster defaults apply.')));
  if (!isDefault) {
    card.append(h('p', { class: 'muted' }, 'Then the cluster defaults',
      defaultsReadable ? [' (', h('a', { href: `#/datasources/${DEFAULT}` }, 'edit'), ')'] : null, ': ',
      defaults.error ? errorBox(defaults.error) : (defaults.value || []).map(ruleText).join('; ') || 'none'));
  }
  if (!writable) {
    card.append(h('p', { class: 'muted' }, 'You may read these rules but not change them.'));
    return;
  }

  // The editor starts from the current rules; Save posts the list as a whole.
  const editors = [];
  const list = h('div', { class: 'rule-list' });
  const preview = h('pre', { class: 'json mono', id: 'rules-json', tabindex: 0 });
  const formError = h('div', { 'aria-live': 'assertive' });
  const audit = auditFields();
  const body = () => editors.map((e) => e.value());
  const redraw = () => {
    clear(list);
    editors.forEach((e, i) => { e.setIndex(i); list.append(e.el); });
    if (!editors.length) list.append(h('p', { class: 'muted' }, isDefault ? 'No default rules: segments without their own rule are not loaded.' : 'No rules: saving clears the datasource\'s own rules, so the cluster defaults apply.'));
    preview.textContent = JSON.stringify(body(), null, 2);
  };
  const add = (rule) => {
    const ed = ruleEditor(rule, {
      onRemove: () => { editors.splice(editors.indexOf(ed), 1); redraw(); },
      onMove: (d) => {
        const i = editors.indexOf(ed);
        const j = i + d;
        if (j < 0 || j >= editors.length) return;
        [editors[i], editors[j]] = [editors[j], editors[i]];
        redraw();
        ed.el.querySelector('select').focus();
      },
    });
    ed.onChange = () => { preview.textContent = JSON.stringify(body(), null, 2); };
    editors.push(ed);
  };
  for (const r of current) add(r);
  redraw();

  const save = h('button', { type: 'submit', class: 'btn primary', id: 'rules-save' }, 'Save rules');
  const form = h('form', { class: 'rules-form', 'aria-label': 'Edit retention rules' },
    h('h3', {}, 'Edit'),
    list,
    h('div', { class: 'toolbar' },
      h('button', { type: 'button', class: 'btn', id: 'rule-add', onclick: () => { add({ type: 'loadForever', tieredReplicants: { _default_tier: 2 } }); redraw(); editors.at(-1).el.querySelector('select').focus(); } }, 'Add rule')),
    h('details', {}, h('summary', {}, 'JSON that Save posts'), preview),
    audit.el,
    formError,
    h('div', { class: 'toolbar' }, save,
      h('button', { type: 'button', class: 'btn', onclick: () => drawRules(card, historyCard, name, isDefault, writable, signal, state, defaultsReadable) }, 'Discard changes')));
  form.addEventListener('submit', async (e) => {
    e.preventDefault();
    clear(formError);
    const { author, comment } = audit.values();
    save.disabled = true;
    try {
      await post(`${C}/rules/${enc(name)}`, body(), { author, comment, signal });
      toast(`Rules of ${name} saved`, 'ok');
      await drawRules(card, historyCard, name, isDefault, writable, signal, state, defaultsReadable);
    } catch (err) {
      if (err.name !== 'AbortError') formError.append(errorBox(err));
    } finally {
      save.disabled = false;
    }
  });
  card.append(form);
}

async function drawHistory(card, name, signal) {
  clear(card).append(h('h2', { id: 'ds-hist-h' }, 'Rules history'));
  try {
    const entries = await get(`${C}/rules/${enc(name)}/history?count=50`, { signal });
    const rows = (entries || []).map((e) => {
      let rules = e.payload;
      try { rules = typeof e.payload === 'string' ? JSON.parse(e.payload) : e.payload; } catch { /* shown as text */ }
      return { time: e.auditTime, author: e.auditInfo?.author || '', comment: e.auditInfo?.comment || '', ip: e.auditInfo?.ip || '', rules };
    });
    card.append(dataTable({
      caption: `Changes to the rules of ${name}, newest first`,
      empty: 'No changes recorded.',
      columns: [
        { key: 'time', label: 'When', render: (r) => fmt.time(r.time) },
        { key: 'author', label: 'Author' },
        { key: 'comment', label: 'Comment', render: (r) => h('span', { class: 'audit-comment' }, r.comment) },
        {
          key: 'rules', label: 'Rules', value: (r) => JSON.stringify(r.rules),
          render: (r) => (Array.isArray(r.rules) ? (r.rules.length ? rulesList(r.rules) : h('span', { class: 'muted' }, 'cleared')) : h('span', { class: 'mono' }, String(r.rules))),
        },
      ],
      rows,
    }).el);
  } catch (e) {
    if (e.name !== 'AbortError') card.append(errorBox(e));
  }
}

// ---- mark used / unused ------------------------------------------------------------

function markCard(name, writable, signal, refresh) {
  const ivId = 'mark-interval';
  const iv = h('input', { id: ivId, size: 40, placeholder: '2024-01-01/2024-02-01' });
  const result = h('p', { id: 'mark-result', role: 'status' });
  const card = h('section', { class: 'card', 'aria-labelledby': 'ds-mark-h' },
    h('h2', { id: 'ds-mark-h' }, 'Mark segments used or unused'),
    h('p', { class: 'muted' }, 'Unused segments are dropped from the historicals and no longer queried; their files stay in deep storage until killed, so marking them used brings them back.'));
  if (!writable) {
    card.append(h('p', { class: 'muted' }, `You may not change the segments of ${name}.`));
    return card;
  }
  const act = async (label, fn, confirm) => {
    result.textContent = '';
    if (confirm && !(await confirmDialog(confirm))) return;
    try {
      const res = await fn();
      const n = res?.numChangedSegments;
      result.textContent = `${label}: ${n === undefined ? 'done' : `${fmt.num(n)} segment${n === 1 ? '' : 's'} changed`}.`;
      toast(result.textContent, 'ok');
      await refresh();
    } catch (e) {
      if (e.name !== 'AbortError') result.replaceChildren(errorBox(e));
    }
  };
  const needInterval = () => {
    const v = iv.value.trim();
    if (!v) { result.textContent = 'Enter an interval first.'; iv.focus(); }
    return v;
  };
  card.append(
    h('div', { class: 'toolbar' }, h('label', { for: ivId }, 'Interval (ISO 8601 start/end)'), iv),
    h('div', { class: 'toolbar' },
      h('button', {
        type: 'button', class: 'btn', id: 'mark-unused',
        onclick: () => {
          const v = needInterval();
          if (v) {
            act(`Marked unused in ${v}`, () => post(`${C}/datasources/${enc(name)}/markUnused`, { interval: v }, { signal }), {
              title: 'Mark segments unused', danger: true, confirmLabel: 'Mark unused',
              message: h('p', {}, 'Mark the segments of ', h('strong', {}, name), ' in ', h('strong', { class: 'mono' }, v), ' unused?'),
            });
          }
        },
      }, 'Mark unused in interval'),
      h('button', {
        type: 'button', class: 'btn', id: 'mark-used',
        onclick: () => {
          const v = needInterval();
          if (v) act(`Marked used in ${v}`, () => post(`${C}/datasources/${enc(name)}/markUsed`, { interval: v }, { signal }));
        },
      }, 'Mark used in interval')),
    h('div', { class: 'toolbar' },
      h('button', {
        type: 'button', class: 'btn danger', id: 'mark-all-unused',
        onclick: () => act('Marked all unused', () => del(`${C}/datasources/${enc(name)}`, { signal }), {
          title: 'Mark every segment unused', danger: true, confirmLabel: 'Mark all unused', requireText: name,
          message: h('p', {}, 'Every segment of ', h('strong', {}, name), ' becomes unused: the datasource is no longer queryable until its segments are marked used again.'),
        }),
      }, 'Mark all segments unused'),
      h('button', {
        type: 'button', class: 'btn', id: 'mark-all-used',
        onclick: () => act('Marked all used', () => post(`${C}/datasources/${enc(name)}`, {}, { signal })),
      }, 'Mark all segments used')),
    result);
  return card;
}

// ---- kill ------------------------------------------------------------------------------

function killCard(name, writable, signal, refresh) {
  const ivId = 'kill-interval';
  const iv = h('input', { id: ivId, size: 40, placeholder: '2024-01-01/2024-02-01' });
  const result = h('div', { id: 'kill-result', role: 'status' });
  const card = h('section', { class: 'card', 'aria-labelledby': 'ds-kill-h' },
    h('h2', { id: 'ds-kill-h' }, 'Delete unused segments permanently'),
    h('p', { class: 'muted' }, 'A kill task deletes the unused segments that lie wholly inside the interval: their metadata and their files in deep storage. Used segments are never deleted; mark them unused first.'));
  if (!writable) {
    card.append(h('p', { class: 'muted' }, `You may not delete segments of ${name}.`));
    return card;
  }
  const go = async () => {
    clear(result);
    const v = iv.value.trim();
    if (!v) { result.textContent = 'Enter an interval first.'; iv.focus(); return; }
    try {
      // Count what the kill would delete, as the server selects it: unused
      // segments contained in the interval.
      const doomed = (await get(`${C}/metadata/datasources/${enc(name)}/unusedSegments?interval=${enc(v)}`, { signal })) || [];
      if (!doomed.length) {
        result.textContent = `No unused segment of ${name} lies wholly inside ${v}: nothing to delete.`;
        return;
      }
      const bytes = doomed.reduce((n, e) => n + (Number((e.dataSegment || e).size) || 0), 0);
      const ids = doomed.map((e) => (e.dataSegment || e).identifier);
      const ok = await confirmDialog({
        title: `Permanently delete segments of ${name}`,
        danger: true,
        confirmLabel: 'Delete permanently',
        requireText: name,
        message: h('div', { id: 'kill-confirm-text' },
          h('p', {}, 'Datasource: ', h('strong', {}, name)),
          h('p', {}, 'Interval: ', h('strong', { class: 'mono' }, v)),
          h('p', {}, `${fmt.num(doomed.length)} unused segment${doomed.length === 1 ? ' (' : 's ('}${fmt.bytes(bytes)}) ${doomed.length === 1 ? 'is' : 'are'} deleted from the metadata and from deep storage. This cannot be undone.`),
          h('ul', { class: 'mono' }, ids.slice(0, 10).map((id) => h('li', {}, id)), ids.length > 10 ? h('li', {}, `… and ${fmt.num(ids.length - 10)} more`) : null)),
      });
      if (!ok) {
        result.textContent = 'Cancelled: nothing was deleted.';
        return;
      }
      await del(`${C}/datasources/${enc(name)}/intervals/${enc(v.replace('/', '_'))}`, { signal });
      result.replaceChildren(`Kill of ${fmt.num(doomed.length)} segments of ${name} in ${v} submitted. `, h('a', { href: '#/ingestion' }, 'Follow the task in Ingestion'));
      toast(`Kill submitted for ${name} ${v}`, 'ok');
      await refresh();
      // The kill runs as a task: follow it (for up to a minute) until the
      // segments are gone, then say so and count again.
      for (let i = 0; i < 60 && !signal.aborted; i++) {
        await new Promise((r) => setTimeout(r, 1000));
        const left = (await get(`${C}/metadata/datasources/${enc(name)}/unusedSegments?interval=${enc(v)}`, { signal })) || [];
        if (left.length < doomed.length) {
          result.replaceChildren(`Deleted: ${fmt.num(doomed.length - left.length)} segment${doomed.length - left.length === 1 ? '' : 's'} of ${name} in ${v}.`);
          await refresh();
          break;
        }
      }
    } catch (e) {
      if (e.name !== 'AbortError') result.replaceChildren(errorBox(e));
    }
  };
  card.append(
    h('div', { class: 'toolbar' }, h('label', { for: ivId }, 'Interval (ISO 8601 start/end)'), iv),
    h('div', { class: 'toolbar' }, h('button', { type: 'button', class: 'btn danger', id: 'kill-start', onclick: go }, 'Delete unused segments…')),
    result);
  return card;
}
