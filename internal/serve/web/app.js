// runner serve: the page. It builds every element with createElement and
// textContent: no text that came from the run is ever parsed as markup.
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
  const time = d.toLocaleTimeString([], { hour: '2-digit', minute: '2-digit' });
  return today ? time : d.toLocaleDateString([], { month: 'short', day: 'numeric' }) + ' ' + time;
}
function plural(n, noun) { return n + ' ' + noun + (n === 1 ? '' : 's'); }

// What an outcome is called on the page.
const outcomeNames = {
  done: 'done', guard_failed: 'guards failed', retry: 'retry', blocked: 'blocked', decomposed: 'split',
  executor_error: 'agent error', interrupted: 'interrupted', aborted: 'not started', recorded: 'recorded',
};
function pill(kind, text) { return el('span', { class: 'pill ' + String(kind || '').replace(/[^a-z_]/g, '') }, text || kind); }

async function getJSON(url) {
  const resp = await fetch(url, { credentials: 'same-origin', cache: 'no-store' });
  let body = null;
  try { body = await resp.json(); } catch (e) { /* not JSON */ }
  if (!resp.ok) throw new Error((body && body.error) || resp.status + ' ' + resp.statusText);
  return body;
}

// ---- The state shown. ----

const view = { status: null, history: [], more: false, selected: 0, inFlight: 0,
  // Groups of the tree the person opened or closed, kept across redraws.
  opened: new Set(), closed: new Set() };

function showError(msg) {
  const b = $('error');
  b.hidden = !msg;
  b.textContent = msg ? 'The state cannot be read right now (shown again once it loads):\n' + clean(msg) : '';
}

function renderStatus(rep) {
  view.status = rep;
  view.inFlight = rep.running ? rep.running.iteration : 0;
  $('repo').textContent = clean(rep.root);
  document.title = 'runner · ' + rep.progress.done + '/' + rep.progress.total + (rep.progress.blocked ? ' · ' + rep.progress.blocked + ' blocked' : '');
  renderProgress(rep);
  renderNow(rep);
  renderBlocked(rep);
  renderTree(rep);
  $('updated').textContent = 'updated ' + new Date().toLocaleTimeString();
}

function renderProgress(rep) {
  const p = rep.progress;
  $('progress-text').textContent = p.done + ' of ' + plural(p.total, 'task') + ' done' + (p.blocked ? ', ' + p.blocked + ' blocked' : '');
  const u = rep.usage || {};
  const tokens = (u.input_tokens || 0) + (u.output_tokens || 0);
  $('usage-text').textContent = tokens || u.cost_source ? [cost(u), tokens ? count(tokens) + ' tokens' : ''].filter(Boolean).join(' · ') + ' (all runs)' : '';
  const bar = $('bar');
  bar.replaceChildren();
  const pct = (n) => (p.total ? (100 * n) / p.total : 0) + '%';
  const done = el('span', { class: 'done' }); done.style.width = pct(p.done);
  const blocked = el('span', { class: 'blocked' }); blocked.style.width = pct(p.blocked);
  bar.append(done, blocked);
  const open = p.total - p.done - p.blocked;
  const legend = $('legend');
  legend.replaceChildren();
  const di = el('i'); di.style.background = 'var(--done)';
  const bi = el('i'); bi.style.background = 'var(--blocked)';
  const oi = el('i'); oi.style.background = 'var(--line)';
  legend.append(el('span', {}, di, p.done + ' done'), el('span', {}, bi, p.blocked + ' blocked'), el('span', {}, oi, open + ' open'));
  if (rep.next) legend.append(el('span', {}, 'next: ', el('code', {}, line(rep.next))));
}

