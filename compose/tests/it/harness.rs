//! AgentHarness: a scripted model, the starting state, contracts checked before the run,
//! and exact checks on the output, the state and the requests.

use reel_compose::{AgentBuilder, AgentHarness, HarnessError, P, S};
use serde_json::json;

fn pipeline() -> reel_compose::Composable {
    AgentBuilder::new("writer")
        .instruction(P::task("Write one line about the topic.") + P::with_state(&["topic"]))
        .reads(["topic"])
        .output_key("draft")
        >> AgentBuilder::new("critic")
            .instruction(P::task("Answer good or bad."))
            .reads(["draft"])
            .output_key("verdict")
        >> S::rename(&[("verdict", "final_verdict")])
}

#[tokio::test]
async fn a_pipeline_runs_on_the_script_and_its_state_and_requests_are_checked() {
    let harness = AgentHarness::new()
        .state("topic", json!("the tide"))
        .answer("The tide forgets nothing.")
        .answer("good");
    let run = harness.run(pipeline(), "start").await.unwrap();
    run.expect_output("good").unwrap();
    run.expect_state("draft", json!("The tide forgets nothing."))
        .unwrap();
    run.expect_state("final_verdict", json!("good")).unwrap();
    let instructions: Vec<Option<&str>> = run
        .requests()
        .iter()
        .map(|r| r.system_instruction.as_deref())
        .collect();
    assert_eq!(
        instructions,
        [
            Some("Your task: Write one line about the topic.\n\n[Context: topic=the tide]"),
            Some("Your task: Answer good or bad.")
        ]
    );
    assert_eq!(
        run.requests()
            .iter()
            .map(|r| format!("{}: {}", r.model, r.last_user_text().unwrap_or_default()))
            .collect::<Vec<_>>(),
        [
            "gemini-2.5-flash: start",
            "gemini-2.5-flash: The tide forgets nothing."
        ]
    );
    harness.expect_all_used().unwrap();
}

#[tokio::test]
async fn a_failed_check_says_what_was_expected_and_what_was_there() {
    let harness = AgentHarness::new()
        .state("topic", json!("the tide"))
        .answer("Waves.")
        .answer("bad")
        .answer("left over");
    let run = harness.run(pipeline(), "start").await.unwrap();
    assert_eq!(
        run.expect_output("good").unwrap_err().to_string(),
        r#"the output is "bad", not "good""#
    );
    assert_eq!(
        run.expect_state("draft", json!("Tides."))
            .unwrap_err()
            .to_string(),
        r#"state `draft` is "Waves.", not "Tides.""#
    );
    assert_eq!(
        run.expect_state("verdict", json!("bad"))
            .unwrap_err()
            .to_string(),
        "state `verdict` is unset, not \"bad\""
    );
    assert!(matches!(
        harness.expect_all_used(),
        Err(HarnessError::Unused { left: 1 })
    ));
}

#[tokio::test]
async fn broken_contracts_fail_before_any_model_call() {
    // `topic` is not in the harness's state: the writer reads what nothing writes.
    let harness = AgentHarness::new().answer("unused");
    let error = harness.run(pipeline(), "start").await.unwrap_err();
    assert_eq!(
        error.to_string(),
        "the agent's contracts do not hold: agent `writer` reads `topic`, which nothing \
         upstream writes"
    );
    assert!(harness.asked().is_empty());
}

#[tokio::test]
async fn a_scripted_failure_and_a_missing_answer_fail_the_agent() {
    let writer = || {
        AgentBuilder::new("writer")
            .instruction("Write.")
            .output_key("draft")
    };
    let harness = AgentHarness::new()
        .model("gemini-2.5-pro")
        .fail("overloaded");
    assert_eq!(
        harness.run(writer(), "x").await.unwrap_err().to_string(),
        "agent `writer`: the model call failed: the model API answered 503 for \
         harness://gemini-2.5-pro: overloaded"
    );
    assert_eq!(
        harness.run(writer(), "x").await.unwrap_err().to_string(),
        "agent `writer`: the model call failed: the model API answered 500 for \
         harness://gemini-2.5-pro: the harness's script has no answer for call 2"
    );
}
