// timeline.js: one datasource's segments over time as an SVG chart. x is time,
// each interval is a bar whose partitions are stacked (height = bytes), each
// partition coloured by its version, so a re-ingested interval or a partial
// overwrite shows at a glance. A legend names the versions and a table below
// the chart says the same in text for screen readers and copying.

import { h, fmt } from './dom.js';

// Colours with >= 3:1 contrast against the white background (graphical
// objects); versions beyond the palette reuse it and the legend says so.
const PALETTE = ['#1f6fb2', '#c2410c', '#15803d', '#7e22ce', '#b91c1c', '#0e7490', '#a16207', '#be185d'];

const ms = (iso) => Date.parse(iso);

// segmentTimeline: segments are [{id, start, end, version, partition, size,
// overshadowed}] (ISO strings for start/end); onSelect(interval) is called when
// a bar is clicked or activated with Enter/Space (the caller filters by it).
export function segmentTimeline({ segments, width = 900, height = 240, onSelect, title = 'Segment timeline' }) {
  if (!segments.length) return h('p', { class: 'muted' }, 'No segments to chart.');

  // Group partitions by interval; the stack order (version, then partition)
  // puts the newest version on top.
  const byInterval = new Map();
  for (const s of segments) {
    const key = `${s.start}/${s.end}`;
    if (!byInterval.has(key)) byInterval.set(key, { start: ms(s.start), end: ms(s.end), interval: key, parts: [] });
    byInterval.get(key).parts.push(s);
  }
  const groups = [...byInterval.values()].sort((a, b) => a.start - b.start);
  for (const g of groups) {
    g.parts.sort((a, b) => (a.version < b.version ? -1 : a.version > b.version ? 1 : a.partition - b.partition));
    g.total = g.parts.reduce((n, p) => n + (Number(p.size) || 0), 0);
  }
  const versions = [...new Set(segments.map((s) => s.version))].sort().reverse(); // newest first
  const colour = new Map(versions.map((v, i) => [v, PALETTE[i % PALETTE.length]]));

  const m = { left: 64, right: 12, top: 10, bottom: 28 };
  const pw = width - m.left - m.right;
  const ph = height - m.top - m.bottom;
  const t0 = Math.min(...groups.map((g) => g.start));
  const t1 = Math.max(...groups.map((g) => g.end));
  const span = Math.max(1, t1 - t0);
  const maxTotal = Math.max(1, ...groups.map((g) => g.total));
  const x = (t) => m.left + ((t - t0) / span) * pw;
  const y = (b) => m.top + ph - (b / maxTotal) * ph;

  const titleId = `tl-title-${Math.random().toString(36).slice(2, 8)}`;
  const descId = `${titleId}-desc`;
  const summary = `${segments.length} segment${segments.length === 1 ? '' : 's'} in ${groups.length} interval${groups.length === 1 ? '' : 's'} ` +
    `from ${fmt.time(t0)} to ${fmt.time(t1)}, ${versions.length} version${versions.length === 1 ? '' : 's'}; bar height is size in bytes.`;

  const svg = h('svg:svg', {
    viewBox: `0 0 ${width} ${height}`, width: '100%', role: 'group', 'aria-labelledby': titleId, 'aria-describedby': descId,
    class: 'timeline', preserveAspectRatio: 'xMinYMin meet',
  },
  h('svg:title', { id: titleId }, title),
  h('svg:desc', { id: descId }, summary));
  // Styles through the CSSOM, not style attributes: the console's
  // Content-Security-Policy allows no inline style attributes.
  svg.style.maxWidth = `${width}px`;

  // Axes: y in bytes (0, half, max), x with up to 6 time ticks.
  const axis = h('svg:g', { class: 'axis', 'aria-hidden': 'true', fill: 'currentColor', 'font-size': '11' });
  axis.append(h('svg:line', { x1: m.left, y1: m.top + ph, x2: m.left + pw, y2: m.top + ph, stroke: 'currentColor' }));
  axis.append(h('svg:line', { x1: m.left, y1: m.top, x2: m.left, y2: m.top + ph, stroke: 'currentColor' }));
  for (const f of [0, 0.5, 1]) {
    const yy = y(maxTotal * f);
    axis.append(h('svg:text', { x: m.left - 6, y: yy + 4, 'text-anchor': 'end' }, fmt.bytes(Math.round(maxTotal * f))));
  }
  // About one date label per 90 px, so they never overlap on a narrow chart.
  const ticks = Math.max(2, Math.min(6, groups.length + 1, Math.floor(pw / 90) + 1));
  for (let i = 0; i < ticks; i++) {
    const t = t0 + (span * i) / (ticks - 1);
    const xx = x(t);
    axis.append(h('svg:line', { x1: xx, y1: m.top + ph, x2: xx, y2: m.top + ph + 4, stroke: 'currentColor' }));
    const anchor = i === 0 ? 'start' : i === ticks - 1 ? 'end' : 'middle';
    axis.append(h('svg:text', { x: xx, y: m.top + ph + 16, 'text-anchor': anchor }, fmt.time(t).replace(/ 00:00:00$/, '')));
  }
  svg.append(axis);

  const bars = h('svg:g', { class: 'bars' });
  for (const g of groups) {
    const x0 = x(g.start);
    const w = Math.max(1, x(g.end) - x0 - 1); // 1 px gap between adjacent intervals
    let acc = 0;
    for (const p of g.parts) {
      const size = Number(p.size) || 0;
      const top = y(acc + size);
      const hgt = Math.max(1, y(acc) - top);
      acc += size;
      const label = `${fmt.interval(g.interval)}, version ${p.version}, partition ${p.partition}, ${fmt.bytes(size)}` +
        (p.overshadowed ? ', overshadowed' : '');
      const rect = h('svg:rect', {
        x: x0, y: top, width: w, height: hgt, fill: colour.get(p.version),
        'fill-opacity': p.overshadowed ? 0.35 : 1, stroke: '#fff', 'stroke-width': 0.5,
        'data-interval': g.interval, 'data-version': p.version,
      }, h('svg:title', {}, label));
      if (onSelect) {
        // Each bar is a button: keyboard users reach it with Tab.
        rect.setAttribute('tabindex', '0');
        rect.setAttribute('role', 'button');
        rect.setAttribute('aria-label', `${label}. Show this interval's segments`);
        rect.style.cursor = 'pointer';
        rect.addEventListener('click', () => onSelect(g.interval));
        rect.addEventListener('keydown', (e) => {
          if (e.key === 'Enter' || e.key === ' ') { e.preventDefault(); onSelect(g.interval); }
        });
      }
      bars.append(rect);
    }
  }
  svg.append(bars);

  const swatch = (c) => {
    const el = h('span', { class: 'swatch', 'aria-hidden': 'true' });
    Object.assign(el.style, { display: 'inline-block', width: '0.9em', height: '0.9em', background: c, verticalAlign: 'middle' });
    return el;
  };
  const legend = h('ul', { class: 'timeline-legend', 'aria-label': 'Versions' },
    versions.map((v) => h('li', {}, swatch(colour.get(v)), ' version ', h('span', { class: 'mono' }, v))),
    segments.some((s) => s.overshadowed) ? h('li', { class: 'muted' }, 'Faded bars: overshadowed by a newer version') : null,
    versions.length > PALETTE.length ? h('li', { class: 'muted' }, `${versions.length} versions: colours repeat after ${PALETTE.length}`) : null);

  // The text alternative: one row per interval.
  const table = h('table', {},
    h('caption', {}, summary),
    h('thead', {}, h('tr', {}, ['Interval', 'Partitions', 'Versions', 'Size'].map((c) => h('th', { scope: 'col' }, c)))),
    h('tbody', {}, groups.map((g) => h('tr', {},
      h('td', {}, fmt.interval(g.interval)),
      h('td', { class: 'num' }, String(g.parts.length)),
      h('td', { class: 'mono' }, [...new Set(g.parts.map((p) => p.version))].join(', ')),
      h('td', { class: 'num' }, fmt.bytes(g.total))))));

  const fig = h('figure', { class: 'timeline-figure' },
    svg,
    h('figcaption', {}, legend),
    h('details', {}, h('summary', {}, 'Timeline as a table'), table));
  Object.assign(legend.style, { display: 'flex', flexWrap: 'wrap', gap: '0.4em 1.2em', listStyle: 'none', padding: '0', margin: '0.4em 0' });
  return fig;
}
