//! A readable timeline of a wire log: each frame's kind and a one-line summary, model turns
//! numbered, runs of audio collapsed.
//!
//! [`describe`] names one entry: its kind (`setup`, `realtimeInput.audio`,
//! `serverContent.text`, `toolCall`, `close`, …) and what it says. [`Timeline`] turns a
//! stream of entries into [`TimelineRow`]s, one per frame, except that consecutive audio
//! frames of one direction become one row (`audio ×42 (1.2s)`), and can keep only the
//! frames of one model turn or of some kinds.
//!
//! ```
//! use reel_recorder::wire_log::{Direction, WireEntry};
//! use reel_replayer::timeline::describe;
//!
//! let entry = WireEntry::frame(
//!     7, Direction::In, 0,
//!     &br#"{"toolCall":{"functionCalls":[{"id":"c1","name":"get_weather","args":{"city":"Paris"}}]}}"#[..],
//!     None, false,
//! );
//! let view = describe(&entry);
//! assert_eq!(view.kind, "toolCall");
//! assert_eq!(view.summary, r#"get_weather({"city":"Paris"})"#);
//! ```

use reel_protocol::{
    Blob, ClientMessage, PartKind, ServerContent, ServerMessage, SessionConfig, decode_client,
    decode_server,
};
use reel_recorder::wire_log::{Direction, WireEntry};
use serde::Serialize;

/// Longest text shown in a summary, in characters.
const TEXT_WIDTH: usize = 60;
/// Longest JSON shown in a summary, in characters.
const JSON_WIDTH: usize = 100;

/// What one entry is, for people.
#[derive(Debug, Clone, PartialEq)]
pub struct FrameView {
    /// The frame's kind: the message key, refined by what it carries
    /// (`serverContent.audio`), or `close` for a close marker, `invalid` for a frame that
    /// does not decode.
    pub kind: String,
    /// One line about what it says (may be empty).
    pub summary: String,
    /// For audio frames: playing time in ms.
    pub audio_ms: Option<f64>,
    /// Whether it is audio and nothing else (audio runs collapse only such frames).
    pub pure_audio: bool,
    /// Whether it ends a model turn (`serverContent.turnComplete`).
    pub turn_complete: bool,
}

impl FrameView {
    fn new(kind: impl Into<String>, summary: impl Into<String>) -> Self {
        FrameView {
            kind: kind.into(),
            summary: summary.into(),
            audio_ms: None,
            pure_audio: false,
            turn_complete: false,
        }
    }
}

/// Describes one entry.
pub fn describe(entry: &WireEntry) -> FrameView {
    if let Some(mark) = &entry.close {
        let code = mark
            .code
            .map_or_else(|| "no code".to_owned(), |c| format!("code {c}"));
        let reason = mark
            .reason
            .as_deref()
            .map(|r| format!(" {:?}", shorten(r, TEXT_WIDTH)))
            .unwrap_or_default();
        let by = if mark.client { "client" } else { "server" };
        return FrameView::new("close", format!("{code}{reason}, closed by the {by}"));
    }
    match entry.dir {
        Direction::Out => {
            let mut view = match decode_client(&entry.payload) {
                Ok(message) => describe_client(&message),
                Err(error) => invalid(&entry.payload, &error.to_string()),
            };
            if let Some(dropped) = entry.dropped_before {
                // A gap in the caller's audio: its own row, not lost in a run.
                view.summary
                    .push_str(&format!(" · {dropped} chunk(s) dropped unsent before it"));
                view.pure_audio = false;
            }
            view
        }
        Direction::In => match decode_server(&entry.payload) {
            Ok(message) => describe_server(&message),
            Err(error) => invalid(&entry.payload, &error.to_string()),
        },
    }
}

fn invalid(payload: &[u8], error: &str) -> FrameView {
    FrameView::new(
        "invalid",
        format!("{} bytes: {}", payload.len(), shorten(error, JSON_WIDTH)),
    )
}

