//! The transcript through a whole session: turns built from the final transcriptions, the
//! answer text and the tool calls, stamped with event time, and kept across a restart of
//! the control lane.

use crate::support;
use crate::turns_support;

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use reel_actors::callbacks::{AsyncCallback, CallbackMode, ControlCallbacks};
use reel_actors::testing::ScriptedServer;
use reel_actors::transcript::{ToolCallSummary, TranscriptTurn};
use reel_tools::{SimpleTool, ToolDispatcher};
use serde_json::json;
use turns_support::Rig;

fn weather() -> ToolDispatcher {
    let mut dispatcher = ToolDispatcher::new();
    dispatcher
        .register(SimpleTool::new(
            "get_weather",
            "Weather for a city.",
            None,
            |_args, _ctx| async move { Ok(json!({"temp_c": 21})) },
        ))
        .unwrap();
    dispatcher
}

#[tokio::test(start_paused = true)]
async fn turns_are_built_from_final_transcriptions_answer_text_and_tool_calls() {
    let mut server = ScriptedServer::bind().await;
    let mut rig = Rig::start(&mut server, |b| b.dispatcher(weather())).await;
    assert!(rig.handle.transcript().is_empty());

    // Turn 1, spoken: transcription chunks, finalized by the server or at turn complete.
    tokio::time::advance(Duration::from_secs(1)).await;
    rig.conn
        .send_json(&json!({"serverContent": {"inputTranscription": {"text": "What's the "}}}))
        .await;
    rig.user("weather?").await;
    rig.model("It is ").await;
    rig.model("sunny.").await;
    let first = rig.turn().await;

    // Turn 2: a tool call answered in the turn, and answer text without a transcription.
    tokio::time::advance(Duration::from_secs(1)).await;
    rig.user("In Paris, please.").await;
    rig.conn
        .send_json(&json!({"toolCall": {"functionCalls": [
            {"id": "c1", "name": "get_weather", "args": {"city": "Paris"}}
        ]}}))
        .await;
    assert_eq!(
        rig.conn.recv_json().await,
        json!({"toolResponse": {"functionResponses": [
            {"id": "c1", "name": "get_weather", "response": {"temp_c": 21}}
        ]}})
    );
    rig.model_text("21 degrees ").await;
    rig.model_text("in Paris.").await;
    let second = rig.turn().await;

    // Turn 3: the user barges in; the model's unfinished speech is dropped.
    tokio::time::advance(Duration::from_secs(1)).await;
    rig.user("Stop.").await;
    rig.model("As I was say").await;
    rig.conn
        .send_json(&json!({"serverContent": {"interrupted": true}}))
        .await;
    let third = rig.turn().await;

    let expected = [
        TranscriptTurn::new(1, "What's the weather?", "It is sunny.", first),
        TranscriptTurn::new(2, "In Paris, please.", "21 degrees in Paris.", second).with_tool_call(
            ToolCallSummary {
                call_id: "c1".into(),
                name: "get_weather".into(),
                args: json!({"city": "Paris"}).into(),
                response: Some(json!({"temp_c": 21})),
            },
        ),
        TranscriptTurn::new(3, "Stop.", "", third),
    ];
    assert_eq!(*rig.handle.transcript(), expected);
    assert_eq!(first, support::T0 + 1500, "event time: the frame's");
    assert_eq!(rig.handle.state().get::<u32>("session:turn_count"), Some(3));
}

#[tokio::test(start_paused = true)]
async fn a_restart_of_the_control_lane_loses_no_turn_and_no_part_of_one() {
    let mut server = ScriptedServer::bind().await;
    let failed = Arc::new(AtomicBool::new(false));
    let flag = Arc::clone(&failed);
    let callbacks = ControlCallbacks {
        on_generation_complete: Some(AsyncCallback::new(CallbackMode::Blocking, move |()| {
            let flag = Arc::clone(&flag);
            async move {
                if !flag.swap(true, Ordering::SeqCst) {
                    panic!("generation callback failed on purpose");
                }
            }
        })),
        ..ControlCallbacks::default()
    };
    let mut rig = Rig::start(&mut server, |b| b.control_callbacks(callbacks)).await;
    let first = rig.exchange("First question.", "First answer.").await;

    // Mid-turn the lane fails and is restarted: what it had gathered of the turn stays.
    rig.user("Second question.").await;
    rig.conn
        .send_json(&json!({"serverContent": {"generationComplete": true}}))
        .await;
    rig.settle().await;
    assert_eq!(rig.handle.telemetry().restarts, 1);
    rig.model("Second answer.").await;
    let second = rig.turn().await;

    assert_eq!(
        *rig.handle.transcript(),
        [
            TranscriptTurn::new(1, "First question.", "First answer.", first),
            TranscriptTurn::new(2, "Second question.", "Second answer.", second),
        ]
    );
}
