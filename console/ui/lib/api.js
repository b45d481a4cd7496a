// api.js: every call the console makes goes through api(): same-origin public
// API paths (/svc/...), the logged-in user's HTTP Basic credentials, and the
// server's own error text surfaced as an ApiError.

const AUTH_KEY = 'strata.auth'; // sessionStorage: closes with the tab, never persisted to disk

export class ApiError extends Error {
  constructor(status, path, body, message) {
    super(message);
    this.name = 'ApiError';
    this.status = status;
    this.path = path;
    this.body = body;
  }
}

// The login flow lives in app.js (it owns the dialog); api.js only asks for it.
let loginHandler = null;
let pendingLogin = null;
export function setLoginHandler(fn) { loginHandler = fn; }

export function currentUser() {
  const a = sessionStorage.getItem(AUTH_KEY);
  if (!a) return '';
  try { return atob(a).split(':')[0]; } catch { return ''; }
}
export function setCredentials(user, password) {
  // btoa needs Latin-1: encode UTF-8 first so any password works.
  const bytes = new TextEncoder().encode(`${user}:${password}`);
  sessionStorage.setItem(AUTH_KEY, btoa(String.fromCharCode(...bytes)));
}
export function clearCredentials() { sessionStorage.removeItem(AUTH_KEY); }
export function hasCredentials() { return !!sessionStorage.getItem(AUTH_KEY); }

// login asks app.js once for credentials, however many calls got a 401 at the
// same time; resolves true when the user logged in, false when cancelled.
function login(reason) {
  if (!loginHandler) return Promise.resolve(false);
  if (!pendingLogin) {
    pendingLogin = loginHandler(reason).finally(() => { pendingLogin = null; });
  }
  return pendingLogin;
}

function errorText(status, statusText, body) {
  if (body && typeof body === 'object') {
    const m = body.errorMessage || body.error || body.message;
    if (typeof m === 'string' && m) return m;
  }
  if (typeof body === 'string' && body.trim()) return body.trim().slice(0, 500);
  return `${status} ${statusText}`.trim();
}

export async function api(path, { method = 'GET', body, headers = {}, author, comment, signal, text = false, raw = false } = {}) {
  for (let attempt = 0; ; attempt++) {
    const h = { Accept: 'application/json', ...headers };
    let payload;
    if (body !== undefined && body !== null) {
      if (typeof body === 'string') {
        payload = body;
        if (!h['Content-Type']) h['Content-Type'] = 'text/plain';
      } else {
        payload = JSON.stringify(body);
        h['Content-Type'] = 'application/json';
      }
    }
    if (author) h['X-Svc-Author'] = author;
    if (comment) h['X-Svc-Comment'] = comment;
    const auth = sessionStorage.getItem(AUTH_KEY);
    if (auth) h.Authorization = `Basic ${auth}`;
    // credentials 'omit': the browser must not answer the server's Basic
    // challenge with its own prompt; the console's login dialog does.
    const res = await fetch(path, { method, headers: h, body: payload, signal, credentials: 'omit' });
    if (res.status === 401 && attempt === 0) {
      if (await login(auth ? 'The user name or password was not accepted.' : '')) continue;
    }
    const type = res.headers.get('Content-Type') || '';
    let data = null;
    if (res.status !== 204) {
      const t = await res.text();
      if (!text && type.includes('json') && t !== '') {
        try { data = JSON.parse(t); } catch { data = t; }
      } else {
        data = t;
      }
    }
    if (!res.ok) throw new ApiError(res.status, path, data, errorText(res.status, res.statusText, data));
    return raw ? { data, headers: res.headers, status: res.status } : data;
  }
}

export const get = (path, opts) => api(path, opts);
export const post = (path, body, opts) => api(path, { ...opts, method: 'POST', body });
export const del = (path, opts) => api(path, { ...opts, method: 'DELETE' });

// sql runs a SQL query and returns its columns, types and rows. The header
// rows (names, native types, SQL types) come first in Druid's array format.
export async function sql(query, { context, signal, header = true, resultFormat = 'array', parameters } = {}) {
  const body = { query, header, typesHeader: header, sqlTypesHeader: header, resultFormat };
  if (context) body.context = context;
  if (parameters) body.parameters = parameters;
  const t0 = performance.now();
  const { data, headers } = await api('/svc/v2/sql', { method: 'POST', body, signal, raw: true });
  const ms = performance.now() - t0;
  const all = Array.isArray(data) ? data : [];
  const queryId = headers.get('X-Druid-SQL-Query-Id') || '';
  if (!header || resultFormat !== 'array') return { columns: [], types: [], rows: all, queryId, ms };
  const [columns = [], , types = [], ...rows] = all;
  return { columns, types, rows, queryId, ms };
}
