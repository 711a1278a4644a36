//! 30 — production pipeline (Run): a release announcement written end to end the way a
//! production service would run it. `drafter >> editor >> publisher`, each agent under the
//! same middleware (`M::log` to `tracing`, `M::metrics` counting calls); the publisher's
//! answer is a schema-checked JSON artifact (`A::json_output`) published to the state; every
//! model call is recorded into an agent trace (`TraceRecorder`: each call's agent, prompt,
//! answer and tokens), summarised the way `reel trace show` lists turns; and the trace is
//! evaluated by an `E::` suite (the answer holds the version, no forbidden word, every step
//! answered, its cost from a price table), reported as the Markdown a pull request gets.
//! The safety case fails, and should: the drafter wrote a forbidden word that the editor
//! took out, so the published artifact is clean but the trace, which keeps what every
//! agent said, is not — the evaluation points at the agent to fix.
//!
//! ```text
//! cargo run --example 30_production_pipeline                         # the bundled cassette, offline
//! GEMINI_API_KEY=… cargo run --example 30_production_pipeline -- --live
//! GEMINI_API_KEY=… cargo run --example 30_production_pipeline -- --live --record pipeline.cassette.json
//! ```
//!
//! By default every model call is answered from the bundled cassette
//! (`assets/cookbook/30_production_pipeline.cassette.json`), offline; the script it was
//! recorded from is in `tests/it/cookbook/ex30_production_pipeline.rs`. The trace's
//! timings are left out of what the example prints: they are the machine's, not the
//! recording's.

#[allow(dead_code)] // the cookbook's tests use the parts a run from the command line does not
#[path = "support/cookbook.rs"]
pub mod cookbook;

use std::collections::BTreeMap;
use std::error::Error;
use std::process::ExitCode;
use std::sync::Arc;

use cookbook::{MODEL, Models};
use reel::actors::state::State;
use reel::compose::{A, AgentBuilder, Composable, G, M, Metrics, Middleware, P};
use reel::eval::export::{Format, render};
use reel::eval::{E, EvaluationReport, ModelPrice, PriceTable, Score, Suite, evaluate_trace};
use reel::llm::{BaseLlm, TraceRecorder};
use reel::recorder::clock::TokioClock;
use reel::recorder::trace::AgentTrace;
use serde_json::{Value, json};

/// The example's name: its cassette is `assets/cookbook/30_production_pipeline.cassette.json`.
pub const NAME: &str = "30_production_pipeline";
/// What the announcement is about.
pub const RELEASE: &str = "reel 0.2.0: cookbook examples replay offline; `reel eval` scores recordings; `reel trace show` lists agent traces";

/// The announcement's JSON Schema.
pub fn announcement_schema() -> Value {
    json!({
        "type": "object",
        "required": ["title", "summary", "version"],
        "properties": {
            "title": {"type": "string"},
            "summary": {"type": "string"},
            "version": {"type": "string", "pattern": "^[0-9]+\\.[0-9]+\\.[0-9]+$"}
        },
        "additionalProperties": false
    })
}

/// The pipeline, every agent under `middleware`.
pub fn pipeline(middleware: &Middleware) -> Composable {
    AgentBuilder::new("drafter")
        .instruction(
            P::role("a release manager")
                + P::task("Draft a three-sentence announcement of the release"),
        )
        .temperature(0.5)
        .middleware(middleware.clone())
        >> AgentBuilder::new("editor")
            .instruction(P::task(
                "Edit the announcement for clarity; promise nothing",
            ))
            .guard(G::not_contains(&["guarantee"]))
            .temperature(0.2)
            .middleware(middleware.clone())
        >> AgentBuilder::new("publisher")
            .instruction(P::task(
                "Package the announcement as JSON: title, summary, version",
            ))
            .artifacts(
                A::json_output("announcement", "The published announcement")
                    .schema(announcement_schema()),
            )
            .temperature(0.0)
            .middleware(middleware.clone())
}

