//! Every mistake a chain can hold is reported before anything connects, with a text that
//! says what to fix; starting an invalid chain creates no file and opens no connection.

use std::time::Duration;

use reel_fluent::{BuildError, ConnectError, Live, LiveBuilder, ReplayError};
use reel_protocol::ApiEndpoint;
use reel_tools::SimpleTool;
use serde_json::json;

fn tool(name: &str) -> SimpleTool {
    SimpleTool::new(
        name,
        format!("The {name} tool."),
        None,
        |_args, _ctx| async { Ok(json!({})) },
    )
}

fn error_text(builder: LiveBuilder) -> String {
    match builder.validate() {
        Ok(()) => panic!("the chain was accepted"),
        Err(error) => error.to_string(),
    }
}

#[test]
fn a_transition_to_a_phase_that_does_not_exist() {
    let builder = Live::builder()
        .phase("greeting", |p| p.transition("booking", |_| true))
        .phase("farewell", |p| p.terminal());
    assert_eq!(
        error_text(builder),
        "invalid phases: phase `greeting` has a transition to `booking`, which is not defined; \
         defined phases: [\"farewell\", \"greeting\"]"
    );
}

#[test]
fn an_initial_phase_that_is_not_defined() {
    let builder = Live::builder()
        .phase("greeting", |p| p.instruction("Hello."))
        .initial_phase("intro");
    assert_eq!(
        error_text(builder),
        "invalid phases: initial phase `intro` is not defined; defined phases: [\"greeting\"]"
    );
    assert_eq!(
        error_text(Live::builder().initial_phase("intro")),
        "invalid phases: initial phase `intro` is not defined; defined phases: []"
    );
}

#[test]
fn a_phase_defined_twice_and_a_terminal_phase_with_transitions() {
    let twice = Live::builder()
        .phase("greeting", |p| p)
        .phase("greeting", |p| p);
    assert_eq!(
        error_text(twice),
        "invalid phases: phase `greeting` is defined twice; give each phase a unique name"
    );
    let terminal = Live::builder().phase("end", |p| p.terminal().transition("end", |_| true));
    assert_eq!(
        error_text(terminal),
        "invalid phases: phase `end` is terminal but has transitions; remove them or drop `.terminal()`"
    );
}

#[test]
fn a_tool_named_twice() {
    let builder = Live::builder()
        .tool(tool("get_weather"))
        .tool(tool("get_weather"));
    assert_eq!(
        error_text(builder),
        "`.tool(\"get_weather\")`: a tool named `get_weather` is already registered; tool names must be unique"
    );
    let mut dispatcher = reel_tools::ToolDispatcher::new();
    dispatcher.register(tool("get_weather")).unwrap();
    let across = Live::builder().tool(tool("get_weather")).tools(dispatcher);
    assert_eq!(
        error_text(across),
        "`.tools(..)`: a tool named `get_weather` is already registered; tool names must be unique"
    );
}

#[test]
fn a_tool_name_the_api_does_not_accept() {
    assert_eq!(
        error_text(Live::builder().tool(tool("get weather"))),
        "`.tool(\"get weather\")`: `get weather` is not a valid tool name: \
         only letters, digits, `_`, `.`, `:` and `-` are allowed"
    );
}

#[test]
fn a_phase_allowing_an_unknown_tool() {
    let builder = Live::builder()
        .tool(tool("get_weather"))
        .phase("greeting", |p| p.tools(["get_weather", "book_table"]));
    assert_eq!(
        error_text(builder),
        "invalid phases: phase `greeting` allows tool `book_table`, which is not declared; \
         declared tools: [\"get_weather\"]"
    );
}

#[test]
fn settings_for_an_unknown_tool() {
    let builder = Live::builder()
        .tool(tool("get_weather"))
        .tool_background("search_flights");
    assert_eq!(
        error_text(builder),
        "`.tool_background(\"search_flights\")`: no tool named `search_flights` is registered; \
         registered tools: get_weather"
    );
    let builder = Live::builder()
        .tool(tool("get_weather"))
        .tool_background_with_scheduling("search", reel_protocol::Scheduling::Silent);
    assert_eq!(
        error_text(builder),
        "`.tool_background_with_scheduling(\"search\")`: no tool named `search` is registered; \
         registered tools: get_weather"
    );
    let builder = Live::builder().tool_timeout("get_weather", Duration::from_secs(5));
    assert_eq!(
        error_text(builder),
        "`.tool_timeout(\"get_weather\")`: no tool named `get_weather` is registered; \
         registered tools: (none)"
    );
}

#[test]
fn a_setting_before_its_tool_is_fine() {
    let builder = Live::builder()
        .tool_background("search_flights")
        .tool_timeout("search_flights", Duration::from_secs(90))
        .tool(tool("search_flights"));
    assert!(builder.validate().is_ok());
}

#[test]
fn a_function_declared_in_the_config_and_as_a_tool() {
    let builder = Live::builder()
        .configure(|config| config.add_function("get_weather", "The weather.", None))
        .tool(tool("get_weather"));
    let error = builder.validate().unwrap_err();
    assert!(matches!(error, BuildError::Session(_)), "{error:?}");
    assert_eq!(
        error.to_string(),
        "tool `get_weather` is declared twice: once in the session config and once in the \
         dispatcher; keep one"
    );
}

#[tokio::test]
async fn an_invalid_chain_connects_nowhere_and_creates_no_file() {
    let dir = std::env::temp_dir().join(format!("reel-fluent-validation-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let wire = dir.join("never.wire.jsonl");
    let journal = dir.join("never.journal.jsonl");
    let builder = Live::builder()
        .record_wire(&wire)
        .journal(&journal)
        .phase("greeting", |p| p.transition("nowhere", |_| true));
    // Nothing listens here; an attempt to connect would fail differently.
    let endpoint = ApiEndpoint::google_ai("").with_base_url("ws://127.0.0.1:9");
    let error = builder.connect(endpoint).await.unwrap_err();
    assert!(
        matches!(error, ConnectError::Build(BuildError::Phases(_))),
        "{error:?}"
    );
    assert!(!wire.exists());
    assert!(!journal.exists());

    let replayed = Live::builder()
        .initial_phase("intro")
        .replay(dir.join("missing.wire.jsonl"))
        .await
        .unwrap_err();
    assert!(matches!(replayed, ReplayError::Build(_)), "{replayed:?}");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[tokio::test]
async fn a_recording_file_that_cannot_be_created_is_named() {
    let missing = std::env::temp_dir()
        .join(format!("reel-fluent-no-such-dir-{}", std::process::id()))
        .join("session.wire.jsonl");
    let endpoint = ApiEndpoint::google_ai("").with_base_url("ws://127.0.0.1:9");
    let error = Live::builder()
        .record_wire(&missing)
        .connect(endpoint)
        .await
        .unwrap_err();
    assert_eq!(
        error.to_string(),
        format!(
            "cannot record the wire log: cannot access `{}`: No such file or directory (os error 2); \
             check that its folder exists and is writable",
            missing.display()
        )
    );
}

#[tokio::test]
async fn a_recording_that_cannot_be_opened_is_named() {
    let missing = std::env::temp_dir().join(format!(
        "reel-fluent-missing-{}.wire.jsonl",
        std::process::id()
    ));
    let error = Live::builder().replay(&missing).await.unwrap_err();
    assert_eq!(
        error.to_string(),
        format!(
            "cannot replay the recording: cannot access `{}`: No such file or directory (os error 2)",
            missing.display()
        )
    );
}
