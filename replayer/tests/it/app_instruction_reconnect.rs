//! The application's instruction survives a reconnect (decision 0051): an instruction set
//! with `LiveHandle::update_instruction` while audio and a tool call are under way is the
//! one the next connection gets after its setup — after a `goAway` and after a dropped
//! link — and the recording of it replays CLEAN, the re-sent instruction byte for byte.

use crate::replay_support;

use std::sync::Arc;
use std::time::Duration;

use reel_actors::clock::TokioClock;
use reel_actors::testing::{ScriptedServer, ServerConn};
use reel_actors::writer::Origin;
use reel_actors::{LiveHandle, LiveSessionBuilder};
use reel_protocol::{ApiEndpoint, SessionConfig};
use reel_recorder::journal::{JournalSink, MemoryJournalSink};
use reel_recorder::wire_log::{MemoryWireRecorder, WireEntry, WireRecorder};
use reel_tools::{ToolDispatcher, TypedTool};
use replay_support::{Outcome, connect, drain, replay_outcome};
use serde::Deserialize;
use serde_json::json;

const T0: u64 = 1_718_000_000_000;

const FRENCH: &str =
    r#"{"contextUpdate":{"systemInstruction":{"parts":[{"text":"Speak French."}]}}}"#;

#[derive(Deserialize, schemars::JsonSchema)]
struct LookupArgs {
    /// The account number.
    account: String,
}

fn dispatcher() -> ToolDispatcher {
    let mut dispatcher = ToolDispatcher::new();
    dispatcher
        .register(TypedTool::new::<LookupArgs, _, _, _>(
            "lookup",
            "Look an account up.",
            |args: LookupArgs, _ctx| async move { Ok(json!({"account": args.account, "owed": 120})) },
        ))
        .unwrap();
    dispatcher
}

fn config() -> SessionConfig {
    SessionConfig::default()
        .system_instruction("Greet the caller.")
        .session_resume(true)
}

