// Config view: the coordinator's dynamic config (/svc/coordinator/v1/config)
// and the overlord's worker config (/svc/indexer/v1/worker) as forms with the
// bounds the server enforces (commands/dynconfig.go, commands/workerconfig.go),
// each save confirmed with its changes and the audit author/comment, and the
// audit history beside the form.
import { get, post } from '../lib/api.js';
import { h, fmt } from '../lib/dom.js';
import { errorBox, confirmDialog, auditFields, toast, jsonView, loading } from '../lib/ui.js';
import { can } from '../lib/perm.js';

const INT32 = 2147483647;
const INT64 = Number.MAX_SAFE_INTEGER; // the largest integer JSON numbers keep exactly in a browser
const HISTORY = 50;

// The coordinator's fields: the bounds are the server's (negative counts and
// limits are refused; the two percentages have ranges; at least one balancer
// thread). kind: int, float, bool, list (comma-separated), json.
const COORDINATOR = [
  { key: 'pauseCoordination', kind: 'bool', label: 'Pause coordination', help: 'Stops every coordinator duty (loading, balancing, marking, killing) until cleared.' },
  { key: 'maxSegmentsToMove', kind: 'int', min: 0, max: INT32, label: 'Max segments to move', help: 'Segments that may move between historicals of a tier in one run.' },
  { key: 'replicationThrottleLimit', kind: 'int', min: 0, max: INT32, label: 'Replication throttle limit', help: 'Replicas that may be assigned to a tier in one run.' },
  { key: 'maxSegmentsInNodeLoadingQueue', kind: 'int', min: 0, max: INT32, label: 'Max segments in a load queue', help: 'Segments a historical may have queued to load (0: no limit).' },
  { key: 'replicantLifetime', kind: 'int', min: 0, max: INT32, label: 'Replicant lifetime', help: 'Coordinator runs a segment may wait in a load queue before an alert.' },
  { key: 'balancerComputeThreads', kind: 'int', min: 1, max: INT32, label: 'Balancer compute threads', help: 'Threads computing the cost of moves (at least 1).' },
  { key: 'maxNonPrimaryReplicantsToLoad', kind: 'int', min: 0, max: INT32, label: 'Max non-primary replicas to load', help: 'Replicas beyond the first that may load in one run.' },
  { key: 'decommissioningNodes', kind: 'list', label: 'Decommissioning nodes', help: 'Historicals (host:port, comma-separated) to empty of segments.' },
  { key: 'decommissioningMaxPercentOfMaxSegmentsToMove', kind: 'int', min: 0, max: 100, label: 'Decommissioning max % of moves', help: 'Share of max segments to move that may leave decommissioning nodes per run (0–100).' },
  { key: 'millisToWaitBeforeDeleting', kind: 'int', min: 0, max: INT64, label: 'Millis to wait before deleting', help: 'How long a coordinator must lead before it marks overshadowed segments unused (ms).' },
  { key: 'killDataSourceWhitelist', kind: 'list', label: 'Kill datasource allow list', help: 'Datasources kill tasks may be issued for (comma-separated; empty: all).' },
  { key: 'killPendingSegmentsSkipList', kind: 'list', label: 'Kill pending segments skip list', help: 'Datasources whose pending segments are not cleaned up (comma-separated).' },
  { key: 'mergeBytesLimit', kind: 'int', min: 0, max: INT64, label: 'Merge bytes limit', help: 'Largest total size of segments merged together (bytes).' },
  { key: 'mergeSegmentsLimit', kind: 'int', min: 0, max: INT32, label: 'Merge segments limit', help: 'Most segments merged together.' },
  { key: 'percentOfSegmentsToConsiderPerMove', kind: 'float', min: 0, max: 100, gtMin: true, label: 'Percent of segments to consider per move', help: 'Share of segments looked at when choosing a move (more than 0, at most 100).' },
  { key: 'useBatchedSegmentSampler', kind: 'bool', label: 'Use batched segment sampler', help: 'Samples the segments to move in one batch.' },
  { key: 'emitBalancingStats', kind: 'bool', label: 'Emit balancing stats', help: 'Logs and emits the balancer’s statistics each run.' },
  { key: 'replicateAfterLoadTimeout', kind: 'bool', label: 'Replicate after load timeout', help: 'Assigns a replica elsewhere when a load takes longer than the timeout.' },
  { key: 'useRoundRobinSegmentAssignment', kind: 'bool', label: 'Round-robin segment assignment', help: 'Assigns new segments round-robin rather than by cost.' },
  { key: 'smartSegmentLoading', kind: 'bool', label: 'Smart segment loading', help: 'The coordinator sets the load queue and throttle limits itself.' },
  { key: 'debugDimensions', kind: 'json', label: 'Debug dimensions', help: 'A JSON object of strings, or empty for none.' },
];

