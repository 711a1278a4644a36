// reel studio: the list of recordings, and a call as a timeline with its audio.
//
// Plain ES module, no dependencies. The page talks to the studio's JSON API (see
// src/studio/http.rs); `window.studio` exposes the view's state for tests and the curious.
// Recorded strings reach the page only as `textContent`, attribute properties and canvas
// text, never as markup (no `innerHTML`): a recording cannot inject anything into the page.

const $ = (selector) => document.querySelector(selector);

// A page written by `reel show LOG --html` carries its recording; the studio's server does
// not exist there, and the API's answers come from the embedded data.
const OFFLINE = window.REEL_OFFLINE ?? null;

const LANE_HEIGHT = 44;
const AXIS_HEIGHT = 24;
const LABEL_WIDTH = 90;

const state = {
  name: null,
  overview: null,
  events: [],
  truncated: false,
  view: { from: 0, to: 1 },
  cursorMs: null,
  items: [],
  selected: null,
  peaks: null,
};

window.studio = {
  state,
  /** The canvas point (client coordinates) of tool call `index`'s bar middle. */
  toolBarPoint(index) {
    const item = state.items.find((i) => i.type === 'tool' && i.index === index);
    return item ? canvasToClient(item.x + item.w / 2, item.y + item.h / 2) : null;
  },
  /** The canvas point of the `index`th mark of the supervisor lane. */
  supervisorPoint(index) {
    const item = state.items.find((i) => i.type === 'supervisor' && i.index === index);
    return item ? canvasToClient(item.x + item.w / 2, item.y + item.h / 2) : null;
  },
  /** The canvas point of the frame numbered `seq`. */
  framePoint(seq) {
    const item = state.items.find((i) => i.type === 'frame' && i.seq === seq);
    return item ? canvasToClient(item.x + Math.max(item.w, 1) / 2, item.y + item.h / 2) : null;
  },
};

// ---------------------------------------------------------------- routing

function route() {
  const hash = location.hash.slice(1);
  if (OFFLINE && (hash === '' || hash === '/')) {
    openCall(OFFLINE.recording.name);
  } else if (hash.startsWith('/call/')) {
    openCall(decodeURIComponent(hash.slice('/call/'.length)));
  } else if (hash.startsWith('/diff/')) {
    const [a, b] = hash.slice('/diff/'.length).split('/').map(decodeURIComponent);
    openDiff(a, b);
  } else {
    openList();
  }
}

function show(view) {
  for (const id of ['list-view', 'call-view', 'diff-view']) $(`#${id}`).hidden = id !== view;
}

// ---------------------------------------------------------------- the list

async function openList() {
  show('list-view');
  stopAudio();
  const answer = await getJson('/api/recordings');
  // Another view may have opened while the list was loading.
  if ($('#list-view').hidden) return;
  $('#where').textContent = answer.dir;
  const body = $('#recordings tbody');
  body.replaceChildren();
  for (const recording of answer.recordings) {
    const row = document.createElement('tr');
    if (recording.error) {
      row.className = 'broken';
      row.dataset.search = recording.name.toLowerCase();
      row.append(cell(recording.name), cell(`cannot be read: ${recording.error}`, 7));
    } else {
      row.dataset.search = [recording.name, recording.model, ...recording.tools, recording.last_replay?.verdict ?? ''].join(' ').toLowerCase();
      const link = document.createElement('a');
      link.href = `#/call/${encodeURIComponent(recording.name)}`;
      link.textContent = recording.name;
      const first = document.createElement('td');
      first.append(link);
      if (recording.live) {
        const badge = document.createElement('span');
        badge.className = 'live';
        badge.textContent = 'live';
        first.append(' ', badge);
      }
      row.append(
        first,
        cell(recording.model ?? '—'),
        cell(recording.started ?? '—'),
        cell(seconds(recording.duration_ms)),
        cell(String(recording.turns)),
        cell(recording.tools.join(', ') || '—'),
        cell(String(recording.tokens)),
        verdictCell(recording.last_replay),
      );
    }
    body.append(row);
  }
  const names = answer.recordings.filter((r) => !r.error).map((r) => r.name);
  for (const select of [$('#compare-a'), $('#compare-b')]) {
    select.replaceChildren(...names.map((name) => new Option(name, name)));
  }
  if (names.length > 1) $('#compare-b').selectedIndex = 1;
  filter();
}

$('#compare-go').addEventListener('click', () => {
  location.hash = `#/diff/${encodeURIComponent($('#compare-a').value)}/${encodeURIComponent($('#compare-b').value)}`;
});

$('#search').addEventListener('input', filter);

function filter() {
  const words = $('#search').value.toLowerCase().split(/\s+/).filter(Boolean);
  for (const row of document.querySelectorAll('#recordings tbody tr')) {
    row.hidden = !words.every((word) => row.dataset.search.includes(word));
  }
}

/** The last replay's verdict (`reel replay` keeps it beside the log); its first divergence on hover. */
function verdictCell(last) {
  const td = cell(last ? last.verdict : '—');
  if (last) {
    td.className = last.verdict === 'CLEAN' ? 'clean' : 'drift';
    td.title = last.first_divergence ?? `replayed ${new Date(last.replayed_at_ms).toISOString()}`;
  }
  return td;
}

function cell(text, span = 1) {
  const td = document.createElement('td');
  td.textContent = text;
  if (span > 1) td.colSpan = span;
  return td;
}

// ---------------------------------------------------------------- a call

