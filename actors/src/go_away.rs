//! [`GoAwayTimer`]: when a `goAway` turns into a reconnect.
//!
//! The server sends `goAway` some time before it closes the connection (`timeLeft`). A
//! reconnect at once would cut a model turn in flight: the rest of its audio and text, and
//! the tool call it may be waiting on, would be lost with the old connection. So while a
//! turn is in flight (model output seen since the last `turnComplete` or `interrupted`) the
//! router keeps reading, and reconnects when the turn completes — or when `timeLeft`, less
//! a margin, runs out, whichever comes first. Between turns it reconnects at once. Further
//! `goAway`s while one is pending change nothing (a storm of them reconnects once).

use std::time::Duration;

use reel_protocol::SessionEvent;

/// How long before the server's deadline the reconnect starts, at the latest.
pub const GO_AWAY_MARGIN: Duration = Duration::from_millis(500);

/// How long a turn may still run after a `goAway` that gives no `timeLeft`.
pub const GO_AWAY_DEFAULT_WAIT: Duration = Duration::from_secs(5);

/// What the router should do after an event.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GoAwayStep {
    /// Nothing.
    Nothing,
    /// Reconnect now.
    Reconnect,
    /// Reconnect when the timer `id` fires after `after`, unless the turn completes first.
    Wait {
        /// Which pending `goAway` the timer is for.
        id: u64,
        /// How long from now.
        after: Duration,
    },
}

/// Tracks the turn in flight and a pending `goAway`, per connection.
#[derive(Debug, Default)]
pub struct GoAwayTimer {
    turn_open: bool,
    /// The pending `goAway`'s timer id.
    pending: Option<u64>,
    next_id: u64,
}

impl GoAwayTimer {
    /// Takes in one event of the inbound stream, in order.
    pub fn observe(&mut self, event: &SessionEvent) -> GoAwayStep {
        use SessionEvent as E;
        match event {
            E::Connected { .. } => {
                // A new connection: whatever was pending belonged to the old one.
                self.turn_open = false;
                self.pending = None;
                GoAwayStep::Nothing
            }
            E::TextDelta(_)
            | E::Thought(_)
            | E::AudioData(_)
            | E::Media { .. }
            | E::OutputTranscription { .. }
            | E::ToolCall(_) => {
                self.turn_open = true;
                GoAwayStep::Nothing
            }
            E::TurnComplete { .. } | E::Interrupted => {
                self.turn_open = false;
                match self.pending.take() {
                    Some(_) => GoAwayStep::Reconnect,
                    None => GoAwayStep::Nothing,
                }
            }
            E::GoAway { time_left } => {
                if self.pending.is_some() {
                    return GoAwayStep::Nothing;
                }
                let wait = time_left
                    .unwrap_or(GO_AWAY_DEFAULT_WAIT)
                    .saturating_sub(GO_AWAY_MARGIN);
                if !self.turn_open || wait.is_zero() {
                    return GoAwayStep::Reconnect;
                }
                self.next_id += 1;
                self.pending = Some(self.next_id);
                GoAwayStep::Wait {
                    id: self.next_id,
                    after: wait,
                }
            }
            _ => GoAwayStep::Nothing,
        }
    }

    /// The timer `id` fired: whether to reconnect now (the turn it waited for is still in
    /// flight, and no reconnect happened meanwhile).
    pub fn due(&mut self, id: u64) -> bool {
        if self.pending == Some(id) {
            self.pending = None;
            true
        } else {
            false
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn go_away(secs: u64) -> SessionEvent {
        SessionEvent::GoAway {
            time_left: Some(Duration::from_secs(secs)),
        }
    }

    #[test]
    fn between_turns_it_reconnects_at_once() {
        let mut timer = GoAwayTimer::default();
        assert_eq!(timer.observe(&go_away(10)), GoAwayStep::Reconnect);
    }

    #[test]
    fn mid_turn_it_waits_for_the_turn_or_the_deadline_and_a_storm_changes_nothing() {
        let mut timer = GoAwayTimer::default();
        assert_eq!(
            timer.observe(&SessionEvent::TextDelta("a".into())),
            GoAwayStep::Nothing
        );
        assert_eq!(
            timer.observe(&go_away(10)),
            GoAwayStep::Wait {
                id: 1,
                after: Duration::from_millis(9_500)
            }
        );
        for _ in 0..100 {
            assert_eq!(timer.observe(&go_away(10)), GoAwayStep::Nothing);
        }
        assert_eq!(
            timer.observe(&SessionEvent::TurnComplete {
                reason: None,
                waiting_for_input: false
            }),
            GoAwayStep::Reconnect
        );
        // The timer of the goAway already acted on does nothing.
        assert!(!timer.due(1));
    }

    #[test]
    fn a_deadline_reached_mid_turn_reconnects() {
        let mut timer = GoAwayTimer::default();
        timer.observe(&SessionEvent::AudioData(bytes::Bytes::from_static(b"pcm")));
        let GoAwayStep::Wait { id, .. } = timer.observe(&go_away(3)) else {
            panic!("waits mid-turn");
        };
        assert!(timer.due(id));
        assert!(!timer.due(id));
    }

    #[test]
    fn too_little_time_left_reconnects_at_once() {
        let mut timer = GoAwayTimer::default();
        timer.observe(&SessionEvent::TextDelta("a".into()));
        assert_eq!(
            timer.observe(&SessionEvent::GoAway {
                time_left: Some(Duration::from_millis(300))
            }),
            GoAwayStep::Reconnect
        );
    }
}
