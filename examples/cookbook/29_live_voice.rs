//! 29 — live voice (Run): the whole `Live::builder()` in one voice agent — a dental
//! clinic's receptionist who talks (audio both ways: the caller's PCM in, the model's PCM
//! out, with transcripts), goes through four phases (greeting → scheduling → booking →
//! farewell) on guarded transitions, books the visit with a tool, fills `derived:service`
//! and `derived:day` with a deterministic extractor reading the caller's transcript, reacts
//! to the booking with a watcher, steers the model in `Hybrid` mode with `Deferred` context
//! delivery, nudges it when the caller leaves the day open (repair), and persists the
//! session in SQLite: the caller rings back, and the session resumes where it ended.
//!
//! ```text
//! cargo run --example 29_live_voice                    # the bundled tapes, offline
//! GEMINI_API_KEY=… cargo run --example 29_live_voice -- --live
//! GEMINI_API_KEY=… cargo run --example 29_live_voice -- --live --record call.wire.jsonl
//! ```
//!
//! Offline (the default), the model is the bundled tapes
//! (`assets/cookbook/29_live_voice.wire.jsonl` for the call,
//! `29_live_voice.callback.wire.jsonl` for the call back, and its
//! `29_live_voice.callback.resume.json`: the snapshot that session resumed from), served on
//! loopback by the tape server; the snapshots go to an SQLite file in a fresh temporary
//! directory. Each tape is then replayed through the session tree with nothing listening,
//! and the example prints the verdict: CLEAN, or every divergence. The tapes were recorded
//! by reel from this very agent talking to a scripted model
//! (`tests/it/cookbook/ex29_live_voice.rs` holds the script and regenerates them byte for
//! byte). With `--live` the caller's lines go as text turns (this example has no speech
//! synthesizer: its bundled voice is tones the scripted model "transcribes"), and the
//! model decides what to say and when to call the tool, so the call may go differently.

#[allow(dead_code)] // the cookbook's shared part; a live example uses its `Target`
#[path = "support/cookbook.rs"]
pub mod cookbook;
#[allow(dead_code)] // the tests use parts a run from the command line does not
#[path = "support/live.rs"]
pub mod live;

use std::collections::BTreeMap;
use std::error::Error;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;

use cookbook::Target;
use live::turns::wait_for_turn;
use reel::actors::{EventStream, Lane, LiveEvent, LiveHandle};
use reel::extract::{Extract, Recognizer};
use reel::fluent::{ContextDelivery, Live, LiveBuilder, RepairConfig, SteeringMode};
use reel::persistence::{SessionPersistence, SessionSnapshot, SqlitePersistence};
use reel::protocol::{ApiEndpoint, SessionEvent};
use reel::recorder::{Direction, MemoryWireRecorder, WireEntry, WireRecorder};
use reel::tools::{ToolContext, ToolError, TypedTool};
use serde_json::{Value, json};

/// The example's name: its tapes are `assets/cookbook/29_live_voice.*`.
pub const NAME: &str = "29_live_voice";
/// The session id the snapshots are saved under.
pub const SESSION_ID: &str = "caller-0042";
/// The Live model.
pub const MODEL: &str = "gemini-live-2.5-flash-preview";

/// What the caller says in the call, utterance by utterance (in the bundled tape, what the
/// scripted model transcribes the caller's audio as).
pub const CALL: [&str; 4] = [
    "Hi, I'd like to book a cleaning, please.",
    "Hmm, I'm not sure yet.",
    "Thursday works for me.",
    "Great, thank you. Bye!",
];
/// What the caller says when they ring back.
pub const CALLBACK: [&str; 1] = ["Hi again, what was my reference?"];

const PERSONA: &str = "You are Robin, the voice receptionist of Reel Dental. Be brief and warm.";

/// Arguments of `book_visit`.
#[derive(Debug, serde::Deserialize, schemars::JsonSchema)]
pub struct VisitArgs {
    /// The kind of visit: cleaning, checkup or filling.
    pub service: String,
    /// The weekday, e.g. "Thursday".
    pub day: String,
}

