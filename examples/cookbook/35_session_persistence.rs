//! 35 — session persistence (Fly): a live shop assistant whose session is saved as a
//! `SessionSnapshot` at every turn boundary into files (`FsPersistence`, one JSON file per
//! session id); the snapshot read back and round-tripped through its stored form, a
//! `MemoryPersistence` and a `SqlitePersistence`, each giving back the same snapshot; the
//! offline replay's own in-memory snapshot compared with the file; the session's event log
//! (its state journal, written again by the replay); and the shopper's second call resumed
//! from the file — the state restored, the turn count going on, the server's resumption
//! handle presented in the setup.
//!
//! ```text
//! cargo run --example 35_session_persistence                # the bundled tapes, offline
//! GEMINI_API_KEY=… cargo run --example 35_session_persistence -- --live
//! GEMINI_API_KEY=… cargo run --example 35_session_persistence -- --live --record shop.wire.jsonl
//! ```
//!
//! Offline (the default), the model is the bundled tapes
//! (`assets/cookbook/35_session_persistence.wire.jsonl` for the call,
//! `35_session_persistence.callback.wire.jsonl` for the call back, and its
//! `35_session_persistence.callback.resume.json`: the snapshot that session resumed from),
//! served on loopback by the tape server; the snapshots go to files in a fresh temporary
//! directory. Each tape is then replayed through the session tree with nothing listening,
//! and the example prints the verdict: CLEAN, or every divergence. The tapes were recorded
//! by reel from this very agent talking to a scripted model
//! (`tests/it/cookbook/ex35_session_persistence.rs` holds the script and regenerates them
//! byte for byte). With `--live` the model decides when to call the tools, so the calls
//! may go differently; `--record PATH` records the call back beside it
//! (`….callback.wire.jsonl`, with its `.resume.json`).
//!
//! Snapshot times (`saved_at`) are never printed: a loopback run stamps them with the wall
//! clock. 29_live_voice resumes a call from SQLite with phases and hooks; this example
//! shows the snapshot itself and the stores.

#[allow(dead_code)] // the cookbook's shared part; a live example uses its `Target`
#[path = "support/cookbook.rs"]
pub mod cookbook;
#[allow(dead_code)] // the tests use parts a run from the command line does not
#[path = "support/live.rs"]
pub mod live;

use std::error::Error;
use std::path::Path;
use std::sync::Arc;

use cookbook::Target;
use live::turns::wait_for_turn;
use reel::actors::{EventStream, Lane, LiveEvent, LiveHandle};
use reel::fluent::{Live, LiveBuilder};
use reel::persistence::{
    FsPersistence, MemoryPersistence, SessionPersistence, SessionSnapshot, SqlitePersistence,
};
use reel::protocol::{ApiEndpoint, SessionEvent};
use reel::recorder::journal::StateMutation;
use reel::recorder::{Direction, MemoryWireRecorder, WireEntry, WireRecorder};
use reel::tools::{ToolContext, ToolError, TypedTool};
use serde_json::{Value, json};
use std::process::ExitCode;

/// The example's name: its tapes are `assets/cookbook/35_session_persistence.*`.
pub const NAME: &str = "35_session_persistence";
/// The session id the snapshots are saved under.
pub const SESSION_ID: &str = "shopper-0007";
/// The Live model.
pub const MODEL: &str = "gemini-live-2.5-flash-preview";

/// What the shopper types in the first call, turn by turn.
pub const CALL: [&str; 3] = [
    "I'd like two blue mugs, please.",
    "Send them to 12 Elm Street.",
    "That's all for now, thanks.",
];
/// What the shopper types when they come back.
pub const CALLBACK: [&str; 1] = ["Hi, it's me again. What did I order?"];

/// Arguments of `add_to_order`.
#[derive(Debug, serde::Deserialize, schemars::JsonSchema)]
pub struct OrderArgs {
    /// What the shopper wants, e.g. "blue mug".
    pub item: String,
    /// How many.
    pub quantity: u32,
}

/// Arguments of `set_address`.
#[derive(Debug, serde::Deserialize, schemars::JsonSchema)]
pub struct AddressArgs {
    /// The delivery address.
    pub address: String,
}

