//! Control-lane internals: session signals, tool calls in flight, running the extractors,
//! and saving snapshots.

mod extraction;
mod persist;
pub mod signals;
pub mod tool_batches;
