//! [`PendingTurn`]: the turn in progress, gathered from the control lane's events.

use reel_protocol::{Args, FunctionResponse, SessionEvent};
use serde_json::Value;

use super::turn::{ToolCallSummary, TranscriptTurn};

/// What the current turn has gathered so far.
///
/// The user side is the final input transcriptions and the text the application sent as
/// the user (a text session); the model side is the final output
/// transcriptions (the server's account of what was spoken), or the answer text when the
/// turn had no output transcription (a text session). Partial transcriptions are not
/// used: they are revisable, and the final carries the whole text. A turn interrupted by
/// the user keeps only what the server finalized (no final comes for the truncated part).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct PendingTurn {
    user: String,
    spoken: String,
    text: String,
    tool_calls: Vec<ToolCallSummary>,
}

impl PendingTurn {
    /// Takes in an event the control lane handles; returns whether it added to the turn.
    pub fn observe(&mut self, event: &SessionEvent) -> bool {
        match event {
            SessionEvent::InputTranscription {
                text,
                is_final: true,
            } => append(&mut self.user, text),
            SessionEvent::UserText(text) => append(&mut self.user, text),
            SessionEvent::OutputTranscription {
                text,
                is_final: true,
            } => append(&mut self.spoken, text),
            SessionEvent::TextComplete(text) => append(&mut self.text, text),
            SessionEvent::ToolCall(calls) => {
                self.tool_calls
                    .extend(calls.iter().map(|call| ToolCallSummary {
                        call_id: call.id.clone().unwrap_or_default(),
                        name: call.name.clone().unwrap_or_default(),
                        args: call.args.clone().unwrap_or_else(Args::null),
                        response: None,
                    }));
                !calls.is_empty()
            }
            _ => false,
        }
    }

    /// The call `call_id` of this turn was answered with `response`. A call of an earlier
    /// turn (a background tool finishing late) is not in this turn and is left alone.
    pub fn answered(&mut self, call_id: &str, response: &Value) {
        if let Some(call) = self
            .tool_calls
            .iter_mut()
            .find(|c| c.call_id == call_id && c.response.is_none())
        {
            call.response = Some(response.clone());
        }
    }

    /// [`PendingTurn::answered`] for each response sent.
    pub fn record_responses(&mut self, responses: &[FunctionResponse]) {
        for response in responses {
            self.answered(
                response.id.as_deref().unwrap_or_default(),
                response.response.as_ref().unwrap_or(&Value::Null),
            );
        }
    }

    /// The turn as it stands, numbered `turn_number`, at `timestamp_ms`.
    pub fn preview(&self, turn_number: u32, timestamp_ms: u64) -> TranscriptTurn {
        TranscriptTurn {
            turn_number,
            user: self.user.clone(),
            model: self.model().to_owned(),
            tool_calls: self.tool_calls.clone(),
            timestamp_ms,
        }
    }

    /// Finishes the turn: returns it and starts the next one empty.
    pub fn finish(&mut self, turn_number: u32, timestamp_ms: u64) -> TranscriptTurn {
        let turn = self.preview(turn_number, timestamp_ms);
        *self = PendingTurn::default();
        turn
    }

    /// Whether nothing was gathered yet.
    pub fn is_empty(&self) -> bool {
        self.user.is_empty()
            && self.spoken.is_empty()
            && self.text.is_empty()
            && self.tool_calls.is_empty()
    }

    fn model(&self) -> &str {
        if self.spoken.is_empty() {
            &self.text
        } else {
            &self.spoken
        }
    }
}

/// Appends `piece` (trimmed) to `text`, a space between; returns whether anything was added.
fn append(text: &mut String, piece: &str) -> bool {
    let piece = piece.trim();
    if piece.is_empty() {
        return false;
    }
    if !text.is_empty() {
        text.push(' ');
    }
    text.push_str(piece);
    true
}

#[cfg(test)]
mod tests {
    use reel_protocol::FunctionCall;
    use serde_json::json;

    use super::*;

    fn call(id: &str, name: &str) -> FunctionCall {
        serde_json::from_value(json!({"id": id, "name": name, "args": {"q": 1}})).unwrap()
    }

    #[test]
    fn server_transcriptions_win_over_answer_text() {
        let mut turn = PendingTurn::default();
        assert!(turn.is_empty());
        let partial = SessionEvent::InputTranscription {
            text: "Hel".into(),
            is_final: false,
        };
        assert!(!turn.observe(&partial), "partials are revisable: not kept");
        for event in [
            SessionEvent::InputTranscription {
                text: " Hello there. ".into(),
                is_final: true,
            },
            SessionEvent::InputTranscription {
                text: "Anyone?".into(),
                is_final: true,
            },
            SessionEvent::TextComplete("Hi (text).".into()),
            SessionEvent::OutputTranscription {
                text: "Hi (spoken).".into(),
                is_final: true,
            },
            SessionEvent::ToolCall(vec![call("c1", "look"), call("c2", "book")]),
        ] {
            assert!(turn.observe(&event));
        }
        turn.answered("c2", &json!({"ok": true}));
        turn.answered("zz", &json!("unknown call: ignored"));
        let finished = turn.finish(4, 1234);
        assert_eq!(
            finished,
            TranscriptTurn {
                turn_number: 4,
                user: "Hello there. Anyone?".into(),
                model: "Hi (spoken).".into(),
                tool_calls: vec![
                    ToolCallSummary {
                        call_id: "c1".into(),
                        name: "look".into(),
                        args: json!({"q": 1}).into(),
                        response: None,
                    },
                    ToolCallSummary {
                        call_id: "c2".into(),
                        name: "book".into(),
                        args: json!({"q": 1}).into(),
                        response: Some(json!({"ok": true})),
                    },
                ],
                timestamp_ms: 1234,
            }
        );
        assert!(turn.is_empty(), "the next turn starts empty");
        turn.observe(&SessionEvent::TextComplete("Only text.".into()));
        assert_eq!(turn.preview(5, 9).model, "Only text.");
    }
}
