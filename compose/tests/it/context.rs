//! `C::summarize` and `C::priority`: the summary call's exact request, the history an agent
//! sends after it, priority's selection, both chained with the other `C::` steps, and what
//! `label`, `reads`, `request` and `diagnose` say of them.

use std::sync::Arc;

use reel_agents::TextAgent;
use reel_compose::{AgentBuilder, C, Composable, check_contracts_with, diagnose_with};
use reel_llm::BaseLlm;
use reel_protocol::{Content, FunctionCall, FunctionResponse, Part};
use serde_json::json;

use crate::scripted::{Scripted, fail, ok, state_with_input};

fn call(name: &str, args: serde_json::Value) -> Content {
    Content::new(
        "model",
        vec![Part {
            function_call: Some(FunctionCall {
                id: Some("c1".into()),
                name: Some(name.into()),
                args: Some(args.into()),
                ..FunctionCall::default()
            }),
            ..Part::default()
        }],
    )
}

fn response(name: &str, result: serde_json::Value) -> Content {
    Content::new(
        "user",
        vec![Part {
            function_response: Some(FunctionResponse::new("c1", name, result)),
            ..Part::default()
        }],
    )
}

/// Seven turns: a question, a tool round, an answer, a repeated user turn, a reply.
fn history() -> Vec<Content> {
    vec![
        Content::user_text("Where is order A-1042?"),
        call("get_order", json!({"id": "A-1042"})),
        response("get_order", json!({"status": "delayed", "eta": "Friday"})),
        Content::model_text("Order A-1042 is delayed until Friday."),
        Content::user_text("Can I get a refund?"),
        Content::user_text("Can I get a refund?"),
        Content::model_text("A refund is possible once it ships."),
    ]
}

async fn state_with_history(input: &str) -> reel_actors::state::State {
    let state = state_with_input(input).await;
    state.set("conversation", history()).await.unwrap();
    state
}

#[tokio::test]
async fn summarize_sends_one_summary_call_then_the_summary_and_the_last_turns() {
    let model = Scripted::new(
        "gemini-2.5-flash",
        vec![
            ok("The user asked about order A-1042; it is delayed until Friday."),
            ok("Yes: I will note the refund request."),
        ],
    );
    let llm: Arc<dyn BaseLlm> = model.clone();
    let agent = AgentBuilder::new("support")
        .instruction("You help with orders.")
        .context(C::summarize(3))
        .build(llm);
    let state = state_with_history("Please note it.").await;
    assert_eq!(
        agent.run(&state).await.unwrap(),
        "Yes: I will note the refund request."
    );
    let requests: Vec<serde_json::Value> = model
        .requests()
        .iter()
        .map(|r| serde_json::to_value(r).unwrap())
        .collect();
    assert_eq!(
        requests,
        [
            json!({
                "model": "gemini-2.5-flash",
                "systemInstruction": reel_compose::SUMMARY_INSTRUCTION,
                "contents": [{"role": "user", "parts": [{"text": "Conversation:\n\
                    user: Where is order A-1042?\n\
                    model called get_order({\"id\":\"A-1042\"})\n\
                    tool get_order returned {\"status\":\"delayed\",\"eta\":\"Friday\"}\n\
                    model: Order A-1042 is delayed until Friday."}]}],
                "generationConfig": {"temperature": 0.0}
            }),
            json!({
                "model": "gemini-2.5-flash",
                "systemInstruction": "You help with orders.",
                "contents": [
                    {"role": "user", "parts": [{"text": "Summary of the earlier conversation:\n\
                        The user asked about order A-1042; it is delayed until Friday."}]},
                    {"role": "user", "parts": [{"text": "Can I get a refund?"}]},
                    {"role": "user", "parts": [{"text": "Can I get a refund?"}]},
                    {"role": "model", "parts": [{"text": "A refund is possible once it ships."}]},
                    {"role": "user", "parts": [{"text": "Please note it."}]}
                ]
            }),
        ]
    );
}

