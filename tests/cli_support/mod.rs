//! Shared by the command-line tests: run the `reel` binary, keep files in a temporary
//! directory, and make real recordings (wire log and journal) of a session that reel runs
//! against a scripted server, in virtual time, so every timestamp is exact.

#![allow(dead_code)] // each test file uses its own subset

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;
use std::time::Duration;

use reel_actors::clock::TokioClock;
use reel_actors::testing::ScriptedServer;
use reel_actors::{EventStream, Lane, LiveSessionBuilder};
use reel_protocol::SessionConfig;
use reel_recorder::journal::{FileJournalSink, JournalSink};
use reel_recorder::wire_file::FileWireRecorder;
use reel_recorder::wire_log::WireRecorder;
use reel_tools::{SimpleTool, ToolDispatcher};
use serde_json::{Value, json};

/// The recordings' start: 2024-06-10T06:13:20Z.
pub const T0: u64 = 1_718_000_000_000;

/// Runs `reel` with `args`: exit code, stdout, stderr.
pub fn reel(args: &[&str]) -> (i32, String, String) {
    // Exact output: no colour, whatever the environment running the tests asks for.
    let output = Command::new(env!("CARGO_BIN_EXE_reel"))
        .args(args)
        .env_remove("CLICOLOR_FORCE")
        .output()
        .unwrap();
    (
        output.status.code().unwrap(),
        String::from_utf8(output.stdout).unwrap(),
        String::from_utf8(output.stderr).unwrap(),
    )
}

/// A directory removed when dropped.
pub struct TempDir(PathBuf);

