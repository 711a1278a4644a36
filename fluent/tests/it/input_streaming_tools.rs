//! Input-streaming tools over a real WebSocket: a call receives the user's audio, video
//! and signals from the moment the model calls it — not what came before, not what comes
//! after it returns or is cancelled — and keeps receiving it when the control lane is
//! restarted while a piece is in flight; a recorded session replays with no divergence,
//! the tool hearing in the replay exactly what it heard live, sequence numbers included.

use crate::support;

use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures_util::FutureExt;
use futures_util::future::BoxFuture;
use reel_actors::fault::FaultHook;
use reel_actors::testing::ScriptedServer;
use reel_actors::tools::{
    InputEvent, InputStreamingTool, ToolContext, ToolError, ToolInput, ToolStream,
};
use reel_actors::{Child, LiveEvent};
use reel_fluent::Live;
use reel_protocol::UserInput;
use serde_json::{Value, json};
use support::{TempFolder, accepted};

/// What each call heard: its id, then one line per piece of input.
type Heard = Arc<Mutex<Vec<(String, Vec<String>)>>>;

/// Listens to the caller until the audio stream pauses: a result for each audio chunk
/// (how many chunks and bytes so far), video frames only noted.
struct Listen(Heard);

impl InputStreamingTool for Listen {
    fn name(&self) -> &str {
        "listen"
    }
    fn description(&self) -> &str {
        "Listens to the caller until they pause."
    }
    fn parameters(&self) -> Option<Value> {
        None
    }
    fn run(
        &self,
        _args: Value,
        ctx: ToolContext,
        mut input: ToolInput,
        results: ToolStream,
    ) -> BoxFuture<'static, Result<(), ToolError>> {
        let heard = Arc::clone(&self.0);
        async move {
            let call = heard.lock().unwrap().len();
            heard
                .lock()
                .unwrap()
                .push((ctx.call_id.clone(), Vec::new()));
            let note = |line: String| heard.lock().unwrap()[call].1.push(line);
            let (mut chunks, mut bytes) = (0, 0);
            while let Some(event) = input.recv().await {
                let InputEvent::Input(piece) = event else {
                    note(format!("{event:?}"));
                    continue;
                };
                note(format!(
                    "{} {} @{}",
                    piece.input.kind(),
                    piece.seq,
                    piece.ts_ms
                ));
                match piece.input {
                    UserInput::Audio(pcm) => {
                        chunks += 1;
                        bytes += pcm.len();
                        results.send(json!({"chunks": chunks, "bytes": bytes}));
                    }
                    UserInput::AudioStreamEnd => break,
                    _ => {}
                }
            }
            Ok(())
        }
        .boxed()
    }
}

/// Fails the control lane on the next item it takes once armed (once).
#[derive(Default)]
struct FailControlOnce {
    armed: Mutex<Option<bool>>,
}

impl FaultHook for FailControlOnce {
    fn before(&self, child: Child, _input: u64) {
        if child != Child::ControlLane {
            return;
        }
        let mut armed = self.armed.lock().unwrap();
        if *armed == Some(true) {
            *armed = Some(false);
            drop(armed);
            panic!("injected fault in the control lane");
        }
    }
}

fn response(id: &str, body: Value, scheduling: &str, more: bool) -> Value {
    let mut response =
        json!({"id": id, "name": "listen", "response": body, "scheduling": scheduling});
    if more {
        response["willContinue"] = json!(true);
    }
    json!({"toolResponse": {"functionResponses": [response]}})
}

fn call(id: &str) -> Value {
    json!({"toolCall": {"functionCalls": [{"id": id, "name": "listen", "args": {}}]}})
}

