// segments.js: every segment, filterable by datasource, interval, version and
// id, with where each is loaded, paged on the server (sys.segments with LIMIT
// and OFFSET, so a cluster with a million segments lists as fast as one with
// ten), and a timeline of one datasource's segments.
//
// Used segments come from sys.segments (rows, availability, overshadowing),
// unused ones from the coordinator's metadata API (sys.segments, as Druid's,
// lists only used and realtime segments); "Loaded on" from sys.server_segments.

import { h, clear, fmt } from '../lib/dom.js';
import { get, post, del, sql } from '../lib/api.js';
import { dataTable } from '../lib/table.js';
import { errorBox, confirmDialog, toast, loading } from '../lib/ui.js';
import { can } from '../lib/perm.js';
import { segmentTimeline } from '../lib/timeline.js';

const PAGE = 50; // rows per page unless the address says size=
const MAX_PAGE = 1000;
const TIMELINE_LIMIT = 10000;
const str = (value) => ({ type: 'VARCHAR', value });
const enc = encodeURIComponent;

const ORDERS = {
  newest: { label: 'Newest interval first', sql: '"start" DESC, datasource, partition_num', cmp: (a, b) => cmpStr(b.start, a.start) || cmpStr(a.datasource, b.datasource) || a.partition - b.partition },
  oldest: { label: 'Oldest interval first', sql: '"start", datasource, partition_num', cmp: (a, b) => cmpStr(a.start, b.start) || cmpStr(a.datasource, b.datasource) || a.partition - b.partition },
  largest: { label: 'Largest first', sql: '"size" DESC, segment_id', cmp: (a, b) => b.size - a.size || cmpStr(a.id, b.id) },
};
function cmpStr(a, b) { return a < b ? -1 : a > b ? 1 : 0; }

// parseInterval reads "start/end" (ISO 8601) into the form sys.segments
// stores (toISOString: 2024-01-01T00:00:00.000Z), so that string comparisons
// in SQL order as times do. Empty input: no filter.
export function parseInterval(text) {
  const t = (text || '').trim();
  if (!t) return null;
  const parts = t.split('/');
  const d = parts.length === 2 ? parts.map((p) => new Date(/[zZ]|[+-]\d\d:?\d\d$/.test(p) || !p.includes('T') ? p : `${p}Z`)) : [];
  if (d.length !== 2 || d.some((x) => Number.isNaN(x.getTime())) || d[0] >= d[1]) {
    throw new Error(`"${t}" is not an interval: write start/end in ISO 8601, e.g. 2024-01-01/2024-02-01`);
  }
  return { start: d[0].toISOString(), end: d[1].toISOString(), text: `${d[0].toISOString()}/${d[1].toISOString()}` };
}

function filtersFrom(q) {
  return {
    datasource: q.get('datasource') || '',
    interval: q.get('interval') || '',
    version: q.get('version') || '',
    id: q.get('id') || '',
    state: ['used', 'unused', 'all'].includes(q.get('state')) ? q.get('state') : 'used',
    order: ORDERS[q.get('order')] ? q.get('order') : 'newest',
    page: Math.max(0, parseInt(q.get('page') || '0', 10) || 0),
    size: Math.min(MAX_PAGE, Math.max(1, parseInt(q.get('size') || String(PAGE), 10) || PAGE)),
  };
}

// usedWhere builds the WHERE clause over sys.segments with parameters (never
// string-pasted values).
function usedWhere(f, iv) {
  const conds = [];
  const params = [];
  if (f.datasource) { conds.push('datasource = ?'); params.push(str(f.datasource)); }
  if (iv) { conds.push('"end" > ?', '"start" < ?'); params.push(str(iv.start), str(iv.end)); }
  if (f.version) { conds.push('version LIKE ?'); params.push(str(`%${f.version}%`)); }
  if (f.id) { conds.push('segment_id LIKE ?'); params.push(str(`%${f.id}%`)); }
  return { where: conds.length ? ` WHERE ${conds.join(' AND ')}` : '', params };
}

