//! What the examples ported from the seed's voice apps (`debt_collection`,
//! `call_screening`) share: their two ways to run (the bundled tape on loopback, or the
//! bundled recording replayed offline), their arguments, what a run shows, and the check
//! that an offline replay is CLEAN.

use std::error::Error;

use reel::fluent::ReplayOutcome;
use reel::recorder::jsonl::JsonlReader;
use reel::recorder::{RecordError, WireEntry, WireLogReader};

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

/// What a run showed: `C` is the example's own account of a call.
#[derive(Debug)]
pub enum Outcome<C> {
    /// The call, against the tape server.
    Call(C),
    /// The offline replay, CLEAN (a divergence is an error): how many frames it sent.
    Replay {
        /// Frames the replay sent.
        frames: usize,
    },
}

/// A bundled tape's text (`tape`, read from `path`) as wire entries, read and checked as
/// any wire log is.
pub fn wire_entries(tape: &str, path: &str) -> Result<Vec<WireEntry>, RecordError> {
    WireLogReader::new(JsonlReader::new(tape.as_bytes(), path)).collect()
}

/// The replay's outcome as [`Outcome::Replay`] when it is CLEAN, else an error listing
/// every divergence.
pub fn clean<C>(outcome: &ReplayOutcome) -> Result<Outcome<C>, Box<dyn Error>> {
    if !outcome.divergences.is_empty() {
        let divergences: Vec<String> = outcome
            .divergences
            .iter()
            .map(ToString::to_string)
            .collect();
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

/// The target the command line names: `--replay`, `--speed N` (0: no pauses).
pub fn target_from_args() -> Result<Target, String> {
    target_from(std::env::args().skip(1))
}

/// The target `args` (the command line's arguments, the program's name left out) name:
/// `--replay`, `--speed N` (0: no pauses).
pub fn target_from(args: impl IntoIterator<Item = String>) -> Result<Target, String> {
    let mut target = Target::BundledTape { speed: Some(1.0) };
    let mut args = args.into_iter();
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
