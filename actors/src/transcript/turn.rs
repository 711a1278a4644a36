//! [`TranscriptTurn`]: one finished model turn, and [`ToolCallSummary`], a tool call in it.

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// A tool call the model made during a turn.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolCallSummary {
    /// The call id the model gave ("" if none).
    pub call_id: String,
    /// The tool.
    pub name: String,
    /// Its arguments (`null` if none), as the frame carried them; serialized as the JSON
    /// value itself.
    pub args: reel_protocol::Args,
    /// The response the model got, if it was answered before the turn ended.
    pub response: Option<Value>,
}

/// One model turn of the conversation, finalized at turn complete.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TranscriptTurn {
    /// The turn's number, from 1: `session:turn_count` once the turn is counted.
    pub turn_number: u32,
    /// What the user said (their final transcriptions of the turn, joined by a space).
    pub user: String,
    /// What the model said: its output transcription, or its answer text without one.
    pub model: String,
    /// The tool calls of the turn, in the order the model made them.
    pub tool_calls: Vec<ToolCallSummary>,
    /// Session time (epoch ms) of the turn complete: event time, so a replay reproduces it.
    pub timestamp_ms: u64,
}

impl TranscriptTurn {
    /// A turn with no tool calls.
    pub fn new(
        turn_number: u32,
        user: impl Into<String>,
        model: impl Into<String>,
        timestamp_ms: u64,
    ) -> Self {
        TranscriptTurn {
            turn_number,
            user: user.into(),
            model: model.into(),
            tool_calls: Vec::new(),
            timestamp_ms,
        }
    }

    /// Adds a tool call.
    pub fn with_tool_call(mut self, call: ToolCallSummary) -> Self {
        self.tool_calls.push(call);
        self
    }

    /// How many words the user said.
    pub fn user_words(&self) -> usize {
        self.user.split_whitespace().count()
    }

    /// The turn as text (the format of [`super::format_turns`]):
    ///
    /// ```text
    /// [Turn 2]
    /// User: what's the weather in Paris?
    /// Tool get_weather {"city":"Paris"} -> {"temp_c":21}
    /// Model: It is 21 degrees in Paris.
    /// ```
    ///
    /// Lines with nothing to say (no user speech, no model speech) are left out; a call not
    /// answered in the turn ends in `-> (no response)`.
    pub fn format(&self) -> String {
        let mut lines = vec![format!("[Turn {}]", self.turn_number)];
        if !self.user.is_empty() {
            lines.push(format!("User: {}", self.user));
        }
        for call in &self.tool_calls {
            let response = call
                .response
                .as_ref()
                .map_or_else(|| "(no response)".to_owned(), Value::to_string);
            lines.push(format!("Tool {} {} -> {response}", call.name, call.args));
        }
        if !self.model.is_empty() {
            lines.push(format!("Model: {}", self.model));
        }
        lines.join("\n")
    }
}
