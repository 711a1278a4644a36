//! Dispatch and join, an agent as a live tool, and the background dispatcher.

use std::sync::Arc;
use std::time::Duration;

use reel_actors::state::State;
use reel_actors::tools::{ToolContext, ToolError, ToolFunction};
use reel_agents::{
    AgentError, BackgroundAgentDispatcher, DispatchTextAgent, FnTextAgent, JoinTextAgent,
    LlmTextAgent, SequentialTextAgent, SharedAgent, TaskRegistry, TextAgent, TextAgentTool,
};
use reel_protocol::FunctionCall;
use serde_json::json;
use tokio::sync::Semaphore;
use tokio_util::sync::CancellationToken;

use crate::scripted_llm::{ScriptedLlm, entries, log};

fn slow(name: &str, answer: &str, secs: u64, log: &crate::scripted_llm::Log) -> SharedAgent {
    Arc::new(LlmTextAgent::new(
        name,
        ScriptedLlm::slow(name, &[answer], Duration::from_secs(secs), log.clone()),
    ))
}

#[tokio::test(start_paused = true)]
async fn dispatch_starts_tasks_the_pipeline_goes_on_and_join_collects_them_in_order() {
    let log = log();
    let registry = TaskRegistry::new();
    let dispatcher = DispatchTextAgent::new(
        "spawn",
        vec![
            ("research".to_owned(), slow("research", "found", 3, &log)),
            ("analysis".to_owned(), slow("analysis", "analysed", 1, &log)),
        ],
        registry.clone(),
        Arc::new(Semaphore::new(4)),
    );
    let other: SharedAgent = Arc::new(FnTextAgent::new("other", |state: &State| {
        Ok(format!(
            "other work on {}",
            state.get::<String>("input").unwrap()
        ))
    }));
    let joiner = JoinTextAgent::new("collect", registry.clone());
    let pipeline =
        SequentialTextAgent::new("bg", vec![Arc::new(dispatcher), other, Arc::new(joiner)]);
    let state = State::new();
    state.set("input", "topic").await.unwrap();
    assert_eq!(pipeline.run(&state).await.unwrap(), "found\nanalysed");
    assert_eq!(
        state.get::<String>("research:result").as_deref(),
        Some("found")
    );
    assert_eq!(
        state.get::<String>("analysis:result").as_deref(),
        Some("analysed")
    );
    // The dispatched agents read the state as it was at dispatch, whenever they ran.
    let mut prompts = entries(&log);
    prompts.sort();
    assert_eq!(prompts, ["analysis: topic", "research: topic"]);
    assert!(registry.is_empty());
}

#[tokio::test(start_paused = true)]
async fn dispatch_keeps_to_its_budget_and_join_times_out_typed() {
    let log = log();
    let registry = TaskRegistry::new();
    let budget = Arc::new(Semaphore::new(1));
    let dispatcher = DispatchTextAgent::new(
        "spawn",
        vec![
            ("one".to_owned(), slow("one", "1", 10, &log)),
            ("two".to_owned(), slow("two", "2", 10, &log)),
        ],
        registry.clone(),
        budget,
    );
    let state = State::new();
    assert_eq!(dispatcher.run(&state).await.unwrap(), "");
    let joiner = JoinTextAgent::new("collect", registry.clone()).timeout(Duration::from_secs(15));
    let error = joiner.run(&state).await.unwrap_err();
    assert!(matches!(&error, AgentError::Timeout { agent, .. } if agent == "collect"));
    // One permit: the second task had not started its call when the first finished at 10 s,
    // so by 15 s only `one` finished and `two` is waiting on its model.
    assert_eq!(state.get::<String>("one:result").as_deref(), Some("1"));
    assert_eq!(state.get::<String>("two:result"), None);
    assert_eq!(entries(&log).len(), 2);
}

