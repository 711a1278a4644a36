//! A debt-collection call in five phases, ported from the seed's debt-collection app:
//! context injection with deferred delivery, phase defaults with state and empathy
//! modifiers, needs and the `[Navigation]` block, enter prompts (one computed from the
//! state), repair nudges, and tools filtered per phase (see `support/debt_collection.rs`).
//!
//! ```text
//! cargo run --example debt_collection                  # the bundled tape, on loopback
//! cargo run --example debt_collection -- --replay      # replay the bundled recording offline
//! cargo run --example debt_collection -- --speed 4     # … four times faster
//! ```
//!
//! By default the model is the bundled tape (`assets/tapes/debt_collection.wire.jsonl`,
//! recorded by reel from this very application against a scripted model; see
//! `tests/it/example_debt_collection.rs`), played by the tape server on loopback: no
//! network, no key. With `--replay` nothing listens at all: the same agent replays the
//! recording through its own tree and says whether every frame it sends — each context
//! frame at each turn boundary included — is the recorded one.

#[path = "support/debt_collection.rs"]
pub mod collector;
#[path = "support/main_of.rs"]
mod main_of;
#[path = "support/tape_server.rs"]
mod tape_server;

use std::error::Error;
use std::process::ExitCode;

use collector::{CALLER_TURNS, Call, converse, debt_collector};
use main_of::main_of;
use reel::protocol::ApiEndpoint;
use reel::recorder::jsonl::JsonlReader;
use reel::recorder::{RecordError, WireEntry, WireLogReader};
use tape_server::{endpoint_of, serve_tape};

/// The bundled tape: this application's call, recorded against a scripted model.
pub const DEBT_TAPE: &str = include_str!("../assets/tapes/debt_collection.wire.jsonl");

/// What to run.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Target {
    /// The bundled tape on loopback, at the recorded pace divided by `speed` (`None`: no
    /// pauses at all).
    BundledTape {
        /// Speed factor.
        speed: Option<f64>,
    },
    /// The bundled recording replayed offline through the agent's own tree.
    Replay,
}

/// What a run showed.
#[derive(Debug)]
pub enum Outcome {
    /// The call, against the tape server.
    Call(Call),
    /// The offline replay, CLEAN (a divergence is an error): how many frames it sent.
    Replay {
        /// Frames the replay sent.
        frames: usize,
    },
}

/// The bundled tape as wire entries, read and checked as any wire log is.
pub fn bundled_tape() -> Result<Vec<WireEntry>, RecordError> {
    let lines = JsonlReader::new(
        DEBT_TAPE.as_bytes(),
        "assets/tapes/debt_collection.wire.jsonl",
    );
    WireLogReader::new(lines).collect()
}

/// Runs `target` and returns what it showed.
pub async fn run(target: Target) -> Result<Outcome, Box<dyn Error>> {
    match target {
        Target::BundledTape { speed } => {
            let mut server = serve_tape("debt_collection", bundled_tape()?, speed).await?;
            let endpoint = endpoint_of(&server);
            let call = call(endpoint).await;
            server.shutdown().await;
            Ok(Outcome::Call(call?))
        }
        Target::Replay => {
            let outcome = debt_collector()
                .greeting(CALLER_TURNS[0].0)
                .replay(bundled_tape()?)
                .await?
                .finish()
                .await;
            let divergences: Vec<String> = outcome
                .divergences
                .iter()
                .map(ToString::to_string)
                .collect();
            if !divergences.is_empty() {
                return Err(format!(
                    "replay DRIFT: {} divergences:\n  {}",
                    divergences.len(),
                    divergences.join("\n  ")
                )
                .into());
            }
            Ok(Outcome::Replay {
                frames: outcome.outbound_frames.len(),
            })
        }
    }
}

/// One call: the agent connects with the caller's greeting, then the caller answers.
pub async fn call(endpoint: ApiEndpoint) -> Result<Call, Box<dyn Error>> {
    let agent = debt_collector().greeting(CALLER_TURNS[0].0);
    let mut events = agent.subscribe();
    println!("caller: {}", CALLER_TURNS[0].0);
    let handle = agent.connect(endpoint).await?;
    let call = converse(&handle, &mut events).await;
    handle.disconnect().await;
    call
}

fn target_from_args() -> Result<Target, String> {
    let mut target = Target::BundledTape { speed: Some(1.0) };
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--replay" => target = Target::Replay,
            "--speed" => {
                let value = args
                    .next()
                    .ok_or("--speed needs a number, e.g. --speed 4")?;
                let value: f64 = value
                    .parse()
                    .map_err(|_| format!("--speed {value}: not a number"))?;
                target = Target::BundledTape {
                    speed: (value > 0.0).then_some(value),
                };
            }
            other => {
                return Err(format!(
                    "unknown argument `{other}`; use --replay, --speed N"
                ));
            }
        }
    }
    Ok(target)
}

fn main() -> ExitCode {
    main_of(target_from_args, run, |outcome| match outcome {
        Outcome::Call(call) => {
            println!("\nphases: disclosure → {}", call.phases.join(" → "));
            println!("state:");
            for (key, value) in &call.state {
                println!("  {key} = {value}");
            }
            if let Some(navigation) = &call.navigation {
                println!("navigation context:\n{navigation}");
            }
        }
        Outcome::Replay { frames } => {
            println!("replay CLEAN: {frames} frames sent, each the recorded one");
        }
    })
}