/// Books the visit; the reference is made from the day and the service.
async fn book_visit(args: VisitArgs, ctx: ToolContext) -> Result<Value, ToolError> {
    let day: String = args.day.chars().take(3).collect();
    let reference = format!("RD-{}-{}", day.to_uppercase(), args.service.len() * 100 + 7);
    ctx.state
        .set("app:reference", &reference)
        .map_err(|e| ctx.fail(e))?;
    ctx.state.set("app:booked", true).map_err(|e| ctx.fail(e))?;
    Ok(json!({"reference": reference, "service": args.service, "day": args.day}))
}

/// What the phase hooks, the watcher and the resume callback did, in order (they run on
/// the control lane, so the order is the same live and in a replay).
pub type Activity = live::Notes;

/// The receptionist, its snapshots kept in `sessions`; `activity` collects what its hooks
/// and watcher did.
pub fn receptionist(sessions: Arc<dyn SessionPersistence>, activity: &Activity) -> LiveBuilder {
    let (entered, watched, resumed) = (activity.clone(), activity.clone(), activity.clone());
    let visit = Extract::record("visit")
        .field(
            "service",
            Recognizer::one_of(["cleaning", "checkup", "filling"]),
        )
        .field(
            "day",
            Recognizer::one_of(["Monday", "Tuesday", "Wednesday", "Thursday", "Friday"]),
        )
        .build();
    Live::builder()
        .model(MODEL)
        .voice("Aoede")
        .instruction(PERSONA)
        .manual_activity_detection()
        // ── tools ────────────────────────────────────────────────────────────────────
        .tool(TypedTool::new(
            "book_visit",
            "Books the caller's visit: the service and the weekday.",
            book_visit,
        ))
        // ── extraction: what the caller said, recognized without a model ─────────────
        .extract_record(visit)
        // ── steering and repair ──────────────────────────────────────────────────────
        .steering_mode(SteeringMode::Hybrid)
        .context_delivery(ContextDelivery::Deferred)
        .repair(RepairConfig::new(1, 4))
        // ── phases ───────────────────────────────────────────────────────────────────
        .phase("greeting", |p| {
            p.instruction("Greet the caller and ask which visit they need.")
                .tools(Vec::<String>::new())
                .transition_with(
                    "scheduling",
                    |s| s.contains("derived:service"),
                    "the caller named the service",
                )
        })
        .phase("scheduling", |p| {
            p.instruction("Ask which weekday suits the caller.")
                .tools(Vec::<String>::new())
                .needs(&["derived:day"])
                .with_context(|s| {
                    s.get::<String>("derived:service")
                        .map(|service| format!("The caller wants a {service}."))
                        .unwrap_or_default()
                })
                .transition_with(
                    "booking",
                    |s| s.contains("derived:day"),
                    "the caller named the day",
                )
        })
        .phase("booking", |p| {
            p.instruction("Book the visit with book_visit, then read the reference back.")
                .tools(["book_visit"])
                .enter_prompt("I'll book that visit for you now.")
                .on_enter(move |state, _writer| {
                    let activity = entered.clone();
                    async move {
                        let service = state.get::<String>("derived:service").unwrap_or_default();
                        let day = state.get::<String>("derived:day").unwrap_or_default();
                        activity.note(format!("on_enter booking: a {service} on {day}"));
                    }
                })
                .transition_with(
                    "farewell",
                    |s| s.get::<bool>("app:booked") == Some(true),
                    "the visit is booked",
                )
        })
        .phase("farewell", |p| {
            p.instruction("Answer any last question, thank the caller and say goodbye.")
                .tools(Vec::<String>::new())
                .terminal()
        })
        // ── a watcher: the booking queues a reminder ─────────────────────────────────
        .watch("app:reference")
        .changed()
        .blocking()
        .then(move |_old, reference, state| {
            let activity = watched.clone();
            async move {
                let reminder = format!("SMS reminder for {}", reference.as_str().unwrap_or(""));
                let _ = state.set("app:reminder", &reminder).await;
                activity.note(format!("watch app:reference → {reminder}"));
            }
        })
        // ── persistence ──────────────────────────────────────────────────────────────
        .persistence(sessions)
        .session_id(SESSION_ID)
        .on_resumed(move |snapshot, state| {
            let activity = resumed.clone();
            async move {
                let reference = state.get::<String>("app:reference").unwrap_or_default();
                activity.note(format!(
                    "on_resumed: phase {}, {} turns, reference {reference}",
                    snapshot.phase, snapshot.turn_count
                ));
            }
        })
}