fn setup(handle: Option<&str>) -> String {
    let resumption = match handle {
        Some(handle) => format!(r#"{{"handle":"{handle}"}}"#),
        None => "{}".to_owned(),
    };
    concat!(
        r#"{"setup":{"model":"models/gemini-live-2.5-flash-native-audio","#,
        r#""generationConfig":{"responseModalities":["AUDIO"]},"#,
        r#""systemInstruction":{"parts":[{"text":"Greet the caller."}]},"#,
        r#""tools":[{"functionDeclarations":[{"name":"lookup","description":"Look an account up.","#,
        r#""parameters":{"type":"object","properties":{"account":{"type":"string","description":"The account number."}},"required":["account"]}}]}],"#,
        r#""sessionResumption":RESUMPTION}}"#
    )
    .replace("RESUMPTION", &resumption)
}

fn model_audio() -> serde_json::Value {
    json!({"serverContent": {"modelTurn": {"parts": [{"inlineData": {"mimeType": "audio/pcm;rate=24000", "data": "AAAAAA=="}}]}}})
}

/// How the first connection ends.
#[derive(Debug, Clone, Copy)]
enum LinkEnd {
    /// The server sends `goAway`; the client reconnects once the turn in flight ends.
    GoAway,
    /// The server's side drops without a close frame.
    Dropped,
}

/// The next frame `conn` receives, as text (the test's patience is virtual time: without
/// the frame, the wait ends in a failure instead of hanging).
async fn next_text(conn: &mut ServerConn) -> String {
    let frame = tokio::time::timeout(Duration::from_secs(5), conn.recv())
        .await
        .expect("a frame within 5 s")
        .expect("the connection is open");
    frame.text().expect("a text frame").to_owned()
}

/// Records a session on loopback: the user's audio, a tool call answered while the app
/// replaces the instruction, the model's audio, then the first connection ends (`end`);
/// the second connection's frames after its setup are returned with the recording.
async fn record(end: LinkEnd) -> (Outcome, Vec<WireEntry>, Vec<String>) {
    let mut server = ScriptedServer::bind().await;
    let recorder = Arc::new(MemoryWireRecorder::new());
    let journal = Arc::new(MemoryJournalSink::new());
    let builder = LiveSessionBuilder::new(config(), server.endpoint())
        .clock(Arc::new(TokioClock::anchored_at(T0)))
        .dispatcher(dispatcher())
        .record_wire(recorder.clone() as Arc<dyn WireRecorder>)
        .journal_sink(journal.clone() as Arc<dyn JournalSink>);
    let mut events = builder.subscribe();
    let (handle, mut conn) = connect(builder, &mut server, 40).await;
    conn.send_json(&json!({"sessionResumptionUpdate": {"newHandle": "h-1", "resumable": true}}))
        .await;
    traffic(&handle, &mut conn).await;
    let mut conn2 = match end {
        LinkEnd::GoAway => {
            conn.send_json(&json!({"goAway": {"timeLeft": "5s"}})).await;
            // The turn in flight ends: the reconnect waited for it.
            conn.send_json(&json!({"serverContent": {"turnComplete": true}}))
                .await;
            let conn2 = server.accept().await;
            assert_eq!(
                conn.expect_closed().await,
                Some((1000, "go_away".to_owned()))
            );
            conn2
        }
        LinkEnd::Dropped => {
            conn.drop_connection();
            server.accept().await
        }
    };
    assert_eq!(next_text(&mut conn2).await, setup(Some("h-1")));
    tokio::time::advance(Duration::from_millis(30)).await;
    conn2.send_json(&json!({"setupComplete": {}})).await;
    let mut after_setup = vec![next_text(&mut conn2).await];
    // The app speaks again: the next frame is its audio, so nothing else was sent.
    handle.send_audio(vec![1u8; 64]).unwrap();
    after_setup.push(next_text(&mut conn2).await);
    conn2
        .send_json(&json!({"serverContent": {"turnComplete": true}}))
        .await;
    let early = events
        .collect_until_idle(Duration::from_millis(200), Duration::from_secs(30))
        .await;
    let (end, _) = tokio::join!(handle.disconnect(), conn2.expect_closed());
    assert_eq!(end.reason, "closed with code 1000: client disconnect");
    let mut all = early;
    all.extend(drain(&mut events).await);
    (
        Outcome::of(all, &handle, &journal),
        recorder.entries(),
        after_setup,
    )
}

/// The first connection's traffic: user audio, the model's tool call and its answer, the
/// application's instruction between them, the model's audio (a turn in flight).
async fn traffic(handle: &LiveHandle, conn: &mut ServerConn) {
    handle.send_audio(vec![0u8; 64]).unwrap();
    assert!(next_text(conn).await.starts_with(r#"{"realtimeInput""#));
    conn.send_json(&json!({"toolCall": {"functionCalls": [
        {"id": "call-1", "name": "lookup", "args": {"account": "A-7"}}
    ]}}))
    .await;
    assert_eq!(
        next_text(conn).await,
        r#"{"toolResponse":{"functionResponses":[{"id":"call-1","name":"lookup","response":{"account":"A-7","owed":120}}]}}"#
    );
    handle.update_instruction("Speak French.").unwrap();
    assert_eq!(next_text(conn).await, FRENCH);
    conn.send_json(&model_audio()).await;
    handle.send_audio(vec![0u8; 64]).unwrap();
    assert!(next_text(conn).await.starts_with(r#"{"realtimeInput""#));
}

async fn check(end: LinkEnd) {
    let (live, entries, after_setup) = record(end).await;
    // The second connection: the application's instruction right after the setup (which
    // carried the starting one), once; then the application's audio.
    assert_eq!(after_setup[0], FRENCH, "{end:?}");
    assert!(
        after_setup[1].starts_with(r#"{"realtimeInput""#),
        "{end:?}: {}",
        after_setup[1]
    );

    let builder =
        LiveSessionBuilder::new(config(), ApiEndpoint::offline()).dispatcher(dispatcher());
    let (replayed, replay) = replay_outcome(builder, entries).await;
    assert_eq!(replay.divergences(), vec![], "{end:?}: no divergence");
    let runtime: Vec<String> = replay
        .outbound_frames()
        .into_iter()
        .filter(|f| f.origin == Origin::Runtime)
        .map(|f| {
            assert!(f.identical, "{end:?}: byte-identical");
            String::from_utf8_lossy(&f.bytes).into_owned()
        })
        .collect();
    assert_eq!(
        runtime,
        [
            setup(None),
            r#"{"toolResponse":{"functionResponses":[{"id":"call-1","name":"lookup","response":{"account":"A-7","owed":120}}]}}"#.to_owned(),
            setup(Some("h-1")),
            FRENCH.to_owned(),
        ],
        "{end:?}: the runtime's frames"
    );
    assert_eq!(
        replayed.journal, live.journal,
        "{end:?}: journal, entry by entry"
    );
    assert_eq!(replayed.state, live.state, "{end:?}: final state");
}

#[tokio::test(start_paused = true)]
async fn after_a_go_away_the_new_connection_gets_the_applications_instruction() {
    check(LinkEnd::GoAway).await;
}

#[tokio::test(start_paused = true)]
async fn after_a_dropped_link_the_new_connection_gets_the_applications_instruction() {
    check(LinkEnd::Dropped).await;
}