/// Puts the item on the order: `app:order` in the session's state.
async fn add_to_order(args: OrderArgs, ctx: ToolContext) -> Result<Value, ToolError> {
    let order = format!("{} × {}", args.quantity, args.item);
    ctx.state
        .set("app:order", &order)
        .map_err(|e| ctx.fail(e))?;
    Ok(json!({"order": order}))
}

/// Keeps the delivery address: `app:address` in the session's state.
async fn set_address(args: AddressArgs, ctx: ToolContext) -> Result<Value, ToolError> {
    ctx.state
        .set("app:address", &args.address)
        .map_err(|e| ctx.fail(e))?;
    Ok(json!({"address": args.address}))
}

/// What the resume callback saw, in order.
pub type Resumes = live::Notes;

/// The shop assistant, its snapshots kept in `sessions`; `resumes` collects what its
/// resume callback saw.
pub fn assistant(sessions: Arc<dyn SessionPersistence>, resumes: &Resumes) -> LiveBuilder {
    let resumes = resumes.clone();
    Live::builder()
        .model(MODEL)
        .text_only()
        .instruction("You take orders for a small pottery shop. Use the tools; never guess.")
        // The server hands out resumption handles; each snapshot keeps the latest.
        .session_resume(true)
        .tool(TypedTool::new(
            "add_to_order",
            "Puts `quantity` of `item` on the shopper's order.",
            add_to_order,
        ))
        .tool(TypedTool::new(
            "set_address",
            "Keeps the shopper's delivery address.",
            set_address,
        ))
        .persistence(sessions)
        .session_id(SESSION_ID)
        .on_resumed(move |snapshot, state| {
            let resumes = resumes.clone();
            async move {
                let order = state.get::<String>("app:order").unwrap_or_default();
                let address = state.get::<String>("app:address").unwrap_or_default();
                resumes.note(format!(
                    "on_resumed | after {} turns: {order} to {address}",
                    snapshot.turn_count
                ));
            }
        })
}

/// Types each of `lines` and waits for the model's turn; the story, one line per event
/// worth telling.
pub async fn converse(
    handle: &LiveHandle,
    events: &mut EventStream,
    lines: &[&str],
) -> Result<Vec<String>, Box<dyn Error>> {
    let mut story = Vec::new();
    for line in lines {
        story.push(format!("user       | {line}"));
        handle.send_text(*line)?;
        let finished = wait_for_turn(events, |lane, event| {
            if lane != Lane::Control {
                return;
            }
            match event {
                LiveEvent::Session(SessionEvent::TextComplete(text)) => {
                    story.push(format!("assistant  | {text}"));
                }
                LiveEvent::ToolStarted { name, args, .. } => {
                    story.push(format!("  call     | {name}({args})"));
                }
                LiveEvent::ToolFinished { response, .. } => {
                    story.push(format!("  result   | {response}"));
                }
                LiveEvent::Resumed { turn_count, .. } => {
                    story.push(format!("resumed    | after {turn_count} turns"));
                }
                _ => {}
            }
        })
        .await?;
        if !finished {
            return Err("the session ended before the model finished its turn".into());
        }
    }
    Ok(story)
}

/// One session against `endpoint`: connects, types `lines`, hangs up. Its story and wire
/// log: kept in memory, or recorded to `wire_file` (and read back from it) when given.
pub async fn session(
    agent: LiveBuilder,
    endpoint: ApiEndpoint,
    lines: &[&str],
    wire_file: Option<&Path>,
) -> Result<(Vec<String>, Vec<WireEntry>), Box<dyn Error>> {
    let recorder = Arc::new(MemoryWireRecorder::new());
    let agent = match wire_file {
        Some(path) => agent.record_wire(path),
        None => agent.record_wire_to(recorder.clone() as Arc<dyn WireRecorder>),
    };
    let mut events = agent.subscribe();
    let handle = agent.connect(endpoint).await?;
    let story = converse(&handle, &mut events, lines).await;
    handle.disconnect().await;
    let story = story?;
    let entries = match wire_file {
        Some(path) => live::read_tape(path)?,
        None => recorder.entries(),
    };
    Ok((story, entries))
}

