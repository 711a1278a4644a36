//! What can go wrong with a tool: while running one call ([`ToolError`], which the model
//! reads) and while setting up the dispatcher ([`DispatchError`], which the developer reads).

use std::time::Duration;

/// Why a tool call did not produce a result.
///
/// The [`Display`](std::fmt::Display) text is what the model reads in the error response,
/// so it names the tool and says what to do differently.
///
/// ```
/// use reel_actors::tools::ToolError;
///
/// let error = ToolError::UnknownTool {
///     name: "get_wether".into(),
///     available: vec!["book_table".into(), "get_weather".into()],
/// };
/// assert_eq!(
///     error.to_string(),
///     "unknown tool `get_wether`; available tools: book_table, get_weather"
/// );
/// ```
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ToolError {
    /// The arguments do not fit the tool's parameters.
    #[error("invalid arguments for tool `{tool}`: {message}")]
    InvalidArgs {
        /// The tool's name.
        tool: String,
        /// What is wrong with them, e.g. "missing field `city`".
        message: String,
    },
    /// The tool ran and reported a failure.
    #[error("tool `{tool}` failed: {message}")]
    ExecutionFailed {
        /// The tool's name.
        tool: String,
        /// The tool's own explanation.
        message: String,
    },
    /// The tool did not finish in time; its task was aborted.
    #[error("tool `{tool}` timed out after {after:?}")]
    Timeout {
        /// The tool's name.
        tool: String,
        /// The time limit it exceeded.
        after: Duration,
    },
    /// The call was cancelled (by the server, a disconnect or the application) before the
    /// tool finished; its task was aborted.
    #[error("tool `{tool}` was cancelled")]
    Cancelled {
        /// The tool's name.
        tool: String,
    },
    /// The tool panicked. The session goes on; the panic is reported as this error.
    #[error("tool `{tool}` panicked: {message}")]
    Panicked {
        /// The tool's name.
        tool: String,
        /// The panic message.
        message: String,
    },
    /// No tool of that name is registered (or allowed in the current phase).
    #[error("unknown tool `{name}`; available tools: {}", list_or_none(available))]
    UnknownTool {
        /// The name the model used.
        name: String,
        /// The tools it may call instead, sorted by name.
        available: Vec<String>,
    },
    /// The runtime failed while handling the call (the control lane failed on it and was
    /// restarted), so its result was lost or it never ran. The model still gets this
    /// answer, so it is not left waiting for one.
    #[error("tool `{tool}` could not be answered: {message}")]
    RuntimeFailed {
        /// The tool's name.
        tool: String,
        /// What failed.
        message: String,
    },
    /// The tool exists, but the current phase does not allow it.
    #[error("tool `{tool}` is not available in the current phase `{phase}`")]
    NotAllowed {
        /// The tool's name.
        tool: String,
        /// The phase whose tool filter rejected it.
        phase: String,
    },
    /// The session's governed flow refused the call (`reel_actors::govern`): it did not
    /// run.
    #[error("tool `{tool}` was refused by the flow: {reason}")]
    Refused {
        /// The tool's name.
        tool: String,
        /// Why the flow refused it.
        reason: String,
    },
    /// The tool must be confirmed and was not: it did not run.
    #[error("the user did not confirm `{tool}`: {reason}")]
    Denied {
        /// The tool's name.
        tool: String,
        /// The provider's reason.
        reason: String,
    },
    /// The tool runs elsewhere (an MCP server) and could not be reached: the connection
    /// closed, the server process died, a transport error. The session goes on; later calls
    /// fail the same way until the server is back.
    #[error("tool `{tool}` could not be reached: {message}")]
    Unreachable {
        /// The tool's name.
        tool: String,
        /// What failed, naming the server.
        message: String,
    },
    /// An error answer taken from a recording, by a replay that does not run the tool (an
    /// MCP tool in `Live::builder().replay(..)`): `text` is the recorded error text, sent
    /// again verbatim, so the replayed response is byte-identical to the recorded one.
    #[error("{text}")]
    Replayed {
        /// The tool's name.
        tool: String,
        /// The recorded error text.
        text: String,
    },
}

impl ToolError {
    /// The name of the tool the error is about.
    ///
    /// ```
    /// use reel_actors::tools::ToolError;
    ///
    /// let error = ToolError::Cancelled { tool: "book_table".into() };
    /// assert_eq!(error.tool(), "book_table");
    /// ```
    pub fn tool(&self) -> &str {
        match self {
            ToolError::InvalidArgs { tool, .. }
            | ToolError::ExecutionFailed { tool, .. }
            | ToolError::Timeout { tool, .. }
            | ToolError::Cancelled { tool }
            | ToolError::Panicked { tool, .. }
            | ToolError::RuntimeFailed { tool, .. }
            | ToolError::NotAllowed { tool, .. }
            | ToolError::Denied { tool, .. }
            | ToolError::Refused { tool, .. }
            | ToolError::Unreachable { tool, .. }
            | ToolError::Replayed { tool, .. } => tool,
            ToolError::UnknownTool { name, .. } => name,
        }
    }
}