async function openCall(name) {
  show('call-view');
  stopAudio();
  state.name = name;
  state.selected = null;
  state.peaks = null;
  // Built as elements, like every text on the page: no markup is ever parsed from a string.
  const hint = paragraph('Click a frame, a tool call or a state change to see it in full.');
  hint.className = 'hint';
  $('#detail').replaceChildren(hint);
  const overview = await getJson(`/api/recordings/${encodeURIComponent(name)}`);
  state.overview = overview;
  $('#where').textContent = name;
  describeCall(overview);
  renderTranscript(overview);
  state.view = { from: 0, to: fullSpan() };
  await loadEvents();
  if (overview.live) pollLive(name);
}

/** How often a live call is read again. */
const LIVE_POLL_MS = 500;

/**
 * A call a running session streams into: read it again every LIVE_POLL_MS while it is
 * open and live; a view showing the call's end keeps showing it as the call grows.
 */
function pollLive(name) {
  state.live = true;
  const poll = async () => {
    if (state.name !== name || $('#call-view').hidden) return;
    const overview = await getJson(`/api/recordings/${encodeURIComponent(name)}`);
    if (state.name !== name) return;
    const atEnd = state.view.to >= fullSpan() - 1;
    state.overview = overview;
    describeCall(overview);
    renderTranscript(overview);
    if (atEnd) state.view = { from: state.view.from, to: fullSpan() };
    await loadEvents();
    if (overview.live) setTimeout(poll, LIVE_POLL_MS);
    else state.live = false;
  };
  setTimeout(poll, LIVE_POLL_MS);
}

/** The call's setup at the top of the call view: model, voice, instruction, tools. */
function renderSetup(overview) {
  const box = $('#call-setup');
  const setup = overview.setup;
  if (!setup) {
    box.replaceChildren();
    return;
  }
  const rows = [
    ['model', setup.model ?? '—'],
    ['voice', setup.voice ?? 'default'],
    ['modalities', setup.modalities.length ? setup.modalities.join(', ') : 'default'],
    ['instruction', setup.instruction ?? '—'],
    ['tools', setup.tools.length ? setup.tools.join(', ') : 'none'],
  ];
  box.replaceChildren(
    ...rows.flatMap(([name, value]) => {
      const dt = document.createElement('dt');
      dt.textContent = name;
      const dd = document.createElement('dd');
      dd.dataset.field = name;
      dd.textContent = value;
      return [dt, dd];
    }),
  );
}

/** Per turn: time to first audio, time to first text, time in tools. */
function renderLatencies(overview) {
  const body = $('#latencies tbody');
  const ms = (value) => (value == null ? '—' : `${value} ms`);
  body.replaceChildren(
    ...overview.turns.map((turn) => {
      const row = document.createElement('tr');
      row.append(
        cell(String(turn.n)),
        cell(ms(turn.first_audio_ms)),
        cell(ms(turn.first_text_ms)),
        cell(ms(turn.tool_ms)),
      );
      return row;
    }),
  );
  $('#latencies').hidden = overview.turns.length === 0;
}

/** No play button on a call without audio; download links for its audio, trace and page. */
function renderControls(overview) {
  const hasAudio = overview.audio_end_ms > 0;
  $('#play').hidden = !hasAudio;
  $('#no-audio').hidden = hasAudio;
  if (OFFLINE) {
    // A page from `reel show --html` is the download; it has no server to fetch from.
    $('#downloads').replaceChildren();
    return;
  }
  const base = `/api/recordings/${encodeURIComponent(overview.name)}`;
  const stem = overview.name.replace(/\.wire\.jsonl$/, '');
  const link = (label, href, file) => {
    const a = document.createElement('a');
    a.textContent = label;
    a.href = href;
    a.download = file;
    return a;
  };
  $('#downloads').replaceChildren(
    ...(hasAudio ? [link('⤓ WAV', `${base}/audio.wav`, `${stem}.wav`)] : []),
    link('⤓ trace', `${base}/trace.json`, `${stem}.trace.json`),
    link('⤓ HTML', `${base}/page.html`, `${stem}.html`),
  );
}

/** `1 turn`, `3 turns`: a count with its noun in the right number. */
function counted(n, one, many) {
  return `${n} ${n === 1 ? one : many}`;
}

function describeCall(overview) {
  renderSetup(overview);
  renderControls(overview);
  renderLatencies(overview);
  const tools = overview.tools.length;
  const ttfa = overview.turns.filter((t) => t.first_audio_ms != null).map((t) => t.first_audio_ms);
  $('#call-head').textContent =
    `${overview.model ?? 'unknown model'} · ${seconds(overview.duration_ms)} · ` +
    `${counted(overview.frames, 'frame', 'frames')} · ` +
    `${counted(overview.turns.length, 'turn', 'turns')} · ${counted(tools, 'tool call', 'tool calls')}` +
    (ttfa.length ? ` · first audio ${ttfa.map((ms) => `${ms} ms`).join(', ')}` : '') +
    (overview.live ? ' · live' : '') +
    (overview.dropped ? ` · ${overview.dropped} messages the session could not send` : '');
}

/** The most frames one window asks for (the server's cap). */
const WINDOW_FRAMES = 20000;

async function loadEvents() {
  const { from, to } = state.view;
  // A long call zoomed out: one in `every` audio and transcription frames, so the whole
  // view fits in one window with every tool call and turn in it.
  const inView = (state.overview.frames * Math.max(to - from, 1)) / fullSpan();
  const every = Math.max(1, Math.ceil((inView * 1.25) / WINDOW_FRAMES));
  const url = `/api/recordings/${encodeURIComponent(state.name)}/events?from=${Math.max(Math.floor(from), 0)}&to=${Math.ceil(to) + 1}&every=${every}`;
  const answer = await getJson(url);
  state.events = answer.events;
  state.truncated = answer.truncated;
  state.every = answer.every ?? 1;
  draw();
  renderFrames();
  await loadPeaks();
}

