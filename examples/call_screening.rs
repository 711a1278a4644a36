//! A screened call in four phases, ported from the seed's call-screening app: context
//! injection delivered at once, every phase entry prompting the model to speak (the first
//! at connect: the assistant answers the phone), phase defaults with the caller's details
//! and the `[Navigation]` block, an enter prompt computed from the state, two guarded ways
//! out of one phase, repair, and tools filtered per phase (see
//! `support/call_screening.rs`).
//!
//! ```text
//! cargo run --example call_screening                 # the bundled tape, on loopback
//! cargo run --example call_screening -- --replay     # replay the bundled recording offline
//! cargo run --example call_screening -- --speed 4    # … four times faster
//! ```
//!
//! By default the model is the bundled tape (`assets/tapes/call_screening.wire.jsonl`,
//! recorded by reel from this very application against a scripted model; see
//! `tests/it/example_call_screening.rs`), played by the tape server on loopback. With
//! `--replay` the same assistant replays the recording through its own tree and says
//! whether every frame it sends — each context frame included — is the recorded one.

#[path = "support/main_of.rs"]
mod main_of;
#[path = "support/replayed_call.rs"]
pub mod replayed_call;
#[path = "support/call_screening.rs"]
pub mod screening;
#[path = "support/tape_server.rs"]
mod tape_server;

use std::error::Error;
use std::process::ExitCode;

use main_of::main_of;
use reel::protocol::ApiEndpoint;
use reel::recorder::{RecordError, WireEntry};
use screening::{Call, converse, screener};
use tape_server::{endpoint_of, serve_tape};

/// The bundled tape: this application's call, recorded against a scripted model.
pub const SCREENING_TAPE: &str = include_str!("../assets/tapes/call_screening.wire.jsonl");

pub use replayed_call::Target;

/// What a run showed.
pub type Outcome = replayed_call::Outcome<Call>;

/// The bundled tape as wire entries, read and checked as any wire log is.
pub fn bundled_tape() -> Result<Vec<WireEntry>, RecordError> {
    replayed_call::wire_entries(SCREENING_TAPE, "assets/tapes/call_screening.wire.jsonl")
}

/// Runs `target` and returns what it showed.
pub async fn run(target: Target) -> Result<Outcome, Box<dyn Error>> {
    match target {
        Target::BundledTape { speed } => {
            let mut server = serve_tape("call_screening", bundled_tape()?, speed).await?;
            let endpoint = endpoint_of(&server);
            let call = call(endpoint).await;
            server.shutdown().await;
            Ok(Outcome::Call(call?))
        }
        Target::Replay => {
            let outcome = screener().replay(bundled_tape()?).await?.finish().await;
            replayed_call::clean(&outcome)
        }
    }
}

/// One call: the assistant answers the phone, then the caller speaks.
pub async fn call(endpoint: ApiEndpoint) -> Result<Call, Box<dyn Error>> {
    let agent = screener();
    let mut events = agent.subscribe();
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
                println!("\nphases: greeting → {}", call.phases.join(" → "));
                println!("state:");
                for (key, value) in &call.state {
                    println!("  {key} = {value}");
                }
            }
            Outcome::Replay { frames } => {
                println!("replay CLEAN: {frames} frames sent, each the recorded one");
            }
        },
    )
}
