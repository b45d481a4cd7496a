// sqlhighlight.js: a small tokenizer for Druid SQL (and JSON, for the native
// mode) that the query editor paints under its textarea. It never changes the
// text: every character of the input is in exactly one token, so the painted
// layer lines up with the textarea character for character.

// The words painted as keywords: SQL's reserved words the console's users
// write, and Druid's statement words (EXTERN, PARTITIONED, CLUSTERED…).
const KEYWORDS = new Set(`
  ALL AND ANY AS ASC BETWEEN BOTH BY CASE CAST CLUSTERED CROSS CURRENT_DATE CURRENT_TIMESTAMP DAY DELETE DESC
  DISTINCT ELSE END ESCAPE EXCEPT EXISTS EXPLAIN EXTERN FALSE FETCH FILTER FIRST FOR FROM FULL GROUP GROUPING
  HAVING HOUR IN INNER INSERT INTERSECT INTERVAL INTO IS JOIN LAST LATERAL LEADING LEFT LIKE LIMIT MINUTE MONTH
  NATURAL NEXT NOT NULL NULLS OF OFFSET ON ONLY OR ORDER OUTER OVER OVERWRITE PARTITION PARTITIONED PLAN QUARTER
  RANGE REPLACE RIGHT ROLLUP ROW ROWS SECOND SELECT SET SETS SOME SYMMETRIC TABLE THEN TIME TIMESTAMP TO TRAILING
  TRUE UNION UNKNOWN UNNEST USING VALUES WEEK WHEN WHERE WINDOW WITH WITHIN YEAR CUBE
`.trim().split(/\s+/));

// Token types, which are also the CSS class suffixes (.tok-kw, .tok-str…).
export const T = {
  keyword: 'kw', fn: 'fn', string: 'str', number: 'num', comment: 'com', ident: 'id', quoted: 'qid',
  op: 'op', space: 'ws', key: 'key', literal: 'lit', other: 'other',
};

// Ordered sticky patterns for SQL; the first that matches at a position wins.
const SQL_RULES = [
  [T.space, /\s+/y],
  [T.comment, /--[^\n]*/y],
  [T.comment, /\/\*[\s\S]*?(\*\/|$)/y],              // an unclosed comment runs to the end
  [T.string, /[uU]&'(?:[^']|'')*'?|'(?:[^']|'')*'?/y], // '' escapes a quote; unclosed runs to the end
  [T.quoted, /"(?:[^"]|"")*"?/y],                     // "identifier", "" escapes a quote
  [T.number, /(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?/y],
  [T.ident, /[A-Za-z_$][\w$]*/y],
  [T.op, /<>|!=|<=|>=|\|\||::|[-+*/%=<>(),.;?[\]{}]/y],
  [T.other, /[^]/y],
];

const JSON_RULES = [
  [T.space, /\s+/y],
  [T.string, /"(?:[^"\\]|\\.)*"?/y],
  [T.number, /-?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?/y],
  [T.literal, /\b(?:true|false|null)\b/y],
  [T.op, /[{}[\]:,]/y],
  [T.other, /[^]/y],
];

// tokenize splits text into [{type, text, start}]; lang is 'sql' or 'json'.
export function tokenize(text, lang = 'sql') {
  const rules = lang === 'json' ? JSON_RULES : SQL_RULES;
  const out = [];
  let pos = 0;
  while (pos < text.length) {
    for (const [type, re] of rules) {
      re.lastIndex = pos;
      const m = re.exec(text);
      if (!m || m[0] === '') continue;
      let t = type;
      if (t === T.ident && KEYWORDS.has(m[0].toUpperCase())) t = T.keyword;
      out.push({ type: t, text: m[0], start: pos });
      pos += m[0].length;
      break;
    }
  }
  if (lang === 'json') markJSONKeys(out);
  else markFunctions(out);
  return out;
}

// A name right before '(' is a function call (COUNT(, TIME_FLOOR(), painted
// apart from column names; keywords that take parentheses (IN, OVER) stay.
function markFunctions(tokens) {
  for (let i = 0; i + 1 < tokens.length; i++) {
    if (tokens[i].type === T.ident && tokens[i + 1].text === '(') tokens[i].type = T.fn;
  }
}