const STRATEGIES = ['equalDistribution', 'fillCapacity', 'equalDistributionWithAffinity', 'fillCapacityWithAffinity',
  'equalDistributionWithCategorySpec', 'fillCapacityWithCategorySpec'];

export const view = {
  id: 'config',
  title: 'Config',
  nav: true,
  async render(root, ctx) {
    const which = ctx.path[0] === 'overlord' ? 'overlord' : 'coordinator';
    const may = (action) => !ctx.self || can(ctx.self, 'CONFIG', 'CONFIG', action);
    const tab = (key, label) => h('a', { href: `#/config/${key}`, class: which === key ? 'btn primary' : 'btn', 'aria-current': which === key ? 'page' : null }, label);
    root.append(h('h1', {}, 'Config'),
      h('nav', { class: 'toolbar', 'aria-label': 'Config sections' }, tab('coordinator', 'Coordinator'), tab('overlord', 'Overlord')));
    const body = h('div');
    root.append(body);
    if (!may('READ')) {
      body.append(h('p', { class: 'bad', role: 'alert' }, 'Forbidden: reading the dynamic configs needs CONFIG READ on CONFIG.'));
    } else if (which === 'coordinator') {
      await configPage(body, ctx, coordinatorSpec(), may('WRITE'));
    } else {
      await configPage(body, ctx, overlordSpec(), may('WRITE'));
    }
    root.dataset.ready = 'true';
  },
};

// ---- shared page: form beside history ------------------------------------------

