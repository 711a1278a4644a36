//! A resumed session replays CLEAN whatever its connect took: the journal entries written
//! when the saved snapshot is restored are stamped with recorded time, so the replay writes
//! the same journal, entry by entry, even when the recorded connect was slow.

use crate::support;

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use futures_util::future::BoxFuture;
use reel_actors::clock::TokioClock;
use reel_actors::testing::ScriptedServer;
use reel_actors::transport::{Connector, LinkError, LinkHalves, LinkOptions, WebSocketConnector};
use reel_fluent::{Live, LiveBuilder, ReplayOutcome};
use reel_persistence::{MemoryPersistence, SessionPersistence, SessionSnapshot};
use reel_protocol::ConnectRequest;
use reel_recorder::journal::read_journal;
use serde_json::json;
use support::{T0, TempFolder, text, turn_complete, until_turn_complete};

const ID: &str = "caller-7";

/// Opens WebSocket links, each after `delay` of session time: a slow network.
struct SlowConnector {
    delay: Duration,
    inner: WebSocketConnector,
}

impl Connector for SlowConnector {
    fn connect(
        &self,
        request: &ConnectRequest,
        options: &LinkOptions,
    ) -> BoxFuture<'static, Result<LinkHalves, LinkError>> {
        let delay = self.delay;
        let connect = self.inner.connect(request, options);
        Box::pin(async move {
            tokio::time::sleep(delay).await;
            connect.await
        })
    }
}

/// The snapshot the session resumes from: a caller named Ada, one turn done, a handle.
fn saved() -> SessionSnapshot {
    SessionSnapshot {
        state: [
            ("app:name".to_owned(), json!("Ada")),
            ("app:visits".to_owned(), json!(3)),
        ]
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

/// The assistant replaying `wire`, on a backend of its own, to the end.
async fn replay_of(wire: &Path) -> ReplayOutcome {
    assistant(Arc::new(MemoryPersistence::new()))
        .replay(wire)
        .await
        .unwrap()
        .finish()
        .await
}

#[tokio::test(start_paused = true)]
async fn a_resumed_session_with_a_slow_connect_replays_clean_entry_by_entry() {
    let folder = TempFolder::new("resume-replay");
    let wire = folder.join("resumed.wire.jsonl");
    let journal = folder.join("resumed.journal.jsonl");
    let resume = folder.join("resumed.resume.json");
    let backend = Arc::new(MemoryPersistence::new());
    backend.save(ID, &saved()).await.unwrap();

    let mut server = ScriptedServer::bind().await;
    let builder = assistant(Arc::clone(&backend))
        .record_wire(&wire)
        .journal(&journal)
        .customize(|session| {
            session
                .clock(Arc::new(TokioClock::anchored_at(T0)))
                .connector(Arc::new(SlowConnector {
                    delay: Duration::from_millis(700),
                    inner: WebSocketConnector::new(),
                }))
        });
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
    until_turn_complete(&mut events).await;
    let (end, _) = tokio::join!(handle.disconnect(), conn.expect_closed());
    assert!(!end.failed);

    let recorded = read_journal(&journal).unwrap();
    let kept: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&resume).unwrap()).unwrap();
    // Restored when the session started, 700 ms before its setup frame went out.
    assert_eq!(kept["restored_at_ms"], json!(T0));
    let restore: Vec<(u64, &str, u64)> = recorded
        .iter()
        .take(2)
        .map(|m| (m.sequence, m.key.as_str(), m.timestamp_ms))
        .collect();
    assert_eq!(restore, [(1, "app:name", T0), (2, "app:visits", T0)]);
    assert_eq!(
        (recorded[2].key.as_str(), recorded[2].timestamp_ms),
        ("session:is_model_speaking", T0 + 700)
    );

    let outcome = replay_of(&wire).await;
    assert_eq!(outcome.divergences, vec![]);
    assert_eq!(outcome.journal.len(), 21);
    assert_eq!(outcome.journal, recorded);
    // CLEAN as reel replay means it: the journal beside the wire log compared entry by entry.
    assert_eq!(outcome.verdict().journal_entries(), Some(21));
    assert!(outcome.is_clean(), "{}", outcome.verdict());

    // A resume file without the restore's time (an older recording) replays with the
    // restore stamped at the tape's start: the setup frame's time, 700 ms late.
    let mut older = kept.clone();
    older.as_object_mut().unwrap().remove("restored_at_ms");
    std::fs::write(&resume, serde_json::to_vec(&older).unwrap()).unwrap();
    let outcome = replay_of(&wire).await;
    assert_eq!(outcome.journal[0].timestamp_ms, T0 + 700);
    assert_eq!(outcome.journal[2..], recorded[2..]);
    assert_eq!(
        outcome.verdict().to_string(),
        "DRIFT — the replay parted from the recording: the journal from entry 1 on."
    );
}