#[tokio::test(start_paused = true)]
async fn a_call_hears_the_input_from_its_call_on_through_a_restart_and_it_replays() {
    let folder = TempFolder::new("input-streaming");
    let log = folder.join("listen.wire.jsonl");
    let live_heard = Heard::default();
    let fault = Arc::new(FailControlOnce::default());
    let hook = Arc::clone(&fault);
    let chain = Live::builder()
        .text_only()
        .input_streaming_tool(Listen(Arc::clone(&live_heard)))
        .record_wire(&log)
        .customize(move |session| session.fault_hook(Arc::clone(&hook) as Arc<dyn FaultHook>));
    let mut server = ScriptedServer::bind().await;
    let (handle, mut conn, setup) = accepted(chain, &mut server, Duration::ZERO).await;
    assert_eq!(
        setup.json().unwrap()["setup"]["tools"],
        json!([{"functionDeclarations": [{
            "name": "listen",
            "description": "Listens to the caller until they pause.",
            "behavior": "NON_BLOCKING"
        }]}])
    );
    let audio = |len: usize| vec![7u8; len];
    let realtime_audio = |len: usize| {
        json!({"realtimeInput": {"audio": {"mimeType": "audio/pcm;rate=16000",
            "data": reel_protocol::Base64Data(audio(len).into()).encode()}}})
    };

    // Audio before the call is not the call's.
    handle.send_audio(audio(64)).unwrap();
    assert_eq!(conn.recv_json().await, realtime_audio(64));
    conn.send_json(&call("c1")).await;
    assert_eq!(
        conn.recv_json().await,
        response(
            "c1",
            json!({"status": "running", "tool": "listen"}),
            "SILENT",
            true
        )
    );
    handle.send_audio(audio(320)).unwrap();
    assert_eq!(conn.recv_json().await, realtime_audio(320));
    assert_eq!(
        conn.recv_json().await,
        response("c1", json!({"chunks": 1, "bytes": 320}), "WHEN_IDLE", true)
    );
    // The control lane fails on the next item it takes: this chunk's input. Its successor
    // hands it over again; the call takes it once.
    *fault.armed.lock().unwrap() = Some(true);
    handle.send_audio(audio(640)).unwrap();
    assert_eq!(conn.recv_json().await, realtime_audio(640));
    assert_eq!(
        conn.recv_json().await,
        response("c1", json!({"chunks": 2, "bytes": 960}), "WHEN_IDLE", true)
    );
    assert_eq!(
        *fault.armed.lock().unwrap(),
        Some(false),
        "the fault struck"
    );
    handle.send_video(b"\xff\xd8frame".to_vec()).unwrap();
    conn.recv_json().await;
    handle.audio_stream_end().unwrap();
    assert_eq!(
        conn.recv_json().await,
        json!({"realtimeInput": {"audioStreamEnd": true}})
    );
    assert_eq!(
        conn.recv_json().await,
        response(
            "c1",
            json!({"status": "completed", "tool": "listen", "result": {"results_sent": 2}}),
            "WHEN_IDLE",
            false
        )
    );

    // A second call, cancelled by the model after one chunk: it hears nothing after.
    conn.send_json(&call("c2")).await;
    conn.recv_json().await; // running
    handle.send_audio(audio(32)).unwrap();
    assert_eq!(conn.recv_json().await, realtime_audio(32));
    assert_eq!(
        conn.recv_json().await,
        response("c2", json!({"chunks": 1, "bytes": 32}), "WHEN_IDLE", true)
    );
    let mut events = handle.events();
    conn.send_json(&json!({"toolCallCancellation": {"ids": ["c2"]}}))
        .await;
    // The next chunk goes out once the lane has cancelled the call.
    while let Some(envelope) = events.recv().await {
        if matches!(&envelope.event, LiveEvent::ToolCancelled { call_id, .. } if call_id == "c2") {
            break;
        }
    }
    handle.send_audio(audio(32)).unwrap();
    assert_eq!(conn.recv_json().await, realtime_audio(32));
    assert!(
        tokio::time::timeout(Duration::from_secs(5), conn.recv())
            .await
            .is_err(),
        "nothing more from the cancelled call"
    );
    let (end, closed) = tokio::join!(handle.disconnect(), conn.expect_closed());
    assert!(!end.failed);
    assert!(closed.is_some());

    let heard = live_heard.lock().unwrap().clone();
    let lines: Vec<(&str, Vec<String>)> = heard
        .iter()
        .map(|(id, lines)| {
            let lines = lines
                .iter()
                .map(|line| line.split(" @").next().unwrap().to_owned())
                .collect();
            (id.as_str(), lines)
        })
        .collect();
    // seq 1 setup, 2 setupComplete, 3 the first chunk, 4 toolCall, 5 running, …
    assert_eq!(
        lines,
        [
            (
                "c1",
                vec![
                    "audio 6".to_owned(),
                    "audio 8".to_owned(),
                    "video 10".to_owned(),
                    "audio_stream_end 11".to_owned()
                ]
            ),
            ("c2", vec!["audio 15".to_owned()]),
        ]
    );

    // The replay hands the tool the recorded input: it hears the same, at the same
    // places and times, and sends the same results in the same places.
    let replay_heard = Heard::default();
    let outcome = Live::builder()
        .text_only()
        .input_streaming_tool(Listen(Arc::clone(&replay_heard)))
        .replay(&log)
        .await
        .unwrap()
        .finish()
        .await;
    assert_eq!(outcome.divergences, vec![]);
    assert_eq!(*replay_heard.lock().unwrap(), heard);
}

