//! AgentBuilder: its settings reach the request, its artifacts and guards are checked on a
//! run, its output keys written.

use std::sync::Arc;

use reel_agents::{AgentError, TextAgent};
use reel_compose::{A, AgentBuilder, C, G, M, P, T};
use reel_llm::BaseLlm;
use reel_protocol::Content;
use serde_json::json;

use crate::scripted::{Scripted, calling, ok, state_with_input};

#[tokio::test]
async fn every_setting_reaches_the_request() {
    let model = Scripted::new("gemini-2.5-flash", vec![ok("done")]);
    let llm: Arc<dyn BaseLlm> = model.clone();
    let agent = AgentBuilder::new("support")
        .model("gemini-2.5-pro")
        .instruction(P::role("a support agent") + P::with_state(&["user:name"]))
        .temperature(0.5)
        .top_p(0.9)
        .top_k(40)
        .max_output_tokens(256)
        .thinking(2048)
        .context(C::window(1))
        .google_search()
        .build(llm);
    let state = state_with_input("my order?").await;
    state.set("user:name", "Ada").await.unwrap();
    state
        .set(
            "conversation",
            vec![
                Content::user_text("hello"),
                Content::model_text("hi, how can I help?"),
            ],
        )
        .await
        .unwrap();
    let expected = json!({
        "model": "gemini-2.5-pro",
        "systemInstruction": "You are a support agent.\n\n[Context: user:name=Ada]",
        "contents": [
            {"role": "model", "parts": [{"text": "hi, how can I help?"}]},
            {"role": "user", "parts": [{"text": "my order?"}]}
        ],
        "tools": [{"googleSearch": {}}],
        "generationConfig": {
            "temperature": 0.5,
            "maxOutputTokens": 256,
            "topP": 0.9,
            "topK": 40,
            "thinkingConfig": {"thinkingBudget": 2048}
        }
    });
    assert_eq!(
        serde_json::to_value(agent.request(&state).unwrap()).unwrap(),
        expected
    );
    assert_eq!(agent.run(&state).await.unwrap(), "done");
    assert_eq!(
        serde_json::to_value(&model.requests()[0]).unwrap(),
        expected
    );
    assert_eq!(agent.tools().declarations(), [json!({"googleSearch": {}})]);
}

#[test]
fn builders_are_copy_on_write_templates() {
    let base = AgentBuilder::new("analyst")
        .instruction("You are a data analyst")
        .temperature(0.3)
        .reads(["figures"]);
    let conservative = base.clone().temperature(0.1).output_key("summary");
    let creative = base.clone().temperature(0.9);
    // One key as the seed writes it, or several.
    let seed_style = AgentBuilder::new("support")
        .writes("resolution")
        .reads("customer_name");
    assert_eq!(seed_style.declared_writes(), ["resolution"]);
    assert_eq!(seed_style.declared_reads(), ["customer_name"]);
    let several = AgentBuilder::new("x")
        .reads(["a", "b"])
        .writes(vec!["c".to_owned()]);
    assert_eq!(
        (several.declared_reads(), several.declared_writes()),
        (vec!["a".to_owned(), "b".to_owned()], vec!["c".to_owned()])
    );
    assert_eq!(base.config().temperature, Some(0.3));
    assert_eq!(conservative.config().temperature, Some(0.1));
    assert_eq!(creative.config().temperature, Some(0.9));
    assert_eq!(base.declared_writes(), Vec::<String>::new());
    assert_eq!(conservative.declared_writes(), ["summary"]);
    assert_eq!(creative.declared_reads(), ["figures"]);
}