async function countUsed(f, iv, signal) {
  const { where, params } = usedWhere(f, iv);
  const r = await sql(`SELECT COUNT(*) AS n FROM sys.segments${where}`, { parameters: params, signal });
  return Number(r.rows[0]?.[0] || 0);
}

async function usedPage(f, iv, offset, limit, signal) {
  if (limit <= 0) return [];
  const { where, params } = usedWhere(f, iv);
  const r = await sql(
    'SELECT segment_id, datasource, "start", "end", version, partition_num, "size", num_rows, num_replicas, ' +
    `is_published, is_available, is_realtime, is_overshadowed FROM sys.segments${where} ` +
    `ORDER BY ${ORDERS[f.order].sql} LIMIT ${Number(limit)} OFFSET ${Number(offset)}`,
    { parameters: params, signal });
  return r.rows.map(([id, datasource, start, end, version, partition, size, rows, replicas, published, available, realtime, overshadowed]) => ({
    id, datasource, start, end, version, partition: Number(partition), size: Number(size), rows: rows === null ? null : Number(rows),
    replicas, used: published ? 'yes' : realtime ? 'realtime' : 'no', available: !!available, overshadowed: !!overshadowed, servers: null,
  }));
}

// unusedSegments lists the unused segments of the filtered datasources from the
// metadata API and filters them as the SQL does.
async function unusedSegments(f, iv, names, signal) {
  const list = f.datasource ? [f.datasource] : names;
  const lists = await Promise.all(list.map((ds) =>
    get(`/svc/coordinator/v1/metadata/datasources/${enc(ds)}/unusedSegments`, { signal })));
  const out = [];
  for (const entries of lists) {
    for (const e of entries || []) {
      const s = e.dataSegment || e;
      const [start, end] = s.interval.split('/');
      const row = {
        id: s.identifier, datasource: s.dataSource, start, end, version: s.version,
        partition: s.shardSpec?.partitionNum ?? 0, size: Number(s.size) || 0, rows: null, replicas: 0,
        used: 'no', available: false, overshadowed: null, servers: [],
      };
      if (iv && !(row.end > iv.start && row.start < iv.end)) continue;
      if (f.version && !row.version.includes(f.version)) continue;
      if (f.id && !row.id.includes(f.id)) continue;
      out.push(row);
    }
  }
  return out.sort(ORDERS[f.order].cmp);
}

// serversOf fills in where each listed segment is loaded. Reading
// sys.server_segments needs STATE READ: without it the column says so.
async function serversOf(rows, signal, permitted) {
  if (!permitted) return false; // not asked: the browser would log the 403
  const ids = rows.filter((r) => r.used !== 'no').map((r) => r.id);
  if (!ids.length) return true;
  try {
    const r = await sql(`SELECT segment_id, server FROM sys.server_segments WHERE segment_id IN (${ids.map(() => '?').join(', ')})`,
      { parameters: ids.map(str), signal });
    const by = new Map();
    for (const [id, server] of r.rows) {
      if (!by.has(id)) by.set(id, []);
      by.get(id).push(server);
    }
    for (const row of rows) if (row.used !== 'no') row.servers = (by.get(row.id) || []).sort();
    return true;
  } catch (e) {
    if (e.status === 403) return false;
    throw e;
  }
}

