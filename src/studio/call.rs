//! One recording as the studio's timeline sees it: an overview (turns with their time to
//! first audio, tool calls as bars from call to response, the lanes there are), the frames
//! of a time window, one frame in full, the state changes of its journal, and its audio.
//!
//! Times are milliseconds since the recording's first entry. Each request reads the log
//! once, entry by entry: memory stays independent of the log's length, and a window holds
//! at most the number of events asked for.

use std::collections::HashMap;
use std::io::Cursor;
use std::path::Path;

use reel_actors::router::destinations;
use reel_protocol::{Blob, ServerMessage, decode_client, decode_server, events_from_frame};
use reel_recorder::journal::read_journal;
use reel_recorder::live_feed::SessionNote;
use reel_recorder::wire_log::{Direction, WireEntry};
use reel_recorder::{WireLogReader, open_wire_log};

use super::conversation::{ContextMark, ContextTracker, NavigationMark, navigation_marks};
use super::flow_lane::{FlowLane, flow_lane};
use super::seek::{SeekIndex, read_from};
use super::setup_summary::SetupSummary;
use super::transcript::{TranscriptBuilder, TranscriptLine};
use reel_replayer::export::{PeakMeter, WavExporter, WavLimits};
use reel_replayer::timeline::{describe, describe_server};
use serde::Serialize;
use serde_json::Value;

/// The lanes of a call's timeline, top to bottom.
pub const LANES: [&str; 9] = [
    "wire out",
    "wire in",
    "fast lane",
    "control lane",
    "tools",
    "turns",
    "phases",
    "state",
    "supervisor",
];

/// The journal key of the conversation phase (a phase machine's current phase).
const ACTIVE_PHASE_KEY: &str = "session:active_phase";

/// The journal key of the session's wire phase (connecting, live, reconnecting, …).
const WIRE_PHASE_KEY: &str = "session:phase";

/// A conversation phase on the timeline, from its `session:active_phase` write to the next.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PhaseSpan {
    /// The phase's name.
    pub name: String,
    /// When the session entered it.
    pub start_ms: u64,
    /// When it left it; `None` while it is still the phase at the end of the recording.
    pub end_ms: Option<u64>,
}

/// Something that happened to the session itself rather than in the conversation: a
/// connection opened or closed, a `goAway`, a wire-phase change (reconnecting, live).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SupervisorMark {
    /// When.
    pub t_ms: u64,
    /// `connected`, `closed`, `go_away` or `phase` from the recording; `restarted`,
    /// `reconnecting`, `reconnected` or `resumed` from a live session's notes.
    pub kind: String,
    /// What, in a few words (`connection 2`, `closed by the server: 1011 overloaded`, …).
    pub detail: String,
}

/// A model turn on the timeline.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TurnSpan {
    /// Its number, from 1.
    pub n: u64,
    /// From the end of the previous turn (or the start).
    pub start_ms: u64,
    /// Its `turnComplete`.
    pub end_ms: u64,
    /// From the last thing the user sent before the model's first audio of the turn, to
    /// that audio; `None` for a turn without audio.
    pub first_audio_ms: Option<u64>,
    /// From the last thing the user sent before the model's first text of the turn (a text
    /// part or its output transcription), to that text; `None` for a turn without text.
    pub first_text_ms: Option<u64>,
    /// The time its tool calls took, call to response, summed (cancelled ones to their
    /// cancellation; unanswered ones count nothing).
    pub tool_ms: u64,
}

/// A tool call on the timeline, from the call to its response.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ToolBar {
    /// The call id.
    pub id: String,
    /// The function.
    pub name: String,
    /// Its arguments.
    pub args: Value,
    /// When the model called it.
    pub start_ms: u64,
    /// When the response was sent; `None` if never.
    pub end_ms: Option<u64>,
    /// Call to response (or cancellation) as recorded on the wire; `None` if never answered.
    pub duration_ms: Option<u64>,
    /// The function's result (its `functionResponse.response`); `None` if never answered.
    pub result: Option<Value>,
    /// Whether the model cancelled it (`toolCallCancellation`).
    pub cancelled: bool,
    /// The sequence number of the `toolCall` frame.
    pub call_seq: u64,
}