/** The audio's loudness over the view, one slice per pixel: drawn as waveforms. */
async function loadPeaks() {
  const { from, to } = state.view;
  const buckets = Math.max(Math.floor(($('#timeline').width || 1200) - LABEL_WIDTH), 1);
  const url = `/api/recordings/${encodeURIComponent(state.name)}/peaks?from=${Math.max(Math.floor(from), 0)}&to=${Math.ceil(to)}&buckets=${buckets}`;
  const answer = await getJson(url);
  state.peaks = { from: answer.from, to: answer.to, values: answer.peaks };
  draw();
}

// ---------------------------------------------------------------- a diff

async function openDiff(a, b) {
  show('diff-view');
  stopAudio();
  $('#where').textContent = `${a} ⟷ ${b}`;
  $('#diff-title').textContent = `${a} ⟷ ${b}`;
  const view = await getJson(`/api/diff/${encodeURIComponent(a)}/${encodeURIComponent(b)}`);
  const body = $('#diff-paths tbody');
  body.replaceChildren();
  const comparison = view.comparison;
  if (comparison.result === 'same') {
    $('#diff-result').textContent = `The same, frame for frame: ${comparison.frames} frames.`;
    $('#diff-paths').hidden = true;
  } else {
    const [inA, inB] = view.divergence;
    const where = (place) => (place.seq == null ? 'no frame' : `seq ${place.seq} at ${seconds(place.t_ms)}, turn ${place.turn ?? '—'}`);
    $('#diff-result').textContent =
      `First divergence at frame ${comparison.position} (${comparison.difference.kind.replaceAll('_', ' ')}): ` +
      `first ${where(inA)}; second ${where(inB)}.`;
    $('#diff-paths').hidden = false;
    for (const diff of comparison.difference.diffs ?? []) {
      const row = document.createElement('tr');
      row.append(cell(diff.path), cell(JSON.stringify(diff.expected ?? null)), cell(JSON.stringify(diff.actual ?? null)));
      body.append(row);
    }
  }
  const diverged = view.divergence ? view.divergence.map((p) => p.turn) : [null, null];
  renderTurns($('#diff-a'), a, view.a, diverged[0]);
  renderTurns($('#diff-b'), b, view.b, diverged[1]);
}

function renderTurns(box, name, overview, divergedTurn) {
  const title = document.createElement('h3');
  const link = document.createElement('a');
  link.href = `#/call/${encodeURIComponent(name)}`;
  link.textContent = name;
  title.append(link);
  const list = document.createElement('ol');
  for (const turn of overview.turns) {
    const item = document.createElement('li');
    const audio = turn.first_audio_ms == null ? '' : ` · first audio ${turn.first_audio_ms} ms`;
    item.textContent = `${seconds(turn.start_ms)} → ${seconds(turn.end_ms)}${audio}`;
    if (turn.n === divergedTurn) item.className = 'diverged';
    list.append(item);
  }
  box.replaceChildren(title, list);
}

// ---------------------------------------------------------------- drawing

function lanes() {
  return state.overview ? state.overview.lanes : [];
}

function timeToX(t, width) {
  const { from, to } = state.view;
  return LABEL_WIDTH + ((t - from) / (to - from)) * (width - LABEL_WIDTH);
}

function xToTime(x, width) {
  const { from, to } = state.view;
  return from + ((x - LABEL_WIDTH) / (width - LABEL_WIDTH)) * (to - from);
}

function laneY(name) {
  return AXIS_HEIGHT + lanes().indexOf(name) * LANE_HEIGHT;
}