/// The suite the run's trace is scored by.
pub fn suite() -> Suite {
    let mut prices = BTreeMap::new();
    prices.insert(
        MODEL.to_owned(),
        ModelPrice {
            prompt_per_million: 0.30,
            completion_per_million: 2.50,
        },
    );
    E::suite("release announcement")
        .case(E::case("names the version", E::contains_match(["0.2.0"])))
        .case(E::case(
            "no forbidden words",
            E::safety(["guarantee", "password"]),
        ))
        .case(E::case(
            "every step answered",
            E::custom("all_answered", |trace: &AgentTrace| {
                let turns = trace.turns();
                let answered = turns
                    .iter()
                    .filter(|turn| {
                        turn.response
                            .is_some_and(|r| r.text.as_deref().is_some_and(|t| !t.is_empty()))
                    })
                    .count();
                Score::fraction(
                    answered,
                    turns.len(),
                    format!("{answered} of {} calls answered", turns.len()),
                )
            }),
        ))
        .prices(PriceTable {
            currency: "USD".to_owned(),
            models: prices,
        })
}

fn first_line(text: &str, max: usize) -> String {
    let line = text.lines().next().unwrap_or_default();
    if line.chars().count() > max {
        format!("{}…", line.chars().take(max).collect::<String>())
    } else {
        line.to_owned()
    }
}

/// The trace, turn by turn (agent, prompt, answer, tokens), without its timings.
pub fn trace_summary(trace: &AgentTrace) -> String {
    let mut out = format!(
        "trace `{}` of `{}`: {} calls\n",
        trace.trace_name,
        trace.agent_name,
        trace.turns().len()
    );
    for turn in trace.turns() {
        let agent = turn.request.agent.as_deref().unwrap_or("?");
        let prompt = first_line(turn.request.prompt.as_deref().unwrap_or_default(), 64);
        out.push_str(&format!("  #{} {agent:<9} > {prompt}\n", turn.index));
        if let Some(response) = turn.response {
            let usage = response
                .token_usage
                .as_ref()
                .map(|u| {
                    format!(
                        " [{} + {} tokens]",
                        u.prompt.unwrap_or(0),
                        u.completion.unwrap_or(0)
                    )
                })
                .unwrap_or_default();
            let text = first_line(response.text.as_deref().unwrap_or_default(), 64);
            out.push_str(&format!("  #{} {:<9} < {text}{usage}\n", turn.index, ""));
        }
    }
    out
}

/// The example: the pipeline run, its artifact, its metrics, its trace and its evaluation,
/// as it prints.
pub async fn run(models: Models) -> Result<String, Box<dyn Error>> {
    let metrics = Metrics::new();
    let middleware = M::log() | M::metrics(&metrics);
    let recorder = TraceRecorder::new(
        NAME,
        "release_pipeline",
        Arc::new(TokioClock::anchored_at(0)),
    );
    let model: Arc<dyn BaseLlm> = Arc::new(recorder.wrap(models.default_model()?));

    let state = State::new();
    state.set("input", RELEASE).await?;
    pipeline(&middleware).compile(model).run(&state).await?;

    let mut out = format!("release: {RELEASE}\n\n");
    let announcement = state.get_raw("announcement").unwrap_or(Value::Null);
    out.push_str(&format!(
        "A:: announcement (schema-checked), published to the state:\n{}\n",
        serde_json::to_string_pretty(&announcement)?
    ));
    let counts = metrics.snapshot();
    out.push_str(&format!(
        "M::metrics: {} calls, {} succeeded, {} failed\n\n",
        counts.calls, counts.succeeded, counts.failed
    ));
    let trace = recorder.trace();
    out.push_str(&trace_summary(&trace));

    let suite = suite();
    let report = EvaluationReport::new(
        suite.name(),
        vec![evaluate_trace(&suite, NAME, &trace).await],
    );
    out.push_str("\nE:: the evaluation, as a pull-request comment:\n");
    out.push_str(&render(&report, Format::Markdown));
    Ok(out)
}

fn main() -> ExitCode {
    cookbook::main(NAME, run)
}