// A JSON string followed by ':' is an object key, painted apart from values.
function markJSONKeys(tokens) {
  for (let i = 0; i < tokens.length; i++) {
    if (tokens[i].type !== T.string) continue;
    let j = i + 1;
    while (j < tokens.length && tokens[j].type === T.space) j++;
    if (j < tokens.length && tokens[j].text === ':') tokens[i].type = T.key;
  }
}

// highlight paints text into el (replacing its children) as spans. errorAt,
// a character offset, wraps the token there (or the character, when it is
// space or past the end) in <mark class="sql-error">, so the error shows in
// place. The trailing newline keeps the painted layer as tall as the
// textarea when the text ends with an empty line.
export function highlight(el, text, { lang = 'sql', errorAt = -1 } = {}) {
  const frag = document.createDocumentFragment();
  for (const tok of tokenize(text, lang)) {
    const end = tok.start + tok.text.length;
    if (errorAt >= tok.start && errorAt < end) {
      // Whitespace: mark only the character, so a newline is not swallowed.
      const [a, b] = tok.type === T.space ? [errorAt, errorAt + 1] : [tok.start, end];
      if (a > tok.start) frag.append(span(tok.type, text.slice(tok.start, a)));
      const mark = document.createElement('mark');
      mark.className = 'sql-error';
      mark.append(tok.type === T.space ? (text[a] === '\n' ? ' \n' : text.slice(a, b)) : span(tok.type, tok.text));
      frag.append(mark);
      if (b < end) frag.append(span(tok.type, text.slice(b, end)));
    } else {
      frag.append(span(tok.type, tok.text));
    }
  }
  if (errorAt >= text.length && errorAt >= 0) {
    const mark = document.createElement('mark');
    mark.className = 'sql-error';
    mark.textContent = ' ';
    frag.append(mark);
  }
  frag.append('\n');
  el.replaceChildren(frag);
}

function span(type, text) {
  if (type === T.space || type === T.other) return document.createTextNode(text);
  const s = document.createElement('span');
  s.className = `tok-${type}`;
  s.textContent = text;
  return s;
}

// errorPosition finds the line and column (1-based) in an error message:
// Strata's and Druid's "(line [2], column [17])", Calcite's "at line 2,
// column 17", or a browser's JSON.parse "at position 40" (0-based offset).
// It answers {line, column} or {offset}, or null.
export function errorPosition(message) {
  if (!message) return null;
  let m = /line \[?(\d+)\]?,\s*column \[?(\d+)\]?/i.exec(message);
  if (m) return { line: +m[1], column: +m[2] };
  m = /at position (\d+)/i.exec(message);
  if (m) return { offset: +m[1] };
  return null;
}

// offsetOf turns a position from errorPosition into a character offset in
// text (clamped to the text), or -1.
export function offsetOf(text, pos) {
  if (!pos) return -1;
  if (pos.offset !== undefined) return Math.min(pos.offset, text.length);
  const lines = text.split('\n');
  if (pos.line < 1 || pos.line > lines.length) return -1;
  let off = 0;
  for (let i = 0; i < pos.line - 1; i++) off += lines[i].length + 1;
  return off + Math.min(Math.max(pos.column - 1, 0), lines[pos.line - 1].length);
}

// splitLeadingSets separates the leading "SET key = value;" statements from
// the query they apply to (EXPLAIN PLAN FOR must go after them). Semicolons
// inside strings and comments do not end a statement.
export function splitLeadingSets(text) {
  const toks = tokenize(text);
  let cut = 0;
  let i = 0;
  for (;;) {
    while (i < toks.length && (toks[i].type === T.space || toks[i].type === T.comment)) i++;
    if (i >= toks.length || toks[i].type !== T.keyword || toks[i].text.toUpperCase() !== 'SET') break;
    while (i < toks.length && toks[i].text !== ';') i++;
    if (i >= toks.length) break; // a SET with no ';' is the statement itself
    i++;
    cut = i < toks.length ? toks[i].start : text.length;
  }
  return { sets: text.slice(0, cut), query: text.slice(cut) };
}