fn describe_client(message: &ClientMessage) -> FrameView {
    if let Some(setup) = &message.setup {
        let config = SessionConfig::from_setup(setup.clone());
        let mut summary = format!("model {}", config.model_name());
        let tools = config.function_names();
        if !tools.is_empty() {
            summary.push_str(&format!(", tools: {}", tools.join(", ")));
        }
        return FrameView::new("setup", summary);
    }
    if let Some(content) = &message.client_content {
        let text = texts(content.turns.iter().flatten().flat_map(|c| c.parts()));
        let mut summary = match text {
            Some(text) => quote(&text),
            None => format!("{} turn(s)", content.turns.as_ref().map_or(0, Vec::len)),
        };
        if content.turn_complete == Some(true) {
            summary.push_str(" · turnComplete");
        }
        return FrameView::new("clientContent", summary);
    }
    if let Some(input) = &message.realtime_input {
        if let Some(audio) = input
            .audio
            .as_ref()
            .or_else(|| input.media_chunks.iter().flatten().next())
        {
            return audio_view("realtimeInput.audio", audio, 16_000);
        }
        if let Some(video) = &input.video {
            return FrameView::new("realtimeInput.video", blob_summary(video));
        }
        if let Some(text) = &input.text {
            return FrameView::new("realtimeInput.text", quote(text));
        }
        for (present, kind) in [
            (
                input.activity_start.is_some(),
                "realtimeInput.activityStart",
            ),
            (input.activity_end.is_some(), "realtimeInput.activityEnd"),
            (
                input.audio_stream_end == Some(true),
                "realtimeInput.audioStreamEnd",
            ),
        ] {
            if present {
                return FrameView::new(kind, "");
            }
        }
        return FrameView::new("realtimeInput", "");
    }
    if let Some(response) = &message.tool_response {
        let summary = response
            .function_responses
            .iter()
            .flatten()
            .map(|r| {
                let value = r
                    .response
                    .as_ref()
                    .map(|v| v.to_string())
                    .unwrap_or_default();
                format!(
                    "{} → {}",
                    r.name.as_deref().unwrap_or("?"),
                    shorten(&value, JSON_WIDTH)
                )
            })
            .collect::<Vec<_>>()
            .join("; ");
        return FrameView::new("toolResponse", summary);
    }
    if let Some(update) = &message.context_update {
        let summary = update
            .system_instruction
            .as_ref()
            .and_then(|c| texts(c.parts()))
            .map(|text| format!("instruction {}", quote(&text)))
            .unwrap_or_default();
        return FrameView::new("contextUpdate", summary);
    }
    FrameView::new("client", "")
}

/// What a server message shows on a timeline (as [`describe`] shows its frame), for a
/// caller that has decoded it already.
pub fn describe_server(message: &ServerMessage) -> FrameView {
    let mut view = if let Some(content) = &message.server_content {
        describe_content(content)
    } else if let Some(call) = &message.tool_call {
        let summary = call
            .function_calls
            .iter()
            .flatten()
            .map(|c| {
                let args = c.args.as_ref().map(|a| a.to_string()).unwrap_or_default();
                format!(
                    "{}({})",
                    c.name.as_deref().unwrap_or("?"),
                    shorten(&args, JSON_WIDTH)
                )
            })
            .collect::<Vec<_>>()
            .join(", ");
        FrameView::new("toolCall", summary)
    } else if let Some(cancellation) = &message.tool_call_cancellation {
        let ids = cancellation.ids.clone().unwrap_or_default().join(", ");
        FrameView::new("toolCallCancellation", format!("ids {ids}"))
    } else if let Some(setup) = &message.setup_complete {
        let summary = setup
            .session_id
            .as_deref()
            .map(|id| format!("session {id}"))
            .unwrap_or_default();
        FrameView::new("setupComplete", summary)
    } else if let Some(go_away) = &message.go_away {
        let summary = go_away
            .time_left
            .as_ref()
            .map(|t| format!("time left {t}"))
            .unwrap_or_default();
        FrameView::new("goAway", summary)
    } else if let Some(update) = &message.session_resumption_update {
        let handle = update.new_handle.as_deref().unwrap_or("(none)");
        let resumable = if update.resumable == Some(true) {
            "resumable"
        } else {
            "not resumable"
        };
        FrameView::new(
            "sessionResumptionUpdate",
            format!("handle {handle}, {resumable}"),
        )
    } else if message.voice_activity.is_some() || message.voice_activity_detection_signal.is_some()
    {
        FrameView::new("voiceActivity", "")
    } else if message.usage_metadata.is_some() {
        FrameView::new("usageMetadata", "")
    } else {
        let keys: Vec<&str> = message.extra.keys().map(String::as_str).collect();
        FrameView::new("server", keys.join(", "))
    };
    if let Some(usage) = &message.usage_metadata
        && let Some(total) = usage.total_token_count
    {
        let text = format!("usage {total} tokens");
        if view.kind == "usageMetadata" {
            view.summary = text;
        } else {
            append(&mut view.summary, &text);
            view.pure_audio = false;
        }
    }
    view
}

