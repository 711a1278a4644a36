//! 27 — race and timeout (Run): choices made by timing, replayed as recorded.
//! `RaceTextAgent` asks two models the same question and keeps the first answer (the
//! other is cancelled); `TimeoutTextAgent` puts a deadline on a slow agent (it fires, and
//! a quick agent answers instead) and on a quick one (it does not). Which branch won and
//! whether each deadline fired depend on the machine's timing, not on any recorded byte,
//! so each is written into the decisions log (`Decisions`, decision 0054) and a replay
//! reads them back: it runs only the recorded winner, fails a recorded timeout at once
//! without running its agent, and reads no clock.
//!
//! ```text
//! cargo run --example 27_race_timeout                         # the bundled cassette, offline
//! GEMINI_API_KEY=… cargo run --example 27_race_timeout -- --live
//! GEMINI_API_KEY=… cargo run --example 27_race_timeout -- --live --record race.cassette.json
//! ```
//!
//! By default every model call is answered from the bundled cassette
//! (`assets/cookbook/27_race_timeout.cassette.json`) and every timing choice from the
//! decisions log beside it (`27_race_timeout.decisions.json`), offline; `--live --record
//! PATH` writes both. The script the bundle was recorded from is in
//! `tests/it/cookbook/ex27_race_timeout.rs`: there the losing model answers after 4 s and the
//! slow agent after 10 s, so neither answer was ever recorded — the cassette holds only the
//! calls that counted. (Live, a cancelled call's answer may still arrive and be recorded; a
//! replay never asks for it.)

#[allow(dead_code)] // the cookbook's tests use the parts a run from the command line does not
#[path = "support/cookbook.rs"]
pub mod cookbook;

use std::error::Error;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use cookbook::{MODEL, Models};
use reel::actors::state::State;
use reel::agents::{Choice, LlmTextAgent, RaceTextAgent, SharedAgent, TextAgent, TimeoutTextAgent};

/// The example's name: its cassette is `assets/cookbook/27_race_timeout.cassette.json`.
pub const NAME: &str = "27_race_timeout";
/// The quick model in the race.
pub const LITE: &str = "gemini-2.5-flash-lite";
/// The thorough model: in the race, and the slow agent under a deadline.
pub const PRO: &str = "gemini-2.5-pro";
/// The question.
pub const QUESTION: &str =
    "Why must a replay read a race's winner from a log instead of racing again?";
/// The deadline on each timed agent.
pub const DEADLINE: Duration = Duration::from_secs(2);

fn agent(
    name: &str,
    models: &Models,
    model: &str,
    instruction: &str,
) -> Result<SharedAgent, Box<dyn Error>> {
    Ok(Arc::new(
        LlmTextAgent::new(name, models.get(model)?)
            .instruction(instruction)
            .temperature(0.0),
    ))
}

/// The example: the race, the deadline that fires, the deadline that does not, and the
/// decisions log, as it prints.
pub async fn run(models: Models) -> Result<String, Box<dyn Error>> {
    let decisions = models.decisions()?;
    let answer = "Answer in one sentence.";
    let race = RaceTextAgent::new(
        "race",
        vec![
            agent("lite_answer", &models, LITE, answer)?,
            agent("pro_answer", &models, PRO, answer)?,
        ],
    )
    .decisions(decisions.clone());
    let deep = TimeoutTextAgent::new(
        "deep_deadline",
        agent(
            "deep_analysis",
            &models,
            PRO,
            "Analyse the question in depth, with examples.",
        )?,
        DEADLINE,
    )
    .decisions(decisions.clone());
    let quick = agent(
        "quick_analysis",
        &models,
        MODEL,
        "Analyse the question in two sentences.",
    )?;
    let summary = TimeoutTextAgent::new(
        "summary_deadline",
        agent(
            "summary",
            &models,
            MODEL,
            "Summarise the analysis in five words.",
        )?,
        DEADLINE,
    )
    .decisions(decisions.clone());

    let state = State::new();
    state.set("input", QUESTION).await?;
    let mut out = format!("question: {QUESTION}\n\n");

    let first = race.run(&state).await?;
    out.push_str(&format!(
        "race between {LITE} and {PRO}: first answer\n  {first}\n"
    ));

    let analysis = match deep.run(&state).await {
        Ok(analysis) => {
            out.push_str(&format!(
                "deep_analysis ({PRO}) finished within {DEADLINE:?}\n"
            ));
            analysis
        }
        Err(error) => {
            let analysis = quick.run(&state).await?;
            out.push_str(&format!(
                "{error}; quick_analysis ({MODEL}) answered instead\n"
            ));
            analysis
        }
    };
    out.push_str(&format!("  {analysis}\n"));

    state.set("input", &analysis).await?;
    let summary = summary.run(&state).await?;
    out.push_str(&format!(
        "summary ({MODEL}) under {DEADLINE:?}\n  {summary}\n"
    ));

    out.push_str("\ndecisions log (recorded live, read back in a replay):\n");
    for decision in decisions.snapshot().decisions {
        let what = match decision.choice {
            Choice::RaceWinner { index, winner } => format!("won by `{winner}` (branch {index})"),
            Choice::Timeout { fired: true } => "the deadline fired".to_owned(),
            Choice::Timeout { fired: false } => "finished before the deadline".to_owned(),
            Choice::Middleware { layer, outcome } => format!("{layer}: {outcome}"),
            Choice::Approval { approved, by, .. } => {
                format!("{} by {by}", if approved { "approved" } else { "rejected" })
            }
        };
        out.push_str(&format!("  {:<16} {what}\n", decision.agent));
    }
    Ok(out)
}

fn main() -> ExitCode {
    cookbook::main(NAME, run)
}