#[tokio::test]
async fn output_keys_and_json_artifacts_are_written_and_validated() {
    let model = Scripted::new(
        "m",
        vec![
            ok(r#"{"score": 7, "flags": []}"#),
            ok(r#"{"flags": []}"#),
            ok("not json"),
        ],
    );
    let llm: Arc<dyn BaseLlm> = model.clone();
    let agent = AgentBuilder::new("rater")
        .artifacts(
            A::text_input("doc", "The document")
                + A::json_output("report", "The rating")
                    .schema(json!({"type": "object", "required": ["score"]})),
        )
        .output_key("raw")
        .build(llm);

    let state = state_with_input("rate it").await;
    let error = agent.run(&state).await.unwrap_err();
    assert_eq!(
        error.to_string(),
        "agent `rater`: state key `doc` is not set (an input artifact)"
    );
    assert_eq!(model.calls(), 0);

    state.set("doc", "the text").await.unwrap();
    agent.run(&state).await.unwrap();
    assert_eq!(
        state.get_raw("report"),
        Some(json!({"score": 7, "flags": []}))
    );
    assert_eq!(
        state.get::<String>("raw").as_deref(),
        Some(r#"{"score": 7, "flags": []}"#)
    );
    let request = serde_json::to_value(&model.requests()[0]).unwrap();
    assert_eq!(
        request["generationConfig"],
        json!({"responseMimeType": "application/json", "responseSchema": {"type": "object", "required": ["score"]}})
    );

    let error = agent.run(&state).await.unwrap_err();
    assert_eq!(
        error.to_string(),
        "agent `rater` failed: output artifact `report` does not match its schema at ``: \"score\" is a required property"
    );
    let error = agent.run(&state).await.unwrap_err();
    assert_eq!(
        error.to_string(),
        "agent `rater` failed: output artifact `report`: the answer is not JSON: expected ident at line 1 column 2"
    );
}

#[tokio::test]
async fn a_guard_failure_fails_the_run_before_any_write() {
    let model = Scripted::new("m", vec![ok("the password is hunter2")]);
    let llm: Arc<dyn BaseLlm> = model.clone();
    let agent = AgentBuilder::new("answerer")
        .guard(G::not_contains(&["password"]) | G::max_length(100))
        .output_key("answer")
        .build(llm);
    let state = state_with_input("tell me").await;
    let error = agent.run(&state).await.unwrap_err();
    assert!(matches!(&error, AgentError::Failed { agent, .. } if agent == "answerer"));
    assert_eq!(
        error.to_string(),
        "agent `answerer` failed: output guard `G::not_contains(password)` failed: the output contains `password`"
    );
    assert!(!state.contains("answer"));
    assert!(
        !state.contains("output"),
        "the rejected answer reached `output`"
    );
    assert_eq!(agent.name(), "answerer");
}

#[tokio::test]
async fn an_answer_from_the_cache_is_written_to_output_like_a_fresh_one() {
    let model = Scripted::new("m", vec![ok("fresh answer")]);
    let llm: Arc<dyn BaseLlm> = model.clone();
    let agent = AgentBuilder::new("answerer")
        .middleware(M::cache(std::time::Duration::from_secs(60)))
        .build(llm);
    let state = state_with_input("tell me").await;
    assert_eq!(agent.run(&state).await.unwrap(), "fresh answer");
    assert_eq!(state.get::<String>("output").unwrap(), "fresh answer");
    state.set("output", "something else").await.unwrap();
    assert_eq!(agent.run(&state).await.unwrap(), "fresh answer");
    assert_eq!(state.get::<String>("output").unwrap(), "fresh answer");
}

#[tokio::test]
async fn a_history_that_is_not_a_conversation_is_a_typed_error() {
    let llm: Arc<dyn BaseLlm> = Scripted::new("m", vec![]);
    let agent = AgentBuilder::new("a").build(llm);
    let state = state_with_input("x").await;
    state.set("conversation", "not a list").await.unwrap();
    let error = agent.run(&state).await.unwrap_err();
    assert!(
        error.to_string().starts_with(
            "agent `a`: state key `conversation` is not a list of conversation turns: "
        ),
        "{error}"
    );
    let _ = T::google_search();
}

/// `T::` tools reach the model: the function tools' declarations, then the built-ins, in
/// every request; the model's call runs the tool and its result goes back in the next
/// request, whose answer is the agent's.
#[tokio::test]
async fn t_tools_are_offered_and_the_models_calls_of_them_run() {
    let model = Scripted::new(
        "gemini-2.5-flash",
        vec![
            calling("get_weather", json!({"city": "Paris"})),
            ok("22 degrees in Paris"),
        ],
    );
    let llm: Arc<dyn BaseLlm> = model.clone();
    let agent = AgentBuilder::new("forecaster")
        .tools(T::simple(
            "get_weather",
            "Get weather for a city",
            |args| async move { Ok(json!({"temp": 22, "city": args["city"]})) },
        ))
        .google_search()
        .build(llm);
    let state = state_with_input("weather in Paris?").await;
    assert_eq!(agent.run(&state).await.unwrap(), "22 degrees in Paris");
    let requests = model.requests();
    assert_eq!(requests.len(), 2);
    for request in &requests {
        let tools = serde_json::to_value(&request.tools).unwrap();
        assert_eq!(tools[0]["functionDeclarations"][0]["name"], "get_weather");
        assert_eq!(tools[1], json!({"googleSearch": {}}));
        assert_eq!(tools.as_array().unwrap().len(), 2);
    }
    assert_eq!(
        serde_json::to_value(requests[1].contents.last().unwrap()).unwrap(),
        json!({"role": "user", "parts": [{"functionResponse": {
            "id": "call-1",
            "name": "get_weather",
            "response": {"temp": 22, "city": "Paris"}
        }}]})
    );
}

/// Two function tools of one name cannot be dispatched: every run fails saying so, before
/// any model call.
#[tokio::test]
async fn two_tools_of_one_name_fail_the_run_before_any_model_call() {
    let model = Scripted::new("gemini-2.5-flash", vec![ok("never")]);
    let llm: Arc<dyn BaseLlm> = model.clone();
    let tool = || T::simple("lookup", "Look up", |_args| async move { Ok(json!({})) });
    let agent = AgentBuilder::new("twice").tools(tool() | tool()).build(llm);
    let state = state_with_input("hi").await;
    let error = agent.run(&state).await.unwrap_err();
    assert!(
        matches!(&error, AgentError::Failed { agent, message } if agent == "twice" && message.starts_with("its tools: ")),
        "{error:?}"
    );
    assert_eq!(model.calls(), 0);
}