#[tokio::test]
async fn the_same_history_sends_the_same_summary_request() {
    let model = Scripted::new("m", vec![ok("s1"), ok("s2")]);
    let policy = C::summarize(2);
    for _ in 0..2 {
        policy
            .apply_async(&history(), &json!({}), model.as_ref(), "m")
            .await
            .unwrap();
    }
    let requests = model.requests();
    assert_eq!(requests.len(), 2);
    assert_eq!(
        serde_json::to_string(&requests[0]).unwrap(),
        serde_json::to_string(&requests[1]).unwrap()
    );
}

#[tokio::test]
async fn summarize_makes_no_call_when_nothing_is_older_than_the_turns_kept() {
    let model = Scripted::new("m", vec![]);
    let kept = C::summarize(7)
        .apply_async(&history(), &json!({}), model.as_ref(), "m")
        .await
        .unwrap();
    assert_eq!(kept, history());
    assert_eq!(model.calls(), 0);
}

#[tokio::test]
async fn a_chain_runs_its_synchronous_steps_around_the_summary_call_in_order() {
    let model = Scripted::new("m", vec![ok("Order A-1042 is delayed.")]);
    let policy = C::dedup() + C::exclude_tools() + C::summarize(2) + C::window(2);
    assert_eq!(
        policy.label(),
        "C::dedup() + C::exclude_tools() + C::summarize(2) + C::window(2)"
    );
    assert!(policy.calls_model());
    assert_eq!(policy.model_steps(), ["C::summarize(2)"]);
    assert_eq!(policy.reads(), Vec::<String>::new());
    let kept = policy
        .apply_async(&history(), &json!({}), model.as_ref(), "m")
        .await
        .unwrap();
    // dedup and exclude_tools leave 4 turns; the first 2 are summarized; the window keeps
    // the last 2 of the 3.
    assert_eq!(
        model.prompts(),
        [
            "m: Conversation:\nuser: Where is order A-1042?\nmodel: Order A-1042 is delayed until Friday."
        ]
    );
    assert_eq!(
        kept,
        [
            Content::user_text("Can I get a refund?"),
            Content::model_text("A refund is possible once it ships."),
        ]
    );
    // The synchronous apply runs the other steps and passes the history through the
    // summary step unchanged.
    assert_eq!(
        policy.apply(&history()),
        [
            Content::user_text("Can I get a refund?"),
            Content::model_text("A refund is possible once it ships."),
        ]
    );
    assert_eq!(C::summarize(2).apply(&history()), history());
}

#[tokio::test]
async fn summarize_with_asks_its_own_model() {
    let own = Scripted::new("gemini-2.5-flash-lite", vec![ok("Short.")]);
    let agents = Scripted::new("gemini-2.5-pro", vec![]);
    let policy = C::summarize_with(6, own.clone());
    assert_eq!(
        policy.label(),
        "C::summarize_with(6, gemini-2.5-flash-lite)"
    );
    let kept = policy
        .apply_async(&history(), &json!({}), agents.as_ref(), "gemini-2.5-pro")
        .await
        .unwrap();
    assert_eq!(
        own.prompts(),
        ["gemini-2.5-flash-lite: Conversation:\nuser: Where is order A-1042?"]
    );
    assert_eq!(agents.calls(), 0);
    assert_eq!(
        kept[0],
        Content::user_text("Summary of the earlier conversation:\nShort.")
    );
    assert_eq!(kept[1..], history()[1..]);
}

#[tokio::test]
async fn a_failed_or_empty_summary_fails_the_agent_naming_the_step() {
    let model = Scripted::new("gemini-2.5-flash", vec![fail("overloaded")]);
    let llm: Arc<dyn BaseLlm> = model.clone();
    let agent = AgentBuilder::new("support")
        .context(C::summarize(1))
        .build(llm);
    let state = state_with_history("hi").await;
    assert_eq!(
        agent.run(&state).await.unwrap_err().to_string(),
        "agent `support` failed: its context policy: C::summarize(1): the summary call to \
         `gemini-2.5-flash` failed: the model API answered 503 for scripted: overloaded"
    );
    assert_eq!(model.calls(), 1, "the agent's own call is not made");

    let model = Scripted::new("gemini-2.5-flash", vec![ok("  ")]);
    let error = C::summarize(1)
        .apply_async(&history(), &json!({}), model.as_ref(), "gemini-2.5-flash")
        .await
        .unwrap_err();
    assert_eq!(
        error.to_string(),
        "C::summarize(1): `gemini-2.5-flash` answered the summary call with no text"
    );
}

