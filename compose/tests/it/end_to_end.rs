//! A composed pipeline recorded against the Gemini REST stand-in over loopback, through a
//! cassette, replays offline with the stand-in gone: the same output, the same state, the
//! same decisions, no model call.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use reel_actors::state::State;
use reel_agents::{Decisions, SharedAgent};
use reel_compose::{A, AgentBuilder, C, G, M, P, S, check_contracts, review_loop};
use reel_llm::testing::gemini_standin::{Answer, GeminiStandin};
use reel_llm::{BaseLlm, Cassette, CassetteMode};
use serde_json::{Value, json};

fn answer(text: &str) -> Answer {
    Answer::sse([json!({
        "candidates": [{"content": {"role": "model", "parts": [{"text": text}]}, "finishReason": "STOP"}],
        "usageMetadata": {"promptTokenCount": 7, "candidatesTokenCount": 3, "totalTokenCount": 10}
    })])
}

fn temp_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("reel-compose-e2e-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn pipeline(llm: Arc<dyn BaseLlm>, decisions: &Decisions) -> SharedAgent {
    let writer = AgentBuilder::new("writer")
        .instruction(
            P::role("a poet")
                + P::task("Write a haiku about the input")
                + P::with_state(&["season"]),
        )
        .reads(["feedback"])
        .temperature(0.7)
        .top_k(40)
        .middleware(M::retry(1) | M::timeout(Duration::from_secs(30)));
    let reviewer = AgentBuilder::new("reviewer")
        .instruction("Answer good or needs_work.")
        .reads(["season"])
        .context(C::from_state(&["season"]))
        .guard(G::max_length(20));
    let tree = S::defaults(json!({"season": "autumn", "feedback": ""}))
        >> review_loop(writer, reviewer, "quality", "good", 3)
        >> AgentBuilder::new("scorer")
            .instruction("Score the haiku as JSON.")
            .artifacts(
                A::json_output("score", "The score")
                    .schema(json!({"type": "object", "required": ["stars"]})),
            );
    assert_eq!(
        check_contracts(&tree),
        [],
        "{}",
        reel_compose::diagnose(&tree)
    );
    tree.compile_with(llm, decisions)
}

async fn run(agent: &SharedAgent) -> (String, Value) {
    let state = State::new();
    state.set("input", "the moon").await.unwrap();
    let output = agent.run(&state).await.unwrap();
    (output, state.snapshot().to_json())
}

#[tokio::test]
async fn a_composed_pipeline_recorded_over_loopback_replays_offline() {
    let dir = temp_dir("pipeline");
    let cassette_path = dir.join("haiku.cassette.json");
    let decisions_path = Decisions::path_beside(&cassette_path);

    let standin = GeminiStandin::bind().await;
    for text in [
        "moon on the water",
        "needs_work",
        "moon on still water",
        "good",
        r#"{"stars": 4}"#,
    ] {
        standin.push(answer(text));
    }
    let live: Arc<dyn BaseLlm> = Arc::new(standin.llm_builder("gemini-2.5-flash").build().unwrap());
    let cassette = Cassette::open(&cassette_path, CassetteMode::Record).unwrap();
    let decisions = Decisions::record();
    let recorded_model = reel_llm::LlmInterceptor::wrap(&cassette, live);
    let (recorded, recorded_state) = run(&pipeline(recorded_model, &decisions)).await;
    decisions.save(&decisions_path).unwrap();
    assert_eq!(recorded, r#"{"stars": 4}"#);
    assert_eq!(recorded_state["score"], json!({"stars": 4}));
    assert_eq!(recorded_state["quality"], json!("good"));

    // What went over the wire: the writer's shaped request, the reviewer's state context.
    let requests = standin.requests();
    assert_eq!(requests.len(), 5);
    assert_eq!(
        requests[0].body["systemInstruction"],
        json!({"parts": [{"text": "You are a poet.\n\nYour task: Write a haiku about the input\n\n[Context: season=autumn]"}]})
    );
    assert_eq!(
        requests[0].body["generationConfig"],
        json!({"temperature": 0.7, "topK": 40})
    );
    assert_eq!(
        requests[1].body["contents"],
        json!([
            {"role": "user", "parts": [{"text": "Context from state:\nseason: autumn"}]},
            {"role": "user", "parts": [{"text": "moon on the water"}]}
        ])
    );
    assert_eq!(
        requests[4].body["generationConfig"],
        json!({"responseMimeType": "application/json", "responseSchema": {"type": "object", "required": ["stars"]}})
    );
    drop(standin);

    // Offline: the cassette alone answers; the decisions replay.
    let cassette = Cassette::open(&cassette_path, CassetteMode::Replay).unwrap();
    let decisions = Decisions::open(&decisions_path).unwrap();
    let (replayed, replayed_state) =
        run(&pipeline(cassette.model("gemini-2.5-flash"), &decisions)).await;
    assert_eq!(replayed, recorded);
    assert_eq!(replayed_state, recorded_state);
    assert!(cassette.unused().await.is_empty());
    assert!(decisions.unused().is_empty());
    let deciders: Vec<String> = decisions
        .snapshot()
        .decisions
        .into_iter()
        .map(|d| d.agent)
        .collect();
    assert_eq!(
        deciders,
        [
            "writer.timeout",
            "writer.retry",
            "writer.timeout",
            "writer.retry"
        ]
    );
    std::fs::remove_dir_all(&dir).unwrap();
}
