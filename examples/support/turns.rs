//! Waiting for the model to finish its turn: the user's (or caller's) side of every
//! example's conversation says its next line only then.

use std::error::Error;
use std::time::Duration;

use reel::actors::{EventStream, Lane, LiveEvent};

/// How long to wait for the model to finish a turn.
pub const TURN_TIMEOUT: Duration = Duration::from_secs(30);

/// Waits until the model has finished its turn, showing `observe` every event on the way
/// (on any lane). `Ok(false)` if the session ended first; an error if the model took longer
/// than [`TURN_TIMEOUT`].
pub async fn wait_for_turn(
    events: &mut EventStream,
    mut observe: impl FnMut(Lane, &LiveEvent),
) -> Result<bool, Box<dyn Error>> {
    let finished = tokio::time::timeout(TURN_TIMEOUT, async {
        while let Some(envelope) = events.recv().await {
            observe(envelope.lane, &envelope.event);
            if envelope.lane == Lane::Control && envelope.event.kind() == "turn_complete" {
                return true;
            }
        }
        false
    })
    .await;
    finished.map_err(|_| format!("the model did not finish its turn in {TURN_TIMEOUT:?}").into())
}
