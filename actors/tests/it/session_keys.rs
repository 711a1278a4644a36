//! The `session:` keys at a turn's end: the usage the `turnComplete` frame carries is in the
//! state when the turn's callbacks run (`on_turn_boundary`, `on_turn_complete`), and
//! `session:session_type` says `audio` from the connect and `audio_video` once the
//! application has sent video — in exact journal entries.

use crate::support;

use std::sync::{Arc, Mutex};

use reel_actors::callbacks::{AsyncCallback, CallbackMode, ControlCallbacks, Interceptors};
use reel_actors::state::State;
use reel_protocol::SessionConfig;
use reel_recorder::journal::{JournalSink, MemoryJournalSink};
use serde_json::{Value, json};
use support::{settle, start};

type Log = Arc<Mutex<Vec<String>>>;

/// What a callback named `who` sees of the turn's keys.
fn note(log: &Log, who: &str, state: &State) {
    let tokens = state.get::<u64>("session:total_token_count");
    let kind = state.get::<String>("session:session_type");
    log.lock()
        .unwrap()
        .push(format!("{who}: tokens {tokens:?}, type {kind:?}"));
}

fn turn_complete_with_usage(total: u64) -> Value {
    json!({
        "serverContent": {"turnComplete": true},
        "usageMetadata": {"promptTokenCount": total - 2, "responseTokenCount": 2, "totalTokenCount": total}
    })
}

#[tokio::test(start_paused = true)]
async fn the_turns_usage_and_the_session_type_are_in_state_when_its_callbacks_run() {
    let mut server = reel_actors::testing::ScriptedServer::bind().await;
    let log = Log::default();
    let journal = Arc::new(MemoryJournalSink::new());
    // `on_turn_complete` gets no state: it reads the session's, once it is known.
    let session_state: Arc<Mutex<Option<State>>> = Arc::default();
    let boundary_log = Arc::clone(&log);
    let interceptors = Interceptors {
        on_turn_boundary: Some(Arc::new(move |state, _writer| {
            note(&boundary_log, "boundary", &state);
            Box::pin(async {})
        })),
        ..Interceptors::default()
    };
    let complete_log = Arc::clone(&log);
    let complete_state = Arc::clone(&session_state);
    let callbacks = ControlCallbacks {
        on_turn_complete: Some(AsyncCallback::new(CallbackMode::Blocking, move |()| {
            let state = complete_state.lock().unwrap().clone();
            if let Some(state) = state {
                note(&complete_log, "complete", &state);
            }
            async {}
        })),
        ..ControlCallbacks::default()
    };
    let sink = Arc::clone(&journal) as Arc<dyn JournalSink>;
    let (handle, mut conn, _, mut events) = start(
        &mut server,
        |b| {
            b.interceptors(interceptors)
                .control_callbacks(callbacks)
                .journal_sink(sink)
        },
        SessionConfig::default(),
    )
    .await;
    *session_state.lock().unwrap() = Some(handle.state().clone());
    settle(&mut events).await;

    // Turn 1: the usage rides on the turnComplete frame, at the same instant.
    conn.send_json(&turn_complete_with_usage(42)).await;
    settle(&mut events).await;
    // The application sends a video frame; turn 2 ends at the same instant.
    handle.send_video(vec![0xff, 0xd8, 0xff, 0xd9]).unwrap();
    assert!(
        conn.recv()
            .await
            .unwrap()
            .text()
            .unwrap()
            .starts_with(r#"{"realtimeInput":{"video""#)
    );
    conn.send_json(&turn_complete_with_usage(50)).await;
    settle(&mut events).await;

    assert_eq!(
        *log.lock().unwrap(),
        [
            r#"boundary: tokens Some(42), type Some("audio")"#,
            r#"complete: tokens Some(42), type Some("audio")"#,
            r#"boundary: tokens Some(50), type Some("audio_video")"#,
            r#"complete: tokens Some(50), type Some("audio_video")"#,
        ]
    );
    let written: Vec<(String, Value)> = journal
        .entries()
        .into_iter()
        .filter(|m| {
            [
                "session:session_type",
                "session:total_token_count",
                "session:prompt_token_count",
                "session:turn_count",
            ]
            .contains(&m.key.as_str())
        })
        .map(|m| (m.key, m.new))
        .collect();
    let entry = |key: &str, value: Value| (key.to_owned(), value);
    assert_eq!(
        written,
        [
            entry("session:session_type", json!("audio")),
            entry("session:prompt_token_count", json!(40)),
            entry("session:total_token_count", json!(42)),
            entry("session:turn_count", json!(1)),
            entry("session:prompt_token_count", json!(48)),
            entry("session:session_type", json!("audio_video")),
            entry("session:total_token_count", json!(50)),
            entry("session:turn_count", json!(2)),
        ]
    );
}
