//! Client content the runtime sends itself — a prompt from `on_connected` through the
//! session's writer — is marked `"source":"runtime"` in the wire log and expected again on
//! replay, while the application's own text (through its handle) is marked `"app"` and not
//! re-sent. Logs written before the mark still read by the frame's kind.

use std::sync::Arc;
use std::time::Duration;

use reel_actors::callbacks::{AsyncCallback, CallbackMode, ControlCallbacks};
use reel_actors::clock::TokioClock;
use reel_actors::testing::ScriptedServer;
use reel_actors::writer::Origin;
use reel_actors::{LiveEvent, LiveSessionBuilder};
use reel_protocol::{ApiEndpoint, SessionConfig, SessionEvent};
use reel_recorder::wire_log::{Direction, MemoryWireRecorder, Source, WireEntry, WireRecorder};
use reel_replayer::{Pacing, ReplayOptions, Tape, TapeItem, replay_session};
use serde_json::json;

const T0: u64 = 1_718_000_000_000;

fn callbacks() -> ControlCallbacks {
    ControlCallbacks {
        on_connected: Some(AsyncCallback::new(
            CallbackMode::Blocking,
            |writer: reel_actors::writer::SessionWriter| async move {
                let _ = writer.send_text("Greet the caller by name: Ada.");
            },
        )),
        ..ControlCallbacks::default()
    }
}

fn text(t: &str) -> serde_json::Value {
    json!({"serverContent": {"modelTurn": {"parts": [{"text": t}]}}})
}

async fn record() -> Vec<WireEntry> {
    let mut server = ScriptedServer::bind().await;
    let recorder = Arc::new(MemoryWireRecorder::new());
    let builder = LiveSessionBuilder::new(SessionConfig::default(), server.endpoint())
        .clock(Arc::new(TokioClock::anchored_at(T0)))
        .control_callbacks(callbacks())
        .record_wire(recorder.clone() as Arc<dyn WireRecorder>);
    let script = async {
        let mut conn = server.accept().await;
        conn.recv_json().await;
        conn.send_json(&json!({"setupComplete": {}})).await;
        conn
    };
    let (handle, mut conn) = tokio::join!(builder.connect(), script);
    let handle = handle.unwrap();
    let mut events = handle.events();
    // The runtime's prompt, then the greeting it provoked.
    assert_eq!(
        conn.recv_json().await,
        json!({"clientContent": {"turns": [{"role": "user", "parts": [{"text": "Greet the caller by name: Ada."}]}], "turnComplete": true}})
    );
    conn.send_json(&text("Hello Ada!")).await;
    conn.send_json(&json!({"serverContent": {"turnComplete": true}}))
        .await;
    // The application asks once the greeting's turn has reached it (its text is stamped
    // as it is sent, decision 0091: asked earlier, it would go out before the greeting's
    // frames are read).
    while let Some(event) = events.recv().await {
        if matches!(
            event.event,
            LiveEvent::Session(SessionEvent::TurnComplete { .. })
        ) {
            break;
        }
    }
    tokio::time::advance(Duration::from_millis(100)).await;
    handle.send_text("What time is it?").unwrap();
    conn.recv_json().await;
    conn.send_json(&text("Noon.")).await;
    conn.send_json(&json!({"serverContent": {"turnComplete": true}}))
        .await;
    tokio::time::advance(Duration::from_millis(100)).await;
    let (_, _) = tokio::join!(handle.disconnect(), conn.expect_closed());
    recorder.entries()
}

fn outbound_sources(entries: &[WireEntry]) -> Vec<(u64, Option<Source>)> {
    entries
        .iter()
        .filter(|e| e.dir == Direction::Out && !e.is_close_marker())
        .map(|e| (e.seq, e.source))
        .collect()
}

#[tokio::test(start_paused = true)]
async fn the_runtimes_own_prompt_is_marked_and_replayed() {
    let entries = record().await;
    // Setup (unmarked), the runtime's prompt, the application's question.
    assert_eq!(
        outbound_sources(&entries),
        [
            (1, None),
            (3, Some(Source::Runtime)),
            (6, Some(Source::App))
        ]
    );

    let builder = LiveSessionBuilder::new(SessionConfig::default(), ApiEndpoint::offline())
        .control_callbacks(callbacks());
    let options = ReplayOptions {
        pacing: Pacing::Causal,
        ..ReplayOptions::default()
    };
    let replay = replay_session(builder, Tape::from_entries(entries), options)
        .await
        .unwrap();
    replay.release();
    replay.drained().await;
    replay.disconnect().await;
    assert_eq!(replay.divergences(), vec![], "no divergence");
    let runtime: Vec<(Option<u64>, bool)> = replay
        .outbound_frames()
        .into_iter()
        .filter(|f| f.origin == Origin::Runtime)
        .map(|f| (f.recorded_seq, f.identical))
        .collect();
    assert_eq!(runtime, [(Some(1), true), (Some(3), true)]);
}

#[test]
fn unmarked_client_content_still_reads_as_the_applications() {
    let payload = br#"{"clientContent":{"turns":[],"turnComplete":true}}"#;
    let unmarked = WireEntry::frame(3, Direction::Out, T0, &payload[..], None, false);
    assert!(matches!(
        TapeItem::of(unmarked.clone()),
        TapeItem::AppOutbound(_)
    ));
    let marked = WireEntry {
        source: Some(Source::Runtime),
        ..unmarked
    };
    assert!(matches!(TapeItem::of(marked), TapeItem::RuntimeOutbound(_)));
}