function renderNow(rep) {
  const body = $('now-body');
  body.replaceChildren();
  const r = rep.running;
  if (r && r.alive) {
    body.append(el('div', { class: 'now-main' },
      pill('running', 'iteration ' + r.iteration),
      el('code', {}, line(r.node)),
      el('span', { class: 'muted' }, 'phase ' + line(r.phase)),
      el('span', { class: 'elapsed', 'data-since': r.started_at }, duration(Date.now() - Date.parse(r.started_at)))));
    if (r.holder) body.append(el('div', { class: 'now-sub' }, line(r.holder)));
  } else if (r) {
    body.append(el('div', { class: 'now-main' }, pill('stale', 'unfinished'), 'iteration ' + r.iteration + ' on ', el('code', {}, line(r.node)),
      el('span', { class: 'muted' }, 'stopped in phase ' + line(r.phase))),
      el('div', { class: 'now-sub' }, 'No runner is working; the next ', el('code', {}, 'runner run'), ' resolves it.'));
  } else {
    const p = rep.progress;
    if (p.total > 0 && p.done === p.total) {
      body.append(el('div', { class: 'now-main' }, pill('done', 'complete'), 'Every task is done.'));
    } else if (!rep.next && p.blocked > 0) {
      body.append(el('div', { class: 'now-main' }, pill('blocked', 'stuck'), 'Nothing can run until a blocked task is answered.'));
    } else {
      body.append(el('div', { class: 'now-main' }, pill('open', 'idle'), 'No runner is working.',
        rep.next ? el('span', { class: 'muted' }, 'Next: ', el('code', {}, line(rep.next))) : null));
    }
  }
  const l = rep.last;
  if (l) {
    const outcome = l.outcome || l.agent_status;
    body.append(el('div', { class: 'now-sub' }, 'Last: iteration ' + l.iteration + ' on ', el('code', {}, line(l.node)), ' → ',
      pill(outcome, outcomeNames[outcome] || line(outcome))));
    if (l.summary) body.append(el('p', { class: 'summary-text' }, clean(l.summary)));
  }
}

function blockedLeaves(node, path, out) {
  const p = path ? path + '/' + node.id : node.id;
  if (!node.children || node.children.length === 0) {
    if (node.status === 'blocked') out.push({ node, path: p });
  } else {
    for (const c of node.children) blockedLeaves(c, p, out);
  }
  return out;
}

function renderBlocked(rep) {
  const list = rep.tree ? blockedLeaves(rep.tree, '', []) : [];
  $('blocked').hidden = list.length === 0;
  const body = $('blocked-body');
  body.replaceChildren();
  for (const { node, path } of list) {
    body.append(el('div', { class: 'ask' },
      el('div', { class: 'who' }, el('strong', {}, line(node.title)), el('code', { class: 'muted' }, line(path))),
      el('div', { class: 'question' }, clean(node.blocked_reason || 'blocked')),
      el('div', { class: 'muted' }, 'Answer in the task\u2019s goal (tree.json), then ', el('code', { class: 'cmd' }, 'runner reset ' + line(node.id)))));
  }
}

const maxTreeNodes = 3000;

function renderTree(rep) {
  const holder = $('tree');
  let shown = 0;
  const running = rep.running && rep.running.alive ? rep.running.node : '';
  const allDone = (n) => n.status === 'done';
  function item(n) {
    if (++shown > maxTreeNodes) return null;
    const leaf = !n.children || n.children.length === 0;
    let mark = n.status, sym = n.status === 'done' ? '✓' : n.status === 'blocked' ? '!' : '';
    if (leaf && n.id === running) { mark = 'running'; sym = '●'; } else if (n.id === rep.next) { mark = 'next'; sym = '▸'; }
    const row = el('div', { class: 'node-row' },
      el('span', { class: 'mark ' + mark, title: mark }, sym),
      el('span', { class: 'node-title' }, line(n.title)),
      el('span', { class: 'node-id' }, line(n.id)),
      leaf && n.attempts ? el('span', { class: 'attempts', title: 'attempts' }, n.attempts + '/' + n.max_attempts) : null);
    const li = el('li', { class: 'node ' + mark, 'data-id': n.id });
    if (leaf) {
      li.append(row);
      if (n.blocked_reason) li.append(el('div', { class: 'reason' }, clean(n.blocked_reason)));
      return li;
    }
    const open = view.opened.has(n.id) || (!view.closed.has(n.id) && !allDone(n));
    const summary = el('summary', {}, row);
    const details = el('details', { class: 'group', open }, summary);
    // A click (or Enter) on the summary is the person's choice; the
    // browser's own toggles on redraw are not.
    summary.addEventListener('click', () => {
      const opening = !details.open;
      (opening ? view.opened : view.closed).add(n.id);
      (opening ? view.closed : view.opened).delete(n.id);
    });
    if (n.blocked_reason) details.append(el('div', { class: 'reason' }, clean(n.blocked_reason)));
    details.append(el('ul', {}, n.children.map(item)));
    li.append(details);
    return li;
  }
  const tree = el('ul', { class: 'tree' }, rep.tree ? [item(rep.tree)] : []);
  holder.replaceChildren(tree);
  if (shown > maxTreeNodes) holder.append(el('p', { class: 'muted' }, 'The outline stops at ' + maxTreeNodes + ' tasks; /api/status has the whole tree.'));
}

