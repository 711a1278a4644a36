//! 02 — combinators (Crawl): the operators and the seed's patterns, each built with
//! `reel::compose` and run. `>>` runs agents in order (each one's output is the next one's
//! input), `|` runs them at once and joins their outputs in the order written, `* n`
//! repeats an agent n times, `* until(pred)` repeats until a predicate on the state holds;
//! `review_loop`, `fan_out_merge` and `supervised` are the seed's patterns over them; and
//! `check_contracts` catches a wiring mistake (a misspelt key) before anything runs.
//!
//! ```text
//! cargo run --example 02_combinators                         # the bundled cassette, offline
//! GEMINI_API_KEY=… cargo run --example 02_combinators -- --live
//! GEMINI_API_KEY=… cargo run --example 02_combinators -- --live --record combinators.cassette.json
//! ```
//!
//! By default every model call is answered from the bundled cassette
//! (`assets/cookbook/02_combinators.cassette.json`), offline. The bundled cassette was
//! recorded with a scripted model standing in for Gemini
//! (`tests/it/cookbook/ex02_combinators.rs` holds the script); the fan-out's two calls run
//! at once, and the cassette answers each by its request, whatever order they come in.

#[allow(dead_code)] // the cookbook's tests use the parts a run from the command line does not
#[path = "support/cookbook.rs"]
pub mod cookbook;

use std::error::Error;
use std::process::ExitCode;
use std::sync::Arc;

use cookbook::Models;
use reel::actors::state::State;
use reel::compose::{
    AgentBuilder, AuditLog, Composable, M, P, check_contracts, fan_out_merge, review_loop,
    supervised, until,
};
use reel::llm::BaseLlm;

/// The example's name: its cassette is `assets/cookbook/02_combinators.cassette.json`.
pub const NAME: &str = "02_combinators";
/// What every stage works on.
pub const TOPIC: &str = "electric cargo bikes for city deliveries";

/// An agent whose every model call goes into `audit` (`M::audit`), so the example can
/// show each call of a loop.
fn agent(name: &str, task: &str, audit: &AuditLog) -> AgentBuilder {
    AgentBuilder::new(name)
        .instruction(P::task(task))
        .middleware(M::audit(audit))
}

/// `>>`: an outline, then a paragraph written from it.
pub fn pipeline(audit: &AuditLog) -> Composable {
    agent("outliner", "Outline the topic in three short points", audit).output_key("outline")
        >> agent("writer", "Write one paragraph from the outline", audit).reads("outline")
}

/// `|` through `fan_out_merge`: two analyses at once, joined in the order written.
pub fn analyses(audit: &AuditLog) -> Composable {
    fan_out_merge(vec![
        agent(
            "tech",
            "One sentence: the technical view of the topic",
            audit,
        )
        .into(),
        agent(
            "business",
            "One sentence: the business view of the topic",
            audit,
        )
        .into(),
    ])
}

/// `* 2`: the same polisher twice, each pass on the previous one's output.
pub fn polished(audit: &AuditLog) -> Composable {
    agent(
        "polisher",
        "Tighten the sentence; reply with it only",
        audit,
    ) * 2
}

/// `* until(pred)` through `review_loop`: write, review, until the reviewer says `good`.
pub fn reviewed(audit: &AuditLog) -> Composable {
    review_loop(
        AgentBuilder::new("drafter")
            .middleware(M::audit(audit))
            .instruction(
                P::task(
                    "Write a one-line slogan for the topic; improve the last draft if there is one",
                ) + P::with_state(&["slogan"]),
            )
            .output_key("slogan"),
        agent(
            "critic",
            "Reply `good` if the slogan is ready, else `needs_work`",
            audit,
        ),
        "quality",
        "good",
        3,
    )
}

/// `supervised`: a proposal, then a supervisor who writes `true` to `approved`.
pub fn approved(audit: &AuditLog) -> Composable {
    supervised(
        agent("proposer", "Propose a pilot in one sentence", audit),
        agent(
            "supervisor",
            "Reply `true` to approve the proposal, else `false`",
            audit,
        ),
        "approved",
        2,
    )
}

/// A wiring mistake: the editor reads `drfat`, which nothing writes.
pub fn miswired(audit: &AuditLog) -> Composable {
    agent("author", "Write a draft", audit).output_key("draft")
        >> agent("editor", "Edit the draft", audit).reads("drfat")
}

/// Runs `tree` on a fresh state whose input is [`TOPIC`] and says what it returned, each
/// model call it made (from `audit`; not for a fan-out, whose calls finish in any order)
/// and the state keys `keys`.
async fn stage(
    tree: Composable,
    model: &Arc<dyn BaseLlm>,
    audit: &AuditLog,
    calls: bool,
    keys: &[&str],
) -> Result<String, Box<dyn Error>> {
    let label = tree.label();
    let agent = tree.compile(model.clone());
    let state = State::new();
    state.set("input", TOPIC).await?;
    let before = audit.entries().len();
    let output = agent.run(&state).await?;
    let mut out = format!("{label}\n");
    if calls {
        for entry in audit.entries().into_iter().skip(before) {
            let said = entry
                .outcome
                .unwrap_or_else(|error| format!("failed: {error}"));
            out.push_str(&format!(
                "  {:<10} {}\n",
                entry.agent,
                said.replace('\n', " / ")
            ));
        }
    }
    out.push_str(&format!("  => {}\n", output.replace('\n', "\n     ")));
    for key in keys {
        let value = state
            .get_raw(key)
            .map_or("(unset)".to_owned(), |v| v.to_string());
        out.push_str(&format!("  state {key} = {value}\n"));
    }
    Ok(out)
}

/// The example: each combinator and pattern run in turn, then the contract check.
pub async fn run(models: Models) -> Result<String, Box<dyn Error>> {
    let model = models.default_model()?;
    let audit = AuditLog::new();
    let mut out = String::new();
    out.push_str(&stage(pipeline(&audit), &model, &audit, true, &["outline"]).await?);
    out.push_str(&stage(analyses(&audit), &model, &audit, false, &[]).await?);
    out.push_str(&stage(polished(&audit), &model, &audit, true, &[]).await?);
    out.push_str(
        &stage(
            reviewed(&audit),
            &model,
            &audit,
            true,
            &["slogan", "quality"],
        )
        .await?,
    );
    out.push_str(&stage(approved(&audit), &model, &audit, true, &["approved"]).await?);
    // `until` also takes any closure over the state; built, not run.
    let converge =
        agent("iterate", "Improve", &audit) * until(|v| v["quality"].as_str() == Some("good"));
    out.push_str(&format!("built, not run: {}\n", converge.label()));
    let tree = miswired(&audit);
    out.push_str(&format!("check_contracts({}):\n", tree.label()));
    for violation in check_contracts(&tree) {
        let level = if violation.is_error() {
            "error"
        } else {
            "warning"
        };
        out.push_str(&format!("  {level}: {violation}\n    {violation:?}\n"));
    }
    Ok(out)
}

fn main() -> ExitCode {
    cookbook::main(NAME, run)
}