/// Takes its time over each piece (30 ms in a test where audio comes every 40 ms: it keeps
/// up), with room for two; writes down what it heard and missed.
struct Slow(Heard, Duration);

impl InputStreamingTool for Slow {
    fn name(&self) -> &str {
        "transcribe"
    }
    fn description(&self) -> &str {
        "Transcribes the caller, slowly."
    }
    fn parameters(&self) -> Option<Value> {
        None
    }
    fn input_capacity(&self) -> usize {
        2
    }
    fn run(
        &self,
        _args: Value,
        ctx: ToolContext,
        mut input: ToolInput,
        _results: ToolStream,
    ) -> BoxFuture<'static, Result<(), ToolError>> {
        let (heard, pace) = (Arc::clone(&self.0), self.1);
        async move {
            let mut lines = Vec::new();
            while let Some(event) = input.recv().await {
                tokio::time::sleep(pace).await;
                match event {
                    InputEvent::Input(piece) if piece.input == UserInput::AudioStreamEnd => break,
                    InputEvent::Input(piece) => {
                        lines.push(format!("{} {}", piece.input.kind(), piece.seq))
                    }
                    missed => lines.push(format!("{missed:?}")),
                }
            }
            heard.lock().unwrap().push((ctx.call_id.clone(), lines));
            Ok(())
        }
        .boxed()
    }
}

/// A replay runs far faster than the caller spoke; it waits for a slow tool to take its
/// input, so the tool misses nothing it did not miss live.
#[tokio::test(start_paused = true)]
async fn a_replay_waits_for_a_slow_tool_as_the_caller_did() {
    let folder = TempFolder::new("input-streaming-slow");
    let log = folder.join("slow.wire.jsonl");
    let live_heard = Heard::default();
    let chain = Live::builder()
        .text_only()
        .input_streaming_tool(Slow(Arc::clone(&live_heard), Duration::from_millis(30)))
        .record_wire(&log);
    let mut server = ScriptedServer::bind().await;
    let (handle, mut conn, _) = accepted(chain, &mut server, Duration::ZERO).await;
    conn.send_json(
        &json!({"toolCall": {"functionCalls": [{"id": "t1", "name": "transcribe", "args": {}}]}}),
    )
    .await;
    conn.recv_json().await; // running
    for _ in 0..20 {
        handle.send_audio(vec![1u8; 1280]).unwrap();
        conn.recv_json().await;
        tokio::time::sleep(Duration::from_millis(40)).await;
    }
    handle.audio_stream_end().unwrap();
    conn.recv_json().await;
    assert_eq!(
        conn.recv_json().await["toolResponse"]["functionResponses"][0]["response"]["status"],
        "completed"
    );
    assert_eq!(handle.telemetry().tool_input_missed, 0);
    let (end, _) = tokio::join!(handle.disconnect(), conn.expect_closed());
    assert!(!end.failed);
    let heard = live_heard.lock().unwrap().clone();
    assert_eq!(heard.len(), 1);
    assert_eq!(heard[0].1.len(), 20, "{heard:?}");
    assert!(heard[0].1.iter().all(|line| line.starts_with("audio ")));

    let replay_heard = Heard::default();
    let outcome = Live::builder()
        .text_only()
        .input_streaming_tool(Slow(Arc::clone(&replay_heard), Duration::from_millis(30)))
        .replay(&log)
        .await
        .unwrap()
        .finish()
        .await;
    assert_eq!(outcome.divergences, vec![]);
    assert_eq!(*replay_heard.lock().unwrap(), heard);
}

