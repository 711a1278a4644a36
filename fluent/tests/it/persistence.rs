//! Session persistence through the chain: a session saved with `FsPersistence` resumes in a
//! second session with the same id — state and phase restored, `on_resumed` before
//! `on_connected`, the saved resumption handle in the exact setup frame — and a replay of
//! the first session neither reads nor writes the saved snapshot, saving its own (equal)
//! one in memory. A resumed session recorded to a wire log keeps the snapshot it resumed
//! from beside it (`X.resume.json`), and its replay resumes from that one: same setup
//! frame, no divergence, equal journal and state. A backend without an id, an id without a backend, and an id no backend
//! can store are refused before anything starts.

use crate::support;

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use reel_actors::clock::TokioClock;
use reel_actors::testing::ScriptedServer;
use reel_actors::{Lane, LiveEvent};
use reel_fluent::{BuildError, Live, LiveBuilder};
use reel_persistence::{FsPersistence, MemoryPersistence, SessionIdProblem};
use reel_recorder::journal::read_journal;
use reel_tools::TypedTool;
use serde_json::{Value, json};
use support::{accepted, lane, recording, text, turn_complete, until_turn_complete};
use tokio::sync::mpsc::{UnboundedReceiver, UnboundedSender, unbounded_channel};

const ID: &str = "caller-42";

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct NameArgs {
    /// The caller's first name.
    name: String,
}

/// A fresh folder for the snapshots.
struct Folder(PathBuf);

impl Folder {
    fn new(name: &str) -> Folder {
        let dir = std::env::temp_dir().join(format!(
            "reel-fluent-persistence-{}-{name}",
            std::process::id()
        ));
        let _ = std::fs::remove_dir_all(&dir);
        Folder(dir)
    }

    fn snapshot(&self) -> Value {
        let text = std::fs::read_to_string(self.0.join(format!("{ID}.json"))).unwrap();
        serde_json::from_str(&text).unwrap()
    }
}