// ---- History. ----

async function loadHistory(older) {
  if (older) {
    const h = await getJSON('/api/iterations?before=' + view.history[view.history.length - 1].iteration);
    view.history = view.history.concat(h.iterations);
    view.more = h.more;
  } else {
    // The newest page, and whatever older pages the person opened.
    const h = await getJSON('/api/iterations');
    const lowest = h.iterations.length ? h.iterations[h.iterations.length - 1].iteration : 0;
    const kept = view.history.filter((it) => it.iteration < lowest);
    view.history = h.iterations.concat(kept);
    if (!kept.length) view.more = h.more;
  }
  renderHistory();
}

function historyRow(it) {
  const outcome = it.in_flight ? 'running' : it.outcome || (it.phase === 'waiting' ? 'waiting' : it.source === 'none' ? 'none' : it.phase || '');
  const label = it.in_flight ? 'in flight' : outcomeNames[outcome] || (outcome === 'none' ? 'no record' : line(outcome));
  const time = it.in_flight && it.started_at
    ? el('span', { 'data-since': it.started_at }, duration(Date.now() - Date.parse(it.started_at)))
    : duration(it.duration_ms);
  const tr = el('tr', { 'data-n': it.iteration, class: it.iteration === view.selected ? 'selected' : null },
    el('td', { class: 'num' }, String(it.iteration)),
    el('td', {}, el('span', { class: 'task' }, line(it.node_path || it.node || '')), it.summary ? el('span', { class: 'sum', title: clean(it.summary) }, line(it.summary)) : null),
    el('td', {}, pill(outcome, label)),
    el('td', { class: 'num' }, time),
    el('td', { class: 'num hide-sm' }, cost(it.usage)),
    el('td', { class: 'hide-sm muted c-when' }, when(it.started_at)));
  tr.addEventListener('click', () => select(it.iteration));
  return tr;
}

function renderHistory() {
  $('history-body').replaceChildren(...view.history.map(historyRow));
  $('history-empty').hidden = view.history.length > 0;
  $('older').hidden = !view.more;
}

// ---- One iteration. ----

function select(n) {
  if (location.hash !== '#iteration-' + n) history.replaceState(null, '', '#iteration-' + n);
  view.selected = n;
  for (const tr of document.querySelectorAll('#history-body tr')) tr.classList.toggle('selected', Number(tr.dataset.n) === n);
  loadDetail(true);
}

async function loadDetail(scroll) {
  const n = view.selected;
  if (!n) return;
  let d;
  try {
    d = await getJSON('/api/iterations/' + n);
  } catch (e) {
    d = { iteration: n, error: e.message };
  }
  if (n !== view.selected) return;
  // Keep open whatever the person opened.
  const open = new Set([...document.querySelectorAll('#detail-body details[open]')].map((x) => x.dataset.name));
  renderDetail(d, open);
  if (scroll && window.matchMedia('(max-width: 979px)').matches) $('detail').scrollIntoView({ behavior: 'smooth' });
}

// Fields of meta.json the page lays out itself; any other is listed as
// it is under "More from meta.json".
const known = new Set(['iteration', 'node', 'node_path', 'attempt', 'max_attempts', 'phase', 'started_at', 'finished_at',
  'duration_ms', 'prompt', 'agent', 'agent_status', 'summary', 'guards', 'guard', 'outcome', 'node_status', 'attempts',
  'note', 'usage', 'message', 'checkpoint', 'attempt_ref', 'executor']);

function fact(dl, name, ...value) {
  if (value.every((v) => v === undefined || v === null || v === '')) return;
  dl.append(el('dt', {}, name), el('dd', {}, ...value));
}

function text(v) { return typeof v === 'string' ? v : JSON.stringify(v, null, 2); }