/// A state change from the recording's journal.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct StateChange {
    /// When.
    pub t_ms: u64,
    /// The key.
    pub key: String,
    /// Before.
    pub old: Value,
    /// After.
    pub new: Value,
    /// `set`, `modify`, `remove`, `clear_prefix`.
    pub origin: String,
}

/// What the timeline needs before it shows any frame.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Overview {
    /// The file name.
    pub name: String,
    /// The model its setup asked for.
    pub model: Option<String>,
    /// Its (first) setup in a few fields; `None` when the recording has no setup.
    pub setup: Option<SetupSummary>,
    /// Who said what, and when, from its text and transcription frames.
    pub transcript: Vec<TranscriptLine>,
    /// First entry to last.
    pub duration_ms: u64,
    /// Where the call's audio ends, as [`audio`] renders it (the model's audio plays on
    /// after its last frame arrived); 0 without audio.
    pub audio_end_ms: u64,
    /// Frames, both ways.
    pub frames: u64,
    /// The lanes, top to bottom.
    pub lanes: Vec<&'static str>,
    /// Model turns.
    pub turns: Vec<TurnSpan>,
    /// Tool calls.
    pub tools: Vec<ToolBar>,
    /// The journal's state changes (`<name>.journal.jsonl` beside the log), if there is one.
    pub state: Vec<StateChange>,
    /// Whether there is a journal beside the log that reads: without one, the state and
    /// phases lanes are empty for that reason (the page says "no journal").
    pub journal: bool,
    /// The conversation phases, from the journal's `session:active_phase`.
    pub phases: Vec<PhaseSpan>,
    /// The context the runtime sent at each turn boundary (conversation control, shown on
    /// the phases lane); absent when it sent none.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub context: Vec<ContextMark>,
    /// The navigation block at each turn where it changed, from the journal's
    /// `session:navigation_context` (shown on the phases lane); absent when there is none.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub navigation: Vec<NavigationMark>,
    /// The flow of a governed recording (its `flow` lane, after `phases` in `lanes`): steps
    /// active and done over time, denied calls; absent for a recording with no flow.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub flow: Option<FlowLane>,
    /// Connections, closes, `goAway`s and wire-phase changes, in time order.
    pub supervisor: Vec<SupervisorMark>,
    /// Whether a running session is streaming into it now: the page polls it.
    pub live: bool,
    /// Messages a live session could not send the studio (it did not keep up).
    pub dropped: u64,
}

/// One frame on the timeline.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct EventRow {
    /// Its sequence number.
    pub seq: u64,
    /// When.
    pub t_ms: u64,
    /// `out` (the client's) or `in` (the server's).
    pub dir: &'static str,
    /// Its kind (`serverContent.audio`, `toolCall`, `close`, …).
    pub kind: String,
    /// One line about it.
    pub summary: String,
    /// For audio: its playing time.
    pub audio_ms: Option<f64>,
    /// Its payload's size in bytes.
    pub bytes: usize,
    /// For a server frame: the lanes its events went to (`fast`, `control`), by the
    /// router's rule.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub lanes: Vec<&'static str>,
}

/// One frame in full.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FrameDetail {
    /// The row.
    #[serde(flatten)]
    pub row: EventRow,
    /// The payload as JSON, when it is.
    pub json: Option<Value>,
    /// The payload as text (lossy UTF-8), cut at [`RAW_LIMIT`] bytes (its size is the
    /// row's `bytes`).
    pub raw: String,
    /// Whether it was a binary WebSocket frame.
    pub binary: bool,
}

/// How much of a payload a frame's detail shows as raw text.
pub const RAW_LIMIT: usize = 64 * 1024;

fn entries(path: &Path) -> Result<WireLogReader, String> {
    WireLogReader::open(path).map_err(|error| error.to_string())
}

pub(crate) fn row(entry: &WireEntry, t0: u64) -> EventRow {
    // A server frame is decoded once: for its description and for its lanes.
    let decoded = (entry.dir == Direction::In && entry.close.is_none())
        .then(|| decode_server(&entry.payload).ok())
        .flatten();
    let (view, lanes) = match decoded {
        Some(message) => (describe_server(&message), lanes_of(message)),
        None => (describe(entry), Vec::new()),
    };
    EventRow {
        seq: entry.seq,
        t_ms: entry.ts_ms.saturating_sub(t0),
        dir: match entry.dir {
            Direction::Out => "out",
            Direction::In => "in",
        },
        kind: view.kind,
        summary: view.summary,
        audio_ms: view.audio_ms,
        bytes: entry.payload.len(),
        lanes,
    }
}

