//! The control lane's hooks on what the runtime sends, through the whole session tree:
//! `before_tool_response` (the frame on the wire is what it returns), `on_turn_boundary`
//! (its frames go out before `on_turn_complete` runs), `instruction_template` and
//! `instruction_amendment` (exact update texts, none when unchanged).

use crate::support;

use std::sync::{Arc, Mutex};

use reel_actors::LiveSessionBuilder;
use reel_actors::callbacks::{AsyncCallback, CallbackMode, ControlCallbacks, Interceptors};
use reel_actors::phases::{Phase, PhaseMachine};
use reel_actors::testing::ScriptedServer;
use reel_actors::testing::ServerConn;
use reel_protocol::{Content, FunctionResponse, SessionConfig};
use reel_tools::{SimpleTool, ToolDispatcher};
use serde_json::{Value, json};
use support::{settle, start};

type Log = Arc<Mutex<Vec<String>>>;

fn push(log: &Log, entry: impl Into<String>) {
    log.lock().unwrap().push(entry.into());
}

fn entries(log: &Log) -> Vec<String> {
    log.lock().unwrap().clone()
}

/// Tools: `lookup_account` answers with a secret; `remember_name` writes `app:name`.
fn dispatcher() -> ToolDispatcher {
    let mut dispatcher = ToolDispatcher::new();
    dispatcher
        .register(SimpleTool::new(
            "lookup_account",
            "Looks an account up.",
            None,
            |args, _ctx| async move { Ok(json!({"owner": args["owner"], "pin": "4321"})) },
        ))
        .unwrap();
    dispatcher
        .register(SimpleTool::new(
            "remember_name",
            "Remembers the user's name.",
            None,
            |args, ctx| async move {
                ctx.state
                    .set("app:name", &args["name"])
                    .map_err(|e| ctx.fail(e))?;
                Ok(json!({"ok": true}))
            },
        ))
        .unwrap();
    dispatcher
}

/// Replaces every response's `pin` with `"***"` and adds the count of responses.
fn redact(responses: Vec<FunctionResponse>) -> Vec<FunctionResponse> {
    let count = responses.len();
    responses
        .into_iter()
        .map(|mut response| {
            if let Some(Value::Object(fields)) = response.response.as_mut() {
                if fields.contains_key("pin") {
                    fields.insert("pin".into(), json!("***"));
                }
                fields.insert("batch".into(), json!(count));
            }
            response
        })
        .collect()
}

fn redacting() -> Interceptors {
    Interceptors {
        before_tool_response: Some(Arc::new(|responses, _state| {
            Box::pin(async move { redact(responses) })
        })),
        ..Interceptors::default()
    }
}

fn turn_complete() -> Value {
    json!({"serverContent": {"turnComplete": true}})
}

fn instruction_frame(text: &str) -> Value {
    json!({"contextUpdate": {"systemInstruction": {"parts": [{"text": text}]}}})
}

/// The model asks `remember_name` to remember Ada; its response is the next frame.
async fn remember_ada(conn: &mut ServerConn) {
    conn.send_json(&json!({"toolCall": {"functionCalls": [
        {"id": "n1", "name": "remember_name", "args": {"name": "Ada"}}
    ]}}))
    .await;
    assert_eq!(
        conn.recv_json().await,
        json!({"toolResponse": {"functionResponses": [
            {"id": "n1", "name": "remember_name", "response": {"ok": true}}
        ]}})
    );
}

fn context_frame(text: &str) -> Value {
    json!({"clientContent": {"turns": [{"role": "user", "parts": [{"text": text}]}], "turnComplete": false}})
}

#[tokio::test(start_paused = true)]
async fn before_tool_response_decides_what_the_dispatcher_sends() {
    let mut server = ScriptedServer::bind().await;
    let (_handle, mut conn, _setup, mut events) = start(
        &mut server,
        |b| b.dispatcher(dispatcher()).interceptors(redacting()),
        SessionConfig::default(),
    )
    .await;
    settle(&mut events).await;
    conn.send_json(&json!({"toolCall": {"functionCalls": [
        {"id": "c1", "name": "lookup_account", "args": {"owner": "ada"}},
        {"id": "c2", "name": "lookup_account", "args": {"owner": "bob"}}
    ]}}))
    .await;
    // One frame for the toolCall frame, in call order, redacted and augmented.
    assert_eq!(
        conn.recv_json().await,
        json!({"toolResponse": {"functionResponses": [
            {"id": "c1", "name": "lookup_account", "response": {"owner": "ada", "pin": "***", "batch": 2}},
            {"id": "c2", "name": "lookup_account", "response": {"owner": "bob", "pin": "***", "batch": 2}}
        ]}})
    );
    conn.send_json(&json!({"toolCall": {"functionCalls": [
        {"id": "c3", "name": "lookup_account", "args": {"owner": "cy"}}
    ]}}))
    .await;
    assert_eq!(
        conn.recv_json().await,
        json!({"toolResponse": {"functionResponses": [
            {"id": "c3", "name": "lookup_account", "response": {"owner": "cy", "pin": "***", "batch": 1}}
        ]}})
    );
}

