// runner serve: the page: the status, the tree, the history and the
// notes, kept up to date by the event stream.
'use strict';

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
  const now = new Date(), pad = (n) => String(n).padStart(2, '0');
  $('updated').textContent = 'updated ' + pad(now.getHours()) + ':' + pad(now.getMinutes()) + ':' + pad(now.getSeconds());
}

// testsText is a tally of tests as `runner status` says it: "tests: 9 of
// 12 passing (baseline 4)", then what cannot run.
function testsText(t) {
  let s = 'tests: ' + t.passing + ' of ' + t.total + ' passing';
  if (t.baseline !== undefined && t.baseline !== null) s += ' (baseline ' + t.baseline + ')';
  if (t.broken && t.broken.length) s += '; cannot run: ' + t.broken.slice(0, 3).map(line).join(', ') + (t.broken.length > 3 ? ' and ' + (t.broken.length - 3) + ' more' : '');
  return s;
}

function renderProgress(rep) {
  const p = rep.progress;
  $('progress-text').textContent = p.done + ' of ' + plural(p.total, 'task') + ' done' + (p.blocked ? ', ' + p.blocked + ' blocked' : '');
  $('tests-text').textContent = rep.tests ? testsText(rep.tests) : '';
  const u = rep.usage || {};
  const tokens = (u.input_tokens || 0) + (u.output_tokens || 0);
  const spent = tokens || u.cost_source ? [cost(u), tokens ? count(tokens) + ' tokens' : ''].filter(Boolean).join(' · ') + ' (all runs)' : '';
  $('usage-text').textContent = [spent, capsText(rep.caps)].filter(Boolean).join(' · ');
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
  const working = underWay(rep);
  if (working.length) {
    // Every slot at work, each with its agent's latest event.
    for (const s of working) {
      body.append(el('div', { class: 'now-main' },
        pill('running', (s.slot ? 'slot ' + s.slot + ' · ' : '') + 'iteration ' + s.iteration),
        el('code', {}, line(s.node)),
        el('span', { class: 'muted' }, 'phase ' + line(s.phase) + (s.worker ? ' · worker ' + line(s.worker) : '')),
        el('span', { class: 'elapsed', 'data-since': s.started_at }, duration(Date.now() - Date.parse(s.started_at))),
        s.event ? el('span', { class: 'muted event' }, line(s.event)) : null));
    }
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
  if (rep.paused) {
    body.prepend(el('div', { class: 'now-main' }, pill('paused', 'paused'),
      working.length ? 'The runner finishes ' + (working.length === 1 ? 'iteration ' : 'iterations ') + working.map((s) => s.iteration).join(', ') + ', then holds.' : 'No iteration starts.',
      el('span', { class: 'muted' }, 'Go on with ', el('code', {}, 'runner resume'), '.')));
  }
  const l = rep.last;
  if (l) {
    const outcome = l.outcome || l.agent_status;
    body.append(el('div', { class: 'now-sub' }, 'Last: iteration ' + l.iteration + ' on ', el('code', {}, line(l.node)), ' → ',
      pill(outcome, outcomeNames[outcome] || line(outcome))));
    if (l.summary) body.append(el('p', { class: 'summary-text' }, clean(l.summary)));
  }
}

// underWay lists the iterations a runner is working on: every slot's,
// or the one under way without slots.
function underWay(rep) {
  const all = rep.slots && rep.slots.length ? rep.slots : rep.running ? [rep.running] : [];
  return all.filter((s) => s.alive);
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
      node.blocked_reason === 'attempts exhausted'
        ? el('div', { class: 'muted' }, 'Its attempts are used up: fix the cause, then ', el('code', { class: 'cmd' }, 'runner reset ' + line(node.id)))
        : (node.blocked_reason || '').startsWith('cost cap')
        ? el('div', { class: 'muted' }, 'Over its spend cap: raise the cap and it reopens, or ', el('code', { class: 'cmd' }, 'runner reset ' + line(node.id)))
        : el('div', { class: 'muted' }, 'Answer it: ', el('code', { class: 'cmd' }, 'runner answer ' + line(node.id) + ' "your answer"'))));
  }
}

const maxTreeNodes = 3000;

function renderTree(rep) {
  const holder = $('tree');
  let shown = 0;
  const running = new Set(underWay(rep).map((s) => s.node));
  const allDone = (n) => n.status === 'done';
  function item(n) {
    if (++shown > maxTreeNodes) return null;
    const leaf = !n.children || n.children.length === 0;
    let mark = n.status, sym = n.status === 'done' ? '✓' : n.status === 'blocked' ? '!' : '';
    if (leaf && running.has(n.id)) { mark = 'running'; sym = '●'; } else if (n.id === rep.next) { mark = 'next'; sym = '▸'; }
    const row = el('div', { class: 'node-row' },
      el('span', { class: 'mark ' + mark, title: mark }, sym),
      el('span', { class: 'node-title' }, line(n.title)),
      el('span', { class: 'node-id' }, line(n.id)),
      leaf && n.attempts ? el('span', { class: 'attempts', title: 'attempts' }, n.attempts + '/' + n.max_attempts) : null,
      n.tests ? el('span', { class: 'tests muted', title: "its checks' tests" }, testsText(n.tests)) : null);
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
  let label = it.in_flight ? 'in flight' : outcomeNames[outcome] || (outcome === 'none' ? 'no record' : line(outcome));
  if (!it.in_flight && it.landing) label = it.landing === 'guards' ? 'failed on the run branch' : 'conflict';
  if (!it.in_flight && it.no_change && outcome === 'done') label = 'done, nothing changed';
  else if (!it.in_flight && it.commands_failed && outcome === 'done') label = 'done, every command failed';
  const time = it.in_flight && it.started_at
    ? el('span', { 'data-since': it.started_at }, duration(Date.now() - Date.parse(it.started_at)))
    : duration(it.duration_ms);
  const tr = el('tr', { 'data-n': it.iteration, class: it.iteration === view.selected ? 'selected' : null },
    el('td', { class: 'num' }, String(it.iteration)),
    el('td', {}, el('span', { class: 'task' }, line(it.node_path || it.node || '')), it.rung ? el('span', { class: 'muted rung' }, ' ' + rungText(it.rung, it.executor)) : null,
      it.summary ? el('span', { class: 'sum', title: clean(it.summary) }, line(it.summary)) : null),
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
