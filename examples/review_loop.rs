//! A review loop built from text-agent combinators: a writer drafts, a reviewer reviews,
//! and the loop goes on until the reviewer approves (at most three rounds) — the seed's
//! `review_loop` pattern, from `reel::agents`.
//!
//! ```text
//! cargo run --example review_loop                                # the bundled cassette, offline
//! GEMINI_API_KEY=… cargo run --example review_loop -- --live      # the Gemini REST API
//! GEMINI_API_KEY=… cargo run --example review_loop -- --live --record review.cassette.json
//! ```
//!
//! By default every model call is answered from the bundled cassette
//! (`assets/tapes/review_loop.cassette.json`) by a model with no live model behind it: no
//! network, no key, the same run every time, and a call the cassette does not hold is an
//! error rather than a call out. With `--live` the calls go to the Gemini REST API (the key
//! from the environment); `--record PATH` also records them into a new cassette at `PATH`.
//! The bundled cassette was recorded with a scripted model standing in for Gemini (its
//! answers are short and fixed); `--live --record` makes one from the real API.

#[path = "support/main_of.rs"]
mod main_of;

use std::error::Error;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::{Arc, Mutex};

use main_of::main_of;
use reel::actors::state::State;
use reel::agents::{
    AgentError, FnTextAgent, LlmTextAgent, LoopTextAgent, SequentialTextAgent, SharedAgent,
    TextAgent,
};
use reel::llm::{BaseLlm, Cassette, CassetteMode, GeminiLlm, LlmInterceptor};

/// The model the agents ask.
pub const MODEL: &str = "gemini-2.5-flash";
/// The cassette the example answers from by default.
pub const BUNDLED_CASSETTE: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/assets/tapes/review_loop.cassette.json"
);
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

/// Runs the review loop on `TOPIC` with `model`.
pub async fn run(model: Arc<dyn BaseLlm>) -> Result<Review, AgentError> {
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

/// Where the model's answers come from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Target {
    /// The bundled cassette, offline.
    Bundled,
    /// The Gemini REST API, recorded into a cassette at `record` if given.
    Live {
        /// Where to record the calls.
        record: Option<PathBuf>,
    },
}

/// The model for `target`.
pub fn model_for(target: &Target) -> Result<Arc<dyn BaseLlm>, Box<dyn Error>> {
    Ok(match target {
        Target::Bundled => Cassette::open(BUNDLED_CASSETTE, CassetteMode::Replay)?.model(MODEL),
        Target::Live { record: None } => Arc::new(GeminiLlm::from_env(MODEL)?),
        Target::Live { record: Some(path) } => {
            let live: Arc<dyn BaseLlm> = Arc::new(GeminiLlm::from_env(MODEL)?);
            Cassette::open(path, CassetteMode::Record)?.wrap(live)
        }
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

fn parse() -> Result<Target, String> {
    let mut live = false;
    let mut record = None;
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--live" => live = true,
            "--record" => {
                record = Some(PathBuf::from(args.next().ok_or("--record needs a path")?));
            }
            other => {
                return Err(format!(
                    "unknown argument `{other}` (try --live, --record PATH)"
                ));
            }
        }
    }
    match (live, record) {
        (false, Some(_)) => Err("--record records live calls: add --live".to_owned()),
        (false, None) => Ok(Target::Bundled),
        (true, record) => Ok(Target::Live { record }),
    }
}

fn main() -> ExitCode {
    main_of(
        parse,
        |target| async move { Ok(run(model_for(&target)?).await?) },
        |review: Review| print!("{}", report(&review)),
    )
}
