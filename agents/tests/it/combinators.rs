//! Each combinator's semantics: exact outputs, state keys and call order, with scripted
//! models.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use reel_actors::state::State;
use reel_agents::{
    AgentError, FallbackTextAgent, FnTextAgent, LlmTextAgent, LoopTextAgent, MapOverTextAgent,
    ParallelTextAgent, RouteRule, RouteTextAgent, SequentialTextAgent, SharedAgent, TapTextAgent,
    TextAgent, TimeoutTextAgent,
};
use serde_json::json;

use crate::scripted_llm::{ScriptedLlm, entries, log};

fn llm_agent(name: &str, answers: &[&str], log: &Arc<Mutex<Vec<String>>>) -> SharedAgent {
    Arc::new(LlmTextAgent::new(
        name,
        ScriptedLlm::new(name, answers, log.clone()),
    ))
}

fn fails(name: &'static str) -> SharedAgent {
    Arc::new(FnTextAgent::new(name, move |_| {
        Err(AgentError::failed(name, "no luck"))
    }))
}

fn says(name: &'static str, text: &'static str) -> SharedAgent {
    Arc::new(FnTextAgent::new(name, move |_| Ok(text.to_owned())))
}

#[tokio::test]
async fn llm_agent_sends_instruction_settings_and_input_and_writes_output() {
    let log = log();
    let llm = ScriptedLlm::new("m", &["a summary"], log.clone());
    let agent = LlmTextAgent::new("analyst", llm)
        .instruction("Summarize.")
        .temperature(0.25)
        .max_output_tokens(64);
    let request = agent.request("Rust ownership");
    assert_eq!(
        serde_json::to_value(&request).unwrap(),
        json!({
            "model": "m",
            "systemInstruction": "Summarize.",
            "contents": [{"role": "user", "parts": [{"text": "Rust ownership"}]}],
            "generationConfig": {"temperature": 0.25, "maxOutputTokens": 64}
        })
    );
    let state = State::new();
    state.set("input", "Rust ownership").await.unwrap();
    assert_eq!(agent.run(&state).await.unwrap(), "a summary");
    assert_eq!(state.get::<String>("output").as_deref(), Some("a summary"));
    assert_eq!(entries(&log), ["m: Rust ownership"]);
}

#[tokio::test]
async fn sequential_pipes_each_output_into_the_next_input_and_skips_taps() {
    let log = log();
    let tapped = Arc::new(Mutex::new(Vec::new()));
    let seen = tapped.clone();
    let tap: SharedAgent = Arc::new(TapTextAgent::new("tap", move |state: &State| {
        seen.lock()
            .unwrap()
            .push(state.get::<String>("input").unwrap());
    }));
    let pipeline = SequentialTextAgent::new(
        "pipeline",
        vec![
            llm_agent("extract", &["claims"], &log),
            tap,
            llm_agent("validate", &["checked claims"], &log),
            llm_agent("summarize", &["summary"], &log),
        ],
    );
    let state = State::new();
    state.set("input", "document").await.unwrap();
    assert_eq!(pipeline.run(&state).await.unwrap(), "summary");
    assert_eq!(
        entries(&log),
        [
            "extract: document",
            "validate: claims",
            "summarize: checked claims"
        ]
    );
    assert_eq!(*tapped.lock().unwrap(), ["claims"]);
    // The last agent's output is not piped on: `input` holds what the last agent read.
    assert_eq!(
        state.get::<String>("input").as_deref(),
        Some("checked claims")
    );
    assert_eq!(state.get::<String>("output").as_deref(), Some("summary"));
}

#[tokio::test]
async fn sequential_stops_at_the_first_error() {
    let log = log();
    let pipeline = SequentialTextAgent::new(
        "pipeline",
        vec![fails("broken"), llm_agent("never", &["x"], &log)],
    );
    let error = pipeline.run(&State::new()).await.unwrap_err();
    assert_eq!(error.to_string(), "agent `broken` failed: no luck");
    assert_eq!(error.agent(), "broken");
    assert!(entries(&log).is_empty());
}

