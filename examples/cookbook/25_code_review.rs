//! 25 — code review (Run): a small diff (bundled, `assets/cookbook/25_code_review.diff`)
//! reviewed by three agents in a `>>` pipeline: a linter lists style and correctness
//! issues, a security reviewer (given the diff and the lint findings) lists security
//! issues, and a summariser writes the review comment with a verdict. Each agent's
//! findings go to the state (`.output_key`), the later agents read the diff and the
//! earlier findings from there (`C::from_state`), and the comment must carry a verdict
//! (`G::contains`).
//!
//! ```text
//! cargo run --example 25_code_review                         # the bundled cassette, offline
//! GEMINI_API_KEY=… cargo run --example 25_code_review -- --live
//! GEMINI_API_KEY=… cargo run --example 25_code_review -- --live --record review.cassette.json
//! ```
//!
//! By default every model call is answered from the bundled cassette
//! (`assets/cookbook/25_code_review.cassette.json`), offline; the script it was recorded
//! from is in `tests/it/cookbook/ex25_code_review.rs`.

#[allow(dead_code)] // the cookbook's tests use the parts a run from the command line does not
#[path = "support/cookbook.rs"]
pub mod cookbook;

use std::error::Error;
use std::process::ExitCode;

use cookbook::Models;
use reel::actors::state::State;
use reel::compose::{AgentBuilder, C, Composable, G, P, check_contracts_with, infer_data_flow};

/// The example's name: its cassette is `assets/cookbook/25_code_review.cassette.json`.
pub const NAME: &str = "25_code_review";
/// The diff under review.
pub const DIFF: &str = include_str!("../../assets/cookbook/25_code_review.diff");

/// The pipeline: `lint >> security >> summary`.
pub fn review() -> Composable {
    let lint = AgentBuilder::new("lint")
        .instruction(
            P::role("a Rust linter")
                + P::task("List the style and correctness issues the diff adds, one per line as `file:line: issue`")
                + P::constraint("say `none` if there are none"),
        )
        .temperature(0.0)
        .output_key("lint_findings");
    let security = AgentBuilder::new("security")
        .instruction(
            P::role("an application security reviewer")
                + P::task("Given the diff and the lint findings, list the security issues the diff adds, one per line with a severity")
                + P::constraint("do not repeat lint findings"),
        )
        .context(C::from_state(&["diff"]))
        .temperature(0.0)
        .output_key("security_findings");
    let summary = AgentBuilder::new("summary")
        .instruction(
            P::role("a senior reviewer")
                + P::task("Write the review comment: one line per finding, then `verdict: approve` or `verdict: request changes`"),
        )
        .context(C::from_state(&["lint_findings", "security_findings"]))
        .guard(G::contains(&["verdict:"]))
        .temperature(0.0)
        .output_key("review");
    lint >> security >> summary
}

/// The example: the diff reviewed, as it prints.
pub async fn run(models: Models) -> Result<String, Box<dyn Error>> {
    let review = review();
    let mut out = format!("pipeline: {}\ndata flow:\n", review.label());
    for edge in infer_data_flow(&review) {
        out.push_str(&format!("  {edge}\n"));
    }
    let violations = check_contracts_with(&review, &["diff"]);
    out.push_str(&format!(
        "contracts (diff given): {} violations\n\n",
        violations.len()
    ));

    let state = State::new();
    state.set("diff", DIFF).await?;
    state.set("input", DIFF).await?;
    review.compile(models.default_model()?).run(&state).await?;
    for (title, key) in [
        ("lint", "lint_findings"),
        ("security", "security_findings"),
        ("review comment", "review"),
    ] {
        out.push_str(&format!(
            "== {title} ==\n{}\n",
            state.get::<String>(key).unwrap_or_default()
        ));
    }
    Ok(out)
}

fn main() -> ExitCode {
    cookbook::main(NAME, run)
}