function draw() {
  const canvas = $('#timeline');
  const width = canvas.clientWidth || canvas.width;
  canvas.width = width;
  canvas.height = AXIS_HEIGHT + lanes().length * LANE_HEIGHT;
  const g = canvas.getContext('2d');
  g.clearRect(0, 0, canvas.width, canvas.height);
  state.items = [];
  drawAxis(g, width);
  lanes().forEach((lane, i) => {
    const y = AXIS_HEIGHT + i * LANE_HEIGHT;
    g.fillStyle = i % 2 ? '#f6f7f9' : '#fff';
    g.fillRect(0, y, width, LANE_HEIGHT);
    g.fillStyle = '#333';
    g.font = '12px system-ui, sans-serif';
    g.fillText(lane, 6, y + LANE_HEIGHT / 2 + 4);
  });
  const overview = state.overview;
  if (!overview) return;
  // Lanes empty because there is no journal beside the log say so (older overviews: no flag).
  state.laneNotes = {};
  // Which call the notes (and the timeline) were last drawn for.
  state.drawnFor = state.name;
  if (overview.journal === false) {
    for (const lane of ['phases', 'state']) {
      state.laneNotes[lane] = 'no journal';
      g.fillStyle = '#868e96';
      g.font = 'italic 12px system-ui, sans-serif';
      g.fillText('no journal', LABEL_WIDTH + 8, laneY(lane) + LANE_HEIGHT / 2 + 4);
      g.font = '12px system-ui, sans-serif';
    }
  }
  // Turns.
  overview.turns.forEach((turn) => {
    const x = timeToX(turn.start_ms, width);
    const w = Math.max(timeToX(turn.end_ms, width) - x, 1);
    const y = laneY('turns') + 8;
    g.fillStyle = turn.n % 2 ? '#dfe8f7' : '#cfdcf2';
    g.fillRect(x, y, w, LANE_HEIGHT - 16);
    g.fillStyle = '#1d3b6a';
    const ttfa = turn.first_audio_ms != null ? ` · ${turn.first_audio_ms} ms` : '';
    g.fillText(`turn ${turn.n}${ttfa}`, x + 3, y + 18);
    state.items.push({ type: 'turn', turn, x, y, w, h: LANE_HEIGHT - 16 });
  });
  // Conversation phases, from the journal (older overviews have none).
  (overview.phases ?? []).forEach((phase, index) => {
    const x = timeToX(phase.start_ms, width);
    const w = Math.max(timeToX(phase.end_ms ?? fullSpan(), width) - x, 1);
    const y = laneY('phases') + 8;
    g.fillStyle = index % 2 ? '#fde7c7' : '#fcd9a5';
    g.fillRect(x, y, w, LANE_HEIGHT - 16);
    g.fillStyle = '#6b3d00';
    g.fillText(phase.name, x + 3, y + 18);
    state.items.push({ type: 'phase', phase, x, y, w, h: LANE_HEIGHT - 16 });
  });
  // Conversation control on the phases lane: the context sent at each turn boundary (upper
  // half; deferred context drawn from where it was queued to where it went out) and the
  // navigation block where it changed (lower half).
  (overview.context ?? []).forEach((mark) => {
    const x = timeToX(mark.t_ms, width);
    const y = laneY('phases') + 3;
    const h = LANE_HEIGHT / 2 - 4;
    if (mark.flushed_with != null) {
      const queued = timeToX(mark.boundary_ms, width);
      g.fillStyle = COLORS.context;
      g.fillRect(queued, y + h / 2 - 1, Math.max(x - queued, 1), 2);
      g.fillRect(queued - 1, y, 2, h);
    }
    g.fillStyle = mark.prompt ? COLORS.prompt : COLORS.context;
    g.fillRect(x - 2, y, 5, h);
    state.items.push({ type: 'context', mark, x: x - 3, y, w: 7, h });
  });
  (overview.navigation ?? []).forEach((mark) => {
    const x = timeToX(mark.t_ms, width);
    const y = laneY('phases') + LANE_HEIGHT / 2 + 1;
    const h = LANE_HEIGHT / 2 - 4;
    g.fillStyle = COLORS.navigation;
    g.fillRect(x - 2, y, 5, h);
    state.items.push({ type: 'navigation', mark, x: x - 3, y, w: 7, h });
  });
  // The flow of a governed recording (older overviews, and recordings with no flow, have
  // none): one row per step, its active spans and, from when it was done, its done span;
  // denied calls as red ticks across the lane. Step ids and reasons are drawn and shown as
  // text only.
  if (overview.flow) drawFlow(g, width, overview.flow);
  // The session itself: connections, closes, goAways, wire-phase changes.
  (overview.supervisor ?? []).forEach((mark, index) => {
    const x = timeToX(mark.t_ms, width);
    const y = laneY('supervisor') + 6;
    g.fillStyle = { connected: '#2b8a3e', closed: '#c92a2a', go_away: '#e67700', reconnecting: '#e67700', reconnected: '#2b8a3e', restarted: '#862e9c' }[mark.kind] ?? '#495057';
    g.fillRect(x - 1, y, 3, LANE_HEIGHT - 12);
    if (mark.kind !== 'phase') {
      // The label, cut where the next mark begins.
      const next = overview.supervisor.slice(index + 1).find((m) => m.kind !== 'phase');
      const room = (next ? timeToX(next.t_ms, width) : width) - x - 6;
      g.save();
      g.beginPath();
      g.rect(x + 3, y, Math.max(room, 0), LANE_HEIGHT - 12);
      g.clip();
      g.fillText(mark.detail, x + 4, y + 12);
      g.restore();
    }
    state.items.push({ type: 'supervisor', index, mark, x: x - 3, y, w: 7, h: LANE_HEIGHT - 12 });
  });
  // Tool calls.
  overview.tools.forEach((tool, index) => {
    const x = timeToX(tool.start_ms, width);
    const end = tool.end_ms ?? state.view.to;
    const w = Math.max(timeToX(end, width) - x, 4);
    const y = laneY('tools') + 8;
    g.fillStyle = tool.cancelled ? COLORS.cancelled : tool.end_ms == null ? COLORS.unanswered : COLORS.answered;
    g.fillRect(x, y, w, LANE_HEIGHT - 16);
    g.fillStyle = '#222';
    g.fillText(`${tool.name}${tool.cancelled ? ' (cancelled)' : ''}`, x + 3, y + 18);
    state.items.push({ type: 'tool', index, tool, x, y, w, h: LANE_HEIGHT - 16 });
  });
  // State changes.
  overview.state.forEach((change, index) => {
    const x = timeToX(change.t_ms, width);
    const y = laneY('state') + LANE_HEIGHT / 2;
    g.fillStyle = COLORS.state;
    g.beginPath();
    g.moveTo(x, y - 6);
    g.lineTo(x + 6, y);
    g.lineTo(x, y + 6);
    g.lineTo(x - 6, y);
    g.fill();
    state.items.push({ type: 'state', index, change, x: x - 6, y: y - 6, w: 12, h: 12 });
  });
  // Waveforms: the user's audio in the outbound lane, the model's in the inbound one.
  if (state.peaks) {
    const { from, to, values } = state.peaks;
    const slice = (to - from) / values.length;
    for (const [lane, low, high] of [['wire out', 0, 1], ['wire in', 2, 3]]) {
      const middle = laneY(lane) + LANE_HEIGHT / 2;
      // Scaled to the loudest sample in view, so quiet speech still shows its shape.
      const loudest = Math.max(1000, ...values.map((p) => Math.max(-p[low], p[high])));
      g.fillStyle = lane === 'wire out' ? 'rgba(47, 158, 68, 0.35)' : 'rgba(91, 141, 239, 0.35)';
      values.forEach((peak, i) => {
        if (peak[low] === 0 && peak[high] === 0) return;
        const x = timeToX(from + i * slice, width);
        const top = middle - (peak[high] / loudest) * (LANE_HEIGHT / 2 - 8);
        const bottom = middle - (peak[low] / loudest) * (LANE_HEIGHT / 2 - 8);
        g.fillRect(x, top, Math.max(timeToX(from + (i + 1) * slice, width) - x, 1), Math.max(bottom - top, 1));
      });
    }
  }
  // The lanes each server frame's events went to, by the router's rule.
  for (const event of state.events) {
    for (const lane of event.lanes ?? []) {
      const name = `${lane} lane`;
      if (!lanes().includes(name)) continue;
      const x = timeToX(event.t_ms, width);
      if (x < LABEL_WIDTH - 2 || x > width + 2) continue;
      g.fillStyle = colorOf(event.kind);
      g.fillRect(x, laneY(name) + 10, 2, LANE_HEIGHT - 20);
    }
  }
  // Frames.
  for (const event of state.events) {
    const lane = event.dir === 'out' ? 'wire out' : 'wire in';
    const x = timeToX(event.t_ms, width);
    if (x < LABEL_WIDTH - 2 || x > width + 2) continue;
    const y = laneY(lane) + 6;
    g.fillStyle = colorOf(event.kind);
    if (event.audio_ms) {
      // Audio frames: a thin strip for when each arrived; the waveform shows what played.
      const w = Math.max(timeToX(event.t_ms + event.audio_ms, width) - x, 1);
      g.fillRect(x, laneY(lane) + 2, w, 4);
      g.fillRect(x, laneY(lane) + 2, 1, 10);
      state.items.push({ type: 'frame', seq: event.seq, event, x, y, w: Math.max(w, 2), h: LANE_HEIGHT - 12 });
    } else {
      g.fillRect(x, y, 2, LANE_HEIGHT - 12);
      state.items.push({ type: 'frame', seq: event.seq, event, x, y, w: 2, h: LANE_HEIGHT - 12 });
    }
  }
  if (state.truncated) {
    g.fillStyle = '#a33';
    g.fillText('more frames than shown: zoom in', width - 200, 14);
  } else if (state.every > 1) {
    g.fillStyle = '#666';
    g.fillText(`1 in ${state.every} audio frames shown: zoom in for all`, width - 260, 14);
  }
  // The audio cursor.
  if (state.cursorMs != null) {
    const x = timeToX(state.cursorMs, width);
    g.strokeStyle = '#d22';
    g.lineWidth = 2;
    g.beginPath();
    g.moveTo(x, AXIS_HEIGHT);
    g.lineTo(x, canvas.height);
    g.stroke();
  }
  canvas.dataset.cursorMs = state.cursorMs == null ? '' : String(Math.round(state.cursorMs));
}

