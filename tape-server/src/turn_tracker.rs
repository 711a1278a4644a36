//! Whether the upstream still owes the client something: a recording proxy whose client
//! leaves keeps reading the upstream until it does not, so a recording never ends in the
//! middle of a model turn (a recording completes even when the consumer
//! stops early).

use reel_protocol::{decode_client, decode_server};

/// What the upstream owes.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) enum Owed {
    /// Nothing: the session is between turns, or waits on the client (a tool call).
    #[default]
    Nothing,
    /// `setupComplete`, after a setup.
    SetupComplete,
    /// The end of a model turn (`turnComplete`), after client input.
    TurnComplete,
}

/// Follows the frames both ways and knows what the upstream owes.
#[derive(Debug, Clone, Default)]
pub(crate) struct TurnTracker {
    owed: Owed,
}

impl TurnTracker {
    /// What the upstream owes now.
    pub(crate) fn owed(&self) -> Owed {
        self.owed
    }

    /// A client frame went upstream.
    pub(crate) fn client_sent(&mut self, payload: &[u8]) {
        let Ok(message) = decode_client(payload) else {
            return;
        };
        if message.setup.is_some() {
            self.owed = Owed::SetupComplete;
        } else if message.tool_response.is_some() || message.realtime_input.is_some() {
            self.owed = Owed::TurnComplete;
        } else if let Some(content) = &message.client_content {
            // Content without `turnComplete` only adds context; the model does not answer.
            if content.turn_complete == Some(true) {
                self.owed = Owed::TurnComplete;
            }
        }
    }

    /// An upstream frame came back.
    pub(crate) fn upstream_sent(&mut self, payload: &[u8]) {
        let Ok(message) = decode_server(payload) else {
            return;
        };
        if message.setup_complete.is_some() && self.owed == Owed::SetupComplete {
            self.owed = Owed::Nothing;
        }
        if message.tool_call.is_some() {
            // The model waits for the client's tool response.
            self.owed = Owed::Nothing;
        }
        if let Some(content) = &message.server_content {
            if content.turn_complete == Some(true) {
                self.owed = Owed::Nothing;
            } else if content.model_turn.is_some() && self.owed == Owed::Nothing {
                // The model speaks up on its own (proactive audio): that turn is owed too.
                self.owed = Owed::TurnComplete;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_turn_is_owed_from_the_question_to_turn_complete() {
        let mut tracker = TurnTracker::default();
        tracker.client_sent(br#"{"setup":{"model":"m"}}"#);
        assert_eq!(tracker.owed(), Owed::SetupComplete);
        tracker.upstream_sent(br#"{"setupComplete":{}}"#);
        assert_eq!(tracker.owed(), Owed::Nothing);
        tracker.client_sent(br#"{"clientContent":{"turns":[],"turnComplete":false}}"#);
        assert_eq!(tracker.owed(), Owed::Nothing);
        tracker.client_sent(br#"{"client_content":{"turns":[],"turn_complete":true}}"#);
        assert_eq!(tracker.owed(), Owed::TurnComplete);
        tracker.upstream_sent(br#"{"serverContent":{"modelTurn":{"parts":[{"text":"a"}]}}}"#);
        assert_eq!(tracker.owed(), Owed::TurnComplete);
        tracker.upstream_sent(br#"{"toolCall":{"functionCalls":[{"id":"1","name":"f"}]}}"#);
        assert_eq!(tracker.owed(), Owed::Nothing);
        tracker.client_sent(br#"{"toolResponse":{"functionResponses":[{"id":"1"}]}}"#);
        assert_eq!(tracker.owed(), Owed::TurnComplete);
        tracker.upstream_sent(br#"{"serverContent":{"turnComplete":true}}"#);
        assert_eq!(tracker.owed(), Owed::Nothing);
        tracker.upstream_sent(br#"{"serverContent":{"modelTurn":{"parts":[]}}}"#);
        assert_eq!(tracker.owed(), Owed::TurnComplete);
        tracker.upstream_sent(b"garbage");
        assert_eq!(tracker.owed(), Owed::TurnComplete);
    }
}
