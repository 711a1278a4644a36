//! Shared by the reel-replayer benchmarks: the synthetic long session (its wire log, its
//! config and tool), an in-memory link behind the `Connector` seam, the runtime, peak RSS and
//! percentiles.

#![allow(dead_code)] // each bench target uses its own subset

#[path = "../../../benches/shared/machine.rs"]
mod machine;

#[allow(unused_imports)] // each bench target uses its own subset
pub use machine::{cpu_times, load_average, quantile, runtime};

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};

use bytes::Bytes;
use futures_util::future::BoxFuture;
use reel_actors::LiveSessionBuilder;
use reel_actors::transport::{
    Connector, LinkError, LinkEvent, LinkFrame, LinkHalves, LinkOptions, LinkReceiver, LinkSender,
};
use reel_protocol::{
    ApiEndpoint, Base64Data, ConnectRequest, FunctionResponse, SessionCommand, SessionConfig,
};
use reel_recorder::wire_log::{CloseMark, Direction, WireEntry};
use reel_tools::{SimpleTool, ToolDispatcher};
use serde_json::{Value, json};
use tokio::sync::watch;

/// Session time of the first frame of every synthetic tape.
pub const T0: u64 = 1_718_000_000_000;

/// The one tool of the synthetic session.
pub const TOOL: &str = "lookup_order";

/// A tool call every this many seconds of the synthetic session (at second 90, 270, …).
pub const TOOL_EVERY_S: u64 = 180;

/// Server frames per second of the synthetic session (50 of them audio).
pub const FRAMES_PER_S: u64 = 100;

/// A text `serverContent` frame as the server writes it (the frame of the protocol codec
/// bench's `decode_server/text_camel`).
pub const TEXT_FRAME: &str = r#"{"serverContent":{"modelTurn":{"role":"model","parts":[{"text":"The weather in London is 21 degrees and sunny."}]}}}"#;

/// The server's answer to the setup.
pub const SETUP_COMPLETE: &str = r#"{"setupComplete":{}}"#;

/// The workspace's `target/` directory (`CARGO_TARGET_DIR` is not consulted: the files
/// the benches write live in the repository's own `target/`).
pub fn target_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .map_or_else(|| PathBuf::from("target"), |root| root.join("target"))
}

// ---------------------------------------------------------------------------------------
// The synthetic session.
// ---------------------------------------------------------------------------------------

/// The synthetic session's config: the defaults (audio out), nothing else.
pub fn session_config() -> SessionConfig {
    SessionConfig::default()
}

/// The dispatcher of the synthetic session: one tool whose answer depends only on its
/// arguments, so a replay produces the recorded responses byte for byte.
pub fn dispatcher() -> ToolDispatcher {
    let mut dispatcher = ToolDispatcher::new();
    let tool = SimpleTool::new(
        TOOL,
        "Look up an order by its number.",
        Some(json!({
            "type": "object",
            "properties": { "order": { "type": "integer" } },
            "required": ["order"]
        })),
        |args: Value, _ctx| async move { Ok(tool_result(&args)) },
    );
    if let Err(error) = dispatcher.register(tool) {
        panic!("cannot register the bench tool: {error}");
    }
    dispatcher
}

fn tool_result(args: &Value) -> Value {
    json!({ "order": args["order"], "status": "shipped", "eta_days": 2 })
}

/// A replay builder for the synthetic session: offline endpoint, the session's config and
/// its tool.
pub fn replay_builder() -> LiveSessionBuilder {
    LiveSessionBuilder::new(session_config(), ApiEndpoint::offline()).dispatcher(dispatcher())
}

/// What a synthetic tape holds.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct TapeCounts {
    /// Every entry (frames both ways and the final close marker).
    pub entries: u64,
    /// Server frames (`setupComplete` included).
    pub inbound: u64,
    /// Of which audio.
    pub audio: u64,
    /// Of which tool calls.
    pub tool_calls: u64,
    /// Runtime frames (the setup and the tool responses).
    pub outbound: u64,
    /// File size in bytes.
    pub bytes: u64,
}

/// 20 ms of 24 kHz PCM16 mono (960 bytes): a 440 Hz tone whose phase moves with `n`.
fn audio_chunk(n: u64) -> Bytes {
    let mut pcm = Vec::with_capacity(960);
    for i in 0..480u64 {
        let t = (n * 480 + i) as f64 / 24_000.0;
        let sample = ((t * 440.0 * std::f64::consts::TAU).sin() * 8_000.0) as i16;
        pcm.extend_from_slice(&sample.to_le_bytes());
    }
    Bytes::from(pcm)
}