fn describe_content(content: &ServerContent) -> FrameView {
    let parts = content
        .model_turn
        .as_ref()
        .map(|c| c.parts())
        .unwrap_or_default();
    let mut view = match parts.first().map(|p| p.kind()) {
        Some(PartKind::Text(_)) => FrameView::new(
            "serverContent.text",
            texts(parts).map(|t| quote(&t)).unwrap_or_default(),
        ),
        Some(PartKind::Thought(text)) => FrameView::new("serverContent.thought", quote(text)),
        Some(PartKind::InlineData(blob)) if blob_is_audio(blob) => {
            let mut view = audio_view("serverContent.audio", blob, 24_000);
            view.pure_audio = parts.len() == 1;
            view
        }
        Some(PartKind::InlineData(blob)) => {
            FrameView::new("serverContent.media", blob_summary(blob))
        }
        Some(PartKind::FileData(_)) => FrameView::new("serverContent.file", ""),
        Some(PartKind::ExecutableCode(_)) => FrameView::new("serverContent.code", ""),
        Some(PartKind::CodeExecutionResult(_)) => FrameView::new("serverContent.codeResult", ""),
        Some(_) => FrameView::new("serverContent.part", ""),
        None => {
            if let Some(t) = &content.input_transcription {
                FrameView::new(
                    "serverContent.inputTranscription",
                    quote(t.text.as_deref().unwrap_or_default()),
                )
            } else if let Some(t) = &content.output_transcription {
                FrameView::new(
                    "serverContent.outputTranscription",
                    quote(t.text.as_deref().unwrap_or_default()),
                )
            } else if content.interrupted == Some(true) {
                FrameView::new("serverContent.interrupted", "")
            } else if content.generation_complete == Some(true) {
                FrameView::new("serverContent.generationComplete", "")
            } else if content.turn_complete == Some(true) {
                FrameView::new("serverContent.turnComplete", "")
            } else {
                FrameView::new("serverContent", "")
            }
        }
    };
    let flags = [
        (content.interrupted == Some(true), "interrupted"),
        (
            content.generation_complete == Some(true),
            "generationComplete",
        ),
        (content.turn_complete == Some(true), "turnComplete"),
    ];
    for (present, flag) in flags {
        if present && !view.kind.ends_with(flag) {
            append(&mut view.summary, flag);
            view.pure_audio = false;
        }
    }
    view.turn_complete = content.turn_complete == Some(true);
    view
}

fn append(summary: &mut String, text: &str) {
    if !summary.is_empty() {
        summary.push_str(" · ");
    }
    summary.push_str(text);
}

fn texts<'a>(parts: impl IntoIterator<Item = &'a reel_protocol::Part>) -> Option<String> {
    let text: Vec<&str> = parts
        .into_iter()
        .filter_map(|p| match p.kind() {
            PartKind::Text(text) => Some(text),
            _ => None,
        })
        .collect();
    (!text.is_empty()).then(|| text.concat())
}

fn blob_is_audio(blob: &Blob) -> bool {
    blob.mime_type
        .as_deref()
        .is_none_or(|m| m.starts_with("audio/"))
}

fn blob_summary(blob: &Blob) -> String {
    let bytes = blob.data.as_ref().map_or(0, |d| d.0.len());
    match &blob.mime_type {
        Some(mime) => format!("{mime}, {bytes} bytes"),
        None => format!("{bytes} bytes"),
    }
}