/// The lanes the router sends a server message's events to.
fn lanes_of(message: ServerMessage) -> Vec<&'static str> {
    let (mut fast, mut control) = (false, false);
    for event in events_from_frame(message) {
        let to = destinations(&event);
        fast |= to.fast;
        control |= to.control;
    }
    [(fast, "fast"), (control, "control")]
        .into_iter()
        .filter_map(|(to, lane)| to.then_some(lane))
        .collect()
}

/// The overview of the recording at `path` (file name `name`).
pub fn overview(path: &Path, name: &str) -> Result<Overview, String> {
    let mut t0 = None;
    let mut last = 0;
    let mut frames = 0;
    let mut model = None;
    let mut setup_summary = None;
    let mut transcript = TranscriptBuilder::default();
    let mut turns = Vec::new();
    let mut turn_start = 0;
    let mut last_user = None;
    let mut first_audio = None;
    let mut first_text = None;
    // Where the current turn's tool calls start in `tools`.
    let mut turn_tools = 0;
    let mut tools: Vec<ToolBar> = Vec::new();
    let mut open: HashMap<String, usize> = HashMap::new();
    // Per direction (out, in): where its audio ends, placed as the WAV places it.
    let mut audio_end = [0f64; 2];
    let mut supervisor = Vec::new();
    let mut connection = None;
    let mut context = ContextTracker::default();
    for entry in entries(path)? {
        let entry = entry.map_err(|error| error.to_string())?;
        let t0 = *t0.get_or_insert(entry.ts_ms);
        let t = entry.ts_ms.saturating_sub(t0);
        last = t;
        context.next_entry(&entry);
        let conn = entry.conn.unwrap_or(1);
        if let Some(mark) = &entry.close {
            let by = if mark.client { "client" } else { "server" };
            let code = mark.code.map(|c| format!(": {c}")).unwrap_or_default();
            let reason = mark
                .reason
                .as_deref()
                .map(|r| format!(" {r}"))
                .unwrap_or_default();
            supervisor.push(SupervisorMark {
                t_ms: t,
                kind: "closed".into(),
                detail: format!("connection {conn} closed by the {by}{code}{reason}"),
            });
            continue;
        }
        if connection != Some(conn) {
            connection = Some(conn);
            supervisor.push(SupervisorMark {
                t_ms: t,
                kind: "connected".into(),
                detail: format!("connection {conn}"),
            });
        }
        frames += 1;
        // Where each side's audio ends, placed as the WAV places it.
        let mut play = |side: usize, blobs: &mut dyn Iterator<Item = &Blob>, rate: u32| {
            for blob in blobs.filter(|blob| is_pcm(blob)) {
                audio_end[side] = audio_end[side].max(t as f64) + blob.pcm_ms(rate);
            }
        };
        match entry.dir {
            Direction::Out => {
                let Ok(message) = decode_client(&entry.payload) else {
                    continue;
                };
                if let Some(setup) = &message.setup
                    && setup_summary.is_none()
                {
                    model = setup.model.clone();
                    setup_summary = Some(SetupSummary::of(setup));
                }
                transcript.client(&message, t, entry.seq);
                context.client(&message, &entry, t);
                if message.client_content.is_some() || message.realtime_input.is_some() {
                    last_user = Some(t);
                }
                if let Some(input) = &message.realtime_input {
                    let blobs = input
                        .audio
                        .iter()
                        .chain(input.media_chunks.iter().flatten());
                    play(0, &mut blobs.into_iter(), 16_000);
                }
                for response in message
                    .tool_response
                    .iter()
                    .flat_map(|r| r.function_responses.iter().flatten())
                {
                    if let Some(i) = response.id.as_ref().and_then(|id| open.remove(id)) {
                        tools[i].end_ms = Some(t);
                        tools[i].duration_ms = Some(t.saturating_sub(tools[i].start_ms));
                        tools[i].result = Some(response.response.clone().unwrap_or(Value::Null));
                    }
                }
            }
            Direction::In => {
                let Ok(message) = decode_server(&entry.payload) else {
                    continue;
                };
                transcript.server(&message, t, entry.seq);
                context.server(&message, &entry, t, turns.len() as u64);
                if let Some(go_away) = &message.go_away {
                    let left = go_away
                        .time_left
                        .map(|left| format!(": {left} left"))
                        .unwrap_or_default();
                    supervisor.push(SupervisorMark {
                        t_ms: t,
                        kind: "go_away".into(),
                        detail: format!("goAway on connection {conn}{left}"),
                    });
                }
                if let Some(call) = &message.tool_call {
                    for function in call.function_calls.iter().flatten() {
                        let id = function.id.clone().unwrap_or_default();
                        open.insert(id.clone(), tools.len());
                        tools.push(ToolBar {
                            id,
                            name: function.name.clone().unwrap_or_default(),
                            args: function.args.clone().map_or(Value::Null, Value::from),
                            start_ms: t,
                            end_ms: None,
                            duration_ms: None,
                            result: None,
                            cancelled: false,
                            call_seq: entry.seq,
                        });
                    }
                }
                if let Some(cancel) = &message.tool_call_cancellation {
                    for id in cancel.ids.iter().flatten() {
                        if let Some(i) = open.remove(id) {
                            tools[i].cancelled = true;
                            tools[i].end_ms = Some(t);
                            tools[i].duration_ms = Some(t.saturating_sub(tools[i].start_ms));
                        }
                    }
                }
                let Some(content) = &message.server_content else {
                    continue;
                };
                let audio: Vec<&Blob> = content
                    .model_turn
                    .iter()
                    .flat_map(|turn| turn.parts.iter().flatten())
                    .filter_map(|part| part.inline_data.as_ref())
                    .filter(|blob| is_pcm(blob))
                    .collect();
                let has_audio = !audio.is_empty();
                play(1, &mut audio.into_iter(), 24_000);
                if has_audio && first_audio.is_none() {
                    first_audio = Some(t.saturating_sub(last_user.unwrap_or(turn_start)));
                }
                let has_text = content
                    .model_turn
                    .iter()
                    .flat_map(|turn| turn.parts.iter().flatten())
                    .any(|part| part.thought != Some(true) && part.text.is_some())
                    || content
                        .output_transcription
                        .as_ref()
                        .is_some_and(|said| said.text.as_deref().is_some_and(|t| !t.is_empty()));
                if has_text && first_text.is_none() {
                    first_text = Some(t.saturating_sub(last_user.unwrap_or(turn_start)));
                }
                if content.turn_complete == Some(true) {
                    turns.push(TurnSpan {
                        n: turns.len() as u64 + 1,
                        start_ms: turn_start,
                        end_ms: t,
                        first_audio_ms: first_audio.take(),
                        first_text_ms: first_text.take(),
                        tool_ms: tools[turn_tools..]
                            .iter()
                            .filter_map(|tool| tool.duration_ms)
                            .sum(),
                    });
                    turn_tools = tools.len();
                    turn_start = t;
                    last_user = None;
                }
            }
        }
    }
    if t0.is_none() {
        return Err("no entries".to_owned());
    }
    let changes = journal_changes(path, t0.unwrap_or_default());
    let journal = changes.is_some();
    let state = changes.unwrap_or_default();
    let phases = phase_spans(&state);
    let turn_ends: Vec<u64> = turns.iter().map(|turn: &TurnSpan| turn.end_ms).collect();
    let navigation = navigation_marks(&state, &turn_ends);
    supervisor.extend(
        state
            .iter()
            .filter(|change| change.key == WIRE_PHASE_KEY)
            .map(|change| SupervisorMark {
                t_ms: change.t_ms,
                kind: "phase".into(),
                detail: match &change.new {
                    Value::String(phase) => phase.clone(),
                    other => other.to_string(),
                },
            }),
    );
    supervisor.extend(session_notes(path, t0.unwrap_or_default()));
    let flow = flow_lane(path, &tools, &state);
    let mut lanes = LANES.to_vec();
    if flow.is_some() {
        let after_phases = lanes
            .iter()
            .position(|lane| *lane == "phases")
            .map_or(0, |i| i + 1);
        lanes.insert(after_phases, "flow");
    }
    // Stable: at one instant, the wire's marks before the journal's, then the notes.
    supervisor.sort_by_key(|mark| mark.t_ms);
    Ok(Overview {
        name: name.to_owned(),
        model,
        setup: setup_summary,
        transcript: transcript.finish(),
        duration_ms: last,
        audio_end_ms: audio_end[0].max(audio_end[1]).ceil() as u64,
        frames,
        lanes,
        turns,
        tools,
        state,
        journal,
        phases,
        context: context.finish(),
        navigation,
        flow,
        supervisor,
        live: false,
        dropped: 0,
    })
}

