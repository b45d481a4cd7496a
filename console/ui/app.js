// app.js: the console's shell: the nav, the hash router that loads each view
// module on demand (views/<id>.js), and the login dialog for HTTP Basic.
import { h, clear } from './lib/dom.js';
import { get, setLoginHandler, setCredentials, clearCredentials, currentUser, ApiError } from './lib/api.js';
import { canAny } from './lib/perm.js';
import { errorBox } from './lib/ui.js';

// The nav in its fixed order; visible says whether the user may read what
// the view shows (the API would refuse the rest, so it is not offered).
const VIEWS = [
  { id: 'home', title: 'Home', visible: () => true },
  { id: 'services', title: 'Services', visible: (s) => canAny(s, 'STATE', 'READ') },
  { id: 'datasources', title: 'Datasources', visible: (s) => canAny(s, 'DATASOURCE', 'READ') },
  { id: 'segments', title: 'Segments', visible: (s) => canAny(s, 'DATASOURCE', 'READ') },
  { id: 'ingestion', title: 'Ingestion', visible: (s) => canAny(s, 'DATASOURCE', 'READ') },
  { id: 'query', title: 'Query', visible: (s) => canAny(s, 'DATASOURCE', 'READ') },
  { id: 'config', title: 'Config', visible: (s) => canAny(s, 'CONFIG', 'READ') },
];

const main = document.getElementById('main');
const navList = document.querySelector('#nav ul');
const navToggle = document.getElementById('nav-toggle');
const who = document.getElementById('who');
let self = null;
let current = null; // the rendered view: {controller, cleanup}

// ---- login -------------------------------------------------------------
const dlg = document.getElementById('login');
const form = document.getElementById('login-form');
const userIn = document.getElementById('login-user');
const passIn = document.getElementById('login-password');
const loginErr = document.getElementById('login-error');
let loginResolve = null;

function showLoginError(text) {
  loginErr.textContent = text;
  loginErr.hidden = !text;
}

// askLogin opens the dialog and resolves true once the server accepted the
// credentials (checked against /svc/v1/self before they are kept), false
// when the user cancels.
function askLogin(reason) {
  return new Promise((resolve) => {
    loginResolve = resolve;
    showLoginError(reason || '');
    passIn.value = '';
    if (!dlg.open) dlg.showModal();
    (userIn.value ? passIn : userIn).focus();
  });
}

form.addEventListener('submit', async (e) => {
  e.preventDefault(); // keep the dialog open until the server says yes
  const user = userIn.value.trim(), password = passIn.value;
  const res = await fetch('/svc/v1/self', {
    credentials: 'omit',
    headers: { Accept: 'application/json', Authorization: `Basic ${btoa(String.fromCharCode(...new TextEncoder().encode(`${user}:${password}`)))}` },
  }).catch((err) => ({ ok: false, status: 0, statusText: err.message }));
  if (!res.ok) {
    showLoginError(res.status === 401 ? 'The user name or password was not accepted.' : `Login failed: ${res.status} ${res.statusText}`);
    passIn.select();
    return;
  }
  setCredentials(user, password);
  self = await res.json();
  drawChrome();
  dlg.close();
  const r = loginResolve; loginResolve = null;
  if (r) r(true);
});
document.getElementById('login-cancel').addEventListener('click', () => dlg.close());
dlg.addEventListener('close', () => {
  const r = loginResolve; loginResolve = null;
  if (r) r(false);
});
setLoginHandler(askLogin);

function logout() {
  clearCredentials();
  self = null;
  // A fresh page forgets every view's state and data along with the user;
  // replaceState changes the address without running the router first.
  history.replaceState(null, '', '#/home');
  location.reload();
}

// ---- chrome: nav and user box --------------------------------------------
function drawChrome() {
  clear(navList);
  for (const v of VIEWS) {
    if (!v.visible(self)) continue;
    navList.append(h('li', {}, h('a', { href: `#/${v.id}`, 'data-view': v.id }, v.title)));
  }
  clear(who);
  if (self && self.securityEnabled) {
    who.append(h('span', { class: 'muted' }, 'Signed in as '), h('strong', { id: 'who-user' }, self.identity || currentUser()),
      h('button', { type: 'button', class: 'btn small', id: 'logout', onclick: logout }, 'Log out'));
  }
  markCurrent();
}

