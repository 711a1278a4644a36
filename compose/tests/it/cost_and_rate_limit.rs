//! `M::cost` (tokens × the user's price table, per model) and `M::rate_limit` (a token
//! bucket whose waits are recorded, so a replay decides the same without the clock).

use std::collections::{BTreeMap, VecDeque};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures_util::future::BoxFuture;
use reel_actors::state::State;
use reel_agents::{Decisions, TextAgent};
use reel_compose::{AgentBuilder, CostLedger, M, ModelCost, ModelPrice, PriceTable};
use reel_llm::{
    BaseLlm, Cassette, CassetteMode, LlmChunk, LlmError, LlmRequest, LlmStream, LlmUsage,
};
use serde_json::json;

use crate::scripted::{Scripted, ok};

/// A model answering in order, each answer with its usage (`None`: a failure).
struct Metered {
    answers: Mutex<VecDeque<Option<(String, LlmUsage)>>>,
    asked: Mutex<Vec<String>>,
}

fn usage(prompt: u64, response: u64, total: u64) -> LlmUsage {
    LlmUsage {
        prompt_tokens: prompt,
        response_tokens: response,
        total_tokens: total,
    }
}

impl BaseLlm for Metered {
    fn model_id(&self) -> &str {
        "gemini-2.5-pro"
    }

    fn generate_stream(&self, request: LlmRequest) -> BoxFuture<'_, Result<LlmStream, LlmError>> {
        self.asked.lock().unwrap().push(request.model.clone());
        let answer = self.answers.lock().unwrap().pop_front().flatten();
        Box::pin(async move {
            let (text, usage) = answer.ok_or_else(|| LlmError::Http {
                status: 503,
                url: "metered".to_owned(),
                message: "overloaded".to_owned(),
            })?;
            // Usage on the last of two chunks, as the API streams it.
            let first = LlmChunk::text(text);
            let last = LlmChunk {
                usage: Some(usage),
                ..LlmChunk::default()
            };
            Ok(Box::pin(futures_util::stream::iter([Ok(first), Ok(last)])) as LlmStream)
        })
    }
}

fn prices() -> PriceTable {
    PriceTable {
        currency: "USD".to_owned(),
        models: BTreeMap::from([
            (
                "gemini-2.5-pro".to_owned(),
                ModelPrice {
                    prompt_per_million: 1.25,
                    completion_per_million: 10.0,
                },
            ),
            (
                "gemini-2.5-flash".to_owned(),
                ModelPrice {
                    prompt_per_million: 0.30,
                    completion_per_million: 2.50,
                },
            ),
        ]),
    }
}

#[tokio::test]
async fn cost_prices_each_call_at_the_model_that_answered_it() {
    let model = Arc::new(Metered {
        answers: Mutex::new(VecDeque::from([
            Some(("one".to_owned(), usage(1_000, 200, 1_200))),
            None,
            // 300 thinking tokens: billed as output.
            Some(("two".to_owned(), usage(2_000, 100, 2_400))),
        ])),
        asked: Mutex::default(),
    });
    let ledger = CostLedger::new(prices());
    // Written after the fallback: still charged at the model each call asked.
    let agent = AgentBuilder::new("writer")
        .model("gemini-2.5-pro")
        .middleware(M::fallback_model("gemini-2.5-flash") | M::cost(&ledger))
        .build(model.clone());
    let state = State::new();
    for input in ["a", "b"] {
        state.set("input", input).await.unwrap();
        agent.run(&state).await.unwrap();
    }
    assert_eq!(
        *model.asked.lock().unwrap(),
        ["gemini-2.5-pro", "gemini-2.5-pro", "gemini-2.5-flash"]
    );
    let report = ledger.report();
    assert_eq!(
        report.models,
        [
            ModelCost {
                model: "gemini-2.5-flash".into(),
                calls: 1,
                prompt_tokens: 2_000,
                completion_tokens: 400,
                amount: Some(0.0016), // 2000 × 0.30/1e6 + 400 × 2.50/1e6
            },
            ModelCost {
                model: "gemini-2.5-pro".into(),
                calls: 1,
                prompt_tokens: 1_000,
                completion_tokens: 200,
                amount: Some(0.00325), // 1000 × 1.25/1e6 + 200 × 10/1e6
            },
        ]
    );
    assert_eq!(report.total, 0.00485);
    assert_eq!(report.total_text(), "0.004850 USD");
}

