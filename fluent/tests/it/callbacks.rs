//! Every callback of the chain reaches the runtime: each fast-lane and control-lane setter
//! sees exactly what the server sent, in its lane's order; `on_tool_call` answers calls
//! itself; a stream subscribed before connecting misses nothing.

use std::sync::{Arc, Mutex};

use reel_actors::testing::ScriptedServer;
use reel_actors::{EventEnvelope, Lane};
use reel_fluent::Live;
use reel_protocol::FunctionResponse;
use serde_json::{Value, json};

type Log = Arc<Mutex<Vec<String>>>;

fn push(log: &Log, line: String) {
    log.lock().unwrap().push(line);
}

fn take(log: &Log) -> Vec<String> {
    log.lock().unwrap().clone()
}

fn frame(content: Value) -> Value {
    json!({ "serverContent": content })
}

#[tokio::test(start_paused = true)]
async fn every_callback_sees_what_the_server_sent() {
    let mut server = ScriptedServer::bind().await;
    let fast: Log = Log::default();
    let control: Log = Log::default();
    let spawned: Log = Log::default();
    let telemetry: Log = Log::default();

    let (f1, f2, f3, f4, f5, f6, f7, f8, f9, f10) = (
        fast.clone(),
        fast.clone(),
        fast.clone(),
        fast.clone(),
        fast.clone(),
        fast.clone(),
        fast.clone(),
        fast.clone(),
        fast.clone(),
        telemetry.clone(),
    );
    let (c1, c2, c3, c4, c5, c6) = (
        control.clone(),
        control.clone(),
        control.clone(),
        control.clone(),
        control.clone(),
        control.clone(),
    );
    let s1 = spawned.clone();
    let builder = Live::builder()
        .text_only()
        .transcription(true, true)
        .include_thoughts()
        .on_audio(move |pcm| push(&f1, format!("audio {}", pcm.len())))
        .on_text(move |t| push(&f2, format!("text {t}")))
        .on_text_complete(move |t| push(&f3, format!("text_complete {t}")))
        .on_input_transcript(move |t, fin| push(&f4, format!("input {t} {fin}")))
        .on_output_transcript(move |t, fin| push(&f5, format!("output {t} {fin}")))
        .on_thought(move |t| push(&f6, format!("thought {t}")))
        .on_vad_start(move || push(&f7, "vad_start".into()))
        .on_vad_end(move || push(&f8, "vad_end".into()))
        .on_phase(move |phase| push(&f9, format!("phase {phase:?}")))
        .on_usage(move |usage| push(&f10, format!("usage {:?}", usage.total_token_count)))
        .on_connected(move |_writer| {
            let log = c1.clone();
            async move { push(&log, "connected".into()) }
        })
        .on_turn_complete(move || {
            let log = c2.clone();
            async move { push(&log, "turn_complete".into()) }
        })
        .on_tool_call(move |calls, _state| {
            let log = c3.clone();
            async move {
                let names: Vec<String> = calls.iter().filter_map(|c| c.name.clone()).collect();
                push(&log, format!("tool_call {names:?}"));
                Some(
                    calls
                        .iter()
                        .map(|call| FunctionResponse {
                            id: call.id.clone(),
                            name: call.name.clone(),
                            response: Some(json!({"answered": "by the callback"})),
                            ..FunctionResponse::default()
                        })
                        .collect(),
                )
            }
        })
        .on_tool_cancelled(move |ids| {
            let log = c4.clone();
            async move { push(&log, format!("tool_cancelled {ids:?}")) }
        })
        .on_interrupted(move || {
            let log = c5.clone();
            async move { push(&log, "interrupted".into()) }
        })
        .on_disconnected(move |reason| {
            let log = c6.clone();
            async move { push(&log, format!("disconnected {reason:?}")) }
        })
        .on_generation_complete_concurrent(move || {
            let log = s1.clone();
            async move { push(&log, "generation_complete".into()) }
        });
    let mut events = builder.subscribe();
    let endpoint = server.endpoint();
    let script = async {
        let mut conn = server.accept().await;
        conn.recv_json().await;
        conn.send_json(&json!({"setupComplete": {}})).await;
        conn
    };
    let (handle, mut conn) = tokio::join!(builder.connect(endpoint), script);
    let handle = handle.unwrap();

    conn.send_json(&json!({"voiceActivity": {"voiceActivityType": "ACTIVITY_START"}}))
        .await;
    conn.send_json(&frame(json!({"inputTranscription": {"text": "Weather?"}})))
        .await;
    conn.send_json(&json!({"voiceActivity": {"voiceActivityType": "ACTIVITY_END"}}))
        .await;
    conn.send_json(&frame(
        json!({"modelTurn": {"parts": [{"text": "Checking.", "thought": true}]}}),
    ))
    .await;
    conn.send_json(&frame(json!({"modelTurn": {"parts": [{"inlineData": {"mimeType": "audio/pcm;rate=24000", "data": "AAAAAA=="}}]}})))
        .await;
    conn.send_json(&frame(json!({"modelTurn": {"parts": [{"text": "It is"}]}})))
        .await;
    conn.send_json(&frame(
        json!({"modelTurn": {"parts": [{"text": " sunny."}]}}),
    ))
    .await;
    conn.send_json(&frame(
        json!({"outputTranscription": {"text": "It is sunny."}}),
    ))
    .await;
    conn.send_json(&frame(json!({"generationComplete": true})))
        .await;
    conn.send_json(
        &json!({"serverContent": {"turnComplete": true}, "usageMetadata": {"totalTokenCount": 42}}),
    )
    .await;
    conn.send_json(
        &json!({"toolCall": {"functionCalls": [{"id": "c-1", "name": "lookup", "args": {}}]}}),
    )
    .await;
    assert_eq!(
        conn.recv().await.unwrap().text(),
        Some(
            r#"{"toolResponse":{"functionResponses":[{"id":"c-1","name":"lookup","response":{"answered":"by the callback"}}]}}"#
        )
    );
    conn.send_json(&json!({"toolCallCancellation": {"ids": ["c-2"]}}))
        .await;
    conn.send_json(&frame(json!({"interrupted": true}))).await;
    let seen = events
        .collect_until_idle(
            std::time::Duration::from_millis(200),
            std::time::Duration::from_secs(30),
        )
        .await;
    let (end, _) = tokio::join!(handle.disconnect(), conn.expect_closed());
    assert_eq!(end.reason, "closed with code 1000: client disconnect");
    let mut all: Vec<EventEnvelope> = seen;
    while let Some(event) = events.recv().await {
        all.push(event);
    }

    assert_eq!(
        take(&fast),
        [
            "phase Connecting",
            "phase SetupSent",
            "phase Active",
            "vad_start",
            "phase UserSpeaking",
            "input Weather? false",
            "vad_end",
            "phase Active",
            "thought Checking.",
            "phase ModelSpeaking",
            "audio 4",
            "text It is",
            "text  sunny.",
            "output It is sunny. false",
            "input Weather? true",
            "output It is sunny. true",
            "text_complete It is sunny.",
            "phase Active",
            "phase ToolCallPending",
            "phase Active",
            "phase Interrupted",
            "phase Disconnecting",
            "phase Disconnected",
        ]
    );
    assert_eq!(take(&telemetry), ["usage Some(42)"]);
    assert_eq!(
        take(&control),
        [
            "connected",
            "turn_complete",
            "tool_call [\"lookup\"]",
            "tool_cancelled [\"c-2\"]",
            "interrupted",
            "disconnected None",
        ]
    );
    assert_eq!(take(&spawned), ["generation_complete"]);

    // Subscribed before connecting: every lane's sequence is complete from 1.
    for lane in [Lane::Fast, Lane::Control, Lane::Supervisor] {
        let seqs: Vec<u64> = all
            .iter()
            .filter(|e| e.lane == lane)
            .map(|e| e.seq)
            .collect();
        assert_eq!(
            seqs,
            (1..=seqs.len() as u64).collect::<Vec<_>>(),
            "{lane:?}"
        );
    }
    let control_kinds: Vec<&str> = all
        .iter()
        .filter(|e| e.lane == Lane::Control)
        .map(|e| e.event.kind())
        .take(4)
        .collect();
    // Connecting and SetupSent happened before `connect` returned, and are there.
    assert_eq!(
        control_kinds,
        [
            "phase_changed",
            "phase_changed",
            "connected",
            "phase_changed"
        ]
    );
}