/// What a live session told the studio about its tree (`x.supervisor.jsonl` beside
/// `x.wire.jsonl`): restarts, reconnects; none when there is no such file. A line that does
/// not read ends the notes (the file is a side note, never a reason to fail the call).
fn session_notes(path: &Path, t0: u64) -> Vec<SupervisorMark> {
    let Some(file) = path
        .to_str()
        .and_then(|p| p.strip_suffix(".wire.jsonl"))
        .map(|stem| format!("{stem}.supervisor.jsonl"))
    else {
        return Vec::new();
    };
    let Ok(text) = std::fs::read_to_string(file) else {
        return Vec::new();
    };
    text.lines()
        .map_while(|line| serde_json::from_str::<SessionNote>(line).ok())
        .map(|note| SupervisorMark {
            t_ms: note.ts_ms.saturating_sub(t0),
            kind: note.kind,
            detail: note.detail,
        })
        .collect()
}

/// The conversation phases: each `session:active_phase` write starts one and ends the one
/// before.
fn phase_spans(state: &[StateChange]) -> Vec<PhaseSpan> {
    let mut spans: Vec<PhaseSpan> = Vec::new();
    for change in state.iter().filter(|c| c.key == ACTIVE_PHASE_KEY) {
        if let Some(open) = spans.last_mut().filter(|span| span.end_ms.is_none()) {
            open.end_ms = Some(change.t_ms);
        }
        if let Value::String(name) = &change.new {
            spans.push(PhaseSpan {
                name: name.clone(),
                start_ms: change.t_ms,
                end_ms: None,
            });
        }
    }
    spans
}

