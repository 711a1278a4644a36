//! 37 — governed flow (Governed): a debt-collection call governed by a flow: one DAG of
//! steps — verify → negotiate → take_payment → close — that gates the tools (each allowed
//! only while its step is active, `charge_card` `never` before the promise to pay and
//! `once`), steers the model with the active step's posture and ground line at each turn
//! boundary, and keeps `flow:active` / `flow:done` in state (see
//! `examples/support/governed_flow.rs`). The flow's Mermaid graph is printed first.
//!
//! ```text
//! cargo run --example 37_governed_flow                  # the bundled tape, on loopback
//! cargo run --example 37_governed_flow -- --replay      # replay the bundled recording offline
//! cargo run --example 37_governed_flow -- --speed 4     # … four times faster
//! GEMINI_API_KEY=… cargo run --example 37_governed_flow -- --live
//! GEMINI_API_KEY=… cargo run --example 37_governed_flow -- --live --record debt.wire.jsonl
//! ```
//!
//! By default the model is the bundled tape (`assets/tapes/governed_flow.wire.jsonl`,
//! recorded by reel from this very application against a scripted model that tries the
//! card too early and twice; see `tests/it/cookbook/ex37_governed_flow.rs`), played by the tape
//! server on loopback: no network, no key. With `--replay` nothing listens at all: the same
//! agent, governed by the same flow, replays the recording through its own tree and says
//! whether every frame it sends — the refusals included — is the recorded one. With
//! `--live` the same agent, under the same flow, talks to the Gemini Live API (the key from
//! the environment; `--record PATH` records its wire log): the model decides what to say
//! and when to try the card, so the call may go differently, but the flow gates it the same.

// `support/live.rs` (for `--live`) and the governed support both load `turns.rs`: two
// copies of one small module, harmless.
#![allow(clippy::duplicate_mod)]

#[allow(dead_code)] // the cookbook's shared part; this example parses `--live` with it
#[path = "support/cookbook.rs"]
pub mod cookbook;
#[path = "../support/governed_flow.rs"]
pub mod governed;
#[allow(dead_code)] // the live examples' shared part; this example uses its `--live` parsing
#[path = "support/live.rs"]
pub mod live;
#[path = "../support/main_of.rs"]
mod main_of;
#[path = "../support/replayed_call.rs"]
pub mod replayed_call;
#[path = "../support/tape_server.rs"]
mod tape_server;

use std::error::Error;
use std::path::PathBuf;
use std::process::ExitCode;

use governed::{Call, converse, debt_flow, governed_collector};
use live::Governed;
use main_of::main_of;
use reel::fluent::LiveBuilder;
use reel::protocol::ApiEndpoint;
use reel::recorder::{RecordError, WireEntry};
use tape_server::{endpoint_of, serve_tape};

/// The bundled tape: this application's call, recorded against a scripted model.
pub const GOVERNED_TAPE: &str = include_str!("../../assets/tapes/governed_flow.wire.jsonl");

pub use replayed_call::Target;

/// What a run showed.
pub type Outcome = replayed_call::Outcome<Call>;

/// The bundled tape as wire entries, read and checked as any wire log is.
pub fn bundled_tape() -> Result<Vec<WireEntry>, RecordError> {
    replayed_call::wire_entries(GOVERNED_TAPE, "assets/tapes/governed_flow.wire.jsonl")
}

/// Runs `target` and returns what it showed.
pub async fn run(target: Target) -> Result<Outcome, Box<dyn Error>> {
    match target {
        Target::BundledTape { speed } => {
            let mut server = serve_tape("governed_flow", bundled_tape()?, speed).await?;
            let endpoint = endpoint_of(&server);
            let call = call(endpoint).await;
            server.shutdown().await;
            Ok(Outcome::Call(call?))
        }
        Target::Replay => {
            let outcome = governed_collector()
                .replay(bundled_tape()?)
                .await?
                .finish()
                .await;
            replayed_call::clean(&outcome)
        }
    }
}

/// One call: the agent connects, then the caller speaks.
pub async fn call(endpoint: ApiEndpoint) -> Result<Call, Box<dyn Error>> {
    call_with(governed_collector(), endpoint).await
}

/// The call against the Gemini Live API (`--live`), the key from the environment, its
/// wire log recorded to `record` if given.
pub async fn live_call(record: Option<PathBuf>) -> Result<Call, Box<dyn Error>> {
    let endpoint = ApiEndpoint::from_env()?;
    let agent = match record {
        Some(path) => governed_collector().record_wire(path),
        None => governed_collector(),
    };
    call_with(agent, endpoint).await
}

/// One call of `agent`: it connects, then the caller speaks.
async fn call_with(agent: LiveBuilder, endpoint: ApiEndpoint) -> Result<Call, Box<dyn Error>> {
    let mut events = agent.subscribe();
    let handle = agent.connect(endpoint).await?;
    let call = converse(&handle, &mut events).await;
    handle.disconnect().await;
    call
}

fn main() -> ExitCode {
    println!("{}", debt_flow().to_mermaid());
    main_of(
        || live::governed_target(std::env::args().skip(1), replayed_call::target_from),
        |choice| async move {
            match choice {
                Governed::Offline(target) => run(target).await,
                Governed::Live { record } => Ok(Outcome::Call(live_call(record).await?)),
            }
        },
        |outcome| match outcome {
            Outcome::Call(call) => {
                println!("\nrefused by the flow:");
                for (id, why) in &call.refused {
                    println!("  {id}: {why}");
                }
                if let Some(explanation) = &call.explanation {
                    println!(
                        "flow: done {:?}, complete: {}",
                        explanation.done, explanation.complete
                    );
                }
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
