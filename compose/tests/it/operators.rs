//! The operators build the seed's tree shapes and lower to the agents crate's combinators.

use std::sync::Arc;

use reel_agents::{FnTextAgent, TextAgent};
use reel_compose::{AgentBuilder, Composable, S, race, until, until_state};
use reel_llm::BaseLlm;

use crate::scripted::{Scripted, ok, state_with_input};

fn b(name: &str) -> AgentBuilder {
    AgentBuilder::new(name).instruction(format!("You are {name}."))
}

#[test]
fn a_chain_of_shr_is_one_flat_pipeline() {
    let pipeline = b("a") >> b("b") >> b("c");
    let Composable::Pipeline(p) = &pipeline else {
        panic!("expected a pipeline, got {pipeline:?}")
    };
    assert_eq!(p.steps.len(), 3);
    let nested = b("a") >> (b("b") >> b("c"));
    let Composable::Pipeline(p) = &nested else {
        panic!("expected a pipeline")
    };
    assert_eq!(p.steps.len(), 3);
}

#[test]
fn each_operator_builds_its_node_and_label() {
    let fan = b("x") | b("y") | b("z");
    let Composable::FanOut(f) = &fan else {
        panic!("expected a fan-out")
    };
    assert_eq!(f.branches.len(), 3);

    let fixed = b("refiner") * 3;
    let Composable::Loop(l) = &fixed else {
        panic!("expected a loop")
    };
    assert_eq!((l.max, l.until.is_none()), (3, true));

    let fallback = b("primary") / b("backup");
    let Composable::Fallback(f) = &fallback else {
        panic!("expected a fallback")
    };
    assert_eq!(f.alternatives.len(), 2);

    let workflow = b("research") >> (b("tech") | b("biz")) >> b("merge");
    assert_eq!(workflow.label(), "research >> (tech | biz) >> merge");
    let converge = (b("w") >> b("r")) * until_state(S::eq("quality", "good")).max(4);
    assert_eq!(
        converge.label(),
        "(w >> r) * until(S::eq(quality, good), max 4)"
    );
    assert_eq!(
        race(vec![b("fast").into(), b("slow").into()]).label(),
        "race(fast, slow)"
    );
    assert_eq!((b("a") / b("b") / b("c")).label(), "a / b / c");
}

#[tokio::test]
async fn a_compiled_pipeline_pipes_outputs_and_joins_fan_outs_in_order() {
    let model = Scripted::new(
        "gemini-2.5-flash",
        vec![
            ok("notes"),
            ok("tech view").for_instruction("You are tech."),
            ok("biz view").for_instruction("You are biz."),
            ok("merged"),
        ],
    );
    let llm: Arc<dyn BaseLlm> = model.clone();
    let workflow = b("research") >> (b("tech") | b("biz")) >> b("merge");
    let agent = workflow.compile(llm);
    assert_eq!(agent.name(), "research >> (tech | biz) >> merge");
    let state = state_with_input("solar panels").await;
    let output = agent.run(&state).await.unwrap();
    assert_eq!(output, "merged");
    let mut prompts = model.prompts();
    // The two branches run at once: their requests may arrive in either order.
    prompts[1..3].sort();
    assert_eq!(
        prompts,
        [
            "gemini-2.5-flash: solar panels",
            "gemini-2.5-flash: notes",
            "gemini-2.5-flash: notes",
            "gemini-2.5-flash: tech view\nbiz view",
        ]
    );
}

#[tokio::test]
async fn loops_fallbacks_and_built_agents_lower_to_the_combinators() {
    let model = Scripted::new(
        "m",
        vec![ok("draft 1"), ok("draft 2"), ok("draft 3"), ok("rescued")],
    );
    let llm: Arc<dyn BaseLlm> = model.clone();
    // `* n` runs three times, each output the next input.
    let state = state_with_input("start").await;
    let output = (b("refiner") * 3)
        .compile(llm.clone())
        .run(&state)
        .await
        .unwrap();
    assert_eq!(output, "draft 3");
    assert_eq!(model.prompts(), ["m: start", "m: draft 1", "m: draft 2"]);

    // `/` on a built agent: the failing one first, then the builder.
    let failing = FnTextAgent::new("flaky", |_| {
        Err(reel_agents::AgentError::failed("flaky", "down"))
    });
    let robust = Composable::agent(failing) / b("backup");
    let output = robust.compile(llm.clone()).run(&state).await.unwrap();
    assert_eq!(output, "rescued");

    // Operators work on built agents too.
    let built = b("solo").build(llm.clone());
    let tree = built.clone() >> b("next");
    assert_eq!(tree.label(), "solo >> next");
}

#[tokio::test]
async fn until_stops_the_loop_once_the_state_predicate_holds() {
    let model = Scripted::new("m", vec![ok("needs_work"), ok("good"), ok("never asked")]);
    let llm: Arc<dyn BaseLlm> = model.clone();
    let reviewer = AgentBuilder::new("reviewer").output_key("quality");
    let agent = (reviewer * until(|v| v["quality"] == "good")).compile(llm);
    let state = state_with_input("draft").await;
    assert_eq!(agent.run(&state).await.unwrap(), "good");
    assert_eq!(model.calls(), 2);
}

#[tokio::test]
async fn a_state_transform_step_rewrites_state_and_passes_the_output_through() {
    let model = Scripted::new("m", vec![ok("Alice"), ok("hello Alice")]);
    let llm: Arc<dyn BaseLlm> = model.clone();
    let tree = AgentBuilder::new("namer").output_key("name")
        >> S::rename(&[("name", "customer")])
        >> AgentBuilder::new("greeter").reads(["customer"]);
    let state = state_with_input("who?").await;
    let output = tree.compile(llm).run(&state).await.unwrap();
    assert_eq!(output, "hello Alice");
    assert_eq!(state.get::<String>("customer").as_deref(), Some("Alice"));
    assert!(!state.contains("name"));
    // The greeter read the namer's output, through the transform.
    assert_eq!(model.prompts(), ["m: who?", "m: Alice"]);
}
