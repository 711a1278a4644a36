//! Driving the demo conversation: send each user turn once the model has finished the last.

use std::time::Duration;

use reel_actors::{EventStream, Lane, LiveEvent, LiveHandle};
use reel_protocol::SessionEvent;

use super::weather::USER_TURNS;

/// The conversation did not go through.
#[derive(Debug, thiserror::Error)]
pub enum ConversationError {
    /// The session ended before the conversation did.
    #[error("the session ended during turn {turn}")]
    Ended {
        /// The user turn being waited on (1-based).
        turn: usize,
    },
    /// The model did not finish a turn in time.
    #[error("no answer to turn {turn} within {after:?}")]
    Timeout {
        /// The user turn (1-based).
        turn: usize,
        /// How long was waited.
        after: Duration,
    },
}

/// Plays the user's side: each of [`USER_TURNS`], waiting for the model's turn to complete
/// before the next. `events` must be subscribed before the session started flowing.
pub async fn run(
    handle: &LiveHandle,
    events: &mut EventStream,
    turn_timeout: Duration,
) -> Result<(), ConversationError> {
    for (index, text) in USER_TURNS.iter().enumerate() {
        let turn = index + 1;
        if handle.send_text(*text).is_err() {
            return Err(ConversationError::Ended { turn });
        }
        let finished = tokio::time::timeout(turn_timeout, async {
            while let Some(event) = events.recv().await {
                let done = event.lane == Lane::Control
                    && matches!(
                        event.event,
                        LiveEvent::Session(SessionEvent::TurnComplete { .. })
                    );
                if done {
                    return true;
                }
            }
            false
        })
        .await;
        match finished {
            Ok(true) => {}
            Ok(false) => return Err(ConversationError::Ended { turn }),
            Err(_) => {
                return Err(ConversationError::Timeout {
                    turn,
                    after: turn_timeout,
                });
            }
        }
    }
    Ok(())
}