// configPage draws a form and its history; spec says how: path, history path,
// form(current) -> {el, value() (throws a message when invalid), changes(current)}.
async function configPage(el, ctx, spec, writable) {
  const formBox = h('section', { class: 'card', 'aria-labelledby': 'c4-cfg-title' });
  const histBox = h('section', { class: 'card', 'aria-labelledby': 'c4-hist-title' }, h('h2', { id: 'c4-hist-title' }, 'History'), loading());
  el.append(h('div', { class: 'split' }, formBox, histBox));

  let current;
  async function load() {
    try {
      current = await get(spec.path, { signal: ctx.signal });
      if (!current || typeof current !== 'object') current = null; // never set: the server answers an empty body
    } catch (e) {
      formBox.replaceChildren(h('h2', { id: 'c4-cfg-title' }, spec.title), errorBox(e));
      return;
    }
    const form = spec.form(current, writable);
    const msg = h('div', { 'aria-live': 'polite', id: 'c4-cfg-msg' });
    const save = h('button', { class: 'btn primary', type: 'submit', id: 'c4-cfg-save' }, 'Save…');
    const f = h('form', { novalidate: '' }, form.el,
      writable ? h('div', { class: 'toolbar' }, save) :
        h('p', { class: 'muted' }, 'Read only: saving needs CONFIG WRITE on CONFIG.'),
      msg);
    f.addEventListener('submit', (e) => {
      e.preventDefault();
      submit(f, form, msg);
    });
    formBox.replaceChildren(h('h2', { id: 'c4-cfg-title' }, spec.title), h('p', { class: 'muted' }, spec.intro), f);
  }

  async function submit(f, form, msg) {
    msg.replaceChildren();
    if (!f.checkValidity()) {
      f.reportValidity();
      const bad = f.querySelector('input:invalid, select:invalid, textarea:invalid'); // not the fieldset around it
      msg.replaceChildren(h('p', { class: 'bad', role: 'alert' }, `${bad?.labels?.[0]?.textContent || 'A field'}: ${bad?.validationMessage || 'invalid'}`));
      return;
    }
    let body;
    try {
      body = form.value();
    } catch (e) {
      msg.replaceChildren(h('p', { class: 'bad', role: 'alert' }, e.message));
      return;
    }
    const changes = diff(spec.comparable(current), spec.comparable(body.full ?? body.send));
    if (!changes.length) {
      msg.replaceChildren(h('p', { class: 'muted' }, 'Nothing changed.'));
      return;
    }
    const audit = auditFields();
    const ok = await confirmDialog({
      title: `Save the ${spec.title.toLowerCase()}`,
      message: h('div', {}, h('p', {}, 'These changes go into the audit history with your comment:'),
        changeList(changes), audit.el),
      confirmLabel: 'Save',
    });
    if (!ok) return;
    const { author, comment } = audit.values();
    try {
      await post(spec.path, body.send, { author, comment, signal: ctx.signal });
      toast('Saved', 'ok');
      await Promise.all([load(), loadHistory()]);
    } catch (e) {
      msg.replaceChildren(errorBox(e));
    }
  }

  async function loadHistory() {
    try {
      const entries = await get(`${spec.history}?count=${HISTORY + 1}`, { signal: ctx.signal });
      histBox.replaceChildren(h('h2', { id: 'c4-hist-title' }, 'History'), historyList(entries, spec));
    } catch (e) {
      if (!ctx.signal.aborted) histBox.replaceChildren(h('h2', { id: 'c4-hist-title' }, 'History'), errorBox(e));
    }
  }

  await Promise.all([load(), loadHistory()]);
}

// diff lists the leaf paths whose values differ: [{path, from, to}].
export function diff(a, b, prefix = '') {
  const isObj = (v) => v && typeof v === 'object' && !Array.isArray(v);
  if (!isObj(a) || !isObj(b)) {
    return JSON.stringify(a) === JSON.stringify(b) ? [] : [{ path: prefix || '(all)', from: a, to: b }];
  }
  const out = [];
  for (const k of new Set([...Object.keys(a), ...Object.keys(b)])) {
    out.push(...diff(a[k], b[k], prefix ? `${prefix}.${k}` : k));
  }
  return out;
}

const show = (v) => (v === undefined ? '(absent)' : JSON.stringify(v));

function changeList(changes) {
  return h('ul', { class: 'c4-changes' }, changes.map((c) =>
    h('li', {}, h('span', { class: 'mono' }, c.path), ': ', h('span', { class: 'mono' }, show(c.from)), ' → ', h('span', { class: 'mono' }, show(c.to)))));
}

// historyList shows the newest entries first, each with what it changed from
// the entry before it (the oldest shown lists its whole payload).
function historyList(entries, spec) {
  const list = [...(entries || [])].sort((a, b) => b.auditTime.localeCompare(a.auditTime));
  if (!list.length) return h('p', { class: 'muted' }, 'No changes recorded.');
  const parse = (e) => {
    try { return JSON.parse(e.payload); } catch { return e.payload; }
  };
  const shown = list.slice(0, HISTORY);
  return h('ol', { class: 'c4-history', id: 'c4-history' }, shown.map((e, i) => {
    const now = parse(e);
    // The first change ever (all of the history fetched) is compared with
    // what applied before it, when the spec knows that (firstBefore).
    const first = !list[i + 1] && list.length <= HISTORY && 'firstBefore' in spec;
    const before = list[i + 1] ? parse(list[i + 1]) : first ? spec.firstBefore : undefined;
    const changes = before === undefined && !first ? null : diff(spec.comparable(before), spec.comparable(now));
    return h('li', { class: 'card' },
      h('div', {}, h('strong', {}, fmt.time(e.auditTime)), ' by ', h('span', { class: 'c4-author' }, e.auditInfo?.author || '(no author)'),
        e.auditInfo?.ip ? h('span', { class: 'muted' }, ` from ${e.auditInfo.ip}`) : null),
      h('div', { class: 'c4-comment' }, e.auditInfo?.comment ? e.auditInfo.comment : h('span', { class: 'muted' }, '(no comment)')),
      changes ? (changes.length ? changeList(changes) : h('p', { class: 'muted' }, 'No field changed.')) :
        h('p', { class: 'muted' }, 'The oldest entry shown.'),
      h('details', {}, h('summary', {}, 'Payload'), jsonView(now)));
  }));
}