const WORDS: [&str; 16] = [
    "the", "order", "is", "on", "its", "way", "and", "should", "arrive", "within", "two", "days",
    "thank", "you", "for", "waiting",
];

fn word(n: u64) -> &'static str {
    WORDS[(n % WORDS.len() as u64) as usize]
}

/// Writes a synthetic session of `seconds` to `path`, deterministically:
///
/// - the setup (the replay builder's own: config, tool declaration) and `setupComplete`;
/// - per second, [`FRAMES_PER_S`] server frames 10 ms apart: every other one 20 ms of
///   24 kHz output audio (960 bytes of PCM, 50 per second); between them output
///   transcription words, a model text part every fifth, and every tenth second a
///   `usageMetadata` and a `turnComplete`;
/// - every [`TOOL_EVERY_S`] seconds (at second 90, 270, …) one of those frames is a
///   `toolCall` of [`TOOL`], answered 5 ms later by the runtime's `toolResponse`, encoded
///   exactly as the replayed runtime will encode it;
/// - a close marker (client disconnect, 1000) 10 ms after the last frame.
pub fn write_synthetic_tape(path: &Path, seconds: u64) -> std::io::Result<TapeCounts> {
    let platform = ApiEndpoint::offline().platform().clone();
    let config = match replay_builder().resolved_config() {
        Ok(config) => config,
        Err(error) => panic!("the bench session config is invalid: {error}"),
    };
    let encoder = config.command_encoder(&platform);
    let setup = Bytes::from(config.setup_frame(&platform));
    // Audio payloads repeat with a period of 50 chunks (one second): building each frame
    // once keeps generation fast; the tape is still 20 ms chunks of a continuous tone.
    let audio_frames: Vec<Bytes> = (0..50)
        .map(|n| {
            let data = Base64Data(audio_chunk(n)).encode();
            let frame = json!({"serverContent": {"modelTurn": {"parts": [
                {"inlineData": {"mimeType": "audio/pcm;rate=24000", "data": data}}
            ]}}});
            Bytes::from(frame.to_string())
        })
        .collect();

    let file = File::create(path)?;
    let mut out = BufWriter::with_capacity(1 << 20, file);
    let mut counts = TapeCounts::default();
    let mut seq = 0u64;
    let mut line = Vec::with_capacity(4096);
    let mut write = |entry: WireEntry, counts: &mut TapeCounts| -> std::io::Result<()> {
        line.clear();
        serde_json::to_writer(&mut line, &entry).map_err(std::io::Error::other)?;
        line.push(b'\n');
        counts.entries += 1;
        counts.bytes += line.len() as u64;
        out.write_all(&line)
    };
    let mut frame = |dir: Direction, ts_ms: u64, payload: Bytes| {
        seq += 1;
        WireEntry::frame(seq, dir, ts_ms, payload, None, false)
    };

    write(frame(Direction::Out, T0, setup), &mut counts)?;
    counts.outbound += 1;
    write(
        frame(
            Direction::In,
            T0 + 40,
            Bytes::from_static(SETUP_COMPLETE.as_bytes()),
        ),
        &mut counts,
    )?;
    counts.inbound += 1;

    let start = T0 + 1_000;
    let mut text_n = 0u64;
    let mut last_ts = start;
    for s in 0..seconds {
        for slot in 0..FRAMES_PER_S {
            let ts_ms = start + s * 1_000 + slot * 10;
            last_ts = ts_ms;
            let (payload, is_audio, tool_id) = if slot % 2 == 0 {
                (audio_frames[(slot / 2) as usize].clone(), true, None)
            } else {
                let j = slot / 2;
                let end_of_turn = s % 10 == 9;
                if s % TOOL_EVERY_S == TOOL_EVERY_S / 2 && j == 25 {
                    let id = format!("call-{s}");
                    let call = json!({"toolCall": {"functionCalls": [
                        {"id": id, "name": TOOL, "args": {"order": s}}
                    ]}});
                    (Bytes::from(call.to_string()), false, Some((id, s)))
                } else if end_of_turn && j == 49 {
                    let done = json!({"serverContent": {"turnComplete": true}});
                    (Bytes::from(done.to_string()), false, None)
                } else if end_of_turn && j == 48 {
                    let usage = json!({"usageMetadata": {
                        "promptTokenCount": 1_000 + s,
                        "responseTokenCount": 200,
                        "totalTokenCount": 1_200 + s
                    }});
                    (Bytes::from(usage.to_string()), false, None)
                } else if j % 5 == 0 {
                    text_n += 1;
                    let text = json!({"serverContent": {"modelTurn": {"parts": [
                        {"text": format!("{} {}. ", word(text_n), word(text_n + 7))}
                    ]}}});
                    (Bytes::from(text.to_string()), false, None)
                } else {
                    text_n += 1;
                    let transcript = json!({"serverContent": {"outputTranscription": {
                        "text": format!("{} ", word(text_n))
                    }}});
                    (Bytes::from(transcript.to_string()), false, None)
                }
            };
            write(frame(Direction::In, ts_ms, payload), &mut counts)?;
            counts.inbound += 1;
            counts.audio += u64::from(is_audio);
            if let Some((id, order)) = tool_id {
                counts.tool_calls += 1;
                let response = FunctionResponse {
                    id: Some(id),
                    name: Some(TOOL.to_owned()),
                    response: Some(tool_result(&json!({ "order": order }))),
                    ..FunctionResponse::default()
                };
                let Some(bytes) = encoder.encode(&SessionCommand::SendToolResponse(vec![response]))
                else {
                    panic!("a tool response always has a frame");
                };
                write(
                    frame(Direction::Out, ts_ms + 5, Bytes::from(bytes)),
                    &mut counts,
                )?;
                counts.outbound += 1;
            }
        }
    }
    seq += 1;
    let mark = CloseMark {
        code: Some(1000),
        reason: Some("client disconnect".to_owned()),
        client: true,
    };
    write(
        WireEntry::close_mark(seq, last_ts + 10, None, mark),
        &mut counts,
    )?;
    out.flush()?;
    Ok(counts)
}

