//! A call-screening voice agent — the seed's capstone `40_screening`: Flow × Extract ×
//! Orchestration on one chain (see `support/screening_capstone.rs`).
//!
//! - a deterministic Extract record captures the caller's name, organisation and reason
//!   from their words (no model);
//! - a flow (identify → triage → route → end) gates the tools: `transfer_call` is never
//!   allowed until the router called the caller `known`, `take_message` is the fallback,
//!   `block_caller` runs once; each step's posture and ground line steer the model;
//! - entering `triage` dispatches the router sub-agent (`AgentMode::Dispatch`): the
//!   conversation goes on, and its verdict lands in `triage:result` later.
//!
//! ```text
//! cargo run --example screening                  # the bundled tape, on loopback
//! cargo run --example screening -- --replay      # replay the bundled recording offline
//! cargo run --example screening -- --speed 4     # … four times faster
//! ```
//!
//! The bundled tape (`assets/tapes/screening.wire.jsonl`) was recorded by reel from this
//! application against a scripted model that tries to transfer the caller before the
//! triage and again after the router called them spam (see
//! `tests/it/example_screening.rs`); beside it, `screening.resolved.jsonl` holds the
//! router's verdict with the place it landed, and `screening.flow.json` the flow. With
//! `--replay` nothing listens and nothing is called: the verdict comes from the recording,
//! released at the journal position it landed at live, and the replay says whether every
//! frame it sends — the refusals included — is the recorded one.
//!
//! The router runs for real in the loopback run and takes 50 ms: at the recorded pace (the
//! default, or `--speed 4`) its verdict lands where it landed when the tape was made;
//! `--speed 0` answers faster than the router, the flow then steers at another turn than
//! recorded, and the tape server ends the call at the first frame that differs.

#[path = "support/screening_capstone.rs"]
pub mod capstone;
#[path = "support/capstone_replay.rs"]
pub mod capstone_replay;
#[path = "support/main_of.rs"]
mod main_of;
#[path = "support/replayed_call.rs"]
pub mod replayed_call;
#[path = "support/tape_server.rs"]
mod tape_server;

use std::error::Error;
use std::process::ExitCode;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use capstone::{Call, converse, screening_agent, screening_flow};
use main_of::main_of;
use reel::protocol::ApiEndpoint;
use reel::recorder::{RecordError, WireEntry};
use tape_server::{endpoint_of, serve_tape};

/// The bundled tape: this application's call, recorded against a scripted model.
pub const SCREENING_TAPE: &str = include_str!("../assets/tapes/screening.wire.jsonl");
/// The sub-agent's result, recorded with the tape.
pub const SCREENING_RESOLUTIONS: &str = include_str!("../assets/tapes/screening.resolved.jsonl");
/// The flow the tape was recorded under.
pub const SCREENING_FLOW: &str = include_str!("../assets/tapes/screening.flow.json");

pub use replayed_call::Target;

/// What a run showed.
#[derive(Debug)]
pub enum Outcome {
    /// The call, against the tape server.
    Call(Call),
    /// The offline replay, CLEAN.
    Replay {
        /// Frames the replay sent.
        frames: usize,
        /// What it did, line by line ([`capstone_replay::story`]).
        story: Vec<String>,
        /// How many times the router sub-agent ran (a replay calls nothing: 0).
        agent_calls: usize,
    },
}

/// The bundled tape as wire entries, read and checked as any wire log is.
pub fn bundled_tape() -> Result<Vec<WireEntry>, RecordError> {
    replayed_call::wire_entries(SCREENING_TAPE, "assets/tapes/screening.wire.jsonl")
}

/// Runs `target` and returns what it showed.
pub async fn run(target: Target) -> Result<Outcome, Box<dyn Error>> {
    let calls = Arc::new(AtomicUsize::new(0));
    match target {
        Target::BundledTape { speed } => {
            let mut server = serve_tape("screening", bundled_tape()?, speed).await?;
            let endpoint = endpoint_of(&server);
            let call = call(endpoint, calls).await;
            server.shutdown().await;
            Ok(Outcome::Call(call?))
        }
        Target::Replay => {
            let log = capstone_replay::replaying(
                SCREENING_RESOLUTIONS,
                "assets/tapes/screening.resolved.jsonl",
            )?;
            let outcome = screening_agent(Arc::clone(&calls))
                .resolutions(&log)
                .replay(bundled_tape()?)
                .await?
                .finish()
                .await;
            replayed(&outcome, calls.load(Ordering::SeqCst))
        }
    }
}

/// The replay's outcome when it is CLEAN — no divergent frame, no resolver drift — else
/// an error listing what differed.
pub fn replayed(
    outcome: &reel::fluent::ReplayOutcome,
    agent_calls: usize,
) -> Result<Outcome, Box<dyn Error>> {
    if !outcome.resolver_drift.is_empty() {
        let drift: Vec<String> = outcome
            .resolver_drift
            .iter()
            .map(ToString::to_string)
            .collect();
        return Err(format!("replay DRIFT in resolutions:\n  {}", drift.join("\n  ")).into());
    }
    let replayed_call::Outcome::<()>::Replay { frames } = replayed_call::clean(outcome)? else {
        return Err("a replay's outcome is a replay".into());
    };
    Ok(Outcome::Replay {
        frames,
        story: capstone_replay::story(outcome),
        agent_calls,
    })
}

/// One call: the agent connects, then the caller speaks.
pub async fn call(endpoint: ApiEndpoint, calls: Arc<AtomicUsize>) -> Result<Call, Box<dyn Error>> {
    let agent = screening_agent(calls);
    let mut events = agent.subscribe();
    let handle = agent.connect(endpoint).await?;
    let call = converse(&handle, &mut events).await;
    handle.disconnect().await;
    call
}

fn main() -> ExitCode {
    println!("{}", screening_flow().to_mermaid());
    main_of(
        replayed_call::target_from_args,
        run,
        |outcome| match outcome {
            Outcome::Call(call) => {
                println!("\nrefused by the flow:");
                for (id, why) in &call.refused {
                    println!("  {id}: {why}");
                }
                println!("steps done: {}", call.completed.join(" → "));
                println!("state:");
                for (key, value) in &call.state {
                    println!("  {key} = {value}");
                }
            }
            Outcome::Replay {
                frames,
                story,
                agent_calls,
            } => {
                for line in story {
                    println!("{line}");
                }
                println!("router sub-agent calls: {agent_calls}");
                println!("replay CLEAN: {frames} frames sent, each the recorded one");
            }
        },
    )
}