impl TempDir {
    /// A fresh directory named after the test.
    pub fn new(name: &str) -> TempDir {
        let path = std::env::temp_dir().join(format!("reel-cli-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&path);
        std::fs::create_dir_all(&path).unwrap();
        TempDir(path)
    }

    /// A path inside it.
    pub fn join(&self, file: &str) -> PathBuf {
        self.0.join(file)
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// A path as the `&str` the command line takes.
pub fn arg(path: &Path) -> &str {
    path.to_str().unwrap()
}

/// What the recorded weather tool does besides answering.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum ToolWrites {
    /// Nothing: the replay's final state can match the journal.
    Nothing,
    /// `app:last_city`: the replay has no tool, so that key is missing on replay.
    LastCity,
}

fn tools(writes: ToolWrites) -> ToolDispatcher {
    let mut dispatcher = ToolDispatcher::new();
    dispatcher
        .register(SimpleTool::new(
            "get_weather",
            "The current weather in a city.",
            Some(json!({"type": "object", "properties": {"city": {"type": "string"}}})),
            move |args: Value, ctx| async move {
                let city = args["city"].as_str().unwrap_or_default().to_owned();
                if writes == ToolWrites::LastCity {
                    ctx.state
                        .set("app:last_city", &city)
                        .map_err(|e| ctx.fail(e))?;
                }
                Ok(json!({"city": city, "temp_c": 22}))
            },
        ))
        .unwrap();
    dispatcher
}

fn text(t: &str) -> Value {
    json!({"serverContent": {"modelTurn": {"parts": [{"text": t}]}}})
}

/// A frame of 0.1 s of model audio (4800 bytes of PCM16 at 24 kHz).
fn audio() -> Value {
    let data = reel_protocol::Base64Data(vec![0u8; 4800].into()).encode();
    json!({"serverContent": {"modelTurn": {"parts": [{"inlineData": {"mimeType": "audio/pcm;rate=24000", "data": data}}]}}})
}

/// Reads events until the control lane has handled one of `kind`: the frame that carried
/// it has been stamped, so the test may move time on.
async fn handled(events: &mut EventStream, kind: &str) {
    while let Some(event) = events.recv().await {
        if event.lane == Lane::Control && event.event.kind() == kind {
            return;
        }
    }
    panic!("the session ended before a {kind} event");
}

/// Records a session into `wire` and `journal`: a greeting turn; a turn with a tool call
/// answered by the tool, then spoken (three audio frames and a transcription); a goAway
/// and a reconnect; a goodbye turn; a clean disconnect. Run it under paused time.
pub async fn record(wire: &Path, journal: &Path, writes: ToolWrites) {
    let mut server = ScriptedServer::bind().await;
    let recorder = Arc::new(FileWireRecorder::create(wire).unwrap());
    let sink = Arc::new(FileJournalSink::create(journal).unwrap());
    let config = SessionConfig::new("gemini-live-2.5-flash").session_resume(true);
    let builder = LiveSessionBuilder::new(config, server.endpoint())
        .clock(Arc::new(TokioClock::anchored_at(T0)))
        .dispatcher(tools(writes))
        .record_wire(recorder.clone() as Arc<dyn WireRecorder>)
        .journal_sink(sink.clone() as Arc<dyn JournalSink>);
    let mut events = builder.subscribe();
    let script = async {
        let mut conn = server.accept().await;
        conn.recv_json().await;
        tokio::time::advance(Duration::from_millis(40)).await;
        conn.send_json(&json!({"setupComplete": {}})).await;
        conn.send_json(
            &json!({"sessionResumptionUpdate": {"newHandle": "h-1", "resumable": true}}),
        )
        .await;
        conn
    };
    let (handle, mut conn) = tokio::join!(builder.connect(), script);
    let handle = handle.unwrap();

    tokio::time::advance(Duration::from_millis(200)).await;
    handle.send_text("Hello!").unwrap();
    conn.recv_json().await;
    tokio::time::advance(Duration::from_millis(150)).await;
    conn.send_json(&text("Hello! Ask me about the weather."))
        .await;
    conn.send_json(&json!({"serverContent": {"turnComplete": true}}))
        .await;
    handled(&mut events, "turn_complete").await;

    tokio::time::advance(Duration::from_millis(300)).await;
    handle.send_text("What's the weather in London?").unwrap();
    conn.recv_json().await;
    tokio::time::advance(Duration::from_millis(100)).await;
    conn.send_json(&json!({"toolCall": {"functionCalls": [
        {"id": "call-1", "name": "get_weather", "args": {"city": "London"}}
    ]}}))
    .await;
    conn.recv_json().await;
    tokio::time::advance(Duration::from_millis(120)).await;
    for _ in 0..3 {
        conn.send_json(&audio()).await;
    }
    conn.send_json(
        &json!({"serverContent": {"outputTranscription": {"text": "It is 22C in London."}}}),
    )
    .await;
    conn.send_json(
        &json!({"serverContent": {"turnComplete": true}, "usageMetadata": {"totalTokenCount": 42}}),
    )
    .await;
    handled(&mut events, "turn_complete").await;

    tokio::time::advance(Duration::from_millis(500)).await;
    conn.send_json(&json!({"goAway": {"timeLeft": "5s"}})).await;
    let mut conn2 = server.accept().await;
    conn2.recv_json().await;
    tokio::time::advance(Duration::from_millis(60)).await;
    conn2.send_json(&json!({"setupComplete": {}})).await;
    handled(&mut events, "connected").await;
    tokio::time::advance(Duration::from_millis(200)).await;
    handle.send_text("Thanks, bye!").unwrap();
    conn2.recv_json().await;
    tokio::time::advance(Duration::from_millis(100)).await;
    conn2.send_json(&text("Goodbye!")).await;
    conn2
        .send_json(&json!({"serverContent": {"turnComplete": true}}))
        .await;
    handled(&mut events, "turn_complete").await;
    tokio::time::advance(Duration::from_millis(200)).await;
    let (end, _) = tokio::join!(handle.disconnect(), conn2.expect_closed());
    assert_eq!(end.reason, "closed with code 1000: client disconnect");
    recorder.flush();
    JournalSink::flush(sink.as_ref());
}

/// The lines of `path`.
pub fn lines(path: &Path) -> Vec<String> {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .map(str::to_owned)
        .collect()
}

/// Writes `lines` to `path`, each ending with a newline.
pub fn write_lines(path: &Path, lines: &[String]) {
    let text: String = lines.iter().map(|l| format!("{l}\n")).collect();
    std::fs::write(path, text).unwrap();
}

/// `path`'s wire log with entry `seq`'s payload passed through `change`.
pub fn tamper_frame(path: &std::path::Path, seq: u64, change: impl Fn(String) -> String) {
    let tampered: Vec<String> = lines(path)
        .into_iter()
        .map(|line| {
            let mut entry: reel_recorder::wire_log::WireEntry =
                serde_json::from_str(&line).unwrap();
            if entry.seq != seq {
                return line;
            }
            let payload = String::from_utf8(entry.payload.to_vec()).unwrap();
            entry.payload = change(payload).into_bytes().into();
            serde_json::to_string(&entry).unwrap()
        })
        .collect();
    write_lines(path, &tampered);
}