#[tokio::test(start_paused = true)]
async fn parallel_joins_outputs_in_agent_order_whatever_order_they_finish_in() {
    let log = log();
    let slow: SharedAgent = Arc::new(LlmTextAgent::new(
        "technical",
        ScriptedLlm::slow(
            "technical",
            &["tech view"],
            Duration::from_secs(5),
            log.clone(),
        ),
    ));
    let fast = llm_agent("business", &["business view"], &log);
    let parallel = ParallelTextAgent::new("perspectives", vec![slow, fast]);
    let state = State::new();
    state.set("input", "topic").await.unwrap();
    assert_eq!(
        parallel.run(&state).await.unwrap(),
        "tech view\nbusiness view"
    );
}

#[tokio::test]
async fn parallel_returns_the_first_error_in_agent_order() {
    let parallel = ParallelTextAgent::new(
        "p",
        vec![says("ok", "fine"), fails("first"), fails("second")],
    );
    let error = parallel.run(&State::new()).await.unwrap_err();
    assert_eq!(error.to_string(), "agent `first` failed: no luck");
}

#[tokio::test]
async fn route_runs_the_first_matching_rule_else_the_default() {
    let router = RouteTextAgent::new(
        "router",
        vec![
            RouteRule::new(
                |s| s.get::<String>("category").as_deref() == Some("billing"),
                says("billing", "billing answer"),
            ),
            RouteRule::new(|s| s.contains("category"), says("any", "any category")),
        ],
        says("general", "general answer"),
    );
    let state = State::new();
    assert_eq!(router.run(&state).await.unwrap(), "general answer");
    state.set("category", "billing").await.unwrap();
    assert_eq!(router.run(&state).await.unwrap(), "billing answer");
    state.set("category", "technical").await.unwrap();
    assert_eq!(router.run(&state).await.unwrap(), "any category");
}

#[tokio::test]
async fn fallback_returns_the_first_success_or_the_last_error() {
    let state = State::new();
    let robust = FallbackTextAgent::new(
        "robust",
        vec![
            fails("primary"),
            says("cache", "cached"),
            says("never", "not reached"),
        ],
    );
    assert_eq!(robust.run(&state).await.unwrap(), "cached");

    let hopeless = FallbackTextAgent::new("hopeless", vec![fails("one"), fails("two")]);
    let error = hopeless.run(&state).await.unwrap_err();
    assert_eq!(error.to_string(), "agent `two` failed: no luck");

    let empty = FallbackTextAgent::new("empty", vec![]);
    let error = empty.run(&state).await.unwrap_err();
    assert!(matches!(&error, AgentError::NoAgents { agent } if agent == "empty"));
    assert_eq!(error.to_string(), "agent `empty` has no agents to run");
}

#[tokio::test]
async fn loop_pipes_each_iteration_and_stops_when_the_predicate_holds() {
    let log = log();
    let draft = llm_agent("draft", &["v1", "v2", "v3", "v4"], &log);
    let counter = Arc::new(Mutex::new(0));
    let count = counter.clone();
    let quality: SharedAgent = Arc::new(FnTextAgent::new("judge", move |state: &State| {
        let mut n = count.lock().unwrap();
        *n += 1;
        Ok(state.get::<String>("output").unwrap_or_default())
    }));
    let body: SharedAgent = Arc::new(SequentialTextAgent::new("step", vec![draft, quality]));
    let refiner = LoopTextAgent::new("refine", body, 5)
        .until(|state| state.get::<String>("output").as_deref() == Some("v3"));
    let state = State::new();
    state.set("input", "start").await.unwrap();
    assert_eq!(refiner.run(&state).await.unwrap(), "v3");
    assert_eq!(entries(&log), ["draft: start", "draft: v1", "draft: v2"]);
    assert_eq!(*counter.lock().unwrap(), 3);
}