#[tokio::test]
async fn request_names_the_summary_step_and_request_async_makes_its_call() {
    let model = Scripted::new("gemini-2.5-flash", vec![ok("Delayed order.")]);
    let llm: Arc<dyn BaseLlm> = model.clone();
    let agent = AgentBuilder::new("support")
        .model("gemini-2.5-pro")
        .context(C::exclude_tools() + C::summarize(4))
        .build(llm);
    let state = state_with_history("ok").await;
    assert_eq!(
        agent.request(&state).unwrap_err().to_string(),
        "agent `support` failed: its context policy `C::exclude_tools() + C::summarize(4)` \
         calls a model: its request is request_async's"
    );
    let request = agent.request_async(&state).await.unwrap();
    // The summary asks the model the agent's requests name.
    assert_eq!(
        model.prompts(),
        ["gemini-2.5-pro: Conversation:\nuser: Where is order A-1042?"]
    );
    assert_eq!(request.contents.len(), 6);
    assert_eq!(
        request.contents[0],
        Content::user_text("Summary of the earlier conversation:\nDelayed order.")
    );
}

#[test]
fn priority_keeps_the_marked_turns_first_then_the_most_recent() {
    let history = history();
    // Marked: the question, the tool call and result (A-1042 in the arguments; "delayed"
    // in the result), the model's answer; then the most recent other turn.
    assert_eq!(
        C::priority(5, &["a-1042", "DELAYED"]).apply(&history),
        [
            history[0].clone(),
            history[1].clone(),
            history[2].clone(),
            history[3].clone(),
            history[6].clone(),
        ]
    );
    // Less room than marked turns: the most recent marked ones.
    assert_eq!(
        C::priority(2, &["a-1042", "DELAYED"]).apply(&history),
        [history[2].clone(), history[3].clone()]
    );
    // Room for every marked turn and the two most recent others.
    assert_eq!(
        C::priority(6, &["a-1042"]).apply(&history),
        [
            history[0].clone(),
            history[1].clone(),
            history[3].clone(),
            history[4].clone(),
            history[5].clone(),
            history[6].clone(),
        ]
    );
    // No marker matches: the most recent turns, like a window.
    assert_eq!(
        C::priority(2, &["invoice"]).apply(&history),
        history[5..].to_vec()
    );
    assert_eq!(C::priority(9, &["x"]).apply(&history), history);
    assert_eq!(C::priority(0, &["refund"]).apply(&history), []);
    assert_eq!(
        C::priority(3, &["refund", "get_order"]).label(),
        "C::priority(3, [refund, get_order])"
    );
    // Chained: duplicates and tool turns go first, then the budget.
    assert_eq!(
        (C::dedup() + C::exclude_tools() + C::priority(2, &["A-1042"])).apply(&history),
        [history[0].clone(), history[3].clone()]
    );
}

#[test]
fn diagnose_names_the_context_steps_that_call_a_model() {
    let tree: Composable = AgentBuilder::new("triage").output_key("topic")
        >> AgentBuilder::new("support")
            .reads(["topic"])
            .context(C::window(20) + C::summarize(6))
        >> AgentBuilder::new("audit").context(C::priority(4, &["refund"]));
    assert_eq!(check_contracts_with(&tree, &[]), []);
    assert_eq!(
        diagnose_with(&tree, &[]),
        "tree: triage >> support >> audit\n\
         data flow:\n  triage -> support (topic)\n\
         contracts: ok\n\
         context policies calling a model (before the agent's own call):\n  \
         support: C::summarize(6)\n"
    );
}