/// What one call showed, from its events.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Call {
    /// The story, line by line: what each side said, tools, phases, extractions (each
    /// extractor's value when it changed: it reads the whole transcript at every turn).
    pub lines: Vec<String>,
    /// Each extractor's last value.
    extracted: BTreeMap<String, Value>,
}

impl Call {
    fn observe(&mut self, lane: Lane, event: &LiveEvent) {
        if lane != Lane::Control {
            return;
        }
        let line = match event {
            LiveEvent::Session(SessionEvent::InputTranscription {
                text,
                is_final: true,
            }) => format!("caller (heard)  | {text}"),
            LiveEvent::Session(SessionEvent::OutputTranscription {
                text,
                is_final: true,
            }) => format!("robin (spoken)  | {text}"),
            LiveEvent::ToolStarted { name, args, .. } => {
                format!("tool call       | {name}({args})")
            }
            LiveEvent::ToolFinished { name, response, .. } => {
                format!("tool result     | {name} → {response}")
            }
            LiveEvent::PhaseTransition { from, to, reason } => {
                format!("phase           | {from} → {to} ({reason})")
            }
            LiveEvent::Extraction { name, value } => {
                if self.extracted.get(name) == Some(value) {
                    return;
                }
                self.extracted.insert(name.clone(), value.clone());
                format!("extracted       | {name}: {value}")
            }
            LiveEvent::Resumed { phase, turn_count } => {
                format!("resumed         | in {phase} after {turn_count} turns")
            }
            _ => return,
        };
        self.lines.push(line);
    }
}

/// Plays the caller: says each of `lines` — as voice (activity start, PCM, activity end)
/// when `voiced`, else as a text turn — and waits for the model to finish its turn (and
/// any turn the runtime asks of it after, a repair nudge's or an enter prompt's) before
/// the next. `events` must have been subscribed before the session started.
pub async fn converse(
    handle: &LiveHandle,
    events: &mut EventStream,
    lines: &[&str],
    voiced: bool,
    turns_after: &dyn Fn(usize) -> usize,
) -> Result<Call, Box<dyn Error>> {
    let mut call = Call::default();
    for (index, line) in lines.iter().enumerate() {
        if voiced {
            handle.activity_start()?;
            for chunk in live::voice(index, 2) {
                handle.send_audio(chunk)?;
            }
            handle.activity_end()?;
        } else {
            call.lines.push(format!("caller (typed)  | {line}"));
            handle.send_text(*line)?;
        }
        for _ in 0..1 + turns_after(index) {
            if !wait_for_turn(events, |lane, event| call.observe(lane, event)).await? {
                return Err("the session ended in the middle of the call".into());
            }
        }
    }
    Ok(call)
}

/// How many turns the model takes, unasked by the caller, after the caller's utterance
/// `index` of [`CALL`]: the repair nudge's answer after the second, the booking's enter
/// prompt after the third.
pub fn call_turns_after(index: usize) -> usize {
    usize::from(index == 1 || index == 2)
}