/// The synthetic tape of `minutes` under `target/bench-tapes/`, written if it is not there
/// yet (same inputs, same bytes: the file is reused across runs).
pub fn synthetic_tape(minutes: u64) -> (PathBuf, TapeCounts) {
    let dir = target_dir().join("bench-tapes");
    if let Err(error) = std::fs::create_dir_all(&dir) {
        panic!("cannot create {}: {error}", dir.display());
    }
    let path = dir.join(format!("synthetic-{minutes}min.wire.jsonl"));
    let done = dir.join(format!("synthetic-{minutes}min.counts"));
    if let Ok(text) = std::fs::read_to_string(&done)
        && let Some(counts) = parse_counts(&text)
        && std::fs::metadata(&path).is_ok_and(|m| m.len() == counts.bytes)
    {
        return (path, counts);
    }
    let counts = match write_synthetic_tape(&path, minutes * 60) {
        Ok(counts) => counts,
        Err(error) => panic!("cannot write {}: {error}", path.display()),
    };
    let text = format!(
        "{} {} {} {} {} {}\n",
        counts.entries,
        counts.inbound,
        counts.audio,
        counts.tool_calls,
        counts.outbound,
        counts.bytes
    );
    if let Err(error) = std::fs::write(&done, text) {
        panic!("cannot write {}: {error}", done.display());
    }
    (path, counts)
}

fn parse_counts(text: &str) -> Option<TapeCounts> {
    let n: Vec<u64> = text
        .split_whitespace()
        .map(str::parse)
        .collect::<Result<_, _>>()
        .ok()?;
    let [entries, inbound, audio, tool_calls, outbound, bytes] = n[..] else {
        return None;
    };
    Some(TapeCounts {
        entries,
        inbound,
        audio,
        tool_calls,
        outbound,
        bytes,
    })
}

// ---------------------------------------------------------------------------------------
// Peak memory and percentiles.
// ---------------------------------------------------------------------------------------

/// A field of `/proc/self/status` in KiB (`VmHWM`, `VmRSS`), if readable.
pub fn proc_status_kib(field: &str) -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    status.lines().find_map(|line| {
        let rest = line.strip_prefix(field)?.strip_prefix(':')?;
        rest.trim().trim_end_matches("kB").trim().parse().ok()
    })
}

/// The median of `values` (sorted in place).
pub fn median(values: &mut [f64]) -> f64 {
    values.sort_by(f64::total_cmp);
    match values.len() {
        0 => 0.0,
        n if n % 2 == 1 => values[n / 2],
        n => (values[n / 2 - 1] + values[n / 2]) / 2.0,
    }
}

/// User + system CPU time of this process so far, in seconds (`/proc/self/stat`, 100
/// ticks/s: 10 ms resolution).
pub fn cpu_seconds() -> f64 {
    let (user, system) = cpu_times();
    user + system
}