function drawAxis(g, width) {
  const { from, to } = state.view;
  const span = to - from;
  const step = niceStep(span / 8);
  g.fillStyle = '#555';
  g.font = '11px system-ui, sans-serif';
  for (let t = Math.ceil(from / step) * step; t <= to; t += step) {
    const x = timeToX(t, width);
    g.fillRect(x, AXIS_HEIGHT - 6, 1, 6);
    g.fillText(seconds(t), x + 2, AXIS_HEIGHT - 9);
  }
}

function niceStep(raw) {
  const power = 10 ** Math.floor(Math.log10(Math.max(raw, 1)));
  for (const m of [1, 2, 5, 10]) if (m * power >= raw) return m * power;
  return 10 * power;
}

/** The flow lane: each step's spans on a row of its own, and the denied calls. */
function drawFlow(g, width, flow) {
  const top = laneY('flow') + 3;
  const rowH = (LANE_HEIGHT - 6) / Math.max(flow.steps.length, 1);
  flow.steps.forEach((step, row) => {
    const y = top + row * rowH;
    for (const span of step.spans) {
      const x = timeToX(span.start_ms, width);
      const w = Math.max(timeToX(span.end_ms ?? fullSpan(), width) - x, 2);
      g.fillStyle = span.state === 'done' ? COLORS.flowDone : COLORS.flowActive;
      g.fillRect(x, y + 1, w, Math.max(rowH - 2, 2));
      if (rowH >= 10) {
        g.save();
        g.beginPath();
        g.rect(x, y, w, rowH);
        g.clip();
        g.fillStyle = '#222';
        g.font = `${Math.min(11, Math.floor(rowH - 2))}px system-ui, sans-serif`;
        g.fillText(step.id, x + 3, y + rowH - 3);
        g.restore();
      }
      state.items.push({ type: 'flowStep', step, span, x, y, w, h: rowH });
    }
  });
  for (const call of flow.denied) {
    if (call.t_ms == null) continue;
    const x = timeToX(call.t_ms, width);
    g.fillStyle = COLORS.denied;
    g.fillRect(x - 2, top, 5, LANE_HEIGHT - 6);
    state.items.push({ type: 'denied', call, x: x - 3, y: top, w: 7, h: LANE_HEIGHT - 6 });
  }
  if (flow.problem) {
    state.laneNotes = state.laneNotes ?? {};
    state.laneNotes.flow = flow.problem;
    g.fillStyle = '#868e96';
    g.font = 'italic 12px system-ui, sans-serif';
    g.fillText(`flow file not used: ${flow.problem}`, LABEL_WIDTH + 8, laneY('flow') + LANE_HEIGHT - 4);
  }
  g.font = '12px system-ui, sans-serif';
}

/** A denied call, as detail elements (all set as text). */
function deniedDetail(call) {
  const when = call.t_ms == null ? 'not on the timeline' : seconds(call.t_ms);
  const id = call.call_id == null ? '' : ` · id ${call.call_id}`;
  const parts = [
    heading(`denied ${call.tool}${id} · frame ${call.seq} · ${when}`),
    paragraph(call.by_flow ? 'the flow refuses this call' : 'answered with an error'),
    pre(call.reason, 'denied-reason'),
  ];
  if (call.by_flow && call.error != null) {
    parts.push(heading('the response\'s error', 'h4'), pre(call.error, 'denied-error'));
  }
  return parts;
}

