// runner serve: what the page's scripts share. Every element is made
// with createElement and text with text nodes: no text that came from the
// run is ever parsed as markup.
'use strict';

const $ = (id) => document.getElementById(id);

// el makes an element: props sets a few known properties, kids are
// elements or text (strings become text nodes).
function el(tag, props, ...kids) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(props || {})) {
    if (v === undefined || v === null || v === false) continue;
    if (k === 'class') e.className = v;
    else if (k === 'onclick') e.addEventListener('click', v);
    else if (k === 'open') e.open = true;
    else e.setAttribute(k, String(v)); // title, aria-*, data-*: never href or on*
  }
  for (const kid of kids.flat()) {
    if (kid === undefined || kid === null || kid === false) continue;
    e.append(kid instanceof Node ? kid : document.createTextNode(String(kid)));
  }
  return e;
}

// clean writes control characters and bidi overrides visibly, as the
// runner does on a terminal; /api/status sends text as the files hold it.
function clean(s) {
  return String(s ?? '').replace(/[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/g,
    (c) => '\\u' + c.charCodeAt(0).toString(16).padStart(4, '0'));
}
function line(s) { return clean(s).replace(/\n/g, ' ⏎ '); }

function duration(ms) {
  if (ms === undefined || ms === null || ms < 0) return '';
  const s = Math.floor(ms / 1000);
  if (s < 1) return (ms / 1000).toFixed(1) + 's';
  if (s < 60) return s + 's';
  const m = Math.floor(s / 60);
  if (m < 60) return m + 'm ' + String(s % 60).padStart(2, '0') + 's';
  return Math.floor(m / 60) + 'h ' + String(m % 60).padStart(2, '0') + 'm';
}
function cost(u) {
  if (!u || !u.cost_source) return '';
  const c = u.cost_usd || 0;
  return '$' + (c >= 1 ? c.toFixed(2) : c.toFixed(4));
}
function count(n) {
  n = n || 0;
  if (n >= 1e6) return (n / 1e6).toFixed(2) + 'M';
  if (n >= 1e4) return (n / 1e3).toFixed(1) + 'k';
  return String(n);
}
function when(iso) {
  if (!iso) return '';
  const d = new Date(iso);
  if (isNaN(d)) return '';
  const today = new Date().toDateString() === d.toDateString();
  // One time format everywhere, as the command line prints it: a 24-hour
  // clock, the date as YYYY-MM-DD when not today.
  const pad = (n) => String(n).padStart(2, '0');
  const time = pad(d.getHours()) + ':' + pad(d.getMinutes());
  return today ? time : d.getFullYear() + '-' + pad(d.getMonth() + 1) + '-' + pad(d.getDate()) + ' ' + time;
}
function plural(n, noun) { return n + ' ' + noun + (n === 1 ? '' : 's'); }

// What an outcome is called on the page.
const outcomeNames = {
  done: 'done', guard_failed: 'guards failed', retry: 'retry', blocked: 'blocked', decomposed: 'split',
  executor_error: 'agent error', interrupted: 'interrupted', aborted: 'not started', recorded: 'recorded',
  cost_cap: 'spend cap',
};
// The rung of its task's ladder an attempt was given to (SPEC §24):
// "rung 2 of 2 (large)", and the executor that ran it when another did.
function rungText(r, executor) {
  let s = 'rung ' + r.n + ' of ' + r.of + ' (' + line(r.executor) + ')';
  if (executor && executor !== r.executor) s += ', run on ' + line(executor);
  return s;
}
// The spend caps and what the run spent against them: "caps: the run
// $5.00 ($1.20 spent), each task 50.0k tokens"; '' without caps.
function capsText(caps) {
  if (!Array.isArray(caps) || !caps.length) return '';
  const amount = (unit, v) => unit === 'usd' ? '$' + Number(v).toFixed(v && v < 0.01 ? 4 : 2) : count(v) + ' tokens';
  return 'caps: ' + caps.map((c) => (c.scope === 'task' ? 'each task ' : 'the run ') + amount(c.unit, c.cap) +
    (c.scope === 'run' && c.known ? ' (' + amount(c.unit, c.used) + ' spent)' : '')).join(', ');
}
function pill(kind, text) { return el('span', { class: 'pill ' + String(kind || '').replace(/[^a-z_]/g, '') }, text || kind); }

async function getJSON(url) {
  const resp = await fetch(url, { credentials: 'same-origin', cache: 'no-store' });
  let body = null;
  try { body = await resp.json(); } catch (e) { /* not JSON */ }
  if (!resp.ok) throw new Error((body && body.error) || resp.status + ' ' + resp.statusText);
  return body;
}

function size(n) {
  if (n >= 1 << 20) return (n / (1 << 20)).toFixed(1) + ' MiB';
  if (n >= 1 << 10) return (n / (1 << 10)).toFixed(1) + ' KiB';
  return n + ' B';
}