impl Drop for Folder {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// The application: greets, saves the caller's name with a tool, then books; persisted
/// under [`ID`] in `folder`. Its callbacks report to `log`.
fn booking(folder: &Folder, log: UnboundedSender<String>) -> LiveBuilder {
    let connected = log.clone();
    Live::builder()
        .model("gemini-live-2.5-flash-preview")
        .text_only()
        .session_resume(true)
        .tool(TypedTool::new(
            "save_name",
            "Saves the caller's name.",
            |args: NameArgs, ctx| async move {
                ctx.state
                    .set("app:name", &args.name)
                    .map_err(|e| ctx.fail(e))?;
                Ok(json!({"saved": true}))
            },
        ))
        .phase("greeting", |p| {
            p.instruction("Greet the caller and ask their name.")
                .tools(["save_name"])
                .transition("booking", |s| s.contains("app:name"))
        })
        .phase("booking", |p| p.instruction("Book a table for the caller."))
        .persistence(Arc::new(FsPersistence::new(&folder.0)))
        .session_id(ID)
        .on_resumed(move |snapshot, state| {
            let log = log.clone();
            async move {
                let name = state.get::<String>("app:name").unwrap_or_default();
                let _ = log.send(format!(
                    "resumed in {} after {} turns, name {name}",
                    snapshot.phase, snapshot.turn_count
                ));
            }
        })
        .on_connected(move |_writer| {
            let log = connected.clone();
            async move {
                let _ = log.send("connected".into());
            }
        })
}

fn setup(instruction: &str, resumption: Value) -> Value {
    json!({"setup": {
        "model": "models/gemini-live-2.5-flash-preview",
        "generationConfig": {"responseModalities": ["TEXT"]},
        "systemInstruction": {"parts": [{"text": instruction}]},
        "tools": [{"functionDeclarations": [{
            "name": "save_name",
            "description": "Saves the caller's name.",
            "parameters": {"type": "object",
                           "properties": {"name": {"type": "string", "description": "The caller's first name."}},
                           "required": ["name"]}
        }]}],
        "sessionResumption": resumption
    }})
}

async fn next(log: &mut UnboundedReceiver<String>) -> String {
    log.recv().await.unwrap()
}

#[tokio::test(start_paused = true)]
async fn a_session_saved_to_files_resumes_with_its_state_phase_and_handle() {
    let folder = Folder::new("resume");

    // The first session: the caller gives their name, the booking phase begins.
    let (log, mut first_log) = unbounded_channel();
    let mut server = ScriptedServer::bind().await;
    let (builder, memory) = recording(booking(&folder, log));
    let mut events = builder.subscribe();
    let (handle, mut conn, first_setup) =
        accepted(builder, &mut server, Duration::from_millis(40)).await;
    assert_eq!(
        first_setup.json().unwrap(),
        setup("Greet the caller and ask their name.", json!({}))
    );
    assert_eq!(next(&mut first_log).await, "connected", "nothing to resume");
    conn.send_json(&json!({"sessionResumptionUpdate": {"newHandle": "h-1", "resumable": true}}))
        .await;
    tokio::time::advance(Duration::from_millis(500)).await;
    conn.send_json(&json!({"toolCall": {"functionCalls": [
        {"id": "c1", "name": "save_name", "args": {"name": "Ada"}}
    ]}}))
    .await;
    assert_eq!(
        conn.recv_json().await,
        json!({"toolResponse": {"functionResponses": [{"id": "c1", "name": "save_name", "response": {"saved": true}}]}})
    );
    conn.send_json(&text("Thanks, Ada.")).await;
    conn.send_json(&turn_complete()).await;
    until_turn_complete(&mut events).await;
    assert_eq!(
        conn.recv_json().await,
        json!({"contextUpdate": {"systemInstruction": {"parts": [{"text": "Book a table for the caller."}]}}})
    );
    let (end, _) = tokio::join!(handle.disconnect(), conn.expect_closed());
    assert!(!end.failed);

    // The final snapshot, in the folder.
    let saved = folder.snapshot();
    assert_eq!(saved["phase"], "booking");
    assert_eq!(saved["turn_count"], 1);
    assert_eq!(saved["resume_handle"], "h-1");
    assert_eq!(saved["state"]["app:name"], "Ada");
    assert_eq!(saved["state"]["session:active_phase"], "booking");
    assert_eq!(
        saved["transcript_summary"],
        "[Turn 1]\nTool save_name {\"name\":\"Ada\"} -> {\"saved\":true}\nModel: Thanks, Ada."
    );

    // A replay of the first session runs on its own in-memory backend: it does not resume
    // from the saved snapshot (its setup would differ), leaves the file alone, and saves
    // the same snapshot the session saved.
    let (log, _replay_log) = unbounded_channel();
    let outcome = booking(&folder, log)
        .replay(memory.wire.entries())
        .await
        .unwrap()
        .finish()
        .await;
    assert_eq!(outcome.divergences, vec![]);
    assert_eq!(outcome.journal, memory.journal.entries());
    assert_eq!(
        outcome.snapshot.map(|s| serde_json::to_value(s).unwrap()),
        Some(saved.clone())
    );
    assert_eq!(folder.snapshot(), saved, "the file is left alone");

    // The second session, same id: resumed.
    let (log, mut second_log) = unbounded_channel();
    let builder = booking(&folder, log);
    let mut events = builder.subscribe();
    let (handle, mut conn, second_setup) = accepted(builder, &mut server, Duration::ZERO).await;
    // The saved phase's instruction, and the saved handle presented: the exact frame.
    assert_eq!(
        second_setup.text(),
        Some(concat!(
            r#"{"setup":{"model":"models/gemini-live-2.5-flash-preview","#,
            r#""generationConfig":{"responseModalities":["TEXT"]},"#,
            r#""systemInstruction":{"parts":[{"text":"Book a table for the caller."}]},"#,
            r#""tools":[{"functionDeclarations":[{"name":"save_name","description":"Saves the caller's name.","#,
            r#""parameters":{"type":"object","properties":{"name":{"type":"string","description":"The caller's first name."}},"required":["name"]}}]}],"#,
            r#""sessionResumption":{"handle":"h-1"}}}"#
        ))
    );
    assert_eq!(
        [next(&mut second_log).await, next(&mut second_log).await],
        ["resumed in booking after 1 turns, name Ada", "connected"],
        "on_resumed runs first, with the state restored"
    );
    assert_eq!(
        handle.state().get::<String>("app:name").as_deref(),
        Some("Ada")
    );
    assert_eq!(
        handle
            .state()
            .get::<String>("session:active_phase")
            .as_deref(),
        Some("booking")
    );
    assert_eq!(handle.resume_handle().as_deref(), Some("h-1"));
    let (end, _) = tokio::join!(handle.disconnect(), conn.expect_closed());
    assert!(!end.failed);
    resumed_once_in_booking(lane(&support::drain(&mut events).await, Lane::Control));
}

/// The control lane's events hold one `Resumed`: in the booking phase, after 1 turn.
fn resumed_once_in_booking(control: Vec<LiveEvent>) {
    let resumed: Vec<LiveEvent> = control
        .into_iter()
        .filter(|e| matches!(e, LiveEvent::Resumed { .. }))
        .collect();
    assert_eq!(
        resumed,
        [LiveEvent::Resumed {
            phase: "booking".into(),
            turn_count: 1
        }]
    );
}

#[test]
fn persistence_and_a_session_id_come_together() {
    let without_id = Live::builder().persistence(Arc::new(MemoryPersistence::new()));
    assert!(matches!(
        without_id.validate(),
        Err(BuildError::PersistenceWithoutSessionId)
    ));

    let without_backend = Live::builder().session_id(ID).validate().unwrap_err();
    assert!(
        matches!(&without_backend, BuildError::SessionIdWithoutPersistence { id } if id == ID),
        "{without_backend:?}"
    );
    assert_eq!(
        without_backend.to_string(),
        "`.session_id(\"caller-42\")` names the snapshot a session saves and resumes from, but \
         the chain has no `.persistence(..)` and no wire log file to keep one beside: add one \
         (e.g. `SqlitePersistence::open(path)`), record with `.record_wire(path)`, or drop the \
         id"
    );

    let bad_id = Live::builder()
        .persistence(Arc::new(MemoryPersistence::new()))
        .session_id("caller 42")
        .validate()
        .unwrap_err();
    assert!(
        matches!(
            &bad_id,
            BuildError::InvalidSessionId {
                id,
                problem: SessionIdProblem::ForbiddenChar { ch: ' ', at: 6 }
            } if id == "caller 42"
        ),
        "{bad_id:?}"
    );
    assert_eq!(
        bad_id.to_string(),
        "invalid session id \"caller 42\": it holds ' ' at byte 6; use only ASCII letters, \
         digits, '-', '_' and '.'; give `.session_id(..)` an id a backend can store"
    );
}

/// The first session of [`booking`], recorded to `wire`: the caller gives their name (the
/// booking phase begins), the server hands out `h-1`; ends with the snapshot saved in
/// `folder`.
async fn first_booking_session(folder: &Folder, server: &mut ScriptedServer, wire: &Path) {
    let (log, _log) = unbounded_channel();
    let builder = booking(folder, log).record_wire(wire);
    let mut events = builder.subscribe();
    let (handle, mut conn, _) = accepted(builder, server, Duration::ZERO).await;
    conn.send_json(&json!({"sessionResumptionUpdate": {"newHandle": "h-1", "resumable": true}}))
        .await;
    conn.send_json(&json!({"toolCall": {"functionCalls": [
        {"id": "c1", "name": "save_name", "args": {"name": "Ada"}}
    ]}}))
    .await;
    conn.recv_json().await; // the tool response
    conn.send_json(&text("Thanks, Ada.")).await;
    conn.send_json(&turn_complete()).await;
    until_turn_complete(&mut events).await;
    conn.recv_json().await; // the booking phase's instruction
    let (end, _) = tokio::join!(handle.disconnect(), conn.expect_closed());
    assert!(!end.failed);
}

#[tokio::test(start_paused = true)]
async fn a_resumed_session_replays_from_the_snapshot_kept_beside_its_wire_log() {
    let folder = Folder::new("resume-replay");
    std::fs::create_dir_all(&folder.0).unwrap();
    let wire = folder.0.join("second.wire.jsonl");
    let journal = folder.0.join("second.journal.jsonl");
    let resume = folder.0.join("second.resume.json");
    // Resume files left by earlier recordings at the same paths are not these ones': the
    // first session (which starts afresh) removes its own, the second replaces its own.
    let first_resume = folder.0.join("first.resume.json");
    std::fs::write(&first_resume, "stale").unwrap();
    std::fs::write(&resume, "stale").unwrap();
    let mut server = ScriptedServer::bind().await;
    first_booking_session(&folder, &mut server, &folder.0.join("first.wire.jsonl")).await;
    assert!(!first_resume.exists());
    let resumed_from = folder.snapshot();
    assert_eq!(resumed_from["phase"], "booking");

    // The second session resumes, recorded to files.
    let (log, mut second_log) = unbounded_channel();
    let builder = booking(&folder, log)
        .record_wire(&wire)
        .journal(&journal)
        .customize(|session| session.clock(Arc::new(TokioClock::anchored_at(support::T0))));
    let mut events = builder.subscribe();
    let (handle, mut conn, setup_sent) =
        accepted(builder, &mut server, Duration::from_millis(30)).await;
    assert_eq!(
        setup_sent.json().unwrap()["setup"]["sessionResumption"],
        json!({"handle": "h-1"})
    );
    assert_eq!(
        next(&mut second_log).await,
        "resumed in booking after 1 turns, name Ada"
    );
    // Written before the session started: exactly the snapshot it resumed from, and the
    // session time its state was restored at (the clock's start).
    let mut kept: Value = serde_json::from_str(&std::fs::read_to_string(&resume).unwrap()).unwrap();
    assert_eq!(
        kept.as_object_mut().unwrap().remove("restored_at_ms"),
        Some(json!(support::T0))
    );
    assert_eq!(kept, resumed_from);
    conn.send_json(&json!({"sessionResumptionUpdate": {"newHandle": "h-2", "resumable": true}}))
        .await;
    tokio::time::advance(Duration::from_millis(250)).await;
    conn.send_json(&text("A table for two at eight, Ada."))
        .await;
    conn.send_json(&turn_complete()).await;
    until_turn_complete(&mut events).await;
    let (end, _) = tokio::join!(handle.disconnect(), conn.expect_closed());
    assert!(!end.failed);
    let live_state = handle.state().snapshot();
    let saved = folder.snapshot();
    assert_eq!(saved["turn_count"], 2);
    assert_eq!(saved["resume_handle"], "h-2");

    // The replay resumes from the kept snapshot: the same setup frame, no divergence, the
    // same journal entry by entry, the same state, phase and final snapshot.
    let (log, mut replay_log) = unbounded_channel();
    let outcome = booking(&folder, log)
        .replay(&wire)
        .await
        .unwrap()
        .finish()
        .await;
    assert_eq!(outcome.divergences, vec![]);
    assert_eq!(outcome.outbound_frames[0].bytes, setup_sent.bytes);
    assert_eq!(
        next(&mut replay_log).await,
        "resumed in booking after 1 turns, name Ada"
    );
    let recorded_journal = read_journal(&journal).unwrap();
    assert!(!recorded_journal.is_empty());
    assert_eq!(outcome.journal, recorded_journal);
    assert_eq!(outcome.state.to_json(), live_state.to_json());
    assert_eq!(
        outcome
            .state
            .get::<String>("session:active_phase")
            .as_deref(),
        Some("booking")
    );
    resumed_once_in_booking(outcome.lane(Lane::Control));
    assert_eq!(
        outcome.snapshot.map(|s| serde_json::to_value(s).unwrap()),
        Some(saved.clone())
    );
    assert_eq!(
        folder.snapshot(),
        saved,
        "the replay leaves the real snapshot alone"
    );

    // Without the resume file the replay starts afresh, and parts from the recording at
    // the setup frame.
    std::fs::remove_file(&resume).unwrap();
    let (log, _log) = unbounded_channel();
    let fresh = booking(&folder, log)
        .replay(&wire)
        .await
        .unwrap()
        .finish()
        .await;
    assert_eq!(
        fresh.divergences[0].to_string(),
        "frame 1: the replayed frame differs\n  \
         setup.systemInstruction.parts[0].text: expected \"Book a table for the caller.\", \
         actual \"Greet the caller and ask their name.\"\n  \
         setup.sessionResumption.handle: expected \"h-1\", actual (absent)"
    );
}