/** The colours of the timeline, named: what `colorOf` and the bars draw, and the legend. */
const COLORS = {
  audio: '#5b8def',
  tool: '#2f9e44',
  interrupted: '#e8590c',
  close: '#c92a2a',
  setup: '#862e9c',
  frame: '#495057',
  answered: '#9fd39f',
  unanswered: '#f0d080',
  cancelled: '#e8a0a0',
  state: '#7a4fbf',
  context: '#1971c2',
  prompt: '#c2255c',
  navigation: '#2b8a3e',
  flowActive: '#ffd43b',
  flowDone: '#8ce99a',
  denied: '#e03131',
};

/** The legend under the controls, from `COLORS`. */
const LEGEND = [
  ['audio', 'audio frame'],
  ['tool', 'tool call or response frame'],
  ['interrupted', 'interrupted'],
  ['close', 'close or unreadable frame'],
  ['setup', 'setup'],
  ['frame', 'other frame'],
  ['answered', 'tool call answered'],
  ['unanswered', 'tool call never answered'],
  ['cancelled', 'tool call cancelled'],
  ['state', 'state change'],
  ['context', 'context sent at a turn boundary'],
  ['prompt', 'context asking the model to answer'],
  ['navigation', 'navigation block'],
  ['flowActive', 'flow step active'],
  ['flowDone', 'flow step done'],
  ['denied', 'tool call denied'],
];

function renderLegend() {
  $('#legend').replaceChildren(
    ...LEGEND.map(([color, label]) => {
      const item = document.createElement('span');
      item.className = 'key';
      const swatch = document.createElement('span');
      swatch.className = 'swatch';
      swatch.style.background = COLORS[color];
      item.append(swatch, label);
      return item;
    }),
  );
}

function colorOf(kind) {
  if (kind.includes('audio')) return COLORS.audio;
  if (kind.startsWith('toolCall') || kind.startsWith('toolResponse')) return COLORS.tool;
  if (kind.includes('interrupted')) return COLORS.interrupted;
  if (kind === 'close' || kind === 'invalid') return COLORS.close;
  if (kind.startsWith('setup')) return COLORS.setup;
  return COLORS.frame;
}

// ---------------------------------------------------------------- interaction

const canvas = $('#timeline');

function canvasToClient(x, y) {
  const box = canvas.getBoundingClientRect();
  return { x: box.left + (x * box.width) / canvas.width, y: box.top + (y * box.height) / canvas.height };
}

function canvasPoint(event) {
  const box = canvas.getBoundingClientRect();
  return {
    x: ((event.clientX - box.left) * canvas.width) / box.width,
    y: ((event.clientY - box.top) * canvas.height) / box.height,
  };
}

let drag = null;

canvas.addEventListener('mousedown', (event) => {
  drag = { start: canvasPoint(event).x, view: { ...state.view }, moved: false };
});

window.addEventListener('mousemove', (event) => {
  if (!drag) return;
  const dx = canvasPoint(event).x - drag.start;
  if (Math.abs(dx) > 3) drag.moved = true;
  if (!drag.moved) return;
  const ms = (dx / (canvas.width - LABEL_WIDTH)) * (drag.view.to - drag.view.from);
  state.view = { from: drag.view.from - ms, to: drag.view.to - ms };
  draw();
});

window.addEventListener('mouseup', (event) => {
  if (!drag) return;
  const moved = drag.moved;
  drag = null;
  if (moved) {
    loadEvents();
  } else if (event.target === canvas) {
    select(canvasPoint(event));
  }
});

canvas.addEventListener('wheel', (event) => {
  event.preventDefault();
  zoom(event.deltaY < 0 ? 0.8 : 1.25, xToTime(canvasPoint(event).x, canvas.width));
});

$('#zoom-in').addEventListener('click', () => zoom(0.5));
$('#zoom-out').addEventListener('click', () => zoom(2));
$('#zoom-fit').addEventListener('click', () => {
  state.view = { from: 0, to: fullSpan() };
  loadEvents();
});

/** The whole call: its frames and the audio that plays on after them. */
function fullSpan() {
  return Math.max(state.overview.duration_ms, state.overview.audio_end_ms, 1);
}

function zoom(factor, around = (state.view.from + state.view.to) / 2) {
  const { from, to } = state.view;
  const span = Math.max((to - from) * factor, 5);
  const ratio = (around - from) / (to - from);
  state.view = { from: around - span * ratio, to: around - span * ratio + span };
  loadEvents();
}

