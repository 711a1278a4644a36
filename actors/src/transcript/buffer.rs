//! [`TranscriptBuffer`]: the last turns of the conversation, oldest first.

use std::sync::Arc;

use super::turn::TranscriptTurn;

/// How many turns a [`TranscriptBuffer`] keeps by default.
pub const DEFAULT_TRANSCRIPT_TURNS: usize = 50;

/// A ring of the last finished turns (by default [`DEFAULT_TRANSCRIPT_TURNS`]), oldest
/// first; a turn pushed into a full buffer evicts the oldest.
#[derive(Debug, Clone, PartialEq)]
pub struct TranscriptBuffer {
    // A Vec, not a VecDeque: windows are contiguous slices, and evicting from the front of
    // at most a few dozen turns costs less than a turn's strings.
    turns: Vec<TranscriptTurn>,
    capacity: usize,
}

impl Default for TranscriptBuffer {
    fn default() -> Self {
        TranscriptBuffer::new()
    }
}

impl TranscriptBuffer {
    /// An empty buffer of [`DEFAULT_TRANSCRIPT_TURNS`] turns.
    pub fn new() -> Self {
        TranscriptBuffer::with_capacity(DEFAULT_TRANSCRIPT_TURNS)
    }

    /// An empty buffer keeping at most `capacity` turns (at least one). It holds no memory
    /// for them until the first turn ends: the turns' storage grows as they come, so a
    /// session that never finishes a turn (an idle one) does not pay for `capacity` of them
    /// up front (4.4 KiB for the default 50).
    pub fn with_capacity(capacity: usize) -> Self {
        TranscriptBuffer {
            turns: Vec::new(),
            capacity: capacity.max(1),
        }
    }

    /// How many turns it keeps at most.
    pub fn capacity(&self) -> usize {
        self.capacity
    }

    /// Adds a finished turn, evicting the oldest if the buffer is full.
    pub fn push(&mut self, turn: TranscriptTurn) {
        if self.turns.len() == self.capacity {
            self.turns.remove(0);
        }
        self.turns.push(turn);
    }

    /// The last `n` turns (fewer if there are not as many), oldest first.
    pub fn window(&self, n: usize) -> &[TranscriptTurn] {
        &self.turns[self.turns.len().saturating_sub(n)..]
    }

    /// The last `n` turns as text ([`format_turns`]).
    pub fn format_window(&self, n: usize) -> String {
        format_turns(self.window(n))
    }

    /// A copy of the last `n` turns that can be kept and shared (for callbacks and tasks).
    pub fn snapshot_window(&self, n: usize) -> Arc<[TranscriptTurn]> {
        Arc::from(self.window(n))
    }

    /// Every turn kept, oldest first.
    pub fn turns(&self) -> &[TranscriptTurn] {
        &self.turns
    }

    /// The most recent turn.
    pub fn last(&self) -> Option<&TranscriptTurn> {
        self.turns.last()
    }

    /// How many turns are kept.
    pub fn len(&self) -> usize {
        self.turns.len()
    }

    /// Whether no turn is kept.
    pub fn is_empty(&self) -> bool {
        self.turns.is_empty()
    }
}

/// Turns as text, one block per turn ([`TranscriptTurn::format`]), separated by a blank
/// line.
pub fn format_turns(turns: &[TranscriptTurn]) -> String {
    turns
        .iter()
        .map(TranscriptTurn::format)
        .collect::<Vec<_>>()
        .join("\n\n")
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::transcript::ToolCallSummary;

    #[test]
    fn an_empty_buffer_holds_no_memory_for_its_turns() {
        let mut buffer = TranscriptBuffer::new();
        assert_eq!((buffer.turns.capacity(), buffer.capacity()), (0, 50));
        buffer.push(turn(1));
        assert!(buffer.turns.capacity() < 50, "{}", buffer.turns.capacity());
    }

    fn turn(n: u32) -> TranscriptTurn {
        TranscriptTurn::new(n, format!("u{n}"), format!("m{n}"), 1000 + u64::from(n))
    }

    #[test]
    fn a_full_buffer_evicts_the_oldest_turn() {
        let mut buffer = TranscriptBuffer::new();
        for n in 1..=52 {
            buffer.push(turn(n));
        }
        assert_eq!(buffer.len(), 50);
        assert_eq!(buffer.turns()[0].turn_number, 3);
        assert_eq!(buffer.last().map(|t| t.turn_number), Some(52));
        let window: Vec<u32> = buffer.window(3).iter().map(|t| t.turn_number).collect();
        assert_eq!(window, [50, 51, 52]);
        assert_eq!(buffer.window(0), &[] as &[TranscriptTurn]);
        assert_eq!(buffer.window(500).len(), 50);
        assert_eq!(&*buffer.snapshot_window(2), buffer.window(2));
    }

    #[test]
    fn windows_format_as_blocks() {
        let mut buffer = TranscriptBuffer::with_capacity(0); // at least one
        assert_eq!(buffer.capacity(), 1);
        buffer.push(turn(1));
        assert_eq!(buffer.format_window(4), "[Turn 1]\nUser: u1\nModel: m1");

        let mut buffer = TranscriptBuffer::new();
        buffer.push(turn(1));
        buffer.push(
            TranscriptTurn::new(2, "", "It is 21 degrees.", 2000)
                .with_tool_call(ToolCallSummary {
                    call_id: "c1".into(),
                    name: "get_weather".into(),
                    args: json!({"city": "Paris"}).into(),
                    response: Some(json!({"temp_c": 21})),
                })
                .with_tool_call(ToolCallSummary {
                    call_id: "c2".into(),
                    name: "slow".into(),
                    args: json!(null).into(),
                    response: None,
                }),
        );
        assert_eq!(
            buffer.format_window(2),
            "[Turn 1]\nUser: u1\nModel: m1\n\n\
             [Turn 2]\nTool get_weather {\"city\":\"Paris\"} -> {\"temp_c\":21}\n\
             Tool slow null -> (no response)\nModel: It is 21 degrees."
        );
        assert_eq!(TranscriptBuffer::new().format_window(3), "");
    }
}