/// The resumption handle the session's setup frame presented, if any.
pub fn presented_handle(entries: &[WireEntry]) -> Option<String> {
    let setup = entries.iter().find(|entry| entry.dir == Direction::Out)?;
    let frame: Value = serde_json::from_slice(&setup.payload).ok()?;
    frame
        .pointer("/setup/sessionResumption/handle")
        .and_then(Value::as_str)
        .map(str::to_owned)
}

/// The snapshot's story: turns, phase, handle, the application's keys, the summary.
pub fn snapshot_lines(snapshot: &SessionSnapshot) -> Vec<String> {
    let mut lines = vec![format!(
        "turns {}, phase {:?}, resume handle {}",
        snapshot.turn_count,
        snapshot.phase,
        snapshot.resume_handle.as_deref().unwrap_or("none")
    )];
    // The state's keys are sorted (a BTreeMap).
    lines.extend(
        snapshot
            .state
            .iter()
            .filter(|(key, _)| key.starts_with("app:"))
            .map(|(key, value)| format!("{key} = {value}")),
    );
    lines.push("transcript summary:".to_owned());
    lines.extend(
        snapshot
            .transcript_summary
            .lines()
            .map(|line| format!("  {line}")),
    );
    lines
}

/// Whether two snapshots are the same but for the session's clock: when they were taken
/// (`saved_at`) and the runtime's timings in the state (`session:…_ms`), which a loopback
/// run measures on the wall clock and a replay on the recorded one.
pub fn same_but_time(a: &SessionSnapshot, b: &SessionSnapshot) -> bool {
    let timeless = |snapshot: &SessionSnapshot| {
        let mut snapshot = snapshot.clone();
        snapshot.saved_at = String::new();
        snapshot
            .state
            .retain(|key, _| !(key.starts_with("session:") && key.ends_with("_ms")));
        snapshot
    };
    timeless(a) == timeless(b)
}

/// `snapshot` through its stored form and through a memory store and an SQLite file in
/// `dir`: one line per round trip, saying whether the same snapshot came back.
pub async fn round_trips(
    snapshot: &SessionSnapshot,
    dir: &Path,
) -> Result<Vec<String>, Box<dyn Error>> {
    let same = |back: Option<&SessionSnapshot>| match back {
        Some(back) if back == snapshot => "the same snapshot",
        Some(_) => "a DIFFERENT snapshot",
        None => "nothing",
    };
    let stored = snapshot.to_stored(SESSION_ID)?;
    let back = SessionSnapshot::from_stored(&stored, SESSION_ID, "the stored form")?;
    let mut lines = vec![format!(
        "to_stored → from_stored (JSON)             | {}",
        same(Some(&back))
    )];
    let memory = MemoryPersistence::new();
    memory.save(SESSION_ID, snapshot).await?;
    lines.push(format!(
        "MemoryPersistence: save → load            | {}",
        same(memory.load(SESSION_ID).await?.as_ref())
    ));
    let sqlite = SqlitePersistence::open(dir.join("sessions.sqlite3"))?;
    sqlite.save(SESSION_ID, snapshot).await?;
    lines.push(format!(
        "SqlitePersistence: save → load            | {}",
        same(sqlite.load(SESSION_ID).await?.as_ref())
    ));
    Ok(lines)
}

/// The event log of a replayed session: its application keys' writes, in journal order.
pub fn event_log(journal: &[StateMutation]) -> Vec<String> {
    journal
        .iter()
        .filter(|m| m.key.starts_with("app:"))
        .map(|m| format!("#{} {} = {} ({})", m.sequence, m.key, m.new, m.origin))
        .collect()
}

/// The example, as it prints: the call (snapshots in files), the snapshot and its round
/// trips, the call back resumed from the file, and (offline) the replays.
pub async fn run(target: Target) -> Result<String, Box<dyn Error>> {
    let dir = std::env::temp_dir().join(format!("reel-{NAME}-{}", std::process::id()));
    // Best effort: a directory left by an earlier run of the same process id.
    let _ = std::fs::remove_dir_all(&dir);
    let outcome = run_in(&dir, target).await;
    // Best effort: the directory is the example's own scratch space.
    let _ = std::fs::remove_dir_all(&dir);
    outcome
}

