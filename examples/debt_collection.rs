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
#[path = "support/replayed_call.rs"]
pub mod replayed_call;
#[path = "support/tape_server.rs"]
mod tape_server;

use std::error::Error;
use std::process::ExitCode;

use collector::{CALLER_TURNS, Call, converse, debt_collector};
use main_of::main_of;
use reel::protocol::ApiEndpoint;
use reel::recorder::{RecordError, WireEntry};
use tape_server::{endpoint_of, serve_tape};

/// The bundled tape: this application's call, recorded against a scripted model.
pub const DEBT_TAPE: &str = include_str!("../assets/tapes/debt_collection.wire.jsonl");

pub use replayed_call::Target;

/// What a run showed.
pub type Outcome = replayed_call::Outcome<Call>;

/// The bundled tape as wire entries, read and checked as any wire log is.
pub fn bundled_tape() -> Result<Vec<WireEntry>, RecordError> {
    replayed_call::wire_entries(DEBT_TAPE, "assets/tapes/debt_collection.wire.jsonl")
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
            replayed_call::clean(&outcome)
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

fn main() -> ExitCode {
    main_of(
        replayed_call::target_from_args,
        run,
        |outcome| match outcome {
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
        },
    )
}
