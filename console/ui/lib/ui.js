// ui.js: the shared pieces of interaction: error boxes, confirmations,
// audit fields, toasts, JSON, polling.
import { h } from './dom.js';
import { currentUser } from './api.js';

// errorBox says what went wrong in words: a 403 is "Forbidden: <the API's
// reason>", so a user without a permission knows that is why.
export function errorBox(err) {
  let text;
  if (err && err.status === 403) text = `Forbidden: ${err.message}`;
  else if (err && err.status) text = `Error ${err.status}: ${err.message}`;
  else text = `Error: ${err && err.message ? err.message : String(err)}`;
  return h('div', { class: 'error-box', role: 'alert' }, text);
}

// missingPermission reads what a 403 says is missing, from Druid's error
// context: "READ on CONFIG:CONFIG" (or the reason given), '' for other
// errors. "Forbidden: Unauthorized" alone would not tell the user what to
// ask an administrator for.
export function missingPermission(err) {
  const c = err && err.status === 403 && err.body && typeof err.body === 'object' ? err.body.context : null;
  if (!c) return '';
  if (c.resource && c.action) return `${c.action} on ${c.resource}`;
  return c.reason || '';
}

let dialogSeq = 0;

// confirmDialog asks before anything destructive. With requireText the user
// types that text (a datasource name) before the confirm button enables.
export function confirmDialog({ title, message, confirmLabel = 'Confirm', danger = false, requireText }) {
  return new Promise((resolve) => {
    const id = `dlg${++dialogSeq}`;
    const ok = h('button', { type: 'submit', class: danger ? 'btn danger' : 'btn primary', value: 'ok' }, confirmLabel);
    const cancel = h('button', { type: 'button', class: 'btn', onclick: () => dlg.close('cancel') }, 'Cancel');
    let input = null;
    if (requireText) {
      input = h('input', { id: `${id}-confirm`, autocomplete: 'off', oninput: () => { ok.disabled = input.value !== requireText; } });
      ok.disabled = true;
    }
    const form = h('form', { method: 'dialog' },
      h('h2', { id: `${id}-title` }, title),
      h('div', { class: 'dialog-body' }, message),
      requireText ? h('p', {}, h('label', { for: `${id}-confirm` }, 'Type ', h('strong', { class: 'mono' }, requireText), ' to confirm'), input) : null,
      h('div', { class: 'toolbar end' }, cancel, ok));
    const dlg = h('dialog', { 'aria-labelledby': `${id}-title` }, form);
    dlg.addEventListener('close', () => { resolve(dlg.returnValue === 'ok'); dlg.remove(); });
    document.body.append(dlg);
    dlg.showModal();
    (input || cancel).focus();
  });
}

let auditSeq = 0;

// auditFields are the author and comment that go into the audit history
// (X-Svc-Author / X-Svc-Comment); the author starts as the logged-in user.
export function auditFields() {
  const id = `audit${++auditSeq}`;
  const author = h('input', { id: `${id}-author`, value: currentUser() || '', autocomplete: 'username' });
  const comment = h('input', { id: `${id}-comment`, placeholder: 'Why this change' });
  const el = h('div', { class: 'audit' },
    h('label', { for: `${id}-author` }, 'Author'), author,
    h('label', { for: `${id}-comment` }, 'Comment'), comment);
  return { el, values: () => ({ author: author.value.trim(), comment: comment.value.trim() }) };
}

// toast shows a short message in a live region, so screen readers hear it.
export function toast(message, kind = 'info') {
  let box = document.getElementById('toasts');
  if (!box) {
    box = h('div', { id: 'toasts', 'aria-live': 'polite', role: 'status' });
    document.body.append(box);
  }
  const t = h('div', { class: `toast ${kind}` }, message);
  box.append(t);
  setTimeout(() => t.remove(), kind === 'bad' ? 8000 : 4000);
}

export function jsonView(value) {
  return h('pre', { class: 'json mono', tabindex: 0 }, JSON.stringify(value, null, 2));
}

// poll calls fn now and then every ms after the previous call finished (so
// slow answers never pile up) until signal aborts. fn shows its own errors.
export function poll(fn, ms, signal) {
  let timer = null;
  const run = async () => {
    if (signal && signal.aborted) return;
    try { await fn(); } catch (e) { if (e && e.name !== 'AbortError') console.warn('poll:', e); }
    if (!signal || !signal.aborted) timer = setTimeout(run, ms);
  };
  if (signal) signal.addEventListener('abort', () => clearTimeout(timer), { once: true });
  run();
}

export function loading() {
  return h('p', { class: 'muted loading', role: 'status' }, 'Loading…');
}
