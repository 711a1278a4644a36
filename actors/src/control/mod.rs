//! Control-lane internals: session signals and tool calls in flight.

pub mod signals;
pub mod tool_batches;