#[tokio::test]
async fn loop_stops_at_its_bound_with_the_last_output() {
    let log = log();
    let bounded = LoopTextAgent::new("twice", llm_agent("a", &["1", "2", "3"], &log), 2);
    let state = State::new();
    assert_eq!(bounded.run(&state).await.unwrap(), "2");
    assert_eq!(entries(&log), ["a: ", "a: 1"]);
    let none = LoopTextAgent::new("never", llm_agent("b", &["x"], &log), 0);
    assert_eq!(none.run(&state).await.unwrap(), "");
}

#[tokio::test]
async fn map_over_runs_per_item_in_order_and_writes_the_results_list() {
    let item_agent: SharedAgent = Arc::new(FnTextAgent::new("shout", |state: &State| {
        Ok(state
            .get::<String>("current_item")
            .unwrap_or_default()
            .to_uppercase())
    }));
    let processor = MapOverTextAgent::new("process", item_agent, "items")
        .item_key("current_item")
        .output_key("processed");
    let state = State::new();
    state.set("items", ["a", "bb", "ccc"]).await.unwrap();
    assert_eq!(processor.run(&state).await.unwrap(), "A\nBB\nCCC");
    assert_eq!(state.get_raw("processed"), Some(json!(["A", "BB", "CCC"])));
    assert_eq!(state.get_raw("current_item"), Some(json!("ccc")));
}

#[tokio::test]
async fn map_over_refuses_a_missing_or_non_list_key() {
    let processor = MapOverTextAgent::new("process", says("x", "x"), "items");
    let state = State::new();
    let error = processor.run(&state).await.unwrap_err();
    assert_eq!(
        error.to_string(),
        "agent `process`: state key `items` is not set"
    );
    state.set("items", "not a list").await.unwrap();
    let error = processor.run(&state).await.unwrap_err();
    assert_eq!(
        error.to_string(),
        "agent `process`: state key `items` is not a list"
    );
    // The defaults: `item` and `results`.
    state.set("items", [1, 2]).await.unwrap();
    let echo: SharedAgent = Arc::new(FnTextAgent::new("echo", |state: &State| {
        Ok(state.get_raw("item").unwrap().to_string())
    }));
    let defaults = MapOverTextAgent::new("d", echo, "items");
    assert_eq!(defaults.run(&state).await.unwrap(), "1\n2");
    assert_eq!(state.get_raw("results"), Some(json!(["1", "2"])));
}

#[tokio::test]
async fn tap_returns_nothing_and_sees_the_state() {
    let seen = Arc::new(Mutex::new(None));
    let into = seen.clone();
    let tap = TapTextAgent::new("log", move |state: &State| {
        *into.lock().unwrap() = state.get::<String>("input");
    });
    let state = State::new();
    state.set("input", "hello").await.unwrap();
    assert_eq!(tap.run(&state).await.unwrap(), "");
    assert_eq!(seen.lock().unwrap().as_deref(), Some("hello"));
    assert_eq!(state.keys(), ["input"]);
}

#[tokio::test(start_paused = true)]
async fn timeout_fails_typed_past_its_limit_and_passes_a_quick_agent() {
    let log = log();
    let slow: SharedAgent = Arc::new(LlmTextAgent::new(
        "slow",
        ScriptedLlm::slow("slow", &["late"], Duration::from_secs(31), log.clone()),
    ));
    let bounded = TimeoutTextAgent::new("bounded", slow, Duration::from_secs(30));
    let error = bounded.run(&State::new()).await.unwrap_err();
    assert!(matches!(
        &error,
        AgentError::Timeout { agent, after } if agent == "bounded" && *after == Duration::from_secs(30)
    ));
    assert_eq!(error.to_string(), "agent `bounded` timed out after 30s");

    let quick = TimeoutTextAgent::new("quick", says("q", "in time"), Duration::from_secs(1));
    assert_eq!(quick.run(&State::new()).await.unwrap(), "in time");
}
