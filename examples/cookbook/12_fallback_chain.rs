//! 12 — fallback chain (Walk): graceful degradation with `/`. `primary / secondary /
//! canned` is a `FallbackTextAgent`: the primary (`gemini-2.5-pro`) is asked first; when
//! its call fails the secondary (`gemini-2.5-flash`) is asked; when both fail a canned
//! reply (an `FnTextAgent`, no model) answers. Three questions take the three paths, and
//! `M::audit` on each model agent shows which answered and which failed.
//!
//! ```text
//! cargo run --example 12_fallback_chain                      # the bundled cassette, offline
//! GEMINI_API_KEY=… cargo run --example 12_fallback_chain -- --live
//! GEMINI_API_KEY=… cargo run --example 12_fallback_chain -- --live --record fallback.cassette.json
//! ```
//!
//! The bundled cassette keeps the failed calls too (decision 0063): offline, the primary's
//! call fails again, from the recording (`the recorded call failed: …`), and the chain
//! falls back exactly as it did. It was recorded with a scripted model standing in for
//! Gemini, whose `gemini-2.5-pro` answers 503 twice
//! (`tests/it/cookbook/ex12_fallback_chain.rs` holds the script). `--live --record` keeps
//! no failures (the cookbook's live recording is a plain cassette): a live recording
//! whose primary failed replays that call as a cassette miss, which fails all the same.

#[allow(dead_code)] // the cookbook's tests use the parts a run from the command line does not
#[path = "support/cookbook.rs"]
pub mod cookbook;

use std::error::Error;
use std::process::ExitCode;

use cookbook::{MODEL, Models};
use reel::actors::state::State;
use reel::agents::{FnTextAgent, TextAgent};
use reel::compose::{AgentBuilder, AuditEntry, AuditLog, Composable, M, P};

/// The example's name: its cassette is `assets/cookbook/12_fallback_chain.cassette.json`.
pub const NAME: &str = "12_fallback_chain";
/// The primary's model.
pub const PRIMARY: &str = "gemini-2.5-pro";
/// What the chain says when no model answers.
pub const CANNED: &str =
    "Sorry, our assistant is unavailable right now; a person will reply by email.";
/// The questions, in order.
pub const QUESTIONS: [&str; 3] = [
    "How do I reset my password?",
    "Which plans include SSO?",
    "Can I export my data as CSV?",
];

/// What happened to one question.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Asked {
    /// The question.
    pub question: String,
    /// Each model agent's call, in order: who, and its answer or error.
    pub calls: Vec<AuditEntry>,
    /// The chain's answer.
    pub answer: String,
}

/// Asks every question of `primary / secondary / canned`.
pub async fn ask_all(models: &Models) -> Result<Vec<Asked>, Box<dyn Error>> {
    let audit = AuditLog::new();
    let agent = |name: &str| {
        AgentBuilder::new(name)
            .instruction(P::role("a support assistant") + P::format("One sentence"))
            .middleware(M::audit(&audit))
    };
    let primary = agent("primary").build(models.get(PRIMARY)?);
    let secondary = agent("secondary").build(models.get(MODEL)?);
    let canned = FnTextAgent::new("canned", |_state: &State| Ok(CANNED.to_owned()));
    let chain = (primary / secondary / Composable::agent(canned)).compile(models.get(MODEL)?);
    let mut asked = Vec::new();
    for question in QUESTIONS {
        let before = audit.entries().len();
        let state = State::new();
        state.set("input", question).await?;
        let answer = chain.run(&state).await?;
        asked.push(Asked {
            question: question.to_owned(),
            calls: audit.entries().into_iter().skip(before).collect(),
            answer,
        });
    }
    Ok(asked)
}

/// The example: each question, who was asked and how it went, and the answer. A failed
/// call's error text is not printed (live it is the API's, offline the recording's
/// `the recorded call failed: …`); the test checks it.
pub async fn run(models: Models) -> Result<String, Box<dyn Error>> {
    let mut out = format!("chain: primary ({PRIMARY}) / secondary ({MODEL}) / canned\n");
    for asked in ask_all(&models).await? {
        out.push_str(&format!("{}\n", asked.question));
        for call in &asked.calls {
            let outcome = if call.outcome.is_ok() {
                "answered"
            } else {
                "failed"
            };
            out.push_str(&format!("  {:<9} {outcome}\n", call.agent));
        }
        if asked.calls.iter().all(|call| call.outcome.is_err()) {
            out.push_str("  canned    answered (no model)\n");
        }
        out.push_str(&format!("  => {}\n", asked.answer));
    }
    Ok(out)
}

fn main() -> ExitCode {
    cookbook::main(NAME, run)
}
