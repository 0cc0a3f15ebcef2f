// runner serve: one iteration, opened from the history.
'use strict';

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
  'note', 'usage', 'message', 'checkpoint', 'attempt_ref', 'executor', 'worker', 'rung', 'cost_cap']);

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
  if (m.rung) fact(dl, 'ladder', rungText(m.rung, typeof m.executor === 'string' ? m.executor : ''));
  if (m.cost_cap) fact(dl, 'spend cap', 'stopped its ' + line(m.cost_cap.by || 'agent') + ': ' + line(m.cost_cap.key) + ' reached, ' +
    line(String(m.cost_cap.used)) + ' of ' + line(String(m.cost_cap.cap)) + (m.cost_cap.unit === 'usd' ? ' USD' : ' tokens'));
  if (m.worker) fact(dl, 'worker', line(m.worker));
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
