//! A table booking in four phases — greeting → collect_details → confirm → farewell — with
//! guarded transitions, hooks on entering and leaving phases, a computed value and
//! watchers, in one `Live::builder()` chain (see `support/booking.rs`).
//!
//! ```text
//! cargo run --example phases                        # the bundled tape, on loopback
//! cargo run --example phases -- --speed 4           # … four times faster
//! GEMINI_API_KEY=… cargo run --example phases -- --live   # the Gemini Live API
//! ```
//!
//! By default the model is the bundled tape (`assets/tapes/phases.wire.jsonl`, recorded by
//! reel from this very application; see `tests/it/example_phases.rs`), played by the tape
//! server on loopback: no network, no key, the same call every time. With `--live` it is
//! the real API, wherever the environment says (`GEMINI_API_KEY`, or the Vertex AI
//! variables); the model then decides when to call the tools, so the call may go
//! differently.

#[path = "support/booking.rs"]
pub mod booking;
#[path = "support/main_of.rs"]
mod main_of;
#[path = "support/tape_server.rs"]
mod tape_server;

use std::error::Error;
use std::process::ExitCode;

use booking::{Activity, Booking, CALLER_TURNS, booking_assistant, converse};
use main_of::main_of;
use reel::protocol::ApiEndpoint;
use reel::recorder::jsonl::JsonlReader;
use reel::recorder::{RecordError, WireEntry, WireLogReader};
use tape_server::{endpoint_of, serve_tape};

/// The bundled tape: this application's call, recorded against a scripted model.
pub const PHASES_TAPE: &str = include_str!("../assets/tapes/phases.wire.jsonl");

/// Whom the assistant talks to.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Target {
    /// The bundled tape on loopback, at the recorded pace divided by `speed` (`None`: no
    /// pauses at all).
    BundledTape {
        /// Speed factor.
        speed: Option<f64>,
    },
    /// The Gemini Live API, from the environment.
    Live,
}

/// The bundled tape as wire entries, read and checked as any wire log is.
pub fn bundled_tape() -> Result<Vec<WireEntry>, RecordError> {
    let lines = JsonlReader::new(PHASES_TAPE.as_bytes(), "assets/tapes/phases.wire.jsonl");
    WireLogReader::new(lines).collect()
}

/// Runs the whole call against `target` and returns what it showed.
pub async fn run(target: Target) -> Result<Booking, Box<dyn Error>> {
    match target {
        Target::BundledTape { speed } => {
            let mut server = serve_tape("phases", bundled_tape()?, speed).await?;
            let endpoint = endpoint_of(&server);
            let booking = call(endpoint).await;
            server.shutdown().await;
            booking
        }
        Target::Live => call(ApiEndpoint::from_env()?).await,
    }
}

/// One call: the assistant connects with the caller's greeting, then the caller answers
/// each of its turns.
pub async fn call(endpoint: ApiEndpoint) -> Result<Booking, Box<dyn Error>> {
    let activity = Activity::default();
    let [greeting, rest @ ..] = CALLER_TURNS;
    let assistant = booking_assistant(&activity).greeting(greeting);
    let mut events = assistant.subscribe();
    println!("caller: {greeting}");
    let handle = assistant.connect(endpoint).await?;
    let booking = converse(&handle, &mut events, &rest, &activity).await;
    handle.disconnect().await;
    booking
}

fn target_from_args() -> Result<Target, String> {
    let mut live = false;
    let mut speed = Some(1.0);
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--live" => live = true,
            "--speed" => {
                let value = args
                    .next()
                    .ok_or("--speed needs a number, e.g. --speed 4")?;
                let value: f64 = value
                    .parse()
                    .map_err(|_| format!("--speed {value}: not a number"))?;
                speed = (value > 0.0).then_some(value);
            }
            other => return Err(format!("unknown argument `{other}`; use --live, --speed N")),
        }
    }
    Ok(if live {
        Target::Live
    } else {
        Target::BundledTape { speed }
    })
}

fn main() -> ExitCode {
    main_of(target_from_args, run, |booking| {
        println!("\nphases: {}", booking.phases.join(" → "));
        println!("state:");
        for (key, value) in &booking.state {
            println!("  {key} = {value}");
        }
    })
}
