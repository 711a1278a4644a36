//! A whole session through the fluent builder on a loopback WebSocket: the greeting as
//! the first frame after setupComplete, a typed tool call answered with its exact response,
//! a phase transition that sends the next phase's instruction. Then the same chain replays
//! the recording: no divergence, each lane's events, the journal and the final state equal.

use crate::support;

use std::time::Duration;

use reel_actors::testing::ScriptedServer;
use reel_actors::writer::Origin;
use reel_actors::{EventEnvelope, Lane, LiveEvent};
use reel_fluent::{Live, LiveBuilder};
use reel_recorder::journal::StateMutation;
use reel_recorder::wire_log::{Direction, Source, WireEntry};
use reel_tools::TypedTool;
use serde::Deserialize;
use serde_json::{Value, json};
use support::{drain, lane, recording, text, turn_complete, until_turn_complete};

#[derive(Deserialize, schemars::JsonSchema)]
struct WeatherArgs {
    /// City name.
    city: String,
}

/// The application under test, as an application would write it: one function.
fn assistant() -> LiveBuilder {
    Live::builder()
        .model("gemini-live-2.5-flash-preview")
        .text_only()
        .session_resume(true)
        .tool(TypedTool::new(
            "get_weather",
            "Get the current weather for a city.",
            |args: WeatherArgs, ctx| async move {
                ctx.state
                    .set("app:last_city", &args.city)
                    .map_err(|e| ctx.fail(e))?;
                Ok(json!({"city": args.city, "temp_c": 21}))
            },
        ))
        .phase("weather", |p| {
            p.instruction("Talk about the weather.")
                .tools(["get_weather"])
                .transition_with(
                    "goodbye",
                    |s| s.contains("app:last_city"),
                    "a city is known",
                )
        })
        .phase("goodbye", |p| p.instruction("Say goodbye.").terminal())
        .greeting("Hi there!")
}

/// What a recorded session left.
struct Recorded {
    events: Vec<EventEnvelope>,
    wire: Vec<WireEntry>,
    journal: Vec<StateMutation>,
    state: Value,
}

