//! Answering tool calls with their recorded responses, for replays without the tools.
//!
//! A replay with no tool code can still keep a session on its recorded course: every tool
//! call the model makes is answered with the response the runtime sent for that call id in
//! the recording. The tool responses then come out byte-identical; what the tools wrote to
//! the state does not (no tool ran), and a journal diff shows exactly those keys.
//!
//! Only frames the runtime sent are taken: a response the application sent by hand is
//! replayed from the tape as it is, and answering it again would send it twice.
//!
//! ```
//! use reel_protocol::{ClientMessage, FunctionCall, FunctionResponse, encode};
//! use reel_recorder::wire_log::{Direction, WireEntry};
//! use reel_replayer::recorded_tools::RecordedToolResponses;
//! use serde_json::json;
//!
//! let response = FunctionResponse::new("call-1", "get_weather", json!({"temp_c": 21}));
//! let frame = encode(&ClientMessage::tool_response(vec![response.clone()]));
//! let mut recorded = RecordedToolResponses::new();
//! recorded.observe(&WireEntry::frame(5, Direction::Out, 0, frame, None, false));
//! let call = FunctionCall { id: Some("call-1".into()), ..FunctionCall::default() };
//! assert_eq!(recorded.answers(&[call]), Some(vec![response]));
//! ```

use std::collections::HashMap;
use std::sync::Arc;

use reel_actors::callbacks::{ControlCallbacks, ToolCallFn};
use reel_protocol::{ClientMessage, FunctionCall, FunctionResponse, decode_client};
use reel_recorder::wire_log::{Direction, Source, WireEntry};

/// The runtime's recorded tool responses, by call id.
#[derive(Debug, Clone, Default)]
pub struct RecordedToolResponses {
    /// Call id → (sequence number of the frame, position in it, the response). The first
    /// response to a call wins.
    by_id: HashMap<String, (u64, usize, FunctionResponse)>,
}

impl RecordedToolResponses {
    /// No responses yet.
    pub fn new() -> Self {
        RecordedToolResponses::default()
    }

    /// Takes the responses of `entry` if it is a tool response the runtime sent.
    pub fn observe(&mut self, entry: &WireEntry) {
        if !Self::takes(entry) {
            return;
        }
        let Ok(message) = decode_client(&entry.payload) else {
            return;
        };
        self.take(entry, message);
    }

    /// [`RecordedToolResponses::observe`] of an entry whose frame the caller has decoded
    /// already (`message`): the frame is not decoded again.
    pub(crate) fn observe_decoded(&mut self, entry: &WireEntry, message: ClientMessage) {
        if Self::takes(entry) {
            self.take(entry, message);
        }
    }

    /// Whether `entry` is a frame the runtime sent (only those are taken).
    fn takes(entry: &WireEntry) -> bool {
        entry.dir == Direction::Out && entry.source != Some(Source::App) && !entry.is_close_marker()
    }

    /// Takes the responses of `message`, the frame of `entry`.
    fn take(&mut self, entry: &WireEntry, message: ClientMessage) {
        let Some(responses) = message.tool_response.and_then(|r| r.function_responses) else {
            return;
        };
        for (position, response) in responses.into_iter().enumerate() {
            let Some(id) = response.id.clone() else {
                continue;
            };
            self.by_id
                .entry(id)
                .or_insert((entry.seq, position, response));
        }
    }

    /// How many calls have a recorded response.
    pub fn len(&self) -> usize {
        self.by_id.len()
    }

    /// Whether no call has a recorded response.
    pub fn is_empty(&self) -> bool {
        self.by_id.is_empty()
    }

    /// The recorded responses to `calls`, in the order they were recorded; `None` when
    /// none of the calls has one (the call then stays unanswered, as no tool is there).
    pub fn answers(&self, calls: &[FunctionCall]) -> Option<Vec<FunctionResponse>> {
        let mut found: Vec<&(u64, usize, FunctionResponse)> = calls
            .iter()
            .filter_map(|call| self.by_id.get(call.id.as_deref()?))
            .collect();
        if found.is_empty() {
            return None;
        }
        found.sort_by_key(|(seq, position, _)| (*seq, *position));
        found.dedup_by_key(|(seq, position, _)| (*seq, *position));
        Some(found.into_iter().map(|(_, _, r)| r.clone()).collect())
    }

    /// An `on_tool_call` callback answering with [`RecordedToolResponses::answers`].
    pub fn into_callback(self) -> ToolCallFn {
        let recorded = Arc::new(self);
        Arc::new(move |calls, _state| {
            let answers = recorded.answers(&calls);
            Box::pin(async move { answers })
        })
    }

    /// Control callbacks with only [`RecordedToolResponses::into_callback`] set.
    pub fn into_control_callbacks(self) -> ControlCallbacks {
        ControlCallbacks {
            on_tool_call: Some(self.into_callback()),
            ..ControlCallbacks::default()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use reel_protocol::{ClientMessage, encode};
    use serde_json::json;

    fn frame(seq: u64, responses: Vec<FunctionResponse>, source: Option<Source>) -> WireEntry {
        WireEntry {
            source,
            ..WireEntry::frame(
                seq,
                Direction::Out,
                seq,
                encode(&ClientMessage::tool_response(responses)),
                None,
                false,
            )
        }
    }

    fn call(id: &str) -> FunctionCall {
        FunctionCall {
            id: Some(id.into()),
            ..FunctionCall::default()
        }
    }

    #[test]
    fn answers_come_in_recorded_order_and_the_first_response_wins() {
        let a = FunctionResponse::new("a", "f", json!(1));
        let b = FunctionResponse::new("b", "f", json!(2));
        let late_a = FunctionResponse::new("a", "f", json!(3));
        let by_app = FunctionResponse::new("c", "f", json!(4));
        let mut recorded = RecordedToolResponses::new();
        recorded.observe(&frame(3, vec![b.clone(), a.clone()], None));
        recorded.observe(&frame(4, vec![late_a], None));
        recorded.observe(&frame(5, vec![by_app], Some(Source::App)));
        assert_eq!(recorded.len(), 2);
        assert_eq!(
            recorded.answers(&[call("a"), call("b")]),
            Some(vec![b, a.clone()])
        );
        assert_eq!(recorded.answers(&[call("a")]), Some(vec![a]));
        assert_eq!(recorded.answers(&[call("c")]), None);
    }
}