function renderDetail(d, open) {
  $('detail').hidden = false;
  const m = d.meta || {};
  $('detail-h').textContent = 'Iteration ' + d.iteration + (m.node_path || m.node ? ' · ' + line(m.node_path || m.node) : '');
  const body = $('detail-body');
  body.replaceChildren();
  if (d.error) { body.append(el('p', { class: 'muted' }, clean(d.error))); return; }

  const dl = el('dl', { class: 'facts' });
  if (d.in_flight) fact(dl, 'now', pill('running', 'in flight'), ' phase ' + line(m.phase || (d.journal.at(-1) || {}).event || ''));
  const outcome = m.outcome;
  fact(dl, 'outcome', outcome ? pill(outcome, outcomeNames[outcome] || line(outcome)) : null,
    m.node_status ? ' → task ' + line(m.node_status) + (m.attempts !== undefined ? ', attempts ' + m.attempts : '') : '');
  fact(dl, 'attempt', m.attempt ? m.attempt + ' of ' + m.max_attempts : '');
  fact(dl, 'started', when(m.started_at), m.duration_ms ? ', took ' + duration(m.duration_ms) : '');
  if (m.executor) fact(dl, 'executor', line(typeof m.executor === 'string' ? m.executor : m.executor.name || text(m.executor)));
  const a = m.agent;
  if (a) {
    fact(dl, 'agent', pill(a.class === 'ok' ? 'done' : 'error', line(a.class)), ' exit ' + a.exit_code + ', ' + duration(a.duration_ms),
      a.message_source ? ', message from ' + line(a.message_source) : '');
    if (a.argv && a.argv.length) fact(dl, 'command', el('code', {}, line(a.argv.join(' '))));
    if (a.error) fact(dl, 'error', clean(a.error));
  }
  fact(dl, 'agent said', m.agent_status ? pill(m.agent_status === 'done' ? 'done' : m.agent_status, line(m.agent_status)) : '');
  if (m.prompt) fact(dl, 'prompt', m.prompt.bytes + ' of ' + m.prompt.budget + ' bytes', m.prompt.dropped && m.prompt.dropped.length ? '; dropped ' + m.prompt.dropped.map(line).join(', ') : '');
  if (m.usage) fact(dl, 'usage', count(m.usage.input_tokens) + ' in, ' + count(m.usage.output_tokens) + ' out' + (cost(m.usage) ? ', ' + cost(m.usage) : ''));
  const cp = m.checkpoint;
  if (cp) {
    fact(dl, 'commit', el('code', {}, line(cp.commit || '')), cp.branch ? ' on ' : '', cp.branch ? el('code', {}, line(cp.branch)) : '');
  }
  if (m.attempt_ref) fact(dl, 'attempt ref', el('code', {}, line(m.attempt_ref)));
  body.append(dl);

  if (m.summary) body.append(el('div', { class: 'block' }, el('h3', {}, 'Summary'), el('p', { class: 'summary-text' }, clean(m.summary))));
  if (m.note) body.append(el('div', { class: 'block' }, el('h3', {}, 'Note'), el('p', { class: 'summary-text' }, clean(m.note))));
  const msg = m.message || {};
  for (const [key, title] of [['questions', 'Questions'], ['assumptions', 'Assumptions']]) {
    if (Array.isArray(msg[key]) && msg[key].length) {
      body.append(el('div', { class: 'block' }, el('h3', {}, title), el('ul', {}, msg[key].map((q) => el('li', {}, clean(text(q)))))));
    }
  }
  if (Array.isArray(msg.children) && msg.children.length) {
    body.append(el('div', { class: 'block' }, el('h3', {}, 'New subtasks'),
      el('ul', {}, msg.children.map((c) => el('li', {}, el('code', {}, line(c.id)), ' ', line(c.title))))));
  }
  if (Array.isArray(m.guards) && m.guards.length) {
    body.append(el('div', { class: 'block' }, el('h3', {}, 'Guards'), el('table', {},
      el('tbody', {}, m.guards.map((g) => el('tr', {}, el('td', {}, el('code', {}, line(g.name))), el('td', {}, pill(g.status, line(g.status))),
        el('td', { class: 'num' }, 'exit ' + g.exit_code), el('td', { class: 'num' }, duration(g.duration_ms))))))));
  }
  if (cp && cp.diffstat) body.append(el('div', { class: 'block' }, el('h3', {}, 'Diffstat'), el('pre', {}, clean(text(cp.diffstat)))));

  for (const log of d.logs || []) {
    const det = el('details', { class: 'log', 'data-name': log.name, open: open.has(log.name) },
      el('summary', {}, el('span', {}, log.name), el('span', { class: 'muted' }, size(log.size) + (log.omitted ? ', head and tail' : ''))),
      el('pre', {}, log.head));
    if (log.omitted) det.append(el('p', { class: 'cut' }, '… ' + size(log.omitted) + ' not shown …'), el('pre', {}, log.tail));
    body.append(det);
  }
  const rest = Object.fromEntries(Object.entries(m).filter(([k]) => !known.has(k)));
  if (cp) for (const [k, v] of Object.entries(cp)) if (!['commit', 'branch', 'diffstat'].includes(k)) rest['checkpoint.' + k] = v;
  if (Object.keys(rest).length) {
    body.append(el('details', { class: 'log', 'data-name': 'more', open: open.has('more') },
      el('summary', {}, el('span', {}, 'More from meta.json')), el('pre', {}, clean(JSON.stringify(rest, null, 2)))));
  }
  if (!d.meta && d.journal.length) {
    body.append(el('div', { class: 'block' }, el('h3', {}, d.in_flight ? 'So far (its meta.json is written once its agent is done)' : 'From the journal (the run folder is gone)'),
      el('ul', {}, d.journal.map((r) => el('li', {}, when(r.time) + ' ', el('code', {}, line(r.event)),
        r.outcome ? ' → ' + line(r.outcome) : '', r.summary ? ': ' + line(r.summary) : '', r.error ? ': ' + line(r.error) : '')))));
  }
  if (d.files.length) body.append(el('p', { class: 'muted' }, 'files: ', el('code', {}, d.files.map(line).join(', '))));
}