#[tokio::test]
async fn join_writes_a_failed_task_error_and_returns_it() {
    let registry = TaskRegistry::new();
    let failing: SharedAgent = Arc::new(FnTextAgent::new("flaky", |_| {
        Err(AgentError::failed("flaky", "down"))
    }));
    let dispatcher = DispatchTextAgent::new(
        "spawn",
        vec![("flaky".to_owned(), failing)],
        registry.clone(),
        Arc::new(Semaphore::new(1)),
    );
    let state = State::new();
    dispatcher.run(&state).await.unwrap();
    let error = JoinTextAgent::new("collect", registry)
        .run(&state)
        .await
        .unwrap_err();
    assert_eq!(error.to_string(), "agent `flaky` failed: down");
    assert_eq!(
        state.get::<String>("flaky:error").as_deref(),
        Some("agent `flaky` failed: down")
    );
}

fn context(name: &str) -> ToolContext {
    let call = FunctionCall {
        id: Some("call-1".into()),
        name: Some(name.into()),
        ..FunctionCall::default()
    };
    ToolContext::for_call(&call, State::new().with_delta(), CancellationToken::new())
}

#[tokio::test]
async fn an_agent_tool_runs_its_agent_over_the_shared_state() {
    let log = log();
    let state = State::new();
    state.set("caller", "Jane").await.unwrap();
    let verifier: SharedAgent = Arc::new(LlmTextAgent::new(
        "verifier",
        ScriptedLlm::new("verifier", &["verified"], log.clone()),
    ));
    let tool = TextAgentTool::new(
        "verify_identity",
        "Verify the caller",
        verifier,
        state.clone(),
    );
    assert_eq!(tool.name(), "verify_identity");
    assert_eq!(
        serde_json::to_value(tool.declaration()).unwrap(),
        json!({
            "name": "verify_identity",
            "description": "Verify the caller",
            "parameters": {
                "type": "OBJECT",
                "properties": {"request": {"type": "STRING", "description": "What to ask the agent."}},
                "required": ["request"]
            }
        })
    );
    let result = tool
        .call(
            json!({"request": "Is this Jane?"}),
            context("verify_identity"),
        )
        .await
        .unwrap();
    assert_eq!(result, json!({"result": "verified"}));
    assert_eq!(entries(&log), ["verifier: Is this Jane?"]);
    assert_eq!(state.get::<String>("output").as_deref(), Some("verified"));

    let error = tool
        .call(json!({}), context("verify_identity"))
        .await
        .unwrap_err();
    assert_eq!(
        error,
        ToolError::InvalidArgs {
            tool: "verify_identity".into(),
            message: "missing field `request`".into()
        }
    );
}

#[tokio::test]
async fn an_agent_tool_reports_the_agent_error_to_the_model() {
    let failing: SharedAgent = Arc::new(FnTextAgent::new("lookup", |_| {
        Err(AgentError::failed("lookup", "no such account"))
    }));
    let tool = TextAgentTool::new("lookup", "Look up", failing, State::new());
    let error = tool
        .call(json!({"request": "42"}), context("lookup"))
        .await
        .unwrap_err();
    assert_eq!(
        error.to_string(),
        "tool `lookup` failed: agent `lookup` failed: no such account"
    );
}

#[tokio::test]
async fn background_dispatch_writes_result_and_error_keys() {
    let background = BackgroundAgentDispatcher::new();
    let state = State::new();
    state.set("input", "caller profile").await.unwrap();
    let log = log();
    let analyzer: SharedAgent = Arc::new(LlmTextAgent::new(
        "analyzer",
        ScriptedLlm::new("analyzer", &["low risk"], log.clone()),
    ));
    let failing: SharedAgent = Arc::new(FnTextAgent::new("broken", |_| {
        Err(AgentError::failed("broken", "down"))
    }));
    background.dispatch("analyze_caller", analyzer, state.clone());
    background.dispatch("broken_job", failing, state.clone());
    background.wait_all().await;
    assert_eq!(
        state.get::<String>("analyze_caller:result").as_deref(),
        Some("low risk")
    );
    assert_eq!(
        state.get::<String>("broken_job:error").as_deref(),
        Some("agent `broken` failed: down")
    );
    assert_eq!(state.get::<String>("broken_job:result"), None);
    assert_eq!(entries(&log), ["analyzer: caller profile"]);
}
