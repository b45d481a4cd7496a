// chart.js: small SVG charts (lines over time, bars) with axes, a legend and
// <title> tooltips, so that a screen reader and a hover both get the values.
import { h, fmt } from './dom.js';

const COLORS = ['#1f6feb', '#d4490f', '#1a7f37', '#8250df', '#bf8700', '#cf222e', '#0a7ea4', '#6e7781'];
const s = (tag, props, ...c) => h(`svg:${tag}`, props, ...c);

function niceTicks(min, max, count = 5) {
  if (min === max) { max = min + 1; min = min - (min === 0 ? 0 : 1); }
  const span = max - min;
  const step0 = span / count;
  const mag = 10 ** Math.floor(Math.log10(step0));
  const step = [1, 2, 5, 10].map((m) => m * mag).find((x) => span / x <= count) || 10 * mag;
  // From the step at or below min to the one at or above max, so that
  // every value lies within the axis.
  const ticks = [];
  const last = Math.ceil(max / step - 1e-9) * step;
  for (let v = Math.floor(min / step + 1e-9) * step; v <= last + step * 1e-9; v += step) ticks.push(+v.toPrecision(12));
  return ticks;
}

function timeTicks(min, max, count = 5) {
  const span = max - min || 1;
  return Array.from({ length: count + 1 }, (_, i) => min + (span * i) / count);
}

function shortNum(v) {
  const a = Math.abs(v);
  if (a >= 1e9) return `${+(v / 1e9).toFixed(1)}G`;
  if (a >= 1e6) return `${+(v / 1e6).toFixed(1)}M`;
  if (a >= 1e3) return `${+(v / 1e3).toFixed(1)}k`;
  return String(+v.toFixed(3));
}

function timeLabel(ms, span) {
  const t = fmt.time(ms);
  return span > 2 * 86400e3 ? t.slice(0, 10) : t.slice(5, 16);
}

export function lineChart({ series = [], width = 640, height = 220, yLabel, xIsTime = true }) {
  const m = { l: 56, r: 12, t: 12, b: 44 };
  const pts = series.flatMap((sr) => sr.points);
  const svg = s('svg', { class: 'chart', viewBox: `0 0 ${width} ${height}`, width, height, role: 'img',
    'aria-label': `${yLabel || 'values'}${xIsTime ? ' over time' : ''}: ${series.map((x) => x.name).join(', ')}` });
  if (!pts.length) {
    svg.append(s('text', { x: width / 2, y: height / 2, 'text-anchor': 'middle', class: 'muted' }, 'No data'));
    return svg;
  }
  const xs = pts.map((p) => +p[0]), ys = pts.map((p) => +p[1]);
  const xmin = Math.min(...xs), xmax = Math.max(...xs);
  const yt = niceTicks(Math.min(0, ...ys), Math.max(...ys));
  const ymin = yt[0], ymax = yt[yt.length - 1];
  const pw = width - m.l - m.r, ph = height - m.t - m.b;
  const X = (x) => m.l + (xmax === xmin ? pw / 2 : ((x - xmin) / (xmax - xmin)) * pw);
  const Y = (y) => m.t + ph - ((y - ymin) / (ymax - ymin || 1)) * ph;

  for (const v of yt) {
    svg.append(s('line', { x1: m.l, x2: width - m.r, y1: Y(v), y2: Y(v), class: 'grid-line' }));
    svg.append(s('text', { x: m.l - 6, y: Y(v) + 4, 'text-anchor': 'end', class: 'tick' }, shortNum(v)));
  }
  const xt = xIsTime ? timeTicks(xmin, xmax, Math.min(5, Math.max(1, new Set(xs).size - 1))) : niceTicks(xmin, xmax);
  for (const v of xt) {
    if (v < xmin || v > xmax) continue;
    // The end labels hang inwards, so that none is cut at the edge.
    const anchor = xt.length > 1 && v === xmin ? 'start' : xt.length > 1 && v === xmax ? 'end' : 'middle';
    svg.append(s('text', { x: X(v), y: height - m.b + 16, 'text-anchor': anchor, class: 'tick' },
      xIsTime ? timeLabel(v, xmax - xmin) : shortNum(v)));
  }
  svg.append(s('line', { x1: m.l, x2: m.l, y1: m.t, y2: m.t + ph, class: 'axis' }));
  svg.append(s('line', { x1: m.l, x2: width - m.r, y1: m.t + ph, y2: m.t + ph, class: 'axis' }));
  if (yLabel) svg.append(s('text', { x: 12, y: m.t + ph / 2, transform: `rotate(-90 12 ${m.t + ph / 2})`, 'text-anchor': 'middle', class: 'tick' }, yLabel));

  series.forEach((sr, i) => {
    const color = COLORS[i % COLORS.length];
    const sorted = [...sr.points].sort((a, b) => a[0] - b[0]);
    const d = sorted.map((p, j) => `${j ? 'L' : 'M'}${X(+p[0]).toFixed(1)},${Y(+p[1]).toFixed(1)}`).join('');
    svg.append(s('path', { d, fill: 'none', stroke: color, 'stroke-width': 2, class: 'series' }));
    for (const p of sorted.length <= 200 ? sorted : []) {
      svg.append(s('circle', { cx: X(+p[0]), cy: Y(+p[1]), r: 3, fill: color },
        s('title', {}, `${sr.name}: ${fmt.num(p[1])} at ${xIsTime ? fmt.time(p[0]) : p[0]}`)));
    }
    // Legend along the bottom, one entry per series.
    const lx = m.l + i * 140;
    svg.append(s('rect', { x: lx, y: height - 16, width: 10, height: 10, fill: color }));
    svg.append(s('text', { x: lx + 14, y: height - 7, class: 'tick' }, String(sr.name).slice(0, 18)));
  });
  return svg;
}