async fn record() -> Recorded {
    let mut server = ScriptedServer::bind().await;
    let (builder, memory) = recording(assistant());
    let mut events = builder.subscribe();
    let endpoint = server.endpoint();
    let script = async {
        let mut conn = server.accept().await;
        let setup = conn.recv().await.unwrap();
        tokio::time::advance(Duration::from_millis(40)).await;
        conn.send_json(&json!({"setupComplete": {}})).await;
        let greeting = conn.recv_json().await;
        (conn, setup, greeting)
    };
    let (handle, (mut conn, setup, greeting)) = tokio::join!(builder.connect(endpoint), script);
    let handle = handle.unwrap();

    assert_eq!(
        setup.text(),
        Some(concat!(
            r#"{"setup":{"model":"models/gemini-live-2.5-flash-preview","#,
            r#""generationConfig":{"responseModalities":["TEXT"]},"#,
            r#""systemInstruction":{"parts":[{"text":"Talk about the weather."}]},"#,
            r#""tools":[{"functionDeclarations":[{"name":"get_weather","description":"Get the current weather for a city.","#,
            r#""parameters":{"type":"object","properties":{"city":{"type":"string","description":"City name."}},"required":["city"]}}]}],"#,
            r#""sessionResumption":{}}}"#
        ))
    );
    assert_eq!(
        greeting,
        json!({"clientContent": {"turns": [{"role": "user", "parts": [{"text": "Hi there!"}]}], "turnComplete": true}})
    );

    // The model greets back; no city yet, so no transition.
    tokio::time::advance(Duration::from_millis(150)).await;
    conn.send_json(&text("Hello! Which city?")).await;
    conn.send_json(&turn_complete()).await;
    let mut seen = until_turn_complete(&mut events).await;

    handle.send_text("What's the weather in Paris?").unwrap();
    assert_eq!(
        conn.recv_json().await,
        json!({"clientContent": {"turns": [{"role": "user", "parts": [{"text": "What's the weather in Paris?"}]}], "turnComplete": true}})
    );
    tokio::time::advance(Duration::from_millis(120)).await;
    conn.send_json(&json!({"toolCall": {"functionCalls": [
        {"id": "call-1", "name": "get_weather", "args": {"city": "Paris"}}
    ]}}))
    .await;
    assert_eq!(
        conn.recv().await.unwrap().text(),
        Some(
            r#"{"toolResponse":{"functionResponses":[{"id":"call-1","name":"get_weather","response":{"city":"Paris","temp_c":21}}]}}"#
        )
    );

    // The turn ends with a city known: the phase changes and its instruction is sent.
    tokio::time::advance(Duration::from_millis(90)).await;
    conn.send_json(&text("It is 21 degrees in Paris.")).await;
    conn.send_json(&turn_complete()).await;
    assert_eq!(
        conn.recv().await.unwrap().text(),
        Some(r#"{"contextUpdate":{"systemInstruction":{"parts":[{"text":"Say goodbye."}]}}}"#)
    );

    seen.extend(until_turn_complete(&mut events).await);
    let (end, _) = tokio::join!(handle.disconnect(), conn.expect_closed());
    assert_eq!(end.reason, "closed with code 1000: client disconnect");
    seen.extend(drain(&mut events).await);
    Recorded {
        events: seen,
        wire: memory.wire.entries(),
        journal: memory.journal.entries(),
        state: handle.state().snapshot().to_json(),
    }
}

/// Each wire entry as (direction, sent by the application, first key of the frame).
fn shape(entries: &[WireEntry]) -> Vec<(Direction, bool, String)> {
    entries
        .iter()
        .map(|entry| {
            let key = serde_json::from_slice::<Value>(&entry.payload)
                .ok()
                .and_then(|v| v.as_object().and_then(|o| o.keys().next().cloned()))
                .unwrap_or_else(|| "(close)".to_owned());
            (entry.dir, entry.source == Some(Source::App), key)
        })
        .collect()
}

#[tokio::test(start_paused = true)]
async fn a_fluent_session_sends_the_greeting_answers_the_tool_and_changes_phase() {
    let recorded = record().await;
    let out = |app: bool, key: &str| (Direction::Out, app, key.to_owned());
    let inbound = |key: &str| (Direction::In, false, key.to_owned());
    assert_eq!(
        shape(&recorded.wire),
        [
            out(false, "setup"),
            inbound("setupComplete"),
            out(true, "clientContent"), // the greeting, first after setupComplete
            inbound("serverContent"),
            inbound("serverContent"),
            out(true, "clientContent"),
            inbound("toolCall"),
            out(false, "toolResponse"),
            inbound("serverContent"),
            inbound("serverContent"),
            out(false, "contextUpdate"), // the goodbye phase's instruction
            inbound("(close)"),
        ]
    );
    assert_eq!(
        lane(&recorded.events, Lane::Control)
            .into_iter()
            .filter_map(|event| match event {
                LiveEvent::ToolFinished {
                    name, response, ok, ..
                } => {
                    Some(json!({"tool": name, "response": response, "ok": ok}))
                }
                LiveEvent::PhaseTransition { from, to, reason } => {
                    Some(json!({"from": from, "to": to, "reason": reason}))
                }
                _ => None,
            })
            .collect::<Vec<_>>(),
        [
            json!({"tool": "get_weather", "response": {"city": "Paris", "temp_c": 21}, "ok": true}),
            json!({"from": "weather", "to": "goodbye", "reason": "a city is known"}),
        ]
    );
    assert_eq!(recorded.state["app:last_city"], json!("Paris"));
    assert_eq!(recorded.state["session:active_phase"], json!("goodbye"));
    assert_eq!(
        lane(&recorded.events, Lane::Supervisor),
        [LiveEvent::SessionEnded {
            reason: "closed with code 1000: client disconnect".into()
        }]
    );
}

#[tokio::test(start_paused = true)]
async fn the_same_chain_replays_its_recording_exactly() {
    let recorded = record().await;
    let outcome = assistant()
        .replay(recorded.wire.clone())
        .await
        .unwrap()
        .finish()
        .await;

    assert_eq!(outcome.divergences, vec![], "no divergence");
    for lane_kind in [Lane::Fast, Lane::Control, Lane::Supervisor] {
        assert_eq!(
            outcome.lane(lane_kind),
            lane(&recorded.events, lane_kind),
            "{lane_kind:?} lane"
        );
    }
    assert!(outcome.lane(Lane::Control).len() > 10);
    assert_eq!(outcome.journal, recorded.journal, "journal, entry by entry");
    assert_eq!(outcome.state.to_json(), recorded.state, "final state");
    assert!(outcome.journal_diff(&recorded.journal).is_clean());
    assert_eq!(
        outcome.end.reason,
        "closed with code 1000: client disconnect"
    );

    // The runtime's frames came out byte-identical; the greeting and the user's turn were
    // taken from the recording, not sent again.
    let frames: Vec<(Origin, bool, String)> = outcome
        .outbound_frames
        .iter()
        .map(|f| {
            let key = serde_json::from_slice::<Value>(&f.bytes).unwrap();
            let key = key.as_object().unwrap().keys().next().unwrap().clone();
            (f.origin, f.identical, key)
        })
        .collect();
    assert_eq!(
        frames,
        [
            (Origin::Runtime, true, "setup".to_owned()),
            (Origin::Runtime, true, "toolResponse".to_owned()),
            (Origin::Runtime, true, "contextUpdate".to_owned()),
        ]
    );
}

#[tokio::test(start_paused = true)]
async fn a_replay_subscribed_before_it_starts_sees_every_event() {
    let recorded = record().await;
    let builder = assistant();
    let mut early = builder.subscribe();
    let mut replay = builder.replay(recorded.wire.clone()).await.unwrap();
    let mut from_start = replay.events();
    replay.drained().await;
    replay.disconnect().await;
    let early = drain(&mut early).await;
    let from_start = drain(&mut from_start).await;
    assert_eq!(early, from_start);
    assert_eq!(
        lane(&early, Lane::Control),
        lane(&recorded.events, Lane::Control)
    );
    assert_eq!(replay.journal(), recorded.journal);
}