function size(n) {
  if (n >= 1 << 20) return (n / (1 << 20)).toFixed(1) + ' MiB';
  if (n >= 1 << 10) return (n / (1 << 10)).toFixed(1) + ' KiB';
  return n + ' B';
}

// ---- Notes. ----

async function loadNotes() {
  const n = await getJSON('/api/notes');
  const body = $('notes-body');
  const wasOpen = new Set([...body.querySelectorAll('details')].map((d) => d.dataset.name + (d.open ? ':open' : ':closed')));
  body.replaceChildren();
  const add = (title, ex) => {
    if (!ex) return;
    const open = wasOpen.has(title + ':open') || (!wasOpen.has(title + ':closed') && title === 'questions.md');
    const det = el('details', { class: 'log', 'data-name': title, open },
      el('summary', {}, el('span', {}, title), el('span', { class: 'muted' }, size(ex.size) + (ex.omitted ? ', its end' : ''))),
      el('pre', {}, ex.omitted ? ex.tail : ex.head));
    body.append(det);
  };
  add('questions.md', n.questions);
  add('assumptions.md', n.assumptions);
  if (!body.childElementCount) body.append(el('p', { class: 'muted' }, 'No questions or assumptions yet.'));
}

// ---- Live. ----

let refreshTimer = 0;
function refreshSoon() {
  clearTimeout(refreshTimer);
  refreshTimer = setTimeout(() => {
    loadHistory(false).catch((e) => showError(e.message));
    loadNotes().catch(() => {});
    if (view.selected) loadDetail(false);
  }, 150);
}

function follow() {
  const live = $('live');
  const es = new EventSource('/events');
  es.addEventListener('open', () => { live.dataset.state = 'live'; $('live-text').textContent = 'live'; });
  es.addEventListener('error', () => { live.dataset.state = 'lost'; $('live-text').textContent = 'reconnecting…'; });
  es.addEventListener('status', (ev) => {
    let data;
    try { data = JSON.parse(ev.data); } catch (e) { return; }
    if (data.error) { showError(data.error); return; }
    showError('');
    renderStatus(data);
    refreshSoon();
  });
}

function tick() {
  for (const e of document.querySelectorAll('[data-since]')) {
    const t = Date.parse(e.dataset.since);
    if (!isNaN(t)) e.textContent = duration(Date.now() - t);
  }
}

async function start() {
  $('older').addEventListener('click', () => loadHistory(true).catch((e) => showError(e.message)));
  $('detail-close').addEventListener('click', () => {
    view.selected = 0;
    $('detail').hidden = true;
    history.replaceState(null, '', location.pathname);
    for (const tr of document.querySelectorAll('#history-body tr.selected')) tr.classList.remove('selected');
  });
  const m = /^#iteration-(\d+)$/.exec(location.hash);
  if (m) view.selected = Number(m[1]);
  try {
    renderStatus(await getJSON('/api/status'));
  } catch (e) {
    showError(e.message);
  }
  refreshSoon();
  follow();
  setInterval(tick, 1000);
}

start();