async fn run_in(dir: &Path, target: Target) -> Result<String, Box<dyn Error>> {
    let files = Arc::new(FsPersistence::new(dir.join("sessions")));
    let sessions: Arc<dyn SessionPersistence> = files.clone();
    let resumes = Resumes::default();
    let (mut server, endpoint, record) = match &target {
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
            (Some(server), endpoint, None)
        }
        Target::Live { record } => (None, ApiEndpoint::from_env()?, record.clone()),
    };
    let call = session(
        assistant(sessions.clone(), &resumes),
        endpoint.clone(),
        &CALL,
        record.as_deref(),
    )
    .await;
    let saved = sessions.load(SESSION_ID).await;
    let callback_record = record.as_deref().map(live::callback_path);
    let callback = match (&call, &saved) {
        (Ok(_), Ok(Some(_))) => Some(
            session(
                assistant(sessions.clone(), &resumes),
                endpoint,
                &CALLBACK,
                callback_record.as_deref(),
            )
            .await,
        ),
        _ => None,
    };
    if let Some(server) = server.as_mut() {
        server.shutdown().await;
    }
    let (call, _) = call?;
    let snapshot = saved?.ok_or("the call saved no snapshot")?;

    let mut out = String::from("── the call, saved to files (FsPersistence) ──\n");
    push_lines(&mut out, &call);
    let file = files.path_of(SESSION_ID)?;
    let file_name = file.file_name().unwrap_or_default().to_string_lossy();
    out.push_str(&format!("── the snapshot in sessions/{file_name} ──\n"));
    push_lines(&mut out, &snapshot_lines(&snapshot));
    out.push_str("── the snapshot round-tripped ──\n");
    push_lines(&mut out, &round_trips(&snapshot, dir).await?);
    if let Some(callback) = callback {
        let (callback, callback_wire) = callback?;
        out.push_str("── the shopper comes back: the session resumes from the file ──\n");
        push_lines(&mut out, &resumes.lines());
        out.push_str(&format!(
            "  setup      | sessionResumption.handle = {}\n",
            presented_handle(&callback_wire)
                .as_deref()
                .unwrap_or("none")
        ));
        push_lines(&mut out, &callback);
    }
    if target == Target::Bundled {
        out.push_str("── each bundled tape replayed offline through the session tree ──\n");
        let mut logs = Vec::new();
        for (what, name) in [
            ("the call", NAME.to_owned()),
            ("the call back", callback_name()),
        ] {
            let replayed = assistant(sessions.clone(), &Resumes::default())
                .replay(live::bundled(&tape(&name)))
                .await?
                .finish()
                .await;
            out.push_str(&format!("  {what:<13} | {}\n", live::verdict(&replayed)));
            if name == NAME {
                let kept = match &replayed.snapshot {
                    Some(kept) if same_but_time(kept, &snapshot) => {
                        "the file's, but for the session's clock (saved_at, session:…_ms)"
                    }
                    Some(_) => "DIFFERENT from the file's",
                    None => "none",
                };
                out.push_str(&format!(
                    "  the snapshot the replay kept in its MemoryPersistence: {kept}\n"
                ));
            }
            logs.push((what, event_log(&replayed.journal)));
        }
        out.push_str("── the session's event log: its journal, written again by each replay ──\n");
        for (what, log) in logs {
            out.push_str(&format!("  {what}:\n"));
            for line in log {
                out.push_str(&format!("    {line}\n"));
            }
        }
    }
    Ok(out)
}

fn push_lines(out: &mut String, lines: &[String]) {
    for line in lines {
        out.push_str(&format!("  {line}\n"));
    }
}

/// The call back's recording's name: `35_session_persistence.callback`.
pub fn callback_name() -> String {
    format!("{NAME}.callback")
}

/// A tape's file name: `{name}.wire.jsonl`.
pub fn tape(name: &str) -> String {
    format!("{name}.wire.jsonl")
}

fn main() -> ExitCode {
    live::main(NAME, run)
}