#[tokio::test(start_paused = true)]
async fn before_tool_response_sees_what_on_tool_call_answers_and_the_state() {
    let mut server = ScriptedServer::bind().await;
    let callbacks = ControlCallbacks {
        on_tool_call: Some(Arc::new(|calls, _state| {
            Box::pin(async move {
                Some(
                    calls
                        .iter()
                        .map(|call| {
                            FunctionResponse::new(
                                call.id.clone().unwrap_or_default(),
                                call.name.clone().unwrap_or_default(),
                                json!({"pin": "1111"}),
                            )
                        })
                        .collect(),
                )
            })
        })),
        ..ControlCallbacks::default()
    };
    let interceptors = Interceptors {
        before_tool_response: Some(Arc::new(|responses, state| {
            Box::pin(async move {
                state.set("app:redacted", responses.len()).await.unwrap();
                redact(responses)
            })
        })),
        ..Interceptors::default()
    };
    let (handle, mut conn, _setup, mut events) = start(
        &mut server,
        |b| b.control_callbacks(callbacks).interceptors(interceptors),
        SessionConfig::default(),
    )
    .await;
    settle(&mut events).await;
    conn.send_json(&json!({"toolCall": {"functionCalls": [
        {"id": "m1", "name": "manual", "args": {}}
    ]}}))
    .await;
    assert_eq!(
        conn.recv_json().await,
        json!({"toolResponse": {"functionResponses": [
            {"id": "m1", "name": "manual", "response": {"pin": "***", "batch": 1}}
        ]}})
    );
    settle(&mut events).await;
    assert_eq!(handle.state().get::<u64>("app:redacted"), Some(1));
}

/// A session with the tools, built by `build`, whose setup says `instruction`; live and
/// settled.
async fn live(
    server: &mut ScriptedServer,
    build: impl FnOnce(LiveSessionBuilder) -> LiveSessionBuilder,
    config: SessionConfig,
    instruction: &str,
) -> (
    reel_actors::LiveHandle,
    ServerConn,
    reel_actors::EventStream,
) {
    let (handle, conn, setup, mut events) =
        start(server, |b| build(b.dispatcher(dispatcher())), config).await;
    assert_eq!(
        setup["setup"]["systemInstruction"],
        json!({"parts": [{"text": instruction}]})
    );
    settle(&mut events).await;
    (handle, conn, events)
}

/// A session with a template (`Help {app:name}.` once the name is known), an amendment, a
/// turn-boundary hook that sends a context frame, and `on_turn_complete`, all logging.
async fn templated_session(
    server: &mut ScriptedServer,
    log: &Log,
) -> (
    reel_actors::LiveHandle,
    ServerConn,
    reel_actors::EventStream,
) {
    let boundary_log = Arc::clone(log);
    let complete_log = Arc::clone(log);
    let template_log = Arc::clone(log);
    let interceptors = Interceptors {
        instruction_template: Some(Arc::new(move |state| {
            push(&template_log, "template");
            state
                .get::<String>("app:name")
                .map(|name| format!("Help {name}."))
        })),
        instruction_amendment: Some(Arc::new(|_state| Some("Keep it short.".to_owned()))),
        on_turn_boundary: Some(Arc::new(move |state, writer| {
            let log = Arc::clone(&boundary_log);
            Box::pin(async move {
                let turn = state.get::<u64>("session:turn_count").unwrap_or(0) + 1;
                push(&log, format!("boundary {turn}"));
                writer
                    .send_client_content(
                        vec![Content::user_text(format!("context for turn {turn}"))],
                        false,
                    )
                    .unwrap();
            })
        })),
        ..Interceptors::default()
    };
    let callbacks = ControlCallbacks {
        on_turn_complete: Some(AsyncCallback::new(CallbackMode::Blocking, move |()| {
            let log = Arc::clone(&complete_log);
            async move { push(&log, "turn complete") }
        })),
        ..ControlCallbacks::default()
    };
    live(
        server,
        |b| b.control_callbacks(callbacks).interceptors(interceptors),
        SessionConfig::default().system_instruction("Be helpful."),
        "Be helpful.",
    )
    .await
}

