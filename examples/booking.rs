//! A table-booking voice agent — the seed's capstone `39_booking`: Flow × Extract ×
//! Orchestration on one chain (see `support/booking_capstone.rs`).
//!
//! - a deterministic Extract record captures the party size and the time from the
//!   caller's words (no model);
//! - a flow (collect → check → confirm → done) gates `book_table` — a `commit` tool:
//!   once, refused until the availability check resolved, confirmed before it runs — and
//!   steers the model with each step's posture and ground line;
//! - entering `check` runs the availability sub-agent (`AgentMode::Call`); its result
//!   lands in `check:result`, which completes the step.
//!
//! ```text
//! cargo run --example booking                  # the bundled tape, on loopback
//! cargo run --example booking -- --replay      # replay the bundled recording offline
//! cargo run --example booking -- --speed 4     # … four times faster
//! ```
//!
//! The bundled tape (`assets/tapes/booking.wire.jsonl`) was recorded by reel from this
//! application against a scripted model that tries to book before the check (see
//! `tests/it/example_booking.rs`); beside it, `booking.resolved.jsonl` holds the
//! sub-agent's result and `booking.flow.json` the flow. With `--replay` nothing listens
//! and nothing is called: the same chain replays the recording through its own tree, the
//! sub-agent's result comes from `booking.resolved.jsonl`, and the replay says whether
//! every frame it sends — the refusal included — is the recorded one.

#[path = "support/booking_capstone.rs"]
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

use capstone::{Call, booking_agent, booking_flow, converse};
use main_of::main_of;
use reel::protocol::ApiEndpoint;
use reel::recorder::{RecordError, WireEntry};
use tape_server::{endpoint_of, serve_tape};

/// The bundled tape: this application's call, recorded against a scripted model.
pub const BOOKING_TAPE: &str = include_str!("../assets/tapes/booking.wire.jsonl");
/// The sub-agent's result, recorded with the tape.
pub const BOOKING_RESOLUTIONS: &str = include_str!("../assets/tapes/booking.resolved.jsonl");
/// The flow the tape was recorded under.
pub const BOOKING_FLOW: &str = include_str!("../assets/tapes/booking.flow.json");

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
        /// How many times the availability sub-agent ran (a replay calls nothing: 0).
        agent_calls: usize,
    },
}

/// The bundled tape as wire entries, read and checked as any wire log is.
pub fn bundled_tape() -> Result<Vec<WireEntry>, RecordError> {
    replayed_call::wire_entries(BOOKING_TAPE, "assets/tapes/booking.wire.jsonl")
}

/// Runs `target` and returns what it showed.
pub async fn run(target: Target) -> Result<Outcome, Box<dyn Error>> {
    let calls = Arc::new(AtomicUsize::new(0));
    match target {
        Target::BundledTape { speed } => {
            let mut server = serve_tape("booking", bundled_tape()?, speed).await?;
            let endpoint = endpoint_of(&server);
            let call = call(endpoint, calls).await;
            server.shutdown().await;
            Ok(Outcome::Call(call?))
        }
        Target::Replay => {
            let log = capstone_replay::replaying(
                BOOKING_RESOLUTIONS,
                "assets/tapes/booking.resolved.jsonl",
            )?;
            let outcome = booking_agent(Arc::clone(&calls))
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
    let agent = booking_agent(calls);
    let mut events = agent.subscribe();
    let handle = agent.connect(endpoint).await?;
    let call = converse(&handle, &mut events).await;
    handle.disconnect().await;
    call
}

fn main() -> ExitCode {
    println!("{}", booking_flow().to_mermaid());
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
                println!("availability sub-agent calls: {agent_calls}");
                println!("replay CLEAN: {frames} frames sent, each the recorded one");
            }
        },
    )
}