function markCurrent() {
  const id = parseHash().id;
  for (const a of navList.querySelectorAll('a')) {
    if (a.dataset.view === id) a.setAttribute('aria-current', 'page'); else a.removeAttribute('aria-current');
  }
}

navToggle.addEventListener('click', () => {
  const open = navToggle.getAttribute('aria-expanded') !== 'true';
  navToggle.setAttribute('aria-expanded', String(open));
  document.body.classList.toggle('nav-open', open);
});
navList.addEventListener('click', (e) => {
  // On a narrow screen the menu closes once a view is chosen.
  if (e.target.closest('a')) {
    navToggle.setAttribute('aria-expanded', 'false');
    document.body.classList.remove('nav-open');
  }
});

// ---- router -------------------------------------------------------------
// '#/datasources/wiki?x=1' -> {id: 'datasources', path: ['wiki'], query}
function parseHash() {
  const raw = location.hash.replace(/^#\/?/, '');
  const [p, q = ''] = raw.split('?');
  const parts = p.split('/').filter(Boolean).map(decodeURIComponent);
  return { id: parts[0] || 'home', path: parts.slice(1), query: new URLSearchParams(q) };
}

async function route(focus) {
  if (current) {
    current.controller.abort();
    try { if (typeof current.cleanup === 'function') current.cleanup(); } catch (e) { console.error(e); }
    current = null;
  }
  const { id, path, query } = parseHash();
  markCurrent();
  const root = h('section', { id: 'view', 'data-view': id, tabindex: -1 });
  main.replaceChildren(root);
  const def = VIEWS.find((v) => v.id === id);
  if (!def) {
    root.append(h('h1', {}, 'Not found'), h('p', {}, 'No view is called ', h('span', { class: 'mono' }, id), '. ', h('a', { href: '#/home' }, 'Go home')));
    root.dataset.ready = 'true';
    return;
  }
  document.title = `${def.title} · Strata`;
  if (!def.visible(self)) {
    root.append(h('h1', {}, def.title), errorBox(new ApiError(403, '', null, `user ${self?.identity ?? ''} may not read what the ${def.title} view shows`)));
    root.dataset.ready = 'true';
    return;
  }
  const controller = new AbortController();
  const me = { controller, cleanup: null };
  current = me;
  if (focus) root.focus({ preventScroll: true });
  const ctx = {
    path, query, params: Object.fromEntries(query), signal: controller.signal, self,
    navigate: (hash) => { location.hash = hash; },
  };
  try {
    const { view } = await import(`./views/${id}.js`);
    if (controller.signal.aborted) return;
    me.cleanup = await view.render(root, ctx);
    if (controller.signal.aborted && typeof me.cleanup === 'function') me.cleanup();
  } catch (e) {
    if (controller.signal.aborted || e?.name === 'AbortError') return;
    // An API error is the server's answer, shown as such; anything else is a
    // bug in the console and also goes to the browser's console.
    if (!(e instanceof ApiError)) console.error(e);
    root.append(errorBox(e));
    root.dataset.ready = 'true';
  }
}

window.addEventListener('hashchange', () => route(true));

// The skip link moves the focus to the view; as a plain link it would set
// the hash to #view, which the router reads as a view's name.
document.querySelector('a.skip').addEventListener('click', (e) => {
  e.preventDefault();
  document.getElementById('view')?.focus();
});

async function start() {
  try {
    self = await get('/svc/v1/self');
  } catch (e) {
    if (e instanceof ApiError && e.status === 401) {
      // Login cancelled: offer it again rather than a page of 401s.
      clear(main).append(h('section', { id: 'view', 'data-ready': 'true' },
        h('h1', {}, 'Strata'),
        h('p', {}, 'This cluster has security on.'),
        h('button', { type: 'button', class: 'btn primary', id: 'login-again', onclick: () => start() }, 'Log in')));
      return;
    }
    clear(main).append(h('section', { id: 'view', 'data-ready': 'true' }, h('h1', {}, 'Strata'), errorBox(e)));
    if (!(e instanceof ApiError)) console.error(e);
    return;
  }
  drawChrome();
  if (!location.hash) history.replaceState(null, '', '#/home');
  route(false);
}

start();
