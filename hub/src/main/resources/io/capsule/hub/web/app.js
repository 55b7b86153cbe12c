// The hub page: plain script, no build step, no framework. It speaks only the public task API
// (/v1/tasks, /v1/runners), with the token the person signs in with, kept in this tab's session
// storage and sent only as an Authorization header: never in a URL, never in local storage.
// Everything it shows comes from the API, so a script can see the same. Untrusted text (task
// goals, streamed output, runner names) is only ever set as textContent, never parsed as HTML.
'use strict';
(() => {
  const KEY = 'capsule.hub.token';
  const FINISHED = new Set(['done', 'failed', 'blocked', 'canceled']);
  const USAGE = ['fresh_input', 'cache_read', 'cache_write', 'output', 'thinking'];
  // Refresh periods: a person watching a list notices a change within a few seconds; the hub
  // answers a list from memory, so this costs it little.
  const TASKS_EVERY_MS = 3000;
  const RUNNERS_EVERY_MS = 5000;
  // Reconnect backoff for the event stream: quick first, capped so a long outage does not turn
  // into a hammering, and short enough that a person sees the stream come back soon.
  const RETRY_MS = [500, 1000, 2000, 5000, 10000];
  const $ = (id) => document.getElementById(id);
  const views = ['sign-in', 'tasks', 'task', 'runners', 'submit'];
  const reports = new Map(); // task id -> its report (finished tasks never change)
  let timer = null;
  let stream = null; // AbortController of the open event stream
  let gen = 0; // bumped by stop(): a refresh loop from before it must not schedule itself again

  const token = () => sessionStorage.getItem(KEY);

  function say(message, isError) {
    const s = $('status');
    s.textContent = message || '';
    s.classList.toggle('error', !!isError);
  }

  function el(tag, text, cls) {
    const e = document.createElement(tag);
    if (text !== undefined && text !== null) e.textContent = String(text);
    if (cls) e.className = cls;
    return e;
  }

  function cell(row, label, content, cls) {
    const td = el('td', typeof content === 'object' ? undefined : content, cls);
    if (typeof content === 'object' && content) td.append(content);
    td.dataset.label = label;
    row.append(td);
    return td;
  }

  function failure(r) {
    const d = r.data || {};
    return (d.error || 'HTTP ' + r.status) + (d.hint ? ' — ' + d.hint : '');
  }

  async function api(method, path, body) {
    const headers = { Authorization: 'Bearer ' + token(), Accept: 'application/json' };
    if (body !== undefined) headers['Content-Type'] = 'application/json';
    const r = await fetch(path, {
      method, headers, cache: 'no-store',
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await r.text();
    let data = null;
    try { data = text ? JSON.parse(text) : null; } catch (e) { data = { error: text }; }
    if (r.status === 401) {
      signOut('The hub refused the token: ' + ((data && data.error) || 'sign in again'));
      throw new Error('unauthorized');
    }
    return { status: r.status, data };
  }

  function stop() {
    gen += 1;
    if (timer) clearTimeout(timer);
    timer = null;
    if (stream) stream.abort();
    stream = null;
  }

  function show(view, title) {
    views.forEach((v) => { $('view-' + v).hidden = v !== view; });
    $('nav').hidden = view === 'sign-in';
    ['tasks', 'runners', 'submit'].forEach((v) => {
      const a = $('nav-' + v);
      if (v === view) a.setAttribute('aria-current', 'page'); else a.removeAttribute('aria-current');
    });
    document.title = title + ' · Capsule hub';
  }

  function route() {
    stop();
    say('');
    if (!token()) { show('sign-in', 'Sign in'); $('token').focus(); return; }
    const hash = location.hash || '#/tasks';
    const task = hash.match(/^#\/task\/([^/]+)$/);
    if (task) { openTask(decodeURIComponent(task[1])); return; }
    if (hash === '#/runners') { show('runners', 'Runners'); loadRunners(); return; }
    if (hash === '#/submit') { show('submit', 'Submit'); loadCapsules(); $('submit-capsule').focus(); return; }
    show('tasks', 'Tasks');
    loadTasks();
  }

  function signOut(message) {
    sessionStorage.removeItem(KEY);
    stop();
    show('sign-in', 'Sign in');
    say(message || 'Signed out.', !!message);
  }

  // ---- tasks -----------------------------------------------------------------------------

  function age(t) {
    const at = t.created_at || t.submitted_at;
    if (!at) return '—';
    const s = Math.max(0, Math.round((Date.now() - Date.parse(at)) / 1000));
    if (s < 90) return s + ' s';
    if (s < 5400) return Math.round(s / 60) + ' min';
    return Math.round(s / 3600) + ' h';
  }

  // Which run of the task this is (the API's attempt and attempt_id): 1 until the hub takes it
  // from a runner gone past dead-after and places it again, then the runner knows it by another id.
  function attemptOf(t) {
    const n = Number(t.attempt) || 1;
    return n > 1 && t.attempt_id ? n + ' (runs as ' + t.attempt_id + ')' : String(n);
  }

  function total(usage) {
    if (!usage) return '';
    return USAGE.reduce((n, k) => n + (Number(usage[k]) || 0), 0);
  }

  // The list is newest first (the API lists by id): by created_at, then by id for a stable order.
  function newestFirst(a, b) {
    const at = (t) => Date.parse(t.created_at || t.submitted_at || '') || 0;
    return at(b) - at(a) || (a.id < b.id ? 1 : a.id > b.id ? -1 : 0);
  }

  async function reportOf(t) {
    if (!FINISHED.has(t.state)) return null;
    if (!reports.has(t.id)) {
      const r = await api('GET', '/v1/tasks/' + encodeURIComponent(t.id));
      if (r.status === 200 && r.data.report) reports.set(t.id, r.data.report);
    }
    return reports.get(t.id) || null;
  }

  async function loadTasks() {
    const my = gen;
    try {
      const state = $('filter-state').value;
      const r = await api('GET', '/v1/tasks' + (state ? '?state=' + encodeURIComponent(state) : ''));
      if (r.status !== 200) { say(failure(r), true); return; }
      const needle = $('filter-text').value.trim().toLowerCase();
      const tasks = r.data.filter((t) => !needle
        || [t.id, t.capsule, t.runner].some((v) => v && String(v).toLowerCase().includes(needle)))
        .sort(newestFirst);
      const body = $('tasks').tBodies[0];
      const rows = [];
      for (const t of tasks) {
        const report = await reportOf(t);
        const row = el('tr');
        const link = el('a', t.id);
        link.href = '#/task/' + encodeURIComponent(t.id);
        cell(row, 'Task', link);
        cell(row, 'State', t.state, 'state-' + t.state);
        cell(row, 'Capsule', t.capsule);
        cell(row, 'Runner', t.runner || (t.waiting ? 'waiting' : '—'));
        cell(row, 'Attempt', Number(t.attempt) || 1, 'num');
        cell(row, 'Age', age(t));
        cell(row, 'Tokens', report ? total(report.usage) : '', 'num');
        cell(row, 'Outcome', report ? report.status + (report.failure_type ? ' (' + report.failure_type + ')' : '') : '');
        row.dataset.task = t.id;
        rows.push(row);
      }
      body.replaceChildren(...rows);
      $('tasks-empty').hidden = rows.length > 0;
    } catch (e) {
      if (e.message !== 'unauthorized') say('Cannot reach the hub: ' + e.message, true);
    }
    if (my === gen && !$('view-tasks').hidden) timer = setTimeout(loadTasks, TASKS_EVERY_MS);
  }

  // ---- one task --------------------------------------------------------------------------

  function fact(list, name, value) {
    const dd = el('dd', value);
    list.append(el('dt', name), dd);
    return dd;
  }

  let stateFact = null; // the open task's State value, kept current by its events

  async function openTask(id) {
    show('task', 'Task ' + id);
    $('task-title').textContent = 'Task ' + id;
    $('transcript').replaceChildren();
    $('events').replaceChildren();
    $('report').hidden = true;
    const cancel = $('cancel');
    cancel.hidden = true; // shown once the task is known to be unfinished
    cancel.disabled = false;
    cancel.onclick = () => cancelTask(id);
    let r;
    try { r = await api('GET', '/v1/tasks/' + encodeURIComponent(id)); } catch (e) { return; }
    if (r.status !== 200) { say(failure(r), true); return; }
    cancel.hidden = FINISHED.has(r.data.state) || !!r.data.report;
    const facts = $('task-facts');
    facts.replaceChildren();
    stateFact = fact(facts, 'State', r.data.state);
    fact(facts, 'Capsule', r.data.capsule);
    fact(facts, 'Runner', r.data.runner || r.data.waiting || '—');
    fact(facts, 'Attempt', attemptOf(r.data));
    if (r.data.task && r.data.task.goal) fact(facts, 'Goal', r.data.task.goal);
    follow(id, 0, 0);
  }

  async function cancelTask(id) {
    const cancel = $('cancel');
    cancel.disabled = true;
    try {
      const r = await api('POST', '/v1/tasks/' + encodeURIComponent(id) + '/cancel');
      if (r.status === 200 || r.status === 202) say('Cancel sent to task ' + id + '.');
      else { say(failure(r) + (r.data && r.data.reason ? ': ' + r.data.reason : ''), true); }
    } catch (e) {
      if (e.message !== 'unauthorized') { say('Cannot reach the hub: ' + e.message, true); cancel.disabled = false; }
    }
  }

  // Server-sent events read with fetch, not EventSource: EventSource cannot send an Authorization
  // header, and the token must not go into the URL. Resumes with Last-Event-ID after a cut and
  // drops any id it has already shown, so nothing repeats.
  async function follow(id, lastId, attempt) {
    const ctl = new AbortController();
    stream = ctl;
    let last = lastId;
    let finished = false;
    try {
      const headers = { Authorization: 'Bearer ' + token(), Accept: 'text/event-stream' };
      if (last > 0) headers['Last-Event-ID'] = String(last);
      const r = await fetch('/v1/tasks/' + encodeURIComponent(id) + '/events',
        { headers, signal: ctl.signal, cache: 'no-store' });
      if (r.status === 401) { signOut('The hub refused the token.'); return; }
      if (!r.ok) { say('The event stream answered HTTP ' + r.status, true); return; }
      if (attempt > 0) say('Reconnected; resumed after event ' + last + '.');
      attempt = 0;
      const reader = r.body.getReader();
      const decoder = new TextDecoder();
      let buf = '';
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        buf += decoder.decode(value, { stream: true }).replace(/\r\n?/g, '\n');
        let cut;
        while ((cut = buf.indexOf('\n\n')) >= 0) {
          const block = buf.slice(0, cut);
          buf = buf.slice(cut + 2);
          const ev = parse(block);
          if (!ev || ev.id <= last) continue; // a heartbeat, or already shown
          last = ev.id;
          finished = render(ev) || finished;
        }
      }
    } catch (e) {
      if (ctl.signal.aborted) return; // the person left the page
    }
    if (finished || ctl.signal.aborted) return;
    const wait = RETRY_MS[Math.min(attempt, RETRY_MS.length - 1)];
    say('The event stream was cut; reconnecting in ' + wait / 1000 + ' s…');
    timer = setTimeout(() => follow(id, last, attempt + 1), wait);
  }

  function parse(block) {
    let id = null; let event = 'message'; const data = [];
    for (const line of block.split('\n')) {
      if (line.startsWith(':')) continue;
      const colon = line.indexOf(':');
      const field = colon < 0 ? line : line.slice(0, colon);
      const value = colon < 0 ? '' : line.slice(colon + 1).replace(/^ /, '');
      if (field === 'id') id = Number(value);
      else if (field === 'event') event = value;
      else if (field === 'data') data.push(value);
    }
    if (id === null || !Number.isFinite(id)) return null;
    let payload;
    try { payload = JSON.parse(data.join('\n')); } catch (e) { payload = { text: data.join('\n') }; }
    return { id, event, data: payload };
  }

  function note(kind, text) {
    const li = el('li');
    li.append(el('span', kind, 'kind'), document.createTextNode(text));
    $('events').append(li);
    $('events').scrollTop = $('events').scrollHeight; // the list scrolls, never the page
  }

  /** Shows one event; true when it was the report (the stream's end). */
  function render(ev) {
    const p = ev.data || {};
    if (ev.event === 'report') { showReport(p); return true; }
    if (ev.event === 'text') {
      if (typeof p.delta === 'string') $('transcript').append(document.createTextNode(p.delta));
      else if (p.event === 'text_completed' && $('transcript').textContent === '' && p.text) {
        $('transcript').append(document.createTextNode(p.text));
      }
      $('transcript').scrollTop = $('transcript').scrollHeight;
      return false;
    }
    if (ev.event === 'state') {
      note('state', p.phase || JSON.stringify(p));
      if (stateFact && p.phase) stateFact.textContent = p.phase;
    }
    else if (ev.event === 'tool') {
      // One line per call: the harness's tool_called names it (tool_started precedes it and a
      // bridged call's bridge_call repeats it), and its result follows.
      if (p.event === 'tool_called') note('tool', (p.name || '?') + ' called');
      else if (p.event === 'tool_resulted') note('tool', 'result' + (p.is_error ? ' (error)' : ''));
    } else if (ev.event === 'retry') note('retry', 'attempt ' + p.attempt + ': ' + (p.reason || ''));
    else if (ev.event === 'note') note('note', p.text || '');
    else if (ev.event === 'quota') note('quota', 'quota update');
    else if (ev.event === 'usage' && p.usage) note('usage', total(p.usage) + ' tokens so far');
    return false;
  }

  function showReport(r) {
    $('cancel').disabled = true;
    $('cancel').hidden = true; // a finished task has nothing to cancel
    if (stateFact) stateFact.textContent = r.status;
    const facts = $('report-facts');
    facts.replaceChildren();
    fact(facts, 'Status', r.status);
    if (r.failure_type) fact(facts, 'Failure', r.failure_type);
    if (r.summary_business) fact(facts, 'Summary', r.summary_business);
    if (r.iterations !== undefined) fact(facts, 'Turns', r.iterations);
    const body = $('usage').tBodies[0];
    body.replaceChildren(...USAGE.map((k) => {
      const row = el('tr');
      row.append(el('th', k.replace('_', ' ')), el('td', r.usage ? r.usage[k] : 0, 'num'));
      row.firstChild.scope = 'row';
      return row;
    }));
    $('report').hidden = false;
    say('Task finished: ' + r.status + '.');
  }

  // ---- runners and submit ------------------------------------------------------------------

  async function loadRunners() {
    const my = gen;
    try {
      const r = await api('GET', '/v1/runners');
      if (r.status !== 200) { say(failure(r), true); return; }
      const rows = r.data.map((x) => {
        const row = el('tr');
        row.dataset.runner = x.id;
        cell(row, 'Runner', x.id);
        cell(row, 'Connected', x.connected ? 'yes' : 'no', x.connected ? 'state-ok' : 'state-failed');
        cell(row, 'Capsules', (x.capsules || []).length ? x.capsules.join(', ') : 'any');
        cell(row, 'Slots', x.slots, 'num');
        cell(row, 'Running', x.running, 'num');
        cell(row, 'Version', x.runner_version || '');
        return row;
      });
      $('runners').tBodies[0].replaceChildren(...rows);
      $('runners-empty').hidden = rows.length > 0;
    } catch (e) {
      if (e.message !== 'unauthorized') say('Cannot reach the hub: ' + e.message, true);
    }
    if (my === gen && !$('view-runners').hidden) timer = setTimeout(loadRunners, RUNNERS_EVERY_MS);
  }

  async function loadCapsules() {
    try {
      const r = await api('GET', '/v1/runners');
      if (r.status !== 200) return;
      const names = new Set();
      r.data.forEach((x) => (x.capsules || []).forEach((c) => names.add(c)));
      $('capsule-names').replaceChildren(...[...names].sort().map((n) => { const o = el('option'); o.value = n; return o; }));
    } catch (e) { /* the form still works with a typed name */ }
  }

  async function submit(event) {
    event.preventDefault();
    const body = { capsule: $('submit-capsule').value.trim(), goal: $('submit-goal').value };
    const id = $('submit-id').value.trim();
    if (id) body.id = id;
    $('submit').disabled = true;
    try {
      const r = await api('POST', '/v1/tasks', body);
      if (r.status === 201) {
        $('submit-form').reset();
        location.hash = '#/task/' + encodeURIComponent(r.data.id); // the task page says its state
      } else {
        say(failure(r), true);
      }
    } catch (e) {
      if (e.message !== 'unauthorized') say('Cannot reach the hub: ' + e.message, true);
    } finally {
      $('submit').disabled = false;
    }
  }

  document.addEventListener('DOMContentLoaded', () => {
    $('sign-in-form').addEventListener('submit', (e) => {
      e.preventDefault();
      const t = $('token').value.trim();
      $('token').value = '';
      if (!t) return;
      sessionStorage.setItem(KEY, t);
      if (!location.hash || location.hash === '#/') location.hash = '#/tasks'; else route();
    });
    $('sign-out').addEventListener('click', () => signOut());
    $('submit-form').addEventListener('submit', submit);
    $('filter-form').addEventListener('submit', (e) => e.preventDefault());
    $('filter-state').addEventListener('change', () => { stop(); loadTasks(); });
    $('filter-text').addEventListener('input', () => { stop(); loadTasks(); });
    window.addEventListener('hashchange', route);
    route();
  });
})();
