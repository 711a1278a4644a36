//! The conversation as turns: what the user said, what the model said, which tools it
//! called, one [`TranscriptTurn`] per model turn, kept in a [`TranscriptBuffer`].
//!
//! The control lane builds each turn from the events it handles — the final input
//! transcription (the user), the final output transcription or, without one, the answer
//! text (the model), and the tool calls with their responses — and finalizes it at turn
//! complete, stamped with the turn's event time. The buffer lives in the lane's data, which
//! survives a restart of the lane, and every turn's content and time come from the frames:
//! a replay of the same frames builds the same transcript.
//!
//! Extractors ([`crate::extract`]) read windows of it;
//! [`LiveHandle::transcript`](crate::LiveHandle::transcript) shows it to the application.
//!
//! ```
//! use reel_actors::transcript::{TranscriptBuffer, TranscriptTurn};
//!
//! let mut buffer = TranscriptBuffer::with_capacity(2);
//! for n in 1..=3 {
//!     buffer.push(TranscriptTurn::new(n, format!("question {n}"), format!("answer {n}"), 0));
//! }
//! // The oldest turn was evicted.
//! assert_eq!(buffer.window(5).iter().map(|t| t.turn_number).collect::<Vec<_>>(), [2, 3]);
//! assert_eq!(
//!     buffer.format_window(1),
//!     "[Turn 3]\nUser: question 3\nModel: answer 3"
//! );
//! ```

mod buffer;
mod pending;
mod turn;

pub use buffer::{DEFAULT_TRANSCRIPT_TURNS, TranscriptBuffer, format_turns};
pub use pending::PendingTurn;
pub use turn::{ToolCallSummary, TranscriptTurn};