/// The frames the runtime sent to steer the model (instruction updates and context turns,
/// the nudges among them), as one line each, from a recording.
pub fn steering(entries: &[WireEntry]) -> Vec<String> {
    let mut lines = Vec::new();
    for entry in entries.iter().filter(|e| e.dir == Direction::Out) {
        let Ok(frame) = serde_json::from_slice::<Value>(&entry.payload) else {
            continue;
        };
        if let Some(text) = frame.pointer("/contextUpdate/systemInstruction/parts/0/text") {
            lines.push(format!(
                "instruction     | {}",
                text.as_str().unwrap_or_default().replace('\n', " / ")
            ));
        }
        let Some(content) = frame.get("clientContent") else {
            continue;
        };
        for turn in content["turns"].as_array().into_iter().flatten() {
            let text: String = turn["parts"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(|part| part["text"].as_str())
                .collect();
            let asks = if content["turnComplete"] == json!(true) {
                ", answer now"
            } else {
                ""
            };
            let role = turn["role"].as_str().unwrap_or("user");
            lines.push(format!(
                "context ({role}{asks}) | {}",
                text.replace('\n', " / ")
            ));
        }
    }
    lines
}

/// The audio on a recording: chunks and milliseconds the caller sent (16 kHz) and the
/// model sent (24 kHz).
pub fn audio(entries: &[WireEntry]) -> String {
    let (mut sent, mut sent_bytes, mut got, mut got_bytes) = (0, 0, 0, 0);
    for entry in entries {
        let Ok(frame) = serde_json::from_slice::<Value>(&entry.payload) else {
            continue;
        };
        if let Some(data) = frame
            .pointer("/realtimeInput/audio/data")
            .and_then(Value::as_str)
        {
            sent += 1;
            sent_bytes += base64_len(data);
        }
        for part in frame
            .pointer("/serverContent/modelTurn/parts")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            if let Some(data) = part.pointer("/inlineData/data").and_then(Value::as_str) {
                got += 1;
                got_bytes += base64_len(data);
            }
        }
    }
    format!(
        "caller → {sent} PCM chunks ({} ms at 16 kHz), robin → {got} PCM chunks ({} ms at 24 kHz)",
        sent_bytes * 1000 / (16_000 * 2),
        live::model_audio_ms(got_bytes)
    )
}

/// The length of the bytes `data` (standard base64, padded) holds.
fn base64_len(data: &str) -> usize {
    let padding = data.bytes().rev().take_while(|b| *b == b'=').count();
    data.len() / 4 * 3 - padding
}

/// The snapshot's story: its phase, turns and the application's keys.
fn snapshot_lines(snapshot: &SessionSnapshot) -> Vec<String> {
    let mut lines = vec![format!(
        "phase {}, {} turns",
        snapshot.phase, snapshot.turn_count
    )];
    let keys: BTreeMap<&String, &Value> = snapshot
        .state
        .iter()
        .filter(|(key, _)| key.starts_with("app:") || key.starts_with("derived:"))
        .collect();
    lines.extend(keys.iter().map(|(key, value)| format!("{key} = {value}")));
    lines
}

/// One session of the receptionist against `endpoint`: connects, plays `lines`, hangs up.
/// Returns the call and its wire log: kept in memory, or recorded to `wire_file` (and read
/// back from it) when given.
pub async fn session(
    agent: LiveBuilder,
    endpoint: ApiEndpoint,
    lines: &[&str],
    voiced: bool,
    turns_after: &dyn Fn(usize) -> usize,
    wire_file: Option<&Path>,
) -> Result<(Call, Vec<WireEntry>), Box<dyn Error>> {
    let recorder = Arc::new(MemoryWireRecorder::new());
    let agent = match wire_file {
        Some(path) => agent.record_wire(path),
        None => agent.record_wire_to(recorder.clone() as Arc<dyn WireRecorder>),
    };
    let mut events = agent.subscribe();
    let handle = agent.connect(endpoint).await?;
    let call = converse(&handle, &mut events, lines, voiced, turns_after).await;
    handle.disconnect().await;
    let call = call?;
    let entries = match wire_file {
        Some(path) => live::read_tape(path)?,
        None => recorder.entries(),
    };
    Ok((call, entries))
}

/// The example, as it prints: the call, the snapshot in SQLite, the call back resumed
/// from it, and (offline) each bundled tape replayed through the session tree.
pub async fn run(target: Target) -> Result<String, Box<dyn Error>> {
    let dir = std::env::temp_dir().join(format!("reel-{NAME}-{}", std::process::id()));
    let outcome = run_in(&dir, target).await;
    // Best effort: the directory is the example's own scratch space.
    let _ = std::fs::remove_dir_all(&dir);
    outcome
}