async function select(point) {
  const hit = state.items
    .filter((i) => point.x >= i.x - 2 && point.x <= i.x + i.w + 2 && point.y >= i.y && point.y <= i.y + i.h)
    .sort((a, b) => a.w - b.w)[0];
  if (!hit) return;
  state.selected = hit;
  const detail = $('#detail');
  if (hit.type === 'frame') {
    await showFrame(hit.seq);
  } else if (hit.type === 'tool') {
    const tool = hit.tool;
    const took = tool.duration_ms == null ? 'never answered' : `${tool.duration_ms} ms`;
    const answered = tool.end_ms == null ? 'never' : `at ${seconds(tool.end_ms)}`;
    detail.replaceChildren(
      heading(`tool ${tool.name} · id ${tool.id} · ${took}${tool.cancelled ? ' · cancelled' : ''}`),
      paragraph(`called at ${seconds(tool.start_ms)}, answered ${answered} (as recorded on the wire)`),
      heading('arguments', 'h4'),
      pre(JSON.stringify(tool.args, null, 2), 'args'),
      heading('result', 'h4'),
      pre(tool.result == null ? (tool.cancelled ? 'cancelled: no result' : 'no result') : JSON.stringify(tool.result, null, 2), 'result'),
    );
  } else if (hit.type === 'state') {
    const change = hit.change;
    detail.replaceChildren(
      heading(`state ${change.key} · ${change.origin} · ${seconds(change.t_ms)}`),
      pre(`${JSON.stringify(change.old)} → ${JSON.stringify(change.new)}`, 'state'),
    );
  } else if (hit.type === 'phase') {
    const phase = hit.phase;
    detail.replaceChildren(
      heading(`phase ${phase.name} · ${seconds(phase.start_ms)} → ${phase.end_ms == null ? 'the end' : seconds(phase.end_ms)}`),
    );
  } else if (hit.type === 'context') {
    detail.replaceChildren(...contextDetail(hit.mark));
  } else if (hit.type === 'navigation') {
    const mark = hit.mark;
    detail.replaceChildren(
      heading(`navigation · ${mark.turn === 0 ? 'the start' : `turn ${mark.turn}`} · ${seconds(mark.t_ms)}`),
      pre(mark.text, 'navigation'),
    );
  } else if (hit.type === 'flowStep') {
    const { step, span } = hit;
    const parts = [
      heading(`step ${step.id} · ${span.state} · ${seconds(span.start_ms)} → ${span.end_ms == null ? 'the end' : seconds(span.end_ms)}`),
    ];
    if (step.verdict != null) parts.push(paragraph(`verdict at the end: ${step.verdict}`));
    detail.replaceChildren(...parts);
  } else if (hit.type === 'denied') {
    detail.replaceChildren(...deniedDetail(hit.call));
  } else if (hit.type === 'supervisor') {
    detail.replaceChildren(heading(`${hit.mark.kind} · ${seconds(hit.mark.t_ms)}`), paragraph(hit.mark.detail));
  } else if (hit.type === 'turn') {
    const turn = hit.turn;
    detail.replaceChildren(
      heading(`turn ${turn.n} · ${seconds(turn.start_ms)} → ${seconds(turn.end_ms)}`),
      paragraph(turn.first_audio_ms == null ? 'no audio' : `first audio ${turn.first_audio_ms} ms after the user`),
      paragraph(turn.first_text_ms == null ? 'no text' : `first text ${turn.first_text_ms} ms after the user`),
      paragraph(`tools ${turn.tool_ms} ms`),
    );
  }
}

/**
 * The context the runtime sent at one turn boundary, as detail elements: the boundary, when
 * it was queued and went out, and each context turn's role and text (all set as text).
 */
function contextDetail(mark) {
  const boundary = mark.turn === 0 ? `the start (frame ${mark.boundary_seq})` : `turn ${mark.turn} boundary (frame ${mark.boundary_seq})`;
  const delivery = mark.flushed_with == null
    ? `sent at once at ${seconds(mark.t_ms)}`
    : `queued at ${seconds(mark.boundary_ms)} (frame ${mark.boundary_seq}), went out at ${seconds(mark.t_ms)} with the application's frame ${mark.flushed_with}`;
  return [
    heading(`context · frame ${mark.seq} · ${boundary}${mark.prompt ? ' · asks the model to answer' : ''}`),
    paragraph(delivery),
    ...mark.turns.flatMap((turn, i) => [
      heading(`context turn ${i + 1} · ${turn.role || 'no role'}`, 'h4'),
      pre(turn.text, `context-${i + 1}`),
    ]),
  ];
}

/** Frame `seq` in full, in the detail panel. */
async function showFrame(seq) {
  const detail = $('#detail');
  const frame = await getJson(`/api/recordings/${encodeURIComponent(state.name)}/frames/${seq}`);
  detail.replaceChildren(
    heading(`frame ${frame.seq} · ${frame.dir === 'out' ? 'client → server' : 'server → client'} · ${seconds(frame.t_ms)} · ${frame.kind}`),
    paragraph(frame.summary),
    pre(frame.json ? JSON.stringify(frame.json, null, 2) : frame.raw, 'json'),
    heading(`raw: ${frame.bytes} bytes${frame.binary ? ' (binary frame)' : ''}`, 'h4'),
    pre(frame.raw, 'raw'),
  );
}

// ---------------------------------------------------------------- frame list

/** The most rows the frame list draws at once (zoom in for the rest). */
const FRAME_ROWS = 1000;