// ---- form fields -------------------------------------------------------------------

let fieldSeq = 0;

// field builds a labelled input whose validation message shows beside it as
// the user types (and is announced, being tied by aria-describedby).
function field(def, value, writable) {
  const id = `c4-f-${def.key}-${++fieldSeq}`;
  const helpId = `${id}-help`, errId = `${id}-err`;
  const err = h('span', { class: 'bad', id: errId, 'aria-live': 'polite' });
  const common = { id, name: def.key, 'aria-describedby': `${helpId} ${errId}`, disabled: !writable };
  let input;
  switch (def.kind) {
    case 'bool':
      input = h('input', { ...common, type: 'checkbox', checked: !!value });
      break;
    case 'int':
    case 'float':
      input = h('input', { ...common, type: 'number', min: def.gtMin ? null : String(def.min), max: def.max != null ? String(def.max) : null,
        step: def.kind === 'int' ? '1' : 'any', required: true, value: value ?? '' });
      break;
    case 'list':
      input = h('input', { ...common, type: 'text', value: (value || []).join(', ') });
      break;
    case 'select':
      input = h('select', { ...common }, def.options.map((o) => h('option', { value: o.value, selected: o.value === value ? true : null }, o.label)));
      break;
    default: // json
      input = h('textarea', { ...common, rows: def.rows || '2', spellcheck: 'false', value: value == null || (typeof value === 'object' && !Object.keys(value).length) ? '' : JSON.stringify(value, null, 2) });
  }
  const check = () => {
    let m = '';
    if (def.kind === 'float' && def.gtMin && input.value !== '' && !(Number(input.value) > def.min)) m = `Must be more than ${def.min}.`;
    if (def.kind === 'float' && def.gtMin && Number(input.value) > def.max) m = `Must be at most ${def.max}.`;
    if (def.kind === 'json' && input.value.trim()) {
      try {
        const v = JSON.parse(input.value);
        if (def.validate) m = def.validate(v) || '';
      } catch (e) {
        m = `Not valid JSON: ${e.message}`;
      }
    }
    if (def.extra) m = m || def.extra(input) || '';
    input.setCustomValidity(m);
    err.textContent = input.validity.valid ? '' : input.validationMessage;
  };
  input.addEventListener('input', check);
  input.addEventListener('change', check);
  const help = h('span', { class: 'muted', id: helpId }, def.help,
    def.kind === 'int' || def.kind === 'float' ? ` Range: ${def.gtMin ? '>' : ''}${fmt.num(def.min)} to ${fmt.num(def.max)}.` : '');
  const row = def.kind === 'bool'
    ? h('div', { class: 'c4-field', style: 'margin:.6rem 0' }, input, ' ', h('label', { for: id }, def.label), h('br'), help, ' ', err)
    : h('div', { class: 'c4-field', style: 'margin:.6rem 0' }, h('label', { for: id }, def.label), h('br'), input, ' ', help, ' ', err);
  return { row, input, check, read: () => readValue(def, input) };
}

function readValue(def, input) {
  switch (def.kind) {
    case 'bool': return input.checked;
    case 'int': case 'float': return Number(input.value);
    case 'list': return input.value.split(',').map((s) => s.trim()).filter(Boolean);
    case 'select': return input.value;
    default: return input.value.trim() ? JSON.parse(input.value) : null;
  }
}