/// Whether a blob is PCM audio (what the WAV plays).
fn is_pcm(blob: &Blob) -> bool {
    blob.mime_type
        .as_deref()
        .is_some_and(|mime| mime.starts_with("audio/pcm"))
}

/// The journal beside the log (`x.journal.jsonl` for `x.wire.jsonl`), whether or not it
/// exists.
fn journal_file(path: &Path) -> Option<String> {
    path.to_str()
        .and_then(|p| p.strip_suffix(".wire.jsonl"))
        .map(|stem| format!("{stem}.journal.jsonl"))
}

/// The state changes of the journal beside the log (`x.journal.jsonl` for
/// `x.wire.jsonl`); `None` when there is no journal or it cannot be read.
fn journal_changes(path: &Path, t0: u64) -> Option<Vec<StateChange>> {
    let journal = journal_file(path)?;
    let mutations = read_journal(&journal).ok()?;
    Some(
        mutations
            .into_iter()
            .map(|m| StateChange {
                t_ms: m.timestamp_ms.saturating_sub(t0),
                key: m.key,
                old: m.old,
                new: m.new,
                origin: m.origin,
            })
            .collect(),
    )
}

/// The frames from `from_ms` (inclusive) to `to_ms` (exclusive), at most `limit` of them;
/// whether more were left out. With `every` over 1, only one in `every` of the streaming
/// frames (audio and transcriptions, which make up most of a voice call, told from their
/// bytes) is kept, and every other frame: a whole long call fits in one window, its tool
/// calls and turns all there.
///
/// With a [`SeekIndex`], reading starts at its last point before the window.
pub fn events(
    path: &Path,
    from_ms: u64,
    to_ms: u64,
    limit: usize,
    every: u64,
    seek: Option<&SeekIndex>,
) -> Result<(Vec<EventRow>, bool), String> {
    let point = seek.and_then(|index| index.for_window(from_ms));
    let mut t0 = point.and(seek).map(|index| index.t0);
    let mut rows = Vec::new();
    let mut streaming = 0u64;
    for entry in read_from(path, point)? {
        let entry = entry.map_err(|error| error.to_string())?;
        let t0 = *t0.get_or_insert(entry.ts_ms);
        let t = entry.ts_ms.saturating_sub(t0);
        if t < from_ms {
            continue;
        }
        if t >= to_ms {
            break;
        }
        // Told from its bytes, so that a frame left out is never decoded.
        if every > 1 && is_streaming(&entry.payload) {
            streaming += 1;
            if !(streaming - 1).is_multiple_of(every) {
                continue;
            }
        }
        if rows.len() == limit {
            return Ok((rows, true));
        }
        rows.push(row(&entry, t0));
    }
    Ok((rows, false))
}