/// Why a tool could not be registered or configured in a
/// [`ToolDispatcher`](super::ToolDispatcher).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum DispatchError {
    /// A tool of that name is already registered.
    #[error("a tool named `{name}` is already registered; tool names must be unique")]
    Duplicate {
        /// The name registered twice.
        name: String,
    },
    /// The name is not one the Live API accepts for a function.
    #[error("`{name}` is not a valid tool name: {reason}")]
    InvalidName {
        /// The name given.
        name: String,
        /// What is wrong with it.
        reason: &'static str,
    },
    /// A setting names a tool that is not registered.
    #[error(
        "no tool named `{name}` is registered; registered tools: {}",
        list_or_none(available)
    )]
    UnknownTool {
        /// The name given.
        name: String,
        /// The registered tools, sorted by name.
        available: Vec<String>,
    },
}

/// `a, b, c`, or `(none)` for an empty list.
fn list_or_none(names: &[String]) -> String {
    if names.is_empty() {
        "(none)".to_owned()
    } else {
        names.join(", ")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tool_error_texts_name_the_tool_and_the_fix() {
        let cases = [
            (
                ToolError::InvalidArgs {
                    tool: "get_weather".into(),
                    message: "missing field `city`".into(),
                },
                "invalid arguments for tool `get_weather`: missing field `city`",
            ),
            (
                ToolError::ExecutionFailed {
                    tool: "book_table".into(),
                    message: "no table free at 19:00".into(),
                },
                "tool `book_table` failed: no table free at 19:00",
            ),
            (
                ToolError::Timeout {
                    tool: "slow".into(),
                    after: Duration::from_secs(30),
                },
                "tool `slow` timed out after 30s",
            ),
            (
                ToolError::Cancelled {
                    tool: "slow".into(),
                },
                "tool `slow` was cancelled",
            ),
            (
                ToolError::Panicked {
                    tool: "buggy".into(),
                    message: "index out of bounds".into(),
                },
                "tool `buggy` panicked: index out of bounds",
            ),
            (
                ToolError::UnknownTool {
                    name: "get_wether".into(),
                    available: vec!["get_weather".into(), "book_table".into()],
                },
                "unknown tool `get_wether`; available tools: get_weather, book_table",
            ),
            (
                ToolError::UnknownTool {
                    name: "anything".into(),
                    available: vec![],
                },
                "unknown tool `anything`; available tools: (none)",
            ),
            (
                ToolError::NotAllowed {
                    tool: "book_table".into(),
                    phase: "greeting".into(),
                },
                "tool `book_table` is not available in the current phase `greeting`",
            ),
            (
                ToolError::Refused {
                    tool: "charge_card".into(),
                    reason: "\"charge_card\" may run once and already ran (frame 7)".into(),
                },
                "tool `charge_card` was refused by the flow: \"charge_card\" may run once and already ran (frame 7)",
            ),
            (
                ToolError::Unreachable {
                    tool: "get_time".into(),
                    message: "the MCP server `uvx mcp-server-time` closed the connection".into(),
                },
                "tool `get_time` could not be reached: the MCP server `uvx mcp-server-time` closed the connection",
            ),
            (
                ToolError::Replayed {
                    tool: "get_time".into(),
                    text: "tool `get_time` timed out after 30s".into(),
                },
                "tool `get_time` timed out after 30s",
            ),
        ];
        for (error, text) in cases {
            assert_eq!(error.to_string(), text);
        }
    }

    #[test]
    fn tool_names_the_tool_of_every_variant() {
        let error = ToolError::UnknownTool {
            name: "get_wether".into(),
            available: vec![],
        };
        assert_eq!(error.tool(), "get_wether");
        let error = ToolError::Timeout {
            tool: "slow".into(),
            after: Duration::from_millis(1500),
        };
        assert_eq!(error.tool(), "slow");
        assert_eq!(error.to_string(), "tool `slow` timed out after 1.5s");
    }

    #[test]
    fn dispatch_error_texts() {
        assert_eq!(
            DispatchError::Duplicate {
                name: "get_weather".into()
            }
            .to_string(),
            "a tool named `get_weather` is already registered; tool names must be unique"
        );
        assert_eq!(
            DispatchError::InvalidName {
                name: "get weather".into(),
                reason: "only letters, digits, `_`, `.`, `:` and `-` are allowed",
            }
            .to_string(),
            "`get weather` is not a valid tool name: only letters, digits, `_`, `.`, `:` and `-` are allowed"
        );
        assert_eq!(
            DispatchError::UnknownTool {
                name: "nope".into(),
                available: vec!["a".into(), "b".into()],
            }
            .to_string(),
            "no tool named `nope` is registered; registered tools: a, b"
        );
    }
}
