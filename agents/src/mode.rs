//! [`AgentMode`]: how a session runs an agent or a resolver when something asks for it
//! (a flow step becoming active, an extracted record completing).

use serde::{Deserialize, Serialize};

/// How an agent (or a [`Resolver`](crate::Resolver)) is invoked from a live session. Its
/// result lands in `{name}:result` (or `{name}:error`) either way.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum AgentMode {
    /// Inline: the caller (the control lane, at the point that asked) awaits the result
    /// before it goes on. For fast dependencies.
    Call,
    /// Detached, fire and forget: the conversation does not wait; the result lands in
    /// state when it is ready.
    Dispatch,
    /// Detached like [`Dispatch`](AgentMode::Dispatch), and the result is also told to
    /// the model when it lands.
    Background,
}