export function barChart({ bars = [], width = 640, height = 220, yLabel }) {
  const m = { l: 56, r: 12, t: 12, b: 40 };
  const svg = s('svg', { class: 'chart', viewBox: `0 0 ${width} ${height}`, width, height, role: 'img',
    'aria-label': `${yLabel || 'values'}: ${bars.map((b) => `${b.label} ${b.value}`).join(', ')}` });
  if (!bars.length) {
    svg.append(s('text', { x: width / 2, y: height / 2, 'text-anchor': 'middle', class: 'muted' }, 'No data'));
    return svg;
  }
  const yt = niceTicks(Math.min(0, ...bars.map((b) => +b.value)), Math.max(...bars.map((b) => +b.value)));
  const ymin = yt[0], ymax = yt[yt.length - 1];
  const pw = width - m.l - m.r, ph = height - m.t - m.b;
  const Y = (y) => m.t + ph - ((y - ymin) / (ymax - ymin || 1)) * ph;
  for (const v of yt) {
    svg.append(s('line', { x1: m.l, x2: width - m.r, y1: Y(v), y2: Y(v), class: 'grid-line' }));
    svg.append(s('text', { x: m.l - 6, y: Y(v) + 4, 'text-anchor': 'end', class: 'tick' }, shortNum(v)));
  }
  const bw = pw / bars.length;
  bars.forEach((b, i) => {
    const x = m.l + i * bw + bw * 0.1;
    const y0 = Y(Math.max(0, ymin)), y1 = Y(+b.value);
    svg.append(s('rect', { x, y: Math.min(y0, y1), width: bw * 0.8, height: Math.abs(y0 - y1), fill: COLORS[0] },
      s('title', {}, `${b.label}: ${fmt.num(b.value)}`)));
    if (bars.length <= 24) {
      svg.append(s('text', { x: x + bw * 0.4, y: height - m.b + 16, 'text-anchor': 'middle', class: 'tick' }, String(b.label).slice(0, 12)));
    }
  });
  svg.append(s('line', { x1: m.l, x2: width - m.r, y1: m.t + ph, y2: m.t + ph, class: 'axis' }));
  if (yLabel) svg.append(s('text', { x: 12, y: m.t + ph / 2, transform: `rotate(-90 12 ${m.t + ph / 2})`, 'text-anchor': 'middle', class: 'tick' }, yLabel));
  return svg;
}