#[tokio::test]
async fn cost_says_what_it_could_not_price() {
    let ledger = CostLedger::new(PriceTable {
        currency: "EUR".to_owned(),
        models: BTreeMap::new(),
    });
    // The scripted model reports no usage.
    let agent = AgentBuilder::new("writer")
        .middleware(M::cost(&ledger))
        .build(Scripted::new("m", vec![ok("x")]));
    let state = State::new();
    state.set("input", "q").await.unwrap();
    agent.run(&state).await.unwrap();
    let report = ledger.report();
    assert_eq!(report.models, []);
    assert_eq!(report.without_usage, 1);
    assert_eq!(
        report.total_text(),
        "0.000000 EUR (at least: 1 call without usage)"
    );
}

/// Runs five calls through `M::rate_limit(2)` over a scripted model wrapped in a cassette,
/// recording the decisions; then replays them from the cassette and the decisions.
#[tokio::test(start_paused = true)]
async fn rate_limit_waits_its_turn_records_the_waits_and_the_replay_decides_the_same() {
    let dir = std::env::temp_dir().join(format!("reel-compose-{}-rate", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let cassette_path = dir.join("run.cassette.json");
    let inputs = ["a", "b", "c", "d", "e"];
    let build = |llm: Arc<dyn BaseLlm>, decisions: &Decisions| {
        AgentBuilder::new("writer")
            .middleware(M::rate_limit(2))
            .build_with(llm, decisions)
    };
    let run = |agent: reel_compose::ComposedAgent| async move {
        let state = State::new();
        let start = tokio::time::Instant::now();
        let mut at = Vec::new();
        for input in inputs {
            state.set("input", input).await.unwrap();
            agent.run(&state).await.unwrap();
            at.push(start.elapsed().as_millis());
        }
        at
    };

    let live = Scripted::new("m", inputs.iter().map(|i| ok(i)).collect());
    let cassette = Cassette::open(&cassette_path, CassetteMode::Record).unwrap();
    let recorded = reel_llm::LlmInterceptor::wrap(&cassette, live.clone() as Arc<dyn BaseLlm>);
    let decisions = Decisions::record();
    // Two at once, then one every 500 ms.
    assert_eq!(
        run(build(recorded, &decisions)).await,
        [0, 0, 500, 1000, 1500]
    );
    let waits: Vec<serde_json::Value> = decisions
        .snapshot()
        .decisions
        .iter()
        .map(|d| json!([d.agent, serde_json::to_value(&d.choice).unwrap()]))
        .collect();
    let waited = |ms: u64| json!(["writer.rateLimit", {"kind": "middleware", "layer": "rateLimit", "outcome": {"waitedMs": ms}}]);
    assert_eq!(
        waits,
        [waited(0), waited(0), waited(500), waited(500), waited(500)]
    );
    let decisions_path = Decisions::path_beside(&cassette_path);
    decisions.save(&decisions_path).unwrap();

    let cassette = Cassette::open(&cassette_path, CassetteMode::Replay).unwrap();
    let decisions = Decisions::open(&decisions_path).unwrap();
    assert_eq!(
        run(build(cassette.model("m"), &decisions)).await,
        [0, 0, 0, 0, 0]
    );
    assert_eq!(decisions.unused(), Vec::<usize>::new());
    assert_eq!(cassette.unused().await, Vec::<usize>::new());
    assert_eq!(live.calls(), 5, "the replay made a model call");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[tokio::test(start_paused = true)]
async fn a_rate_limit_refills_while_idle() {
    let agent = AgentBuilder::new("writer")
        .middleware(M::rate_limit(1))
        .build(Scripted::new("m", vec![ok("1"), ok("2"), ok("3")]));
    let state = State::new();
    let start = tokio::time::Instant::now();
    let mut at = Vec::new();
    for pause in [0, 0, 5_000] {
        tokio::time::sleep(Duration::from_millis(pause)).await;
        agent.run(&state).await.unwrap();
        at.push(start.elapsed().as_millis());
    }
    // The second waits a second; after five idle seconds the third goes at once.
    assert_eq!(at, [0, 1_000, 6_000]);
}
