//! 40 — screening (Governed): a call-screening voice agent, the seed's capstone: Flow × Extract ×
//! Orchestration on one chain (see `examples/support/screening_capstone.rs`).
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
//! cargo run --example 40_screening                  # the bundled tape, on loopback
//! cargo run --example 40_screening -- --replay      # replay the bundled recording offline
//! cargo run --example 40_screening -- --speed 4     # … four times faster
//! GEMINI_API_KEY=… cargo run --example 40_screening -- --live
//! GEMINI_API_KEY=… cargo run --example 40_screening -- --live --record screening.wire.jsonl
//! ```
//!
//! The bundled tape (`assets/tapes/screening.wire.jsonl`) was recorded by reel from this
//! application against a scripted model that tries to transfer the caller before the
//! triage and again after the router called them spam (see
//! `tests/it/cookbook/ex40_screening.rs`); beside it, `screening.resolved.jsonl` holds the
//! router's verdict with the place it landed, and `screening.flow.json` the flow. With
//! `--replay` nothing listens and nothing is called: the verdict comes from the recording,
//! released at the journal position it landed at live, and the replay says whether every
//! frame it sends — the refusals included — is the recorded one.
//!
//! The router runs for real in the loopback run and takes 50 ms: at the recorded pace (the
//! default, or `--speed 4`) its verdict lands where it landed when the tape was made;
//! `--speed 0` answers faster than the router, the flow then steers at another turn than
//! recorded, and the tape server ends the call at the first frame that differs.
//!
//! With `--live` the same chain talks to the Gemini Live API (the key from the
//! environment; `--record PATH` records its wire log, and the router's verdict in
//! `….resolved.jsonl` beside it): the model decides when to try `transfer_call`, and the
//! flow gates it as it does offline.

// `support/live.rs` (for `--live`) and the governed support both load `turns.rs`: two
// copies of one small module, harmless.
#![allow(clippy::duplicate_mod)]

#[path = "../support/screening_capstone.rs"]
pub mod capstone;
#[path = "../support/capstone_replay.rs"]
pub mod capstone_replay;
#[allow(dead_code)] // the cookbook's shared part; this example parses `--live` with it
#[path = "support/cookbook.rs"]
pub mod cookbook;
#[allow(dead_code)] // the live examples' shared part; this example uses its `--live` parsing
#[path = "support/live.rs"]
pub mod live;
#[path = "../support/main_of.rs"]
mod main_of;
#[path = "../support/replayed_call.rs"]
pub mod replayed_call;
#[path = "../support/tape_server.rs"]
mod tape_server;

use std::process::ExitCode;

use capstone::{screening_agent, screening_flow};
use capstone_replay::Capstone;
use live::Governed;
use main_of::main_of;
use reel::recorder::{RecordError, WireEntry};

/// The bundled tape: this application's call, recorded against a scripted model.
pub const SCREENING_TAPE: &str = include_str!("../../assets/tapes/screening.wire.jsonl");
/// The sub-agent's result, recorded with the tape.
pub const SCREENING_RESOLUTIONS: &str = include_str!("../../assets/tapes/screening.resolved.jsonl");
/// The flow the tape was recorded under.
pub const SCREENING_FLOW: &str = include_str!("../../assets/tapes/screening.flow.json");

/// This capstone, as the example runs it.
pub const SCREENING: Capstone = Capstone {
    name: "screening",
    tape: (SCREENING_TAPE, "assets/tapes/screening.wire.jsonl"),
    resolutions: (
        SCREENING_RESOLUTIONS,
        "assets/tapes/screening.resolved.jsonl",
    ),
    agent: screening_agent,
    sub_agent: "router sub-agent",
};

/// The bundled tape as wire entries, read and checked as any wire log is.
pub fn bundled_tape() -> Result<Vec<WireEntry>, RecordError> {
    SCREENING.bundled_tape()
}

fn main() -> ExitCode {
    println!("{}", screening_flow().to_mermaid());
    main_of(
        || live::governed_target(std::env::args().skip(1), replayed_call::target_from),
        |choice| async move {
            match choice {
                Governed::Offline(target) => SCREENING.run(target).await,
                Governed::Live { record } => SCREENING.live_call(record).await,
            }
        },
        |outcome| SCREENING.print(&outcome),
    )
}