async fn run_in(dir: &Path, target: Target) -> Result<String, Box<dyn Error>> {
    let db = dir.join("sessions.sqlite3");
    let sessions: Arc<dyn SessionPersistence> = Arc::new(SqlitePersistence::open(&db)?);
    let activity = Activity::default();
    let (mut server, endpoint, record, voiced) = match &target {
        Target::Bundled => {
            let tapes = vec![
                (
                    "call".to_owned(),
                    live::read_tape(&live::bundled(&tape(NAME)))?,
                ),
                (
                    "callback".to_owned(),
                    live::read_tape(&live::bundled(&tape(&callback_name())))?,
                ),
            ];
            let server = live::serve(tapes).await?;
            let endpoint = live::endpoint_of(&server);
            (Some(server), endpoint, None, true)
        }
        Target::Live { record } => (None, ApiEndpoint::from_env()?, record.clone(), false),
    };
    let turns_after: &dyn Fn(usize) -> usize = if voiced { &call_turns_after } else { &|_| 0 };
    let agent = receptionist(sessions.clone(), &activity);
    let call = session(
        agent,
        endpoint.clone(),
        &CALL,
        voiced,
        turns_after,
        record.as_deref(),
    )
    .await;
    let saved = sessions.load(SESSION_ID).await;
    let hooks = activity.lines();
    let agent = receptionist(sessions.clone(), &activity);
    let callback_record = record.as_deref().map(callback_path);
    let callback = match &call {
        Ok(_) => Some(
            session(
                agent,
                endpoint,
                &CALLBACK,
                voiced,
                &|_| 0,
                callback_record.as_deref(),
            )
            .await,
        ),
        Err(_) => None,
    };
    if let Some(server) = server.as_mut() {
        server.shutdown().await;
    }
    let (call, call_wire) = call?;

    let mut out = String::new();
    out.push_str("── the call ──\n");
    for line in &call.lines {
        out.push_str(&format!("  {line}\n"));
    }
    out.push_str(&format!("  audio           | {}\n", audio(&call_wire)));
    out.push_str("── steering the runtime sent ──\n");
    for line in steering(&call_wire) {
        out.push_str(&format!("  {line}\n"));
    }
    out.push_str("── hooks and watchers ──\n");
    for line in &hooks {
        out.push_str(&format!("  {line}\n"));
    }
    out.push_str("── the snapshot the call left in SQLite (sessions.sqlite3) ──\n");
    match saved? {
        Some(snapshot) => {
            for line in snapshot_lines(&snapshot) {
                out.push_str(&format!("  {line}\n"));
            }
        }
        None => out.push_str("  none: the call saved no snapshot\n"),
    }
    if let Some(callback) = callback {
        let (callback, callback_wire) = callback?;
        out.push_str("── the caller rings back: the session resumes ──\n");
        for line in activity.lines().iter().skip(hooks.len()) {
            out.push_str(&format!("  {line}\n"));
        }
        for line in &callback.lines {
            out.push_str(&format!("  {line}\n"));
        }
        out.push_str(&format!("  audio           | {}\n", audio(&callback_wire)));
    }
    if target == Target::Bundled {
        out.push_str("── each bundled tape replayed offline through the session tree ──\n");
        for (what, name) in [
            ("the call", NAME.to_owned()),
            ("the call back", callback_name()),
        ] {
            let replayed = receptionist(sessions.clone(), &Activity::default())
                .replay(live::bundled(&tape(&name)))
                .await?
                .finish()
                .await;
            out.push_str(&format!("  {what:<13} | {}\n", live::verdict(&replayed)));
        }
    }
    Ok(out)
}

/// The call back's recording's name: `29_live_voice.callback`.
pub fn callback_name() -> String {
    format!("{NAME}.callback")
}

/// A tape's file name: `{name}.wire.jsonl`.
pub fn tape(name: &str) -> String {
    format!("{name}.wire.jsonl")
}

/// Where `--record PATH` records the call back: `PATH` with `.callback` before
/// `.wire.jsonl` (or at the end).
pub fn callback_path(path: &Path) -> PathBuf {
    let text = path.display().to_string();
    match text.strip_suffix(".wire.jsonl") {
        Some(stem) => PathBuf::from(format!("{stem}.callback.wire.jsonl")),
        None => PathBuf::from(format!("{text}.callback")),
    }
}

fn main() -> ExitCode {
    live::main(NAME, run)
}