export const view = {
  id: 'segments',
  title: 'Segments',
  nav: true,
  async render(root, ctx) {
    const { signal, self } = ctx;
    let f = filtersFrom(ctx.query);
    let names = [];

    const dsSelect = h('select', { id: 'seg-ds', name: 'datasource' });
    const ivInput = h('input', { id: 'seg-interval', name: 'interval', placeholder: '2024-01-01/2024-02-01', size: 28, value: f.interval });
    const verInput = h('input', { id: 'seg-version', name: 'version', placeholder: 'contains', size: 14, value: f.version });
    const idInput = h('input', { id: 'seg-id', name: 'id', placeholder: 'contains', size: 18, value: f.id });
    const stateSelect = h('select', { id: 'seg-state', name: 'state' },
      [['used', 'Used (and realtime)'], ['unused', 'Unused'], ['all', 'Used and unused']].map(([v, l]) => h('option', { value: v, selected: f.state === v }, l)));
    const orderSelect = h('select', { id: 'seg-order', name: 'order' },
      Object.entries(ORDERS).map(([v, o]) => h('option', { value: v, selected: f.order === v }, o.label)));
    const sizes = [...new Set([25, 50, 100, 250, f.size])].sort((a, b) => a - b);
    const sizeSelect = h('select', { id: 'seg-size', name: 'size' }, sizes.map((n) => h('option', { value: String(n) }, String(n))));
    sizeSelect.value = String(f.size);
    sizeSelect.addEventListener('change', () => apply(0));
    stateSelect.value = f.state;
    orderSelect.value = f.order;
    // Each label stays on the line of its control when the toolbar wraps.
    const field = (label, control) => {
      const el = h('span', { class: 'field' }, h('label', { for: control.id }, label), ' ', control);
      Object.assign(el.style, { display: 'inline-flex', alignItems: 'center', gap: '0.4em', whiteSpace: 'nowrap' });
      return el;
    };
    const form = h('form', { class: 'toolbar', role: 'search', 'aria-label': 'Filter segments' },
      field('Datasource', dsSelect), field('Interval', ivInput), field('Version', verInput), field('Segment ID', idInput),
      field('State', stateSelect), field('Order', orderSelect), field('Rows per page', sizeSelect),
      h('button', { type: 'submit', class: 'btn primary' }, 'Apply'),
      h('button', { type: 'button', class: 'btn', onclick: () => { ivInput.value = ''; verInput.value = ''; idInput.value = ''; apply(0); } }, 'Clear filters'));
    form.addEventListener('submit', (e) => { e.preventDefault(); apply(0); });
    // A new datasource shows its timeline at once.
    dsSelect.addEventListener('change', () => apply(0));

    const timelineBox = h('section', { class: 'card', 'aria-labelledby': 'seg-tl-h' });
    const tableBox = h('div', { id: 'seg-table' });
    const note = h('p', { class: 'muted', 'aria-live': 'polite' });
    const status = h('span', { class: 'muted', 'aria-live': 'polite', id: 'seg-count' });
    const prev = h('button', { type: 'button', class: 'btn', id: 'seg-prev', onclick: () => apply(f.page - 1) }, 'Previous page');
    const next = h('button', { type: 'button', class: 'btn', id: 'seg-next', onclick: () => apply(f.page + 1) }, 'Next page');
    const pager = h('div', { class: 'toolbar pager', hidden: true }, prev, status, next);
    pager.style.display = 'none';

    clear(root).append(
      h('h1', {}, 'Segments'),
      form,
      timelineBox,
      h('section', { class: 'card', 'aria-labelledby': 'seg-list-h' },
        h('h2', { id: 'seg-list-h' }, 'Segments'), note, tableBox, pager));

    const writable = (ds) => can(self, 'DATASOURCE', ds, 'WRITE');
    const table = dataTable({
      caption: 'Segments matching the filters',
      pageSize: MAX_PAGE, // the view pages itself, on the server
      empty: 'No segments match the filters.',
      rowKey: (r) => r.id,
      columns: [
        { key: 'datasource', label: 'Datasource', render: (r) => h('a', { href: `#/datasources/${enc(r.datasource)}` }, r.datasource) },
        { key: 'interval', label: 'Interval', value: (r) => `${r.start}/${r.end}`, render: (r) => fmt.interval(`${r.start}/${r.end}`) },
        { key: 'version', label: 'Version', render: (r) => h('span', { class: 'mono' }, r.version) },
        { key: 'partition', label: 'Partition', align: 'right' },
        { key: 'size', label: 'Size', align: 'right', render: (r) => fmt.bytes(r.size) },
        { key: 'rows', label: 'Rows', align: 'right', render: (r) => fmt.num(r.rows) },
        { key: 'used', label: 'Used', render: (r) => h('span', { class: r.used === 'no' ? 'muted' : 'ok', 'data-col': 'used' }, r.used) },
        { key: 'overshadowed', label: 'Overshadowed', render: (r) => (r.overshadowed === null ? '—' : r.overshadowed ? h('span', { class: 'warn' }, 'yes') : 'no') },
        {
          key: 'servers', label: 'Loaded on', value: (r) => (r.servers ? r.servers.join(' ') : ''),
          render: (r) => (r.servers === null ? h('span', { class: 'muted' }, 'not permitted')
            : r.servers.length ? h('span', { class: 'mono' }, r.servers.join(', '))
              : h('span', { class: r.used === 'yes' ? 'warn' : 'muted' }, r.used === 'yes' ? 'not loaded' : '—')),
        },
        {
          key: 'actions', label: 'Actions', value: () => '',
          render: (r) => (r.used === 'realtime' || !writable(r.datasource) ? ''
            : h('button', { type: 'button', class: 'btn', onclick: () => toggleUsed(r) }, r.used === 'yes' ? 'Mark unused' : 'Mark used')),
        },
      ],
    });
    tableBox.append(table.el);

    async function toggleUsed(r) {
      const path = `/svc/coordinator/v1/datasources/${enc(r.datasource)}/segments/${enc(r.id)}`;
      try {
        if (r.used === 'yes') {
          const ok = await confirmDialog({
            title: 'Mark segment unused',
            message: h('p', {}, 'Mark ', h('strong', { class: 'mono' }, r.id), ' unused? It is dropped from the historicals and no longer queried; marking it used again brings it back.'),
            confirmLabel: 'Mark unused', danger: true,
          });
          if (!ok) return;
          await del(path, { signal });
        } else {
          await post(path, {}, { signal }); // the API wants a JSON body, even an empty one
        }
        toast(`${r.id} marked ${r.used === 'yes' ? 'unused' : 'used'}`, 'ok');
        await load();
      } catch (e) {
        if (e.name !== 'AbortError') toast(errorBox(e).textContent, 'bad');
      }
    }

    // apply reads the form, keeps the filters in the address (bookmarkable,
    // without re-rendering the view) and reloads.
    function apply(page) {
      f = {
        datasource: dsSelect.value, interval: ivInput.value.trim(), version: verInput.value.trim(), id: idInput.value.trim(),
        state: stateSelect.value, order: orderSelect.value, page: Math.max(0, page), size: Number(sizeSelect.value),
      };
      const q = new URLSearchParams();
      for (const k of ['datasource', 'interval', 'version', 'id']) if (f[k]) q.set(k, f[k]);
      if (f.state !== 'used') q.set('state', f.state);
      if (f.order !== 'newest') q.set('order', f.order);
      if (f.page) q.set('page', String(f.page));
      if (f.size !== PAGE) q.set('size', String(f.size));
      const qs = q.toString();
      history.replaceState(null, '', `#/segments${qs ? `?${qs}` : ''}`);
      return load();
    }

    let timelineFor = null; // the datasource the timeline shows, so paging does not redraw it
    async function drawTimeline() {
      if (f.datasource === timelineFor) return;
      timelineFor = f.datasource;
      clear(timelineBox).append(h('h2', { id: 'seg-tl-h' }, 'Timeline'));
      if (!f.datasource) {
        timelineBox.append(h('p', { class: 'muted' }, 'Choose a datasource to see its segments over time.'));
        return;
      }
      timelineBox.append(loading());
      try {
        const r = await sql(
          'SELECT segment_id, "start", "end", version, partition_num, "size", is_overshadowed FROM sys.segments ' +
          `WHERE datasource = ? ORDER BY "start" LIMIT ${TIMELINE_LIMIT + 1}`, { parameters: [str(f.datasource)], signal });
        const segs = r.rows.slice(0, TIMELINE_LIMIT).map(([id, start, end, version, partition, size, over]) =>
          ({ id, start, end, version, partition: Number(partition), size: Number(size), overshadowed: !!over }));
        clear(timelineBox).append(
          h('h2', { id: 'seg-tl-h' }, `Timeline of ${f.datasource}`),
          h('p', { class: 'muted' }, 'Used segments; select a bar to list its interval\'s segments.',
            r.rows.length > TIMELINE_LIMIT ? ` Only the first ${fmt.num(TIMELINE_LIMIT)} segments are drawn.` : ''),
          segmentTimeline({
            // As wide as the card (its text stays legible on a narrow screen).
            width: Math.max(320, Math.min(1100, timelineBox.clientWidth - 32)),
            segments: segs, title: `Segments of ${f.datasource} over time`,
            onSelect: (interval) => { ivInput.value = interval; apply(0); },
          }));
      } catch (e) {
        timelineFor = null;
        if (e.name !== 'AbortError') clear(timelineBox).append(h('h2', { id: 'seg-tl-h' }, 'Timeline'), errorBox(e));
      }
    }

    let seq = 0;
    async function load() {
      const mine = ++seq; // a slower earlier load must not overwrite a newer one
      note.textContent = '';
      let iv;
      try {
        iv = parseInterval(f.interval);
      } catch (e) {
        note.textContent = e.message;
        note.className = 'bad';
        table.setRows([]);
        status.textContent = '';
        await drawTimeline();
        root.dataset.ready = 'true';
        return;
      }
      note.className = 'muted';
      try {
        const wantUsed = f.state !== 'unused';
        const wantUnused = f.state !== 'used';
        const [usedTotal, unused] = await Promise.all([
          wantUsed ? countUsed(f, iv, signal) : 0,
          wantUnused ? unusedSegments(f, iv, names, signal) : [],
        ]);
        const total = usedTotal + unused.length;
        const pages = Math.max(1, Math.ceil(total / f.size));
        if (f.page >= pages) f.page = pages - 1;
        // Used rows first (paged by SQL), then the unused ones.
        const offset = f.page * f.size;
        const rows = await usedPage(f, iv, offset, Math.min(f.size, usedTotal - offset), signal);
        const from = Math.max(0, offset - usedTotal);
        rows.push(...unused.slice(from, from + f.size - rows.length));
        const permitted = await serversOf(rows, signal, can(self, 'STATE', 'STATE', 'READ'));
        if (mine !== seq) return;
        if (!permitted) note.textContent = '"Loaded on" needs the STATE READ permission, which this user lacks.';
        table.setRows(rows);
        status.textContent = total ? `Segments ${offset + 1}–${offset + rows.length} of ${fmt.num(total)}` : 'No segments';
        prev.disabled = f.page === 0;
        next.disabled = f.page >= pages - 1;
        // style.display too: a class's display rule would override [hidden].
        pager.hidden = pages <= 1;
        pager.style.display = pager.hidden ? 'none' : '';
      } catch (e) {
        if (e.name === 'AbortError' || mine !== seq) return;
        table.setRows([]);
        clear(note).append(errorBox(e));
      }
      await drawTimeline();
      root.dataset.ready = 'true';
    }

    try {
      names = (await get('/svc/coordinator/v1/metadata/datasources?includeUnused', { signal })) || [];
    } catch (e) {
      if (e.name === 'AbortError') return undefined;
      root.append(errorBox(e));
    }
    if (f.datasource && !names.includes(f.datasource)) names.push(f.datasource);
    dsSelect.append(h('option', { value: '' }, 'All datasources'), ...names.sort().map((n) => h('option', { value: n }, n)));
    dsSelect.value = f.datasource;
    await load();
    return undefined;
  },
};
