//! State through a whole session: the exact journal a session writes, and conversation
//! phases that move on guards, send their instruction and filter tools.

use crate::support;

use std::sync::Arc;

use reel_actors::phases::{Phase, PhaseMachine};
use reel_actors::testing::ScriptedServer;
use reel_actors::{Lane, LiveEvent};
use reel_protocol::SessionConfig;
use reel_recorder::journal::{JournalSink, MemoryJournalSink, StateMutation};
use reel_tools::{SimpleTool, ToolDispatcher};
use serde_json::json;
use support::{settle, start};

fn dispatcher() -> ToolDispatcher {
    let mut dispatcher = ToolDispatcher::new();
    dispatcher
        .register(SimpleTool::new(
            "get_weather",
            "Weather for a city.",
            None,
            |args, ctx| async move {
                let city = args["city"].as_str().unwrap_or("nowhere").to_owned();
                ctx.state
                    .set("app:last_city", &city)
                    .map_err(|e| ctx.fail(e))?;
                Ok(json!({"temp_c": 21}))
            },
        ))
        .unwrap();
    dispatcher
        .register(SimpleTool::new(
            "book_table",
            "Book a table.",
            None,
            |_args, ctx| async move {
                ctx.state.set("app:booked", true).map_err(|e| ctx.fail(e))?;
                Ok(json!({"booked": true}))
            },
        ))
        .unwrap();
    dispatcher
}

fn phases() -> PhaseMachine {
    PhaseMachine::builder("weather")
        .phase(
            Phase::new("weather")
                .instruction("Talk about the weather.")
                .tools(["get_weather"])
                .transition_with(
                    "booking",
                    |state| state.contains("app:last_city"),
                    "a city is known",
                ),
        )
        .phase(
            Phase::new("booking")
                .instruction("Book a table in that city.")
                .tools(["book_table"])
                .terminal(),
        )
        .build()
        .unwrap()
}

fn line(m: &StateMutation) -> String {
    serde_json::to_string(m).unwrap()
}

