// dom.js: a tiny element builder and the formatters every view shares.

// h builds an element: props are attributes, except 'class', 'style' (a
// string), on<Event> handlers and the live properties value/checked; children
// may be nodes, strings, numbers, arrays, or null/false (skipped).
export function h(tag, props = {}, ...children) {
  const svg = tag.startsWith('svg:');
  const el = svg ? document.createElementNS('http://www.w3.org/2000/svg', tag.slice(4)) : document.createElement(tag);
  for (const [k, v] of Object.entries(props || {})) {
    if (v === undefined || v === null || v === false) continue;
    if (k.startsWith('on') && typeof v === 'function') el.addEventListener(k.slice(2).toLowerCase(), v);
    else if (k === 'class') el.setAttribute('class', Array.isArray(v) ? v.filter(Boolean).join(' ') : v);
    // The CSP refuses style attributes; the CSSOM property is allowed.
    else if (k === 'style') el.style.cssText = v;
    else if ((k === 'value' || k === 'checked') && !svg) el[k] = v;
    else el.setAttribute(k, v === true ? '' : String(v));
  }
  append(el, children);
  return el;
}

function append(el, children) {
  for (const c of children) {
    if (c === null || c === undefined || c === false) continue;
    if (Array.isArray(c)) append(el, c);
    else el.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
}

export function clear(el) {
  while (el.firstChild) el.removeChild(el.firstChild);
  return el;
}

const pad = (n) => String(n).padStart(2, '0');

export const fmt = {
  bytes(n) {
    if (n === null || n === undefined || Number.isNaN(+n)) return '—';
    n = +n;
    const units = ['B', 'KB', 'MB', 'GB', 'TB', 'PB'];
    let i = 0;
    while (Math.abs(n) >= 1024 && i < units.length - 1) { n /= 1024; i++; }
    return `${i === 0 ? n : n.toFixed(n < 10 ? 2 : 1)} ${units[i]}`;
  },
  num(n) {
    if (n === null || n === undefined || n === '') return '—';
    return Number(n).toLocaleString('en-US', { maximumFractionDigits: 3 });
  },
  pct(x) {
    if (x === null || x === undefined || Number.isNaN(+x)) return '—';
    return `${(x * 100).toFixed(x >= 1 || x === 0 ? 0 : 1)}%`;
  },
  ms(n) {
    if (n === null || n === undefined) return '—';
    return n < 1000 ? `${Math.round(n)} ms` : `${(n / 1000).toFixed(2)} s`;
  },
  duration(ms) {
    if (ms === null || ms === undefined || ms < 0) return '—';
    let s = Math.floor(ms / 1000);
    const d = Math.floor(s / 86400); s -= d * 86400;
    const hr = Math.floor(s / 3600); s -= hr * 3600;
    const m = Math.floor(s / 60); s -= m * 60;
    if (d) return `${d}d ${hr}h`;
    if (hr) return `${hr}h ${m}m`;
    if (m) return `${m}m ${s}s`;
    return ms < 1000 ? `${Math.round(ms)} ms` : `${s}s`;
  },
  // time shows a timestamp in UTC, as Druid's intervals are.
  time(v) {
    if (v === null || v === undefined || v === '') return '—';
    const d = new Date(typeof v === 'string' && /^\d+$/.test(v) ? Number(v) : v);
    if (Number.isNaN(d.getTime())) return String(v);
    return `${d.getUTCFullYear()}-${pad(d.getUTCMonth() + 1)}-${pad(d.getUTCDate())} ${pad(d.getUTCHours())}:${pad(d.getUTCMinutes())}:${pad(d.getUTCSeconds())}`;
  },
  // interval shortens an ISO interval: whole days lose their time of day.
  interval(str) {
    if (!str) return '—';
    const parts = String(str).split('/');
    if (parts.length !== 2) return String(str);
    const short = (s) => s.replace(/T00:00:00(\.000)?Z$/, '').replace(/(\.000)?Z$/, 'Z').replace('T', ' ');
    return `${short(parts[0])} / ${short(parts[1])}`;
  },
};