/// Live input does not wait for a tool that falls behind: what does not fit its queue is
/// dropped, the tool is told how much before the next piece, and telemetry counts it.
#[tokio::test(start_paused = true)]
async fn a_tool_that_falls_behind_is_told_what_it_missed() {
    let heard = Heard::default();
    let chain = Live::builder()
        .text_only()
        .input_streaming_tool(Slow(Arc::clone(&heard), Duration::from_millis(200)));
    let mut server = ScriptedServer::bind().await;
    let (handle, mut conn, _) = accepted(chain, &mut server, Duration::ZERO).await;
    conn.send_json(
        &json!({"toolCall": {"functionCalls": [{"id": "t1", "name": "transcribe", "args": {}}]}}),
    )
    .await;
    conn.recv_json().await; // running
    // Ten chunks 10 ms apart: the tool takes the first, two wait, seven find no room.
    for _ in 0..10 {
        handle.send_audio(vec![1u8; 320]).unwrap();
        conn.recv_json().await;
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    // The caller pauses for a second (session time): the tool works through its queue, so
    // the end of the audio stream finds room.
    tokio::time::sleep(Duration::from_secs(1)).await;
    handle.audio_stream_end().unwrap();
    conn.recv_json().await;
    assert_eq!(
        conn.recv_json().await["toolResponse"]["functionResponses"][0]["response"]["status"],
        "completed"
    );
    assert_eq!(handle.telemetry().tool_input_missed, 7);
    let lines: Vec<String> = heard.lock().unwrap()[0]
        .1
        .iter()
        .map(|line| line.split(' ').next().unwrap().to_owned())
        .collect();
    assert_eq!(lines, ["audio", "audio", "audio", "Missed"]);
    assert_eq!(heard.lock().unwrap()[0].1[3], "Missed { count: 7 }");
    let (end, _) = tokio::join!(handle.disconnect(), conn.expect_closed());
    assert!(!end.failed);
}

/// Writes down what each call hears — each audio chunk by its first byte, each notice of
/// missed input as it comes — until the audio stream ends; sends no results of its own.
struct Note(Heard);

impl InputStreamingTool for Note {
    fn name(&self) -> &str {
        "note"
    }
    fn description(&self) -> &str {
        "Notes what the caller says."
    }
    fn parameters(&self) -> Option<Value> {
        None
    }
    fn run(
        &self,
        _args: Value,
        ctx: ToolContext,
        mut input: ToolInput,
        _results: ToolStream,
    ) -> BoxFuture<'static, Result<(), ToolError>> {
        let heard = Arc::clone(&self.0);
        async move {
            let mut lines = Vec::new();
            while let Some(event) = input.recv().await {
                match event {
                    InputEvent::Input(piece) => match piece.input {
                        UserInput::Audio(pcm) => lines.push(format!("audio {}", pcm[0])),
                        UserInput::AudioStreamEnd => break,
                        _ => {}
                    },
                    missed => lines.push(format!("{missed:?}")),
                }
            }
            heard.lock().unwrap().push((ctx.call_id.clone(), lines));
            Ok(())
        }
        .boxed()
    }
}