/// An audio frame: PCM16 mono at the rate its MIME type names (`rate=`), else `rate`.
fn audio_view(kind: &str, blob: &Blob, rate: u32) -> FrameView {
    let ms = blob.pcm_ms(rate);
    FrameView {
        audio_ms: Some(ms),
        pure_audio: true,
        ..FrameView::new(kind, audio_summary(1, ms))
    }
}

fn audio_summary(frames: u64, ms: f64) -> String {
    format!("audio ×{frames} ({:.1}s)", ms / 1000.0)
}

fn quote(text: &str) -> String {
    format!("{:?}", shorten(text, TEXT_WIDTH))
}

/// `text` cut to `max` characters, with `…` when cut.
pub fn shorten(text: &str, max: usize) -> String {
    match text.char_indices().nth(max) {
        Some((cut, _)) => format!("{}…", &text[..cut]),
        None => text.to_owned(),
    }
}

/// One line of a timeline: a frame, or a run of audio frames.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TimelineRow {
    /// Sequence number of the (first) frame.
    pub seq: u64,
    /// Sequence number of the last frame of a run (equal to `seq` for one frame).
    pub last_seq: u64,
    /// Direction.
    pub dir: Direction,
    /// Time since the log's first entry, in ms.
    pub offset_ms: u64,
    /// The model turn the frame belongs to (1-based; a turn ends with its `turnComplete`).
    pub turn: u64,
    /// The frame's kind.
    pub kind: String,
    /// What it says.
    pub summary: String,
    /// Frames in the row (more than one for an audio run).
    pub frames: u64,
    /// Playing time of the row's audio, in ms.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub audio_ms: Option<f64>,
}

/// Which frames a [`Timeline`] keeps.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TimelineFilter {
    /// Only frames of this model turn.
    pub turn: Option<u64>,
    /// Only frames whose kind starts with this.
    pub kind: Option<String>,
}

impl TimelineFilter {
    fn keeps(&self, turn: u64, kind: &str) -> bool {
        self.turn.is_none_or(|t| t == turn)
            && self.kind.as_deref().is_none_or(|k| kind.starts_with(k))
    }
}

/// Turns entries into rows (see the [module docs](self)).
#[derive(Debug, Default)]
pub struct Timeline {
    filter: TimelineFilter,
    first_ts_ms: Option<u64>,
    turn: u64,
    last_turn: u64,
    audio_run: Option<TimelineRow>,
}

impl Timeline {
    /// A timeline keeping the frames `filter` keeps.
    pub fn new(filter: TimelineFilter) -> Self {
        Timeline {
            filter,
            first_ts_ms: None,
            turn: 1,
            last_turn: 0,
            audio_run: None,
        }
    }

    /// The model turns completed so far (each ended by its `turnComplete`).
    pub fn completed_turns(&self) -> u64 {
        self.turn.saturating_sub(1)
    }

    /// The turn of the last entry taken (0 before any): one past
    /// [`completed_turns`](Self::completed_turns) when frames followed the last
    /// `turnComplete`, whether or not the filter kept them.
    pub fn last_turn(&self) -> u64 {
        self.last_turn
    }

    /// Takes the next entry; appends to `out` the rows it completes.
    pub fn push(&mut self, entry: &WireEntry, out: &mut Vec<TimelineRow>) {
        let first = *self.first_ts_ms.get_or_insert(entry.ts_ms);
        let view = describe(entry);
        let turn = self.turn;
        self.last_turn = turn;
        if view.turn_complete {
            self.turn += 1;
        }
        if !self.filter.keeps(turn, &view.kind) {
            return;
        }
        let row = TimelineRow {
            seq: entry.seq,
            last_seq: entry.seq,
            dir: entry.dir,
            offset_ms: entry.ts_ms.saturating_sub(first),
            turn,
            kind: view.kind,
            summary: view.summary,
            frames: 1,
            audio_ms: view.audio_ms,
        };
        if view.pure_audio {
            if let Some(run) = &mut self.audio_run
                && run.dir == row.dir
                && run.kind == row.kind
            {
                run.last_seq = row.seq;
                run.frames += 1;
                let ms = run.audio_ms.unwrap_or(0.0) + row.audio_ms.unwrap_or(0.0);
                run.audio_ms = Some(ms);
                run.summary = audio_summary(run.frames, ms);
                return;
            }
            out.extend(self.audio_run.replace(row));
            return;
        }
        out.extend(self.audio_run.take());
        out.push(row);
    }

