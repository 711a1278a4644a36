//! The patterns run as the seed describes, lowered to the combinators.

use std::sync::Arc;

use reel_compose::{AgentBuilder, cascade, fan_out_merge, review_loop, supervised};
use reel_llm::BaseLlm;

use crate::scripted::{Scripted, fail, ok, state_with_input};

#[tokio::test]
async fn review_loop_repeats_until_the_reviewer_says_good() {
    let model = Scripted::new(
        "m",
        vec![
            ok("draft 1"),
            ok("needs_work"),
            ok("draft 2"),
            ok("good"),
            ok("unused"),
        ],
    );
    let llm: Arc<dyn BaseLlm> = model.clone();
    let tree = review_loop(
        AgentBuilder::new("writer").instruction("Write a report"),
        AgentBuilder::new("reviewer").instruction("Rate quality as 'good' or 'needs_work'"),
        "quality",
        "good",
        3,
    );
    let state = state_with_input("topic").await;
    assert_eq!(tree.compile(llm).run(&state).await.unwrap(), "good");
    assert_eq!(
        model.prompts(),
        ["m: topic", "m: draft 1", "m: needs_work", "m: draft 2"]
    );
    assert_eq!(state.get::<String>("quality").as_deref(), Some("good"));
}

#[tokio::test]
async fn supervised_stops_at_approval_and_at_its_bound() {
    let model = Scripted::new("m", vec![ok("v1"), ok("false"), ok("v2"), ok("true")]);
    let llm: Arc<dyn BaseLlm> = model.clone();
    let tree = supervised(
        AgentBuilder::new("drafter"),
        AgentBuilder::new("supervisor"),
        "approved",
        5,
    );
    let state = state_with_input("brief").await;
    assert_eq!(tree.compile(llm).run(&state).await.unwrap(), "true");
    assert_eq!(model.calls(), 4);

    let model = Scripted::new("m", vec![ok("v1"), ok("no"), ok("v2"), ok("no")]);
    let llm: Arc<dyn BaseLlm> = model.clone();
    let tree = supervised(
        AgentBuilder::new("drafter"),
        AgentBuilder::new("supervisor"),
        "approved",
        2,
    );
    let state = state_with_input("brief").await;
    assert_eq!(tree.compile(llm).run(&state).await.unwrap(), "no");
    assert_eq!(model.calls(), 4);
}

#[tokio::test]
async fn cascade_takes_the_first_success_and_fan_out_merge_joins_in_order() {
    let model = Scripted::new("m", vec![fail("overloaded"), ok("from secondary")]);
    let llm: Arc<dyn BaseLlm> = model.clone();
    let robust = cascade(vec![
        AgentBuilder::new("primary").into(),
        AgentBuilder::new("secondary").into(),
        AgentBuilder::new("last").into(),
    ]);
    let state = state_with_input("q").await;
    assert_eq!(
        robust.compile(llm).run(&state).await.unwrap(),
        "from secondary"
    );
    assert_eq!(model.calls(), 2);

    let tech: Arc<dyn BaseLlm> = Scripted::new("tech-model", vec![ok("tech says")]);
    let legal: Arc<dyn BaseLlm> = Scripted::new("legal-model", vec![ok("legal says")]);
    let multi = fan_out_merge(vec![
        AgentBuilder::new("tech").build(tech).into(),
        AgentBuilder::new("legal").build(legal).into(),
    ]);
    let unused: Arc<dyn BaseLlm> = Scripted::new("unused", vec![]);
    assert_eq!(
        multi.compile(unused).run(&state).await.unwrap(),
        "tech says\nlegal says"
    );
}