#[tokio::test(start_paused = true)]
async fn the_template_replaces_the_instruction_and_is_sent_only_when_it_changes() {
    let mut server = ScriptedServer::bind().await;
    let log = Log::default();
    let (_handle, mut conn, mut events) = templated_session(&mut server, &log).await;

    // Turn 1: no name yet, the template says nothing: the amendment joins the session's
    // instruction. Then the boundary's context frame.
    conn.send_json(&turn_complete()).await;
    assert_eq!(
        conn.recv_json().await,
        instruction_frame("Be helpful.\n\nKeep it short.")
    );
    assert_eq!(conn.recv_json().await, context_frame("context for turn 1"));
    settle(&mut events).await;
    assert_eq!(entries(&log), ["template", "boundary 1", "turn complete"]);

    // A tool learns the name; turn 2: the template replaces the whole instruction.
    remember_ada(&mut conn).await;
    conn.send_json(&turn_complete()).await;
    assert_eq!(conn.recv_json().await, instruction_frame("Help Ada."));
    assert_eq!(conn.recv_json().await, context_frame("context for turn 2"));

    // Turn 3: the same text: no update, the boundary's frame comes next.
    conn.send_json(&turn_complete()).await;
    assert_eq!(conn.recv_json().await, context_frame("context for turn 3"));
    settle(&mut events).await;
    assert_eq!(
        entries(&log),
        [
            "template",
            "boundary 1",
            "turn complete",
            "template",
            "boundary 2",
            "turn complete",
            "template",
            "boundary 3",
            "turn complete"
        ]
    );
}

fn greeting_then_booking() -> PhaseMachine {
    PhaseMachine::builder("greeting")
        .phase(
            Phase::new("greeting")
                .instruction("Greet the caller.")
                .transition("booking", |s| s.contains("app:name")),
        )
        .phase(Phase::new("booking").instruction("Book a table."))
        .build()
        .unwrap()
}

/// A session in phases greeting → booking with `interceptors`, live and settled.
async fn phased_session(
    server: &mut ScriptedServer,
    interceptors: Interceptors,
) -> (
    reel_actors::LiveHandle,
    ServerConn,
    reel_actors::EventStream,
) {
    live(
        server,
        |b| b.phases(greeting_then_booking()).interceptors(interceptors),
        SessionConfig::default(),
        "Greet the caller.",
    )
    .await
}

#[tokio::test(start_paused = true)]
async fn the_amendment_joins_the_phase_instruction_on_turns_without_a_transition() {
    let mut server = ScriptedServer::bind().await;
    let interceptors = Interceptors {
        instruction_amendment: Some(Arc::new(|state| {
            state
                .get::<String>("app:name")
                .map(|name| format!("The caller is {name}."))
        })),
        ..Interceptors::default()
    };
    let (handle, mut conn, mut events) = phased_session(&mut server, interceptors).await;

    // Turn 1: no amendment, the phase's instruction is the one already sent: nothing.
    conn.send_json(&turn_complete()).await;
    settle(&mut events).await;
    // The tool response is the next frame: turn 1 sent no update.
    remember_ada(&mut conn).await;
    // Turn 2: a transition: the new phase's instruction alone.
    conn.send_json(&turn_complete()).await;
    assert_eq!(conn.recv_json().await, instruction_frame("Book a table."));
    // Turn 3: no transition: amended.
    conn.send_json(&turn_complete()).await;
    assert_eq!(
        conn.recv_json().await,
        instruction_frame("Book a table.\n\nThe caller is Ada.")
    );
    // Turn 4: unchanged: nothing, so the next frame is the user's text.
    conn.send_json(&turn_complete()).await;
    settle(&mut events).await;
    handle.send_text("Hello").unwrap();
    assert_eq!(
        conn.recv_json().await,
        json!({"clientContent": {"turns": [{"role": "user", "parts": [{"text": "Hello"}]}], "turnComplete": true}})
    );
}

#[tokio::test(start_paused = true)]
async fn with_a_template_a_transition_sends_one_instruction_and_the_template_wins() {
    let mut server = ScriptedServer::bind().await;
    let interceptors = Interceptors {
        // Speaks only in the booking phase.
        instruction_template: Some(Arc::new(|state| {
            let phase = state.get::<String>("session:active_phase")?;
            let name = state.get::<String>("app:name")?;
            (phase == "booking" && state.contains("app:party"))
                .then(|| format!("Book for {name}'s party."))
        })),
        instruction_amendment: Some(Arc::new(|_state| Some("Never shout.".to_owned()))),
        ..Interceptors::default()
    };
    let (handle, mut conn, mut events) = phased_session(&mut server, interceptors).await;
    remember_ada(&mut conn).await;
    // Turn 1: a transition; the template says nothing, so the phase's instruction goes
    // out, once, at the instruction step (no amendment on a transition).
    conn.send_json(&turn_complete()).await;
    assert_eq!(conn.recv_json().await, instruction_frame("Book a table."));
    // Turn 2: no transition, the template still says nothing: amended.
    conn.send_json(&turn_complete()).await;
    assert_eq!(
        conn.recv_json().await,
        instruction_frame("Book a table.\n\nNever shout.")
    );
    settle(&mut events).await;
    // Turn 3: the template speaks and wins over the amendment.
    handle.state().set("app:party", 4).await.unwrap();
    conn.send_json(&turn_complete()).await;
    assert_eq!(
        conn.recv_json().await,
        instruction_frame("Book for Ada's party.")
    );
}