    /// The row still open (an audio run at the end of the log).
    pub fn finish(&mut self) -> Option<TimelineRow> {
        self.audio_run.take()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(seq: u64, dir: Direction, ts_ms: u64, json: &str) -> WireEntry {
        WireEntry::frame(seq, dir, ts_ms, json.as_bytes().to_vec(), None, false)
    }

    fn audio(seq: u64, bytes: usize) -> WireEntry {
        let data = reel_protocol::Base64Data(bytes::Bytes::from(vec![0u8; bytes])).encode();
        entry(
            seq,
            Direction::In,
            seq * 10,
            &format!(
                r#"{{"serverContent":{{"modelTurn":{{"parts":[{{"inlineData":{{"mimeType":"audio/pcm;rate=24000","data":"{data}"}}}}]}}}}}}"#
            ),
        )
    }

    fn rows(filter: TimelineFilter, entries: &[WireEntry]) -> Vec<(u64, u64, String, String)> {
        let mut timeline = Timeline::new(filter);
        let mut out = Vec::new();
        for e in entries {
            timeline.push(e, &mut out);
        }
        out.extend(timeline.finish());
        out.into_iter()
            .map(|r| (r.seq, r.turn, r.kind, r.summary))
            .collect()
    }

    #[test]
    fn audio_dropped_unsent_breaks_the_run_and_says_how_much() {
        let data = reel_protocol::Base64Data(bytes::Bytes::from(vec![0u8; 1_280])).encode();
        let chunk = |seq: u64, dropped_before: Option<u64>| WireEntry {
            dropped_before,
            ..entry(
                seq,
                Direction::Out,
                seq * 40,
                &format!(
                    r#"{{"realtimeInput":{{"audio":{{"mimeType":"audio/pcm;rate=16000","data":"{data}"}}}}}}"#
                ),
            )
        };
        let entries = [
            chunk(1, None),
            chunk(2, None),
            chunk(3, Some(21)),
            chunk(4, None),
        ];
        assert_eq!(
            rows(TimelineFilter::default(), &entries),
            [
                (1, 1, "realtimeInput.audio".into(), "audio ×2 (0.1s)".into()),
                (
                    3,
                    1,
                    "realtimeInput.audio".into(),
                    "audio ×1 (0.0s) · 21 chunk(s) dropped unsent before it".into()
                ),
                (4, 1, "realtimeInput.audio".into(), "audio ×1 (0.0s)".into()),
            ]
        );
    }

    #[test]
    fn audio_runs_collapse_and_turns_are_numbered() {
        let entries = [
            entry(1, Direction::Out, 0, r#"{"setup":{"model":"models/m"}}"#),
            audio(2, 4_800),
            audio(3, 4_800),
            audio(4, 4_800),
            entry(
                5,
                Direction::In,
                50,
                r#"{"serverContent":{"outputTranscription":{"text":"Hi"},"turnComplete":true}}"#,
            ),
            audio(6, 48_000),
        ];
        let all = rows(TimelineFilter::default(), &entries);
        assert_eq!(
            all,
            [
                (1, 1, "setup".into(), "model models/m".into()),
                (2, 1, "serverContent.audio".into(), "audio ×3 (0.3s)".into()),
                (
                    5,
                    1,
                    "serverContent.outputTranscription".into(),
                    "\"Hi\" · turnComplete".into()
                ),
                (6, 2, "serverContent.audio".into(), "audio ×1 (1.0s)".into()),
            ]
        );
        let turn_two = TimelineFilter {
            turn: Some(2),
            ..TimelineFilter::default()
        };
        assert_eq!(rows(turn_two, &entries).len(), 1);
        let setups = TimelineFilter {
            kind: Some("set".into()),
            ..TimelineFilter::default()
        };
        assert_eq!(rows(setups, &entries).len(), 1);
    }
}