/** A byte count in a few characters. */
function size(bytes) {
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KiB`;
  return `${(bytes / 1024 / 1024).toFixed(1)} MiB`;
}

/**
 * The frames in view as a list, filtered by direction and kind: one row per frame (frames
 * at the same millisecond each a row of their own), each opening to the frame in full.
 */
function renderFrames() {
  const kinds = [...new Set(state.events.map((e) => e.kind))].sort();
  const kindSelect = $('#frame-kind');
  const chosen = kindSelect.value;
  kindSelect.replaceChildren(
    ...['', ...kinds].map((kind) => {
      const option = document.createElement('option');
      option.value = kind;
      option.textContent = kind || 'every type';
      return option;
    }),
  );
  kindSelect.value = kinds.includes(chosen) ? chosen : '';
  const dir = $('#frame-dir').value;
  const kind = kindSelect.value;
  const shown = state.events.filter((e) => (!dir || e.dir === dir) && (!kind || e.kind === kind));
  const rows = shown.slice(0, FRAME_ROWS).map((e) => {
    const row = document.createElement('tr');
    row.dataset.seq = String(e.seq);
    row.className = e.dir;
    row.append(
      cell(String(e.seq)),
      cell(seconds(e.t_ms)),
      cell(e.dir === 'out' ? '↑ out' : '↓ in'),
      cell(e.kind),
      cell(size(e.bytes ?? 0)),
      cell(e.summary),
    );
    row.addEventListener('click', () => seek(e.t_ms, e.seq));
    return row;
  });
  $('#frame-rows').replaceChildren(...rows);
  const more = shown.length - rows.length;
  const sampled = state.every > 1 ? ` (one in ${state.every} audio and transcription frames: zoom in for all)` : '';
  $('#frame-count').textContent =
    `showing ${shown.length} of ${state.events.length} in view${sampled}` +
    (more > 0 ? `; the first ${rows.length} listed, zoom in for the rest` : '') +
    (state.truncated ? '; the window is cut: zoom in' : '');
}

$('#frame-dir').addEventListener('change', renderFrames);
$('#frame-kind').addEventListener('change', renderFrames);

// ---------------------------------------------------------------- transcript

/** The transcript panel: one line per speaker's turn, each a button that seeks to it. */
function renderTranscript(overview) {
  const box = $('#transcript-lines');
  const lines = overview.transcript ?? [];
  if (!lines.length) {
    const none = paragraph('No text or transcription in this call.');
    none.className = 'hint';
    box.replaceChildren(none);
    return;
  }
  box.replaceChildren(
    ...lines.map((line, index) => {
      const row = document.createElement('button');
      row.type = 'button';
      row.className = `line ${line.who}`;
      row.dataset.index = String(index);
      const when = document.createElement('span');
      when.className = 'when';
      when.textContent = seconds(line.t_ms);
      const who = document.createElement('span');
      who.className = 'who';
      who.textContent = line.who;
      const text = document.createElement('span');
      text.className = 'text';
      text.textContent = line.text;
      row.append(when, who, text);
      row.addEventListener('click', () => seek(line.t_ms, line.seq));
      return row;
    }),
  );
  markTranscript();
}

/** Marks the transcript line being said at the cursor. */
function markTranscript() {
  const lines = state.overview?.transcript ?? [];
  let current = -1;
  if (state.cursorMs != null) {
    lines.forEach((line, index) => {
      if (line.t_ms <= state.cursorMs) current = index;
    });
  }
  for (const row of document.querySelectorAll('#transcript-lines .line')) {
    row.classList.toggle('current', Number(row.dataset.index) === current);
  }
}

/**
 * Moves the cursor (and the audio, when it is loaded) to `ms`, brings it into view, and
 * shows frame `seq` in full.
 */
async function seek(ms, seq) {
  state.cursorMs = ms;
  if (audio.getAttribute('src')) audio.currentTime = ms / 1000;
  $('#clock').textContent = seconds(ms);
  const { from, to } = state.view;
  if (ms < from || ms > to) {
    const span = to - from;
    state.view = { from: Math.max(ms - span / 2, 0), to: Math.max(ms - span / 2, 0) + span };
    await loadEvents();
  } else {
    draw();
  }
  markTranscript();
  await showFrame(seq);
}

// ---------------------------------------------------------------- audio

const audio = $('#audio');

$('#play').addEventListener('click', async () => {
  if (!audio.paused) {
    audio.pause();
    return;
  }
  const src = OFFLINE ? OFFLINE.audio : `/api/recordings/${encodeURIComponent(state.name)}/audio.wav`;
  if (!src) {
    $('#play').textContent = 'no audio in this page';
    return;
  }
  if (audio.getAttribute('src') !== src) audio.src = src;
  await audio.play();
  requestAnimationFrame(follow);
});

audio.addEventListener('pause', () => ($('#play').textContent = '▶ play audio'));
audio.addEventListener('play', () => ($('#play').textContent = '❚❚ pause'));

function follow() {
  state.cursorMs = audio.currentTime * 1000;
  $('#clock').textContent = seconds(state.cursorMs);
  draw();
  markTranscript();
  if (!audio.paused && !audio.ended) requestAnimationFrame(follow);
}

function stopAudio() {
  audio.pause();
  state.cursorMs = null;
}

// ---------------------------------------------------------------- helpers

async function getJson(url) {
  if (OFFLINE) return offlineAnswer(url);
  const response = await fetch(url);
  const body = await response.json();
  if (!response.ok) throw new Error(body.error ?? `${url}: ${response.status}`);
  return body;
}

/** What the API would answer, from the page's embedded recording. */
function offlineAnswer(url) {
  const [path, query] = url.split('?');
  const params = new URLSearchParams(query ?? '');
  const base = `/api/recordings/${encodeURIComponent(OFFLINE.recording.name)}`;
  if (path === '/api/recordings') return { dir: '(this page)', recordings: [OFFLINE.recording] };
  if (path === base) return OFFLINE.overview;
  if (path === `${base}/peaks`) return OFFLINE.peaks;
  if (path === `${base}/events`) {
    const from = Number(params.get('from') ?? 0);
    const to = Number(params.get('to') ?? Infinity);
    const events = OFFLINE.frames
      .filter((f) => f.t_ms >= from && f.t_ms < to)
      .map(({ seq, t_ms, dir, kind, summary, audio_ms, bytes }) => ({ seq, t_ms, dir, kind, summary, audio_ms, bytes }));
    return { events, truncated: false };
  }
  if (path.startsWith(`${base}/frames/`)) {
    const seq = Number(path.slice(`${base}/frames/`.length));
    const frame = OFFLINE.frames.find((f) => f.seq === seq);
    if (frame) return frame;
  }
  throw new Error(`not in this page: ${url}`);
}

function seconds(ms) {
  return `${(ms / 1000).toFixed(3)} s`;
}

function heading(text, tag = 'h3') {
  const h = document.createElement(tag);
  h.textContent = text;
  return h;
}

function paragraph(text) {
  const p = document.createElement('p');
  p.textContent = text;
  return p;
}

function pre(text, id) {
  const p = document.createElement('pre');
  p.id = `detail-${id}`;
  p.textContent = text;
  return p;
}

window.addEventListener('resize', draw);

renderLegend();

// Last: everything above is declared before the first view opens.
window.addEventListener('hashchange', route);
route();