/// Whether a payload is audio or a transcription (the frames a zoomed-out view samples).
fn is_streaming(payload: &[u8]) -> bool {
    let holds = |needle: &[u8]| payload.windows(needle.len()).any(|w| w == needle);
    holds(b"\"audio/pcm") || holds(b"ranscription\"")
}

/// The frame numbered `seq`, in full; `None` if the log has none. With a [`SeekIndex`],
/// reading starts at its last point before the frame.
pub fn frame(
    path: &Path,
    seq: u64,
    seek: Option<&SeekIndex>,
) -> Result<Option<FrameDetail>, String> {
    let point = seek.and_then(|index| index.for_seq(seq));
    let mut t0 = point.and(seek).map(|index| index.t0);
    for entry in read_from(path, point)? {
        let entry = entry.map_err(|error| error.to_string())?;
        let t0 = *t0.get_or_insert(entry.ts_ms);
        if entry.seq != seq {
            continue;
        }
        let payload = &entry.payload;
        let cut = &payload[..payload.len().min(RAW_LIMIT)];
        return Ok(Some(FrameDetail {
            row: row(&entry, t0),
            json: serde_json::from_slice(payload).ok(),
            raw: String::from_utf8_lossy(cut).into_owned(),
            binary: entry.binary,
        }));
    }
    Ok(None)
}

/// The loudness of the call's audio over `[from_ms, to_ms)` in `buckets` equal slices: for
/// each, the smallest and largest sample of the user (left) and of the model (right), as
/// `[user_min, user_max, model_min, model_max]`, placed as [`audio`] places them
/// ([`PeakMeter`]). Memory holds the buckets only. With a [`SeekIndex`], reading starts at
/// its last point before which no audio plays into the window.
pub fn peaks(
    path: &Path,
    from_ms: u64,
    to_ms: u64,
    buckets: usize,
    seek: Option<&SeekIndex>,
) -> Result<Vec<[i16; 4]>, String> {
    let point = seek.and_then(|index| index.for_peaks(from_ms));
    let mut meter = match (point, seek) {
        (Some(point), Some(index)) => {
            PeakMeter::resume(from_ms, to_ms, buckets, index.t0, point.cursor)
        }
        _ => PeakMeter::new(from_ms, to_ms, buckets),
    };
    for entry in read_from(path, point)? {
        let entry = entry.map_err(|error| error.to_string())?;
        // An entry from the window's end on places its audio there or later: none of it is
        // in view (a window shorter than a millisecond still measures its first frame).
        let t0 = meter.placement().0.unwrap_or(entry.ts_ms);
        if entry.ts_ms.saturating_sub(t0) >= to_ms.max(from_ms.saturating_add(1)) {
            break;
        }
        meter.push(&entry);
    }
    Ok(meter.finish())
}

/// The most bytes of samples the studio renders into memory for one `audio.wav`: 256 MiB,
/// about 46 minutes of the call (three times the longest audio session the Live API holds).
pub const MAX_AUDIO_BYTES: u64 = 256 * 1024 * 1024;

/// The recording's audio as a WAV (`reel export --format wav`), rendered in memory within
/// [`MAX_AUDIO_BYTES`] and the exporter's gap limit: a log over them is refused with the
/// reason before the memory is taken.
pub fn audio(path: &Path) -> Result<Vec<u8>, String> {
    let mut wav = Cursor::new(Vec::new());
    let limits = WavLimits {
        max_data_bytes: MAX_AUDIO_BYTES,
        ..WavLimits::default()
    };
    let mut exporter =
        WavExporter::with_limits(&mut wav, limits).map_err(|error| error.to_string())?;
    for entry in open_wire_log(path).map_err(|error| error.to_string())? {
        let entry = entry.map_err(|error| error.to_string())?;
        exporter.push(&entry).map_err(|error| error.to_string())?;
    }
    exporter.finish().map_err(|error| error.to_string())?;
    Ok(wav.into_inner())
}
