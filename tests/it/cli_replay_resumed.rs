//! `reel replay` of a session that resumed from a saved snapshot: the command reads the
//! recording's `X.resume.json` through the library's own code
//! (`reel_fluent::seed_resumed_from`) and resumes as the recording did, so it reports
//! CLEAN (exit 0) where `Live::builder()…replay()` of the same log does — the restored
//! state's journal entries included, across a goAway and a reconnect with a new handle.

use crate::cli_support;

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use cli_support::{T0, TempDir, arg, reel};
use reel_actors::clock::TokioClock;
use reel_actors::testing::ScriptedServer;
use reel_actors::{EventStream, Lane};
use reel_fluent::{Live, LiveBuilder};
use reel_persistence::{MemoryPersistence, SessionPersistence, SessionSnapshot};
use serde_json::{Value, json};

const ID: &str = "caller-7";

/// The snapshot the session resumes from: a caller named Ada, one turn done, a handle.
fn saved() -> SessionSnapshot {
    SessionSnapshot {
        state: [("app:name".to_owned(), json!("Ada"))]
            .into_iter()
            .collect(),
        phase: String::new(),
        turn_count: 1,
        transcript_summary: "[Turn 1]\nModel: Hello, Ada.".into(),
        resume_handle: Some("h-1".into()),
        saved_at: "2024-06-09T10:00:00.000Z".into(),
    }
}

fn assistant(backend: Arc<MemoryPersistence>) -> LiveBuilder {
    Live::builder()
        .model("gemini-live-2.5-flash-preview")
        .text_only()
        .session_resume(true)
        .persistence(backend)
        .session_id(ID)
}

fn text(t: &str) -> Value {
    json!({"serverContent": {"modelTurn": {"parts": [{"text": t}]}}})
}

fn turn_complete() -> Value {
    json!({"serverContent": {"turnComplete": true}})
}

/// Reads events until the control lane has handled one of `kind`.
async fn handled(events: &mut EventStream, kind: &str) {
    while let Some(event) = events.recv().await {
        if event.lane == Lane::Control && event.event.kind() == kind {
            return;
        }
    }
    panic!("the session ended before a {kind} event");
}

/// Records, into `wire` and `journal`, a session resuming from [`saved`]: a turn, a new
/// handle, a goAway and a reconnect presenting it, another turn, a clean disconnect.
async fn record_resumed(wire: &Path, journal: &Path) {
    let backend = Arc::new(MemoryPersistence::new());
    backend.save(ID, &saved()).await.unwrap();
    let mut server = ScriptedServer::bind().await;
    let builder = assistant(backend)
        .record_wire(wire)
        .journal(journal)
        .customize(|session| session.clock(Arc::new(TokioClock::anchored_at(T0))));
    let mut events = builder.subscribe();
    let endpoint = server.endpoint();
    let script = async {
        let mut conn = server.accept().await;
        let setup = conn.recv_json().await;
        tokio::time::advance(Duration::from_millis(40)).await;
        conn.send_json(&json!({"setupComplete": {}})).await;
        (conn, setup)
    };
    let (handle, (mut conn, setup)) = tokio::join!(builder.connect(endpoint), script);
    let handle = handle.unwrap();
    assert_eq!(
        setup["setup"]["sessionResumption"],
        json!({"handle": "h-1"})
    );
    tokio::time::advance(Duration::from_millis(250)).await;
    conn.send_json(&text("Welcome back, Ada.")).await;
    conn.send_json(&turn_complete()).await;
    conn.send_json(&json!({"sessionResumptionUpdate": {"newHandle": "h-2", "resumable": true}}))
        .await;
    handled(&mut events, "resume_update").await;
    tokio::time::advance(Duration::from_millis(300)).await;
    conn.send_json(&json!({"goAway": {"timeLeft": "5s"}})).await;
    let mut conn2 = server.accept().await;
    assert_eq!(
        conn2.recv_json().await["setup"]["sessionResumption"],
        json!({"handle": "h-2"})
    );
    tokio::time::advance(Duration::from_millis(60)).await;
    conn2.send_json(&json!({"setupComplete": {}})).await;
    handled(&mut events, "connected").await;
    tokio::time::advance(Duration::from_millis(200)).await;
    conn2.send_json(&text("Still there?")).await;
    conn2.send_json(&turn_complete()).await;
    handled(&mut events, "turn_complete").await;
    tokio::time::advance(Duration::from_millis(100)).await;
    let (end, _) = tokio::join!(handle.disconnect(), conn2.expect_closed());
    assert!(!end.failed, "{}", end.reason);
}

#[tokio::test(start_paused = true)]
async fn a_resumed_session_replays_clean_on_the_command_line_as_in_the_library() {
    let dir = TempDir::new("replay-resumed");
    let (wire, journal) = (
        dir.join("resumed.wire.jsonl"),
        dir.join("resumed.journal.jsonl"),
    );
    record_resumed(&wire, &journal).await;
    assert!(dir.join("resumed.resume.json").exists());

    // The library: CLEAN, the restore's entries included.
    let outcome = assistant(Arc::new(MemoryPersistence::new()))
        .replay(wire.as_path())
        .await
        .unwrap()
        .finish()
        .await;
    assert!(outcome.is_clean(), "{}", outcome.verdict());

    // The command: the same verdict, exit 0.
    let (code, stdout, stderr) = reel(&["replay", arg(&wire), "--journal", arg(&journal)]);
    assert_eq!((code, stderr.as_str()), (0, ""), "{stdout}");
    let shown = stdout
        .replace(arg(&wire), "resumed.wire.jsonl")
        .replace(arg(&journal), "resumed.journal.jsonl");
    assert_eq!(
        shown,
        "  reel replay — resumed.wire.jsonl

  Wire log:  10 frames (8 inbound, 2 outbound), 0.9s recorded, 1 reconnect
  Mode:      offline — the real session tree on the recorded frames; tool calls get
             their recorded responses; no model, no tool or application code runs
  Outbound:  2 runtime frames sent again, all byte-identical to the recording

  Turn-by-turn:
    turn  1  [connected×1, resumed×1, text×1, text_complete×1, turn_complete×1]
             “Welcome back, Ada.”
    turn  2  [resume_update×1, go_away×1, disconnected×1, connected×1, text×1, text_complete×1, turn_complete×1]
             “Still there?”
    after    [disconnected×1]

  Final state (12 keys):
    app:name = \"Ada\"
    session:disconnected = true
    session:elapsed_ms = 910
    session:go_away_received = true
    session:go_away_time_left_ms = 5000
    session:is_model_speaking = false
    session:phase = \"Disconnected\"
    session:remaining_budget_ms = 899090
    session:resumable = true
    session:session_type = \"audio\"
    session:silence_ms = 100
    session:turn_count = 3

  Journal diff — resumed.journal.jsonl (44 mutations, 12 keys):
    CLEAN — every key's final value matches

  Journal:   identical to the recording, entry by entry (44 mutations)

  CLEAN — the replay reproduced the session exactly.
"
    );
}