// ---- coordinator -------------------------------------------------------------------

function coordinatorSpec() {
  return {
    title: 'Coordinator dynamic config',
    intro: 'Changes apply at the coordinator’s next run. Only the fields you change are sent, so a concurrent change to another field is kept.',
    path: '/svc/coordinator/v1/config',
    history: '/svc/coordinator/v1/config/history',
    comparable: (c) => normalizeCoordinator(c),
    form(current, writable) {
      const fields = COORDINATOR.map((def) => {
        if (def.key === 'debugDimensions') def.validate = (v) => (v !== null && (typeof v !== 'object' || Array.isArray(v) || Object.values(v).some((x) => typeof x !== 'string'))
          ? 'Must be a JSON object whose values are strings.' : '');
        return { def, ...field(def, current?.[def.key], writable) };
      });
      return {
        el: h('div', { class: 'c4-fields' }, fields.map((f) => f.row)),
        // value sends only what changed: the server merges a partial config.
        value() {
          const full = { ...current };
          for (const f of fields) full[f.def.key] = f.read();
          const send = {};
          for (const c of diff(normalizeCoordinator(current), normalizeCoordinator(full))) send[c.path.split('.')[0]] = full[c.path.split('.')[0]];
          return { send, full };
        },
      };
    },
  };
}

// normalizeCoordinator makes stored and edited configs comparable: an empty
// debugDimensions object and null mean the same.
function normalizeCoordinator(c) {
  if (!c || typeof c !== 'object') return c;
  const out = { ...c };
  if (out.debugDimensions && !Object.keys(out.debugDimensions).length) out.debugDimensions = null;
  return out;
}

// ---- overlord ------------------------------------------------------------------------

function overlordSpec() {
  return {
    title: 'Overlord dynamic config',
    intro: 'How the overlord assigns tasks to middle managers, and its autoscaler. A save replaces the whole config.',
    path: '/svc/indexer/v1/worker',
    history: '/svc/indexer/v1/worker/history',
    // Never set (or set without a strategy) behaves as equalDistribution
    // without an autoscaler: changes are shown against that.
    comparable: (c) => ({ type: 'default', autoScaler: null, ...(c || {}), selectStrategy: c?.selectStrategy || { type: 'equalDistribution' } }),
    firstBefore: null, // before its first save the overlord config is unset
    form: overlordForm,
  };
}

