// table.js: a sortable, filterable, paged table. Sorting happens on header
// buttons (so it works from the keyboard) and is announced with aria-sort.
import { h, clear } from './dom.js';

let tableSeq = 0;

export function dataTable({ columns, rows = [], filter = false, empty = 'No rows', pageSize = 100, rowKey, onRowClick, caption }) {
  const id = `tbl${++tableSeq}`;
  let all = rows;
  let sortKey = null;
  let sortDir = 1;
  let page = 0;
  let needle = '';

  const cellValue = (col, row) => (col.value ? col.value(row) : row[col.key]);
  const cellText = (col, row) => {
    const v = cellValue(col, row);
    return v === null || v === undefined ? '' : typeof v === 'object' ? JSON.stringify(v) : String(v);
  };

  const tbody = h('tbody');
  const headers = columns.map((col) => {
    const btn = h('button', { type: 'button', class: 'sort', onclick: () => sortBy(col) }, col.label ?? col.key);
    return h('th', { scope: 'col', class: col.align === 'right' ? 'num' : null }, btn);
  });
  const table = h('table', { class: 'data', id },
    caption ? h('caption', {}, caption) : null,
    h('thead', {}, h('tr', {}, headers)),
    tbody);
  const status = h('span', { class: 'muted', 'aria-live': 'polite' });
  const prev = h('button', { type: 'button', class: 'btn', onclick: () => { page--; draw(); } }, 'Previous');
  const next = h('button', { type: 'button', class: 'btn', onclick: () => { page++; draw(); } }, 'Next');
  const pager = h('div', { class: 'pager' }, prev, status, next);

  let filterBox = null;
  if (filter) {
    const input = h('input', { type: 'search', id: `${id}-filter`, placeholder: 'Filter rows',
      oninput: (e) => { needle = e.target.value.toLowerCase(); page = 0; draw(); } });
    filterBox = h('div', { class: 'toolbar' }, h('label', { for: `${id}-filter` }, 'Filter'), input);
  }
  const el = h('div', { class: 'table-wrap' }, filterBox, h('div', { class: 'scroll' }, table), pager);

  function sortBy(col) {
    if (sortKey === col.key) sortDir = -sortDir; else { sortKey = col.key; sortDir = 1; }
    page = 0;
    draw();
  }

  function compare(col) {
    if (col.sort) return (a, b) => col.sort(a, b) * sortDir;
    return (a, b) => {
      const x = cellValue(col, a), y = cellValue(col, b);
      if (x === y) return 0;
      if (x === null || x === undefined) return 1; // empty cells last, either way
      if (y === null || y === undefined) return -1;
      if (typeof x === 'number' && typeof y === 'number') return (x - y) * sortDir;
      return String(x).localeCompare(String(y), 'en', { numeric: true }) * sortDir;
    };
  }

  function draw() {
    let shown = all;
    if (needle) shown = shown.filter((r) => columns.some((c) => cellText(c, r).toLowerCase().includes(needle)));
    const col = columns.find((c) => c.key === sortKey);
    if (col) shown = [...shown].sort(compare(col));
    headers.forEach((th, i) => {
      if (columns[i].key === sortKey) th.setAttribute('aria-sort', sortDir > 0 ? 'ascending' : 'descending');
      else th.removeAttribute('aria-sort');
    });
    const pages = Math.max(1, Math.ceil(shown.length / pageSize));
    page = Math.min(Math.max(page, 0), pages - 1);
    const slice = shown.slice(page * pageSize, (page + 1) * pageSize);
    clear(tbody);
    if (!slice.length) {
      tbody.append(h('tr', {}, h('td', { colspan: columns.length, class: 'muted empty' }, empty)));
    }
    for (const row of slice) {
      const tr = h('tr', { 'data-key': rowKey ? rowKey(row) : null });
      if (onRowClick) {
        // Clickable rows are focusable and answer Enter, like a link.
        tr.tabIndex = 0;
        tr.classList.add('clickable');
        tr.addEventListener('click', (e) => { if (!e.target.closest('a,button,input,select')) onRowClick(row); });
        tr.addEventListener('keydown', (e) => { if (e.key === 'Enter' && e.target === tr) onRowClick(row); });
      }
      for (const c of columns) {
        const v = c.render ? c.render(row) : cellText(c, row);
        tr.append(h('td', { class: c.align === 'right' ? 'num' : null }, v));
      }
      tbody.append(tr);
    }
    status.textContent = shown.length
      ? `${page * pageSize + 1}–${page * pageSize + slice.length} of ${shown.length}${shown.length !== all.length ? ` (filtered from ${all.length})` : ''}`
      : '';
    prev.disabled = page === 0;
    next.disabled = page >= pages - 1;
    pager.hidden = pages <= 1 && !needle;
  }

  draw();
  return { el, setRows(r) { all = r || []; draw(); } };
}