// ---------------------------------------------------------------------------------------
// The in-memory link.
// ---------------------------------------------------------------------------------------

struct LinkShared {
    closed: watch::Sender<bool>,
}

/// A connector for exactly one in-memory link. Its sender takes every frame (the setup
/// included) and drops it; its receiver yields `{"setupComplete":{}}`, then waits for `go`,
/// then yields the pre-built `frames` as fast as they are pulled (each a cheap `Bytes`
/// clone), then, once the session closes the link, a clean close (1000).
pub struct MemoryConnector {
    link: Mutex<Option<LinkHalves>>,
}

impl MemoryConnector {
    /// A link that yields `frames` once `go` is set.
    pub fn new(go: watch::Receiver<bool>, frames: Arc<[LinkFrame]>) -> Self {
        let shared = Arc::new(LinkShared {
            closed: watch::channel(false).0,
        });
        let sender = MemorySender {
            shared: Arc::clone(&shared),
        };
        let receiver = MemoryReceiver {
            shared,
            go,
            frames,
            position: 0,
            stage: Stage::SetupComplete,
            waiting: None,
        };
        MemoryConnector {
            link: Mutex::new(Some((Box::new(sender), Box::new(receiver)))),
        }
    }
}

impl Connector for MemoryConnector {
    fn connect(
        &self,
        _request: &ConnectRequest,
        _options: &LinkOptions,
    ) -> BoxFuture<'static, Result<LinkHalves, LinkError>> {
        let halves = self
            .link
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .take();
        Box::pin(async move {
            halves.ok_or_else(|| LinkError::Connect {
                url: "memory://bench".to_owned(),
                message: "a memory link connects once".to_owned(),
            })
        })
    }
}

struct MemorySender {
    shared: Arc<LinkShared>,
}

impl LinkSender for MemorySender {
    fn send(&mut self, _frame: LinkFrame) -> BoxFuture<'_, Result<(), LinkError>> {
        Box::pin(async { Ok(()) })
    }

    fn close(&mut self, _code: u16, _reason: String) -> BoxFuture<'_, Result<(), LinkError>> {
        self.shared.closed.send_replace(true);
        Box::pin(async { Ok(()) })
    }
}

enum Stage {
    SetupComplete,
    /// Waiting for the bench's `go` before the first frame.
    AwaitGo,
    Frames,
    AwaitClose,
    Done,
}

struct MemoryReceiver {
    shared: Arc<LinkShared>,
    go: watch::Receiver<bool>,
    frames: Arc<[LinkFrame]>,
    position: usize,
    stage: Stage,
    /// The wait for the `go` or for the close, while it lasts: owned, so the receiver is
    /// polled without a future of its own a frame.
    waiting: Option<BoxFuture<'static, ()>>,
}

/// Until `flag` holds (or its sender is gone).
fn wait_until_set(mut flag: watch::Receiver<bool>) -> BoxFuture<'static, ()> {
    Box::pin(async move {
        let _ = flag.wait_for(|set| *set).await;
    })
}

impl LinkReceiver for MemoryReceiver {
    fn poll_recv(&mut self, cx: &mut Context<'_>) -> Poll<Option<LinkEvent>> {
        loop {
            if let Some(waiting) = &mut self.waiting {
                std::task::ready!(waiting.as_mut().poll(cx));
                self.waiting = None;
                if matches!(self.stage, Stage::AwaitGo) {
                    self.stage = Stage::Frames;
                } else {
                    self.stage = Stage::Done;
                    return Poll::Ready(Some(LinkEvent::Closed {
                        code: Some(1000),
                        reason: Some("client disconnect".to_owned()),
                    }));
                }
            }
            match self.stage {
                Stage::SetupComplete => {
                    self.stage = Stage::AwaitGo;
                    return Poll::Ready(Some(LinkEvent::Frame(LinkFrame::text(SETUP_COMPLETE))));
                }
                Stage::AwaitGo => self.waiting = Some(wait_until_set(self.go.clone())),
                Stage::Frames => {
                    if let Some(frame) = self.frames.get(self.position) {
                        self.position += 1;
                        return Poll::Ready(Some(LinkEvent::Frame(frame.clone())));
                    }
                    self.stage = Stage::AwaitClose;
                }
                Stage::AwaitClose => {
                    self.waiting = Some(wait_until_set(self.shared.closed.subscribe()));
                }
                Stage::Done => return Poll::Ready(None),
            }
        }
    }
}