function overlordForm(current, writable) {
  const cur = current || {};
  const strat = cur.selectStrategy || {};
  const scaler = cur.autoScaler && typeof cur.autoScaler === 'object' ? cur.autoScaler : null;
  const { type: scalerType, minNumWorkers, maxNumWorkers, ...scalerRest } = scaler || {};

  const type = field({ key: 'type', kind: 'select', label: 'Config type', help: '“categorized” configures an autoscaler per worker category.',
    options: [{ value: 'default', label: 'default' }, { value: 'categorized', label: 'categorized' }] }, cur.type || 'default', writable);
  const strategy = field({ key: 'selectStrategy', kind: 'select', label: 'Worker select strategy',
    help: 'equalDistribution spreads tasks over the least loaded workers; fillCapacity fills one worker first. (JavaScript strategies are disabled.)',
    options: STRATEGIES.map((s) => ({ value: s, label: s })) }, strat.type || 'equalDistribution', writable);
  const objectOf = (pred, what) => (v) => (v !== null && (typeof v !== 'object' || Array.isArray(v) || !Object.values(v).every(pred)) ? `Must be a JSON object of ${what}.` : '');
  const affinity = field({ key: 'affinity', kind: 'json', rows: '4', label: 'Affinity (JSON)',
    help: 'Datasource → worker hosts, e.g. {"wiki": ["mm1:8091"]}.',
    validate: objectOf((hosts) => Array.isArray(hosts) && hosts.every((x) => typeof x === 'string' && x), 'non-empty host lists') },
  strat.affinityConfig?.affinity, writable);
  const affinityStrong = field({ key: 'affinityStrong', kind: 'bool', label: 'Strong affinity', help: 'Tasks wait for their affine workers rather than run elsewhere.' }, strat.affinityConfig?.strong, writable);
  const categories = field({ key: 'categoryMap', kind: 'json', rows: '5', label: 'Category map (JSON)',
    help: 'Task type → {"defaultCategory": "c1", "categoryAffinity": {"datasource": "c2"}}.',
    validate: objectOf((c) => c && typeof c === 'object' && !Array.isArray(c), 'objects') },
  strat.workerCategorySpec?.categoryMap, writable);
  const categoryStrong = field({ key: 'categoryStrong', kind: 'bool', label: 'Strong categories', help: 'Tasks wait for a worker of their category rather than run elsewhere.' }, strat.workerCategorySpec?.strong, writable);
  const scalerSel = field({ key: 'autoScaler', kind: 'select', label: 'Autoscaler', help: 'None: the overlord does not add or remove workers.',
    options: [{ value: '', label: 'none' }, { value: 'ec2', label: 'ec2' }, { value: 'gce', label: 'gce' }] }, scalerType || '', writable);
  const minW = field({ key: 'minNumWorkers', kind: 'int', min: 0, max: INT32, label: 'Min workers', help: 'The fewest workers kept.' }, minNumWorkers ?? 0, writable);
  const maxW = field({ key: 'maxNumWorkers', kind: 'int', min: 0, max: INT32, label: 'Max workers', help: 'The most workers started.',
    extra: (input) => (Number(input.value) < Number(minW.input.value) ? 'Must be at least the min workers.' : '') }, maxNumWorkers ?? 0, writable);
  const rest = field({ key: 'autoScalerRest', kind: 'json', rows: '4', label: 'Other autoscaler settings (JSON)',
    help: 'envConfig and the rest of the autoscaler, kept as given.', validate: objectOf(() => true, 'settings') },
  Object.keys(scalerRest).length ? scalerRest : null, writable);
  minW.input.addEventListener('input', maxW.check); // the max's bound moves with the min

  const affinityBox = h('fieldset', {}, h('legend', {}, 'Affinity'), affinity.row, affinityStrong.row);
  const categoryBox = h('fieldset', {}, h('legend', {}, 'Worker categories'), categories.row, categoryStrong.row);
  const scalerBox = h('fieldset', {}, h('legend', {}, 'Autoscaler limits'), minW.row, maxW.row, rest.row);
  // Only the settings the chosen strategy and autoscaler read are shown (and sent).
  const sync = () => {
    affinityBox.hidden = !strategy.input.value.endsWith('WithAffinity');
    categoryBox.hidden = !strategy.input.value.endsWith('WithCategorySpec');
    scalerBox.hidden = !scalerSel.input.value;
    for (const box of [affinityBox, categoryBox, scalerBox]) {
      for (const i of box.querySelectorAll('input,textarea')) i.disabled = !writable || box.hidden;
    }
  };
  strategy.input.addEventListener('change', sync);
  scalerSel.input.addEventListener('change', sync);
  sync();

  const el = h('div', { class: 'c4-fields' },
    current ? null : h('p', { class: 'muted', id: 'c4-worker-unset' }, 'Never set: the overlord uses equalDistribution and no autoscaler.'),
    type.row, strategy.row, affinityBox, categoryBox, scalerSel.row, scalerBox);
  return {
    el,
    value() {
      const s = { type: strategy.read() };
      if (!affinityBox.hidden) s.affinityConfig = { affinity: affinity.read() || {}, strong: affinityStrong.read() };
      if (!categoryBox.hidden) s.workerCategorySpec = { categoryMap: categories.read() || {}, strong: categoryStrong.read() };
      const st = scalerSel.read();
      const autoScaler = st ? { ...(rest.read() || {}), type: st, minNumWorkers: minW.read(), maxNumWorkers: maxW.read() } : null;
      const send = { type: type.read(), selectStrategy: s, autoScaler };
      return { send, full: send };
    },
  };
}
