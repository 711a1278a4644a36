//! Whether the model waits for a tool (standard) or keeps talking while it runs
//! (background).

use std::fmt;
use std::sync::Arc;

use reel_protocol::Scheduling;

use super::{DefaultResultFormatter, ResultFormatter};

/// How a tool's calls are answered.
#[derive(Clone, Default)]
pub enum ToolExecutionMode {
    /// The model waits; the tool's result is the response.
    #[default]
    Standard,
    /// Non-blocking (Google AI only): the declaration says `behavior: NON_BLOCKING`, the
    /// model gets a "running" acknowledgement at once and keeps talking, and the result
    /// follows with `scheduling`.
    Background {
        /// When the model takes the result in.
        scheduling: Scheduling,
        /// Shapes the responses; `None` means [`DefaultResultFormatter`].
        formatter: Option<Arc<dyn ResultFormatter>>,
    },
}

impl ToolExecutionMode {
    /// Background mode with the default formatter.
    ///
    /// ```
    /// use reel_actors::tools::ToolExecutionMode;
    /// use reel_protocol::Scheduling;
    ///
    /// let mode = ToolExecutionMode::background(Scheduling::WhenIdle);
    /// assert!(mode.is_background());
    /// assert_eq!(mode.scheduling(), Some(&Scheduling::WhenIdle));
    /// ```
    pub fn background(scheduling: Scheduling) -> Self {
        ToolExecutionMode::Background {
            scheduling,
            formatter: None,
        }
    }

    /// Whether calls run in the background.
    pub fn is_background(&self) -> bool {
        matches!(self, ToolExecutionMode::Background { .. })
    }

    /// The scheduling of background results; `None` in standard mode.
    pub fn scheduling(&self) -> Option<&Scheduling> {
        match self {
            ToolExecutionMode::Standard => None,
            ToolExecutionMode::Background { scheduling, .. } => Some(scheduling),
        }
    }

    /// The formatter of background responses (the default one if none was set); `None` in
    /// standard mode.
    pub fn formatter(&self) -> Option<&dyn ResultFormatter> {
        match self {
            ToolExecutionMode::Standard => None,
            ToolExecutionMode::Background { formatter, .. } => {
                Some(formatter.as_deref().unwrap_or(&DefaultResultFormatter))
            }
        }
    }
}

impl fmt::Debug for ToolExecutionMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ToolExecutionMode::Standard => f.write_str("Standard"),
            ToolExecutionMode::Background {
                scheduling,
                formatter,
            } => f
                .debug_struct("Background")
                .field("scheduling", scheduling)
                .field(
                    "formatter",
                    &if formatter.is_some() {
                        "custom"
                    } else {
                        "default"
                    },
                )
                .finish(),
        }
    }
}
