//! 13 — review loop (Walk): a writer drafts, a reviewer reviews, and the loop goes on until
//! the reviewer approves (at most three rounds); state (`draft`, `quality`) carries between
//! the agents. The seed's `review_loop` pattern built from `reel::agents` combinators:
//! `Loop(writer >> keep_draft >> reviewer >> verdict).until(quality == "good") >> final_draft`.
//!
//! ```text
//! cargo run --example 13_review_loop                         # the bundled cassette, offline
//! GEMINI_API_KEY=… cargo run --example 13_review_loop -- --live
//! GEMINI_API_KEY=… cargo run --example 13_review_loop -- --live --record review.cassette.json
//! ```
//!
//! By default every model call is answered from the bundled cassette
//! (`assets/cookbook/13_review_loop.cassette.json`): no network, no key, the same output
//! every time, and a call the cassette does not hold is an error rather than a call out.
//! The bundled cassette was recorded with a scripted model standing in for Gemini (its
//! answers are short and fixed; `tests/it/cookbook/ex13_review_loop.rs` holds the script);
//! `--live --record PATH` makes one from the real API.

#[allow(dead_code)] // the cookbook's tests use the parts a run from the command line does not
#[path = "support/cookbook.rs"]
pub mod cookbook;

use std::error::Error;
use std::process::ExitCode;
use std::sync::{Arc, Mutex};

use cookbook::Models;
use reel::actors::state::State;
use reel::agents::{
    AgentError, FnTextAgent, LlmTextAgent, LoopTextAgent, SequentialTextAgent, SharedAgent,
    TextAgent,
};
use reel::llm::BaseLlm;

/// The example's name: its cassette is `assets/cookbook/13_review_loop.cassette.json`.
pub const NAME: &str = "13_review_loop";
/// What the poem is about.
pub const TOPIC: &str = "a lighthouse keeper's last night";
/// The most rounds of writing and reviewing.
pub const MAX_ROUNDS: usize = 3;

const WRITER: &str = "You write four-line poems. Given a topic, write one. Given a topic, \
a draft and a review, rewrite the draft to answer the review. Reply with the poem only.";
const REVIEWER: &str = "You review four-line poems. Reply with APPROVED if the poem is \
ready, else with one sentence saying what to change.";

/// One round: the draft and what the reviewer said.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Round {
    /// The writer's draft.
    pub draft: String,
    /// The reviewer's answer.
    pub review: String,
}

/// How the loop went.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Review {
    /// Every round, in order.
    pub rounds: Vec<Round>,
    /// Whether the reviewer approved the last draft.
    pub approved: bool,
    /// The last draft.
    pub poem: String,
}

/// The pipeline: `loop(writer >> keep_draft >> reviewer >> verdict) >> final_draft`.
pub fn review_loop(
    model: &Arc<dyn BaseLlm>,
    rounds: Arc<Mutex<Vec<Round>>>,
) -> SequentialTextAgent {
    let writer: SharedAgent = Arc::new(
        LlmTextAgent::new("writer", model.clone())
            .instruction(WRITER)
            .temperature(0.7),
    );
    let keep_draft: SharedAgent = Arc::new(FnTextAgent::new_async(
        "keep_draft",
        |state: State| async move {
            let draft = state.get::<String>("input").unwrap_or_default();
            state
                .set("draft", &draft)
                .await
                .map_err(|error| AgentError::failed("keep_draft", error))?;
            Ok(draft)
        },
    ));
    let reviewer: SharedAgent = Arc::new(
        LlmTextAgent::new("reviewer", model.clone())
            .instruction(REVIEWER)
            .temperature(0.0),
    );
    let verdict: SharedAgent = Arc::new(FnTextAgent::new_async("verdict", move |state: State| {
        let rounds = rounds.clone();
        async move {
            let review = state.get::<String>("input").unwrap_or_default();
            let draft = state.get::<String>("draft").unwrap_or_default();
            let topic = state.get::<String>("topic").unwrap_or_default();
            if review.trim_start().starts_with("APPROVED") {
                state
                    .set("quality", "good")
                    .await
                    .map_err(|error| AgentError::failed("verdict", error))?;
            }
            let next = format!("Topic: {topic}\nDraft:\n{draft}\nReview: {review}");
            // A poisoned list only means a panicking thread held it; the rounds are whole.
            let mut rounds = rounds
                .lock()
                .unwrap_or_else(|poisoned| poisoned.into_inner());
            rounds.push(Round { draft, review });
            Ok(next)
        }
    }));
    let round: SharedAgent = Arc::new(SequentialTextAgent::new(
        "round",
        vec![writer, keep_draft, reviewer, verdict],
    ));
    let until_approved = LoopTextAgent::new("review_loop", round, MAX_ROUNDS)
        .until(|state| state.get::<String>("quality").as_deref() == Some("good"));
    let final_draft: SharedAgent = Arc::new(FnTextAgent::new("final_draft", |state: &State| {
        Ok(state.get::<String>("draft").unwrap_or_default())
    }));
    SequentialTextAgent::new("review", vec![Arc::new(until_approved), final_draft])
}

/// Runs the review loop on [`TOPIC`] with `model`.
pub async fn review(model: Arc<dyn BaseLlm>) -> Result<Review, AgentError> {
    let rounds = Arc::new(Mutex::new(Vec::new()));
    let pipeline = review_loop(&model, rounds.clone());
    let state = State::new();
    let start = |key: &'static str, error| AgentError::State {
        agent: "review".to_owned(),
        key: key.to_owned(),
        source: error,
    };
    state
        .set("topic", TOPIC)
        .await
        .map_err(|e| start("topic", e))?;
    state
        .set("input", TOPIC)
        .await
        .map_err(|e| start("input", e))?;
    let poem = pipeline.run(&state).await?;
    let rounds = rounds
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
        .clone();
    Ok(Review {
        rounds,
        approved: state.get::<String>("quality").as_deref() == Some("good"),
        poem,
    })
}

/// What the example prints for `review`.
pub fn report(review: &Review) -> String {
    let mut out = String::new();
    for (number, round) in review.rounds.iter().enumerate() {
        out.push_str(&format!("round {}\n", number + 1));
        for line in round.draft.lines() {
            out.push_str(&format!("  draft  | {line}\n"));
        }
        out.push_str(&format!("  review | {}\n", round.review));
    }
    let verdict = if review.approved {
        "approved"
    } else {
        "not approved"
    };
    out.push_str(&format!(
        "{verdict} after {} rounds:\n{}\n",
        review.rounds.len(),
        review.poem
    ));
    out
}

/// The example: the review loop on [`TOPIC`], as it prints.
pub async fn run(models: Models) -> Result<String, Box<dyn Error>> {
    let review = review(models.default_model()?).await?;
    Ok(report(&review))
}

fn main() -> ExitCode {
    cookbook::main(NAME, run)
}
