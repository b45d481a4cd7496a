// query-native.js: turns a native query's answer into the columns and rows the
// query view shows as a table, as Druid's console flattens them: one row per
// timeseries bucket, topN/search entry, groupBy event or scan event, the
// bucket's timestamp first.

// flattenNative answers {columns: [names], rows: [[...]]} for any answer:
// the known native shapes are unwrapped, anything else that is an array of
// objects becomes one row per object, and a lone value one cell.
export function flattenNative(answer) {
  if (!Array.isArray(answer)) return fromObjects([answer !== null && typeof answer === 'object' ? answer : { value: answer }]);
  const objs = [];
  let scanColumns = null;
  for (const item of answer) {
    if (item === null || typeof item !== 'object' || Array.isArray(item)) {
      objs.push({ value: item });
    } else if (Array.isArray(item.events)) {
      // scan: events are objects (list) or arrays in the order of columns (compactedList)
      if (Array.isArray(item.columns) && !scanColumns) scanColumns = item.columns;
      for (const ev of item.events) objs.push(Array.isArray(ev) ? zip(item.columns || [], ev) : ev);
    } else if ('event' in item && item.event && typeof item.event === 'object') {
      objs.push({ timestamp: item.timestamp, ...item.event }); // groupBy v1 rows
    } else if ('result' in item && Array.isArray(item.result)) {
      for (const r of item.result) objs.push({ timestamp: item.timestamp, ...r }); // topN, search
    } else if ('result' in item && item.result && typeof item.result === 'object') {
      objs.push({ timestamp: item.timestamp, ...item.result }); // timeseries, timeBoundary
    } else {
      objs.push(item); // segmentMetadata, dataSourceMetadata, anything else
    }
  }
  return fromObjects(objs, scanColumns);
}

function zip(names, values) {
  const o = {};
  names.forEach((n, i) => { o[n] = values[i]; });
  return o;
}

// fromObjects unions the keys in first-seen order (a scan's declared column
// order first) so sparse rows still line up.
function fromObjects(objs, first = null) {
  const seen = new Set(first || []);
  for (const o of objs) for (const k of Object.keys(o)) seen.add(k);
  const columns = [...seen];
  const rows = objs.map((o) => columns.map((c) => (c in o ? o[c] : null)));
  return { columns, rows };
}
