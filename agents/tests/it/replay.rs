//! A pipeline recorded against the Gemini REST stand-in over loopback, through a cassette,
//! replays offline with the stand-in gone: same output, no model call.

use std::path::PathBuf;
use std::sync::Arc;

use futures_util::future::BoxFuture;
use reel_actors::state::State;
use reel_agents::{
    AgentError, Decisions, LlmTextAgent, RaceTextAgent, SequentialTextAgent, SharedAgent, TextAgent,
};
use reel_llm::testing::gemini_standin::{Answer, GeminiStandin};
use reel_llm::{BaseLlm, Cassette, CassetteMode};
use serde_json::json;

/// A branch that never answers: the race's loser.
struct Never;

impl TextAgent for Never {
    fn name(&self) -> &str {
        "backup"
    }

    fn run<'a>(&'a self, _state: &'a State) -> BoxFuture<'a, Result<String, AgentError>> {
        Box::pin(std::future::pending())
    }
}

fn pipeline(model: &Arc<dyn BaseLlm>, decisions: Decisions) -> SequentialTextAgent {
    let writer: SharedAgent =
        Arc::new(LlmTextAgent::new("writer", model.clone()).instruction("Write a haiku."));
    let editor: SharedAgent = Arc::new(
        LlmTextAgent::new("editor", model.clone())
            .instruction("Polish it.")
            .temperature(0.5),
    );
    let race: SharedAgent = Arc::new(
        RaceTextAgent::new("edit_race", vec![editor, Arc::new(Never)]).decisions(decisions),
    );
    let reviewer: SharedAgent =
        Arc::new(LlmTextAgent::new("reviewer", model.clone()).instruction("Review it."));
    SequentialTextAgent::new("haiku", vec![writer, race, reviewer])
}

fn answer(text: &str) -> Answer {
    Answer::sse([json!({
        "candidates": [{"content": {"role": "model", "parts": [{"text": text}]}, "finishReason": "STOP"}],
        "usageMetadata": {"promptTokenCount": 7, "candidatesTokenCount": 3, "totalTokenCount": 10}
    })])
}

fn temp_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("reel-agents-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

#[tokio::test]
async fn a_pipeline_recorded_against_the_rest_standin_replays_offline_with_no_model_call() {
    let dir = temp_dir("replay");
    let cassette_path = dir.join("haiku.cassette.json");
    let decisions_path = Decisions::path_beside(&cassette_path);

    let standin = GeminiStandin::bind().await;
    for text in ["moon on the water", "moon on still water", "approved"] {
        standin.push(answer(text));
    }
    let live: Arc<dyn BaseLlm> = Arc::new(standin.llm_builder("gemini-2.5-flash").build().unwrap());
    let cassette = Cassette::open(&cassette_path, CassetteMode::Record).unwrap();
    let decisions = Decisions::record();
    let recorded_model = reel_llm::LlmInterceptor::wrap(&cassette, live);
    let state = State::new();
    state.set("input", "autumn").await.unwrap();
    let recorded = pipeline(&recorded_model, decisions.clone())
        .run(&state)
        .await
        .unwrap();
    assert_eq!(recorded, "approved");
    decisions.save(&decisions_path).unwrap();
    let prompts: Vec<_> = standin
        .requests()
        .iter()
        .map(|request| request.body["contents"][0]["parts"][0]["text"].clone())
        .collect();
    assert_eq!(
        prompts,
        [
            json!("autumn"),
            json!("moon on the water"),
            json!("moon on still water")
        ]
    );
    drop(standin);

    // Offline: the cassette alone answers (a model with no live model behind it), the race
    // replays its recorded winner.
    let cassette = Cassette::open(&cassette_path, CassetteMode::Replay).unwrap();
    let offline = cassette.model("gemini-2.5-flash");
    let decisions = Decisions::open(&decisions_path).unwrap();
    let state = State::new();
    state.set("input", "autumn").await.unwrap();
    let replayed = pipeline(&offline, decisions.clone())
        .run(&state)
        .await
        .unwrap();
    assert_eq!(replayed, recorded);
    assert_eq!(state.get::<String>("output").as_deref(), Some("approved"));
    assert!(cassette.unused().await.is_empty());
    assert!(decisions.unused().is_empty());

    // A changed pipeline asks for a call the cassette does not have: a typed miss, no call.
    let changed = LlmTextAgent::new("writer", offline).instruction("Write a limerick.");
    let error = changed.run(&state).await.unwrap_err();
    assert!(
        matches!(&error, AgentError::Llm { agent, .. } if agent == "writer"),
        "{error}"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[tokio::test]
async fn a_pipeline_run_is_an_agent_trace_with_a_step_per_model_call() {
    use reel_actors::clock::TokioClock;
    use reel_llm::TraceRecorder;

    let standin = GeminiStandin::bind().await;
    for text in ["moon on the water", "moon on still water", "approved"] {
        standin.push(answer(text));
    }
    let live: Arc<dyn BaseLlm> = Arc::new(standin.llm_builder("gemini-2.5-flash").build().unwrap());
    let recorder = TraceRecorder::new("haiku", "haiku", Arc::new(TokioClock::anchored_at(0)));
    let traced: Arc<dyn BaseLlm> = Arc::new(recorder.wrap(live));
    let state = State::new();
    state.set("input", "autumn").await.unwrap();
    pipeline(&traced, Decisions::record())
        .run(&state)
        .await
        .unwrap();
    let trace = recorder.trace();
    let steps: Vec<_> = trace
        .turns()
        .iter()
        .map(|turn| {
            let response = turn.response.unwrap();
            (
                turn.request.agent.clone().unwrap(),
                turn.request.prompt.clone().unwrap(),
                response.text.clone().unwrap(),
                response.token_usage.as_ref().and_then(|usage| usage.total),
                response.duration_ms.is_some(),
            )
        })
        .collect();
    let step = |agent: &str, prompt: &str, text: &str| {
        (
            agent.to_owned(),
            prompt.to_owned(),
            text.to_owned(),
            Some(10),
            true,
        )
    };
    assert_eq!(
        steps,
        [
            step("writer", "autumn", "moon on the water"),
            step("editor", "moon on the water", "moon on still water"),
            step("reviewer", "moon on still water", "approved"),
        ]
    );
    assert_eq!(trace.performance.total_prompt_tokens, 21);
}