#[tokio::test(start_paused = true)]
async fn a_session_writes_an_exact_journal_and_moves_through_its_phases() {
    let mut server = ScriptedServer::bind().await;
    let sink = Arc::new(MemoryJournalSink::new());
    let journal: Arc<dyn JournalSink> = sink.clone();
    let (handle, mut conn, setup, mut events) = start(
        &mut server,
        |b| {
            b.dispatcher(dispatcher())
                .phases(phases())
                .journal_sink(journal)
        },
        SessionConfig::default(),
    )
    .await;
    // The initial phase's instruction is the system instruction.
    assert_eq!(
        setup["setup"]["systemInstruction"],
        json!({"parts": [{"text": "Talk about the weather."}]})
    );
    settle(&mut events).await;

    // A tool the current phase does not allow is refused, and the model is told why.
    conn.send_json(
        &json!({"toolCall": {"functionCalls": [{"id": "c0", "name": "book_table", "args": {}}]}}),
    )
    .await;
    assert_eq!(
        conn.recv_json().await,
        json!({"toolResponse": {"functionResponses": [{"id": "c0", "name": "book_table",
            "response": {"error": "tool `book_table` is not available in the current phase `weather`"}}]}})
    );
    tokio::time::advance(std::time::Duration::from_millis(250)).await;
    conn.send_json(&json!({"toolCall": {"functionCalls": [{"id": "c1", "name": "get_weather", "args": {"city": "Paris"}}]}}))
        .await;
    assert_eq!(
        conn.recv_json().await["toolResponse"]["functionResponses"][0]["response"],
        json!({"temp_c": 21})
    );
    conn.send_json(&json!({"serverContent": {"turnComplete": true}}))
        .await;
    // The guard holds at turn complete: the new phase's instruction goes to the model.
    assert_eq!(
        conn.recv_json().await,
        json!({"contextUpdate": {"systemInstruction": {"parts": [{"text": "Book a table in that city."}]}}})
    );
    let seen = settle(&mut events).await;
    let transitions: Vec<&LiveEvent> = seen
        .iter()
        .filter(|e| e.lane == Lane::Control && e.event.kind() == "phase_transition")
        .map(|e| &e.event)
        .collect();
    assert_eq!(
        transitions,
        [&LiveEvent::PhaseTransition {
            from: "weather".into(),
            to: "booking".into(),
            reason: "a city is known".into()
        }]
    );
    assert_eq!(
        handle
            .state()
            .get::<String>("session:active_phase")
            .as_deref(),
        Some("booking")
    );

    // Every mutation of the session, in order: the session: keys written on connect and
    // then at most every 100 ms of session time, the tool's write committed with its
    // response (delta: true), the phase transition and the turn count at turn complete.
    let lines: Vec<String> = sink.entries().iter().map(line).collect();
    let expected = [
        r#"{"sequence":1,"key":"session:is_model_speaking","old":null,"new":false,"origin":"set","timestamp_ms":1718000000000,"delta":false}"#,
        r#"{"sequence":2,"key":"session:phase","old":null,"new":"Connecting","origin":"set","timestamp_ms":1718000000000,"delta":false}"#,
        r#"{"sequence":3,"key":"session:active_phase","old":null,"new":"weather","origin":"set","timestamp_ms":1718000000000,"delta":false}"#,
        r#"{"sequence":4,"key":"session:disconnected","old":null,"new":false,"origin":"set","timestamp_ms":1718000000000,"delta":false}"#,
        r#"{"sequence":5,"key":"session:elapsed_ms","old":null,"new":0,"origin":"set","timestamp_ms":1718000000000,"delta":false}"#,
        r#"{"sequence":6,"key":"session:phase","old":"Connecting","new":"SetupSent","origin":"set","timestamp_ms":1718000000000,"delta":false}"#,
        r#"{"sequence":7,"key":"session:remaining_budget_ms","old":null,"new":900000,"origin":"set","timestamp_ms":1718000000000,"delta":false}"#,
        r#"{"sequence":8,"key":"session:session_type","old":null,"new":"audio","origin":"set","timestamp_ms":1718000000000,"delta":false}"#,
        r#"{"sequence":9,"key":"session:silence_ms","old":null,"new":0,"origin":"set","timestamp_ms":1718000000000,"delta":false}"#,
        r#"{"sequence":10,"key":"session:elapsed_ms","old":0,"new":500,"origin":"set","timestamp_ms":1718000000500,"delta":false}"#,
        r#"{"sequence":11,"key":"session:phase","old":"SetupSent","new":"Active","origin":"set","timestamp_ms":1718000000500,"delta":false}"#,
        r#"{"sequence":12,"key":"session:remaining_budget_ms","old":900000,"new":899500,"origin":"set","timestamp_ms":1718000000500,"delta":false}"#,
        r#"{"sequence":13,"key":"session:elapsed_ms","old":500,"new":750,"origin":"set","timestamp_ms":1718000000750,"delta":false}"#,
        r#"{"sequence":14,"key":"session:remaining_budget_ms","old":899500,"new":899250,"origin":"set","timestamp_ms":1718000000750,"delta":false}"#,
        r#"{"sequence":15,"key":"app:last_city","old":null,"new":"Paris","origin":"set","timestamp_ms":1718000000750,"delta":true}"#,
        r#"{"sequence":16,"key":"session:active_phase","old":"weather","new":"booking","origin":"set","timestamp_ms":1718000000750,"delta":false}"#,
        r#"{"sequence":17,"key":"session:turn_count","old":null,"new":1,"origin":"set","timestamp_ms":1718000000750,"delta":false}"#,
    ];
    assert_eq!(lines, expected);
    assert_eq!(handle.state().recent_mutations(), sink.entries());
}