/// Decision 0092: the caller keeps talking through a reconnect longer than the session
/// holds audio for. The chunks dropped unsent are told to the listening call, in order,
/// where they were dropped; the count is recorded on the next chunk that went out
/// (`dropped_before`), and the replay tells the tool the same.
#[tokio::test(start_paused = true)]
async fn audio_dropped_during_a_reconnect_is_told_to_a_listening_call_and_replays() {
    use reel_actors::transport::HELD_AUDIO_CHUNKS;
    let folder = TempFolder::new("input-streaming-held");
    let log = folder.join("held.wire.jsonl");
    let live_heard = Heard::default();
    let chain = Live::builder()
        .text_only()
        .session_resume(true)
        .input_streaming_tool(Note(Arc::clone(&live_heard)))
        .record_wire(&log);
    let mut server = ScriptedServer::bind().await;
    let (handle, mut conn, _) = accepted(chain, &mut server, Duration::ZERO).await;
    conn.send_json(&json!({"sessionResumptionUpdate": {"newHandle": "h-1", "resumable": true}}))
        .await;
    conn.send_json(
        &json!({"toolCall": {"functionCalls": [{"id": "n1", "name": "note", "args": {}}]}}),
    )
    .await;
    conn.recv_json().await; // running
    handle.send_audio(vec![200u8; 4]).unwrap();
    conn.recv_json().await;

    // The server moves the session; the caller speaks 53 chunks before the new connection
    // is set up: the session holds the newest 50 and drops chunks 0, 1 and 2.
    conn.send_json(&json!({"goAway": {"timeLeft": "1s"}})).await;
    let mut conn2 = server.accept().await;
    assert_eq!(
        conn2.recv_json().await["setup"]["sessionResumption"]["handle"],
        "h-1"
    );
    let spoken = HELD_AUDIO_CHUNKS as u8 + 3;
    for n in 0..spoken {
        handle.send_audio(vec![n; 4]).unwrap();
    }
    conn2.send_json(&json!({"setupComplete": {}})).await;
    let mut sent = Vec::new();
    for _ in 0..HELD_AUDIO_CHUNKS {
        let frame = conn2.recv_json().await;
        let data = frame["realtimeInput"]["audio"]["data"]
            .as_str()
            .unwrap()
            .to_owned();
        sent.push(reel_protocol::Base64Data::decode(&data).unwrap().0[0]);
    }
    assert_eq!(sent, (3..spoken).collect::<Vec<_>>());
    handle.audio_stream_end().unwrap();
    conn2.recv_json().await;
    assert_eq!(
        conn2.recv_json().await["toolResponse"]["functionResponses"][0]["response"]["status"],
        "completed"
    );
    assert_eq!(handle.telemetry().audio_dropped, 3);
    assert_eq!(handle.telemetry().tool_input_missed, 0, "the tool kept up");
    let (end, _) = tokio::join!(handle.disconnect(), conn2.expect_closed());
    assert!(!end.failed);

    let heard = live_heard.lock().unwrap().clone();
    let mut expected = vec!["audio 200".to_owned(), "Missed { count: 3 }".to_owned()];
    expected.extend((3..spoken).map(|n| format!("audio {n}")));
    assert_eq!(heard, [("n1".to_owned(), expected)]);

    // The recording says where and how many: on the first chunk sent after the drop.
    let lines = std::fs::read_to_string(&log).unwrap();
    let marked: Vec<(u64, u8, u64)> = lines
        .lines()
        .map(|line| serde_json::from_str::<reel_recorder::wire_log::WireEntry>(line).unwrap())
        .filter_map(|entry| {
            let dropped = entry.dropped_before?;
            let frame: Value = serde_json::from_slice(&entry.payload).unwrap();
            let data = frame["realtimeInput"]["audio"]["data"].as_str().unwrap();
            let first = reel_protocol::Base64Data::decode(data).unwrap().0[0];
            Some((entry.conn.map_or(1, u64::from), first, dropped))
        })
        .collect();
    assert_eq!(marked, [(2, 3, 3)]);

    let replay_heard = Heard::default();
    let outcome = Live::builder()
        .text_only()
        .session_resume(true)
        .input_streaming_tool(Note(Arc::clone(&replay_heard)))
        .replay(&log)
        .await
        .unwrap()
        .finish()
        .await;
    assert_eq!(outcome.divergences, vec![]);
    assert_eq!(*replay_heard.lock().unwrap(), heard);
}
