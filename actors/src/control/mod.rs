//! Control-lane internals: session signals, tool calls (dispatching, cancelling,
//! answering) and the batches in flight, running the extractors, what the lane sends on
//! its own (tool responses, instruction updates), and saving snapshots.

mod extraction;
mod outbound;
mod persist;
pub mod signals;
pub mod tool_batches;
mod tool_calls;
