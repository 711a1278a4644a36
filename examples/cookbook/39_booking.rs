//! 39 — booking (Governed): a table-booking voice agent, the seed's capstone: Flow × Extract ×
//! Orchestration on one chain (see `examples/support/booking_capstone.rs`).
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
//! cargo run --example 39_booking                  # the bundled tape, on loopback
//! cargo run --example 39_booking -- --replay      # replay the bundled recording offline
//! cargo run --example 39_booking -- --speed 4     # … four times faster
//! GEMINI_API_KEY=… cargo run --example 39_booking -- --live
//! GEMINI_API_KEY=… cargo run --example 39_booking -- --live --record booking.wire.jsonl
//! ```
//!
//! The bundled tape (`assets/tapes/booking.wire.jsonl`) was recorded by reel from this
//! application against a scripted model that tries to book before the check (see
//! `tests/it/cookbook/ex39_booking.rs`); beside it, `booking.resolved.jsonl` holds the
//! sub-agent's result and `booking.flow.json` the flow. With `--replay` nothing listens
//! and nothing is called: the same chain replays the recording through its own tree, the
//! sub-agent's result comes from `booking.resolved.jsonl`, and the replay says whether
//! every frame it sends — the refusal included — is the recorded one.
//! With `--live` the same chain talks to the Gemini Live API (the key from the
//! environment; `--record PATH` records its wire log, and the sub-agent's result in
//! `….resolved.jsonl` beside it): the model decides when to try `book_table`, and the
//! flow gates it as it does offline.

// `support/live.rs` (for `--live`) and the governed support both load `turns.rs`: two
// copies of one small module, harmless.
#![allow(clippy::duplicate_mod)]

#[path = "../support/booking_capstone.rs"]
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

use capstone::{booking_agent, booking_flow};
use capstone_replay::Capstone;
use live::Governed;
use main_of::main_of;
use reel::recorder::{RecordError, WireEntry};

/// The bundled tape: this application's call, recorded against a scripted model.
pub const BOOKING_TAPE: &str = include_str!("../../assets/tapes/booking.wire.jsonl");
/// The sub-agent's result, recorded with the tape.
pub const BOOKING_RESOLUTIONS: &str = include_str!("../../assets/tapes/booking.resolved.jsonl");
/// The flow the tape was recorded under.
pub const BOOKING_FLOW: &str = include_str!("../../assets/tapes/booking.flow.json");

/// This capstone, as the example runs it.
pub const BOOKING: Capstone = Capstone {
    name: "booking",
    tape: (BOOKING_TAPE, "assets/tapes/booking.wire.jsonl"),
    resolutions: (BOOKING_RESOLUTIONS, "assets/tapes/booking.resolved.jsonl"),
    agent: booking_agent,
    sub_agent: "availability sub-agent",
};

/// The bundled tape as wire entries, read and checked as any wire log is.
pub fn bundled_tape() -> Result<Vec<WireEntry>, RecordError> {
    BOOKING.bundled_tape()
}

fn main() -> ExitCode {
    println!("{}", booking_flow().to_mermaid());
    main_of(
        || live::governed_target(std::env::args().skip(1), replayed_call::target_from),
        |choice| async move {
            match choice {
                Governed::Offline(target) => BOOKING.run(target).await,
                Governed::Live { record } => BOOKING.live_call(record).await,
            }
        },
        |outcome| BOOKING.print(&outcome),
    )
}
