//! 15 — middleware stack (Walk): `M::` layers composed with `|` around two agents' model
//! calls, each layer visibly doing its job: `M::cache` answers a repeated question with no
//! model call, `M::dedup` answers a request identical to the previous one, `M::metrics`
//! counts runs and the calls that reached the model, `M::fallback_model` asks a second
//! model when the first one's call fails, `M::cost` prices every call from a price table
//! given here, per model, and `M::rate_limit` spaces the model calls (one a second here).
//!
//! ```text
//! cargo run --example 15_middleware_stack                         # the bundled cassette, offline
//! GEMINI_API_KEY=… cargo run --example 15_middleware_stack -- --live
//! GEMINI_API_KEY=… cargo run --example 15_middleware_stack -- --live --record stack.cassette.json
//! ```
//!
//! The cache's hits and the rate limit's waits depend on the clock, so they are written to
//! the agents' decisions log (`assets/cookbook/15_middleware_stack.decisions.json`, beside
//! the cassette); offline, the layers read them back instead of the clock and decide the
//! same, without waiting. The bundled cassette keeps the primary model's failed call too
//! (decision 0063): offline that call fails again, from the recording, and the fallback
//! model is answered from the cassette. The bundled cassette was recorded
//! with a scripted model standing in for Gemini (`tests/it/cookbook/ex15_middleware_stack.rs`).

#[allow(dead_code)] // the cookbook's tests use the parts a run from the command line does not
#[path = "support/cookbook.rs"]
pub mod cookbook;

use std::error::Error;
use std::process::ExitCode;
use std::time::Duration;

use cookbook::{MODEL, Models};
use reel::actors::state::State;
use reel::agents::{Choice, TextAgent};
use reel::compose::{AgentBuilder, CostLedger, M, Metrics, PriceTable};

/// The example's name: its cassette is `assets/cookbook/15_middleware_stack.cassette.json`.
pub const NAME: &str = "15_middleware_stack";
/// The answerer's model; [`MODEL`] is its fallback and the classifier's model.
pub const PRIMARY: &str = "gemini-2.5-pro";
/// The questions, in the order they come in: one asked twice in a row, then another,
/// then the first again.
pub const QUESTIONS: [&str; 4] = [
    "How do I reset my password?",
    "How do I reset my password?",
    "Why was I charged twice this month?",
    "How do I reset my password?",
];
/// The price table the user supplies (the format `reel eval --prices` reads), per million
/// tokens.
pub const PRICES: &str = r#"{"currency": "USD", "models": {
  "gemini-2.5-pro":   {"promptPerMillion": 1.25, "completionPerMillion": 10.00},
  "gemini-2.5-flash": {"promptPerMillion": 0.30, "completionPerMillion": 2.50}}}"#;

const CLASSIFIER: &str =
    "Classify the customer's question as account, billing or technical. Reply with the one word.";
const ANSWERER: &str = "You answer customer questions in one or two sentences.";

/// The example: the two agents over [`QUESTIONS`], then the figures, as it prints.
pub async fn run(models: Models) -> Result<String, Box<dyn Error>> {
    let decisions = models.decisions()?;
    let prices: PriceTable = serde_json::from_str(PRICES)?;
    let ledger = CostLedger::new(prices);
    let (classifier_calls, runs, model_calls) = (Metrics::new(), Metrics::new(), Metrics::new());

    // The classifier: a request identical to its previous one is answered again, no call.
    let classifier = AgentBuilder::new("classifier")
        .model(MODEL)
        .instruction(CLASSIFIER)
        .temperature(0.0)
        .middleware(M::dedup() | M::metrics(&classifier_calls) | M::cost(&ledger))
        .build_with(models.get(MODEL)?, &decisions);
    // The answerer, outermost first: count runs; answer from the cache for ten minutes;
    // count what reaches the model; one model call a second; price it; fall back to flash.
    let answerer = AgentBuilder::new("answerer")
        .model(PRIMARY)
        .instruction(ANSWERER)
        .temperature(0.2)
        .middleware(
            M::metrics(&runs)
                | M::cache(Duration::from_secs(600))
                | M::metrics(&model_calls)
                | M::rate_limit(1)
                | M::cost(&ledger)
                | M::fallback_model(MODEL),
        )
        .build_with(models.get(PRIMARY)?, &decisions);

    let mut out = String::new();
    let state = State::new();
    for (number, question) in QUESTIONS.iter().enumerate() {
        out.push_str(&format!("question {}: {question}\n", number + 1));
        state.set("input", *question).await?;

        let before = classifier_calls.snapshot().calls;
        let kind = classifier.run(&state).await?;
        let how = if classifier_calls.snapshot().calls > before {
            format!("model call, {MODEL}")
        } else {
            "dedup: the same request as the previous one, no call".to_owned()
        };
        out.push_str(&format!("  classifier | {kind}  ({how})\n"));

        let (calls_before, cost_before) = (model_calls.snapshot().calls, ledger.report());
        let answer = answerer.run(&state).await?;
        let how = if model_calls.snapshot().calls == calls_before {
            "cache hit, no call".to_owned()
        } else {
            let answered_by = ledger
                .report()
                .models
                .into_iter()
                .find(|now| {
                    cost_before
                        .models
                        .iter()
                        .find(|then| then.model == now.model)
                        .is_none_or(|then| then.calls < now.calls)
                })
                .map(|m| m.model)
                .unwrap_or_default();
            if answered_by == PRIMARY {
                format!("model call, {PRIMARY}")
            } else {
                format!("{PRIMARY} failed; fallback model call, {answered_by}")
            }
        };
        out.push_str(&format!("  answerer   | {answer}  ({how})\n"));
    }

    out.push_str("metrics\n");
    let figures = |name: &str, what: &str, metrics: &Metrics| {
        let m = metrics.snapshot();
        format!(
            "  {name:<21} {} ({} succeeded, {} failed)  {what}\n",
            m.calls, m.succeeded, m.failed
        )
    };
    out.push_str(&figures(
        "classifier calls",
        "inside dedup",
        &classifier_calls,
    ));
    out.push_str(&figures("answerer runs", "outside the cache", &runs));
    out.push_str(&figures(
        "answerer model calls",
        "inside the cache (a fallback is one call)",
        &model_calls,
    ));

    let cost = ledger.report();
    out.push_str(&format!("cost ({})\n", cost.currency));
    for model in &cost.models {
        out.push_str(&format!(
            "  {:<17} {} call{}, {} prompt + {} completion tokens: {}\n",
            model.model,
            model.calls,
            if model.calls == 1 { "" } else { "s" },
            model.prompt_tokens,
            model.completion_tokens,
            model
                .amount
                .map_or("no price".to_owned(), |amount| format!("{amount:.6}"))
        ));
    }
    out.push_str(&format!("  total {}\n", cost.total_text()));

    out.push_str("decisions (what the clock decided; offline, read back instead)\n");
    for decision in decisions.snapshot().decisions {
        if let Choice::Middleware { outcome, .. } = &decision.choice {
            out.push_str(&format!("  {:<20} {outcome}\n", decision.agent));
        }
    }
    models.keep_decisions(&decisions)?;
    Ok(out)
}

fn main() -> ExitCode {
    cookbook::main(NAME, run)
}
