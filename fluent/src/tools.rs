//! Tools: registered one by one or as a whole dispatcher, then their settings (background
//! execution, timeouts). Settings may come before or after the tool they name: the
//! dispatcher is assembled when the session starts, tools first, then settings, each in
//! chain order, and the first mistake is reported with the call that made it.

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use reel_protocol::Scheduling;
use reel_tools::{
    ConfirmationProvider, DispatchError, InputStreaming, InputStreamingTool, ResultFormatter,
    Streaming, StreamingTool, ToolDispatcher, ToolExecutionMode, ToolFunction,
};

use crate::builder::LiveBuilder;
use crate::error::BuildError;
use crate::mcp::Discovered;

/// Where tools come from.
#[derive(Clone)]
enum Source {
    One(Arc<dyn ToolFunction>),
    Dispatcher(ToolDispatcher),
}

/// A setting of one tool.
#[derive(Clone)]
enum Setting {
    Mode {
        name: String,
        mode: ToolExecutionMode,
        call: &'static str,
    },
    Timeout {
        name: String,
        timeout: Duration,
    },
}

/// The tools part of a [`LiveBuilder`].
#[derive(Clone, Default)]
pub(crate) struct ToolsPart {
    sources: Vec<Source>,
    settings: Vec<Setting>,
    /// Asked before calls of tools that must be confirmed.
    confirmations: Option<Arc<dyn ConfirmationProvider>>,
}

impl fmt::Debug for ToolsPart {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let names: Vec<String> = self
            .sources
            .iter()
            .flat_map(|source| match source {
                Source::One(tool) => vec![tool.name().to_owned()],
                Source::Dispatcher(dispatcher) => dispatcher.names(),
            })
            .collect();
        f.debug_struct("Tools")
            .field("names", &names)
            .field("settings", &self.settings.len())
            .finish()
    }
}

impl ToolsPart {
    /// The dispatcher the session runs, `None` when the chain names no tool (calls then
    /// reach only `on_tool_call`): the chain's tools, then the `discovered` ones (MCP
    /// tools), then the settings. With `pending` (MCP servers not connected yet, for
    /// `validate`), a setting naming a tool not registered is left for the connect.
    ///
    /// The tools named in `confirmed` (a governed flow's `commit` tools) are marked as
    /// needing the confirmation provider's agreement, unless they are already.
    pub(crate) fn dispatcher(
        &self,
        discovered: &[Discovered],
        pending: bool,
        confirmed: &[String],
    ) -> Result<Option<ToolDispatcher>, BuildError> {
        let none_discovered = discovered.iter().all(|found| found.tools.is_empty());
        let mut sources = self.sources.iter();
        let mut dispatcher = match sources.next() {
            None if self.settings.is_empty() && none_discovered => return Ok(None),
            None => ToolDispatcher::new(),
            // A dispatcher given first is kept whole, with its own default timeout.
            Some(Source::Dispatcher(first)) => first.clone(),
            Some(Source::One(tool)) => {
                let mut dispatcher = ToolDispatcher::new();
                register(&mut dispatcher, Arc::clone(tool))?;
                dispatcher
            }
        };
        for source in sources {
            match source {
                Source::One(tool) => register(&mut dispatcher, Arc::clone(tool))?,
                Source::Dispatcher(other) => merge(&mut dispatcher, other)?,
            }
        }
        for found in discovered {
            for tool in &found.tools {
                dispatcher
                    .register_arc(Arc::clone(tool))
                    .map_err(|source| failed(found.call.clone(), source))?;
            }
        }
        for setting in &self.settings {
            let name = match setting {
                Setting::Mode { name, .. } | Setting::Timeout { name, .. } => name,
            };
            if pending && !dispatcher.contains(name) {
                continue;
            }
            match setting {
                Setting::Mode { name, mode, call } => dispatcher
                    .set_mode(name, mode.clone())
                    .map_err(|source| failed(format!("{call}(\"{name}\")"), source))?,
                Setting::Timeout { name, timeout } => dispatcher
                    .set_timeout(name, *timeout)
                    .map_err(|source| failed(format!("tool_timeout(\"{name}\")"), source))?,
            }
        }
        if let Some(provider) = &self.confirmations {
            dispatcher.set_confirmation_provider(Arc::clone(provider));
        }
        for name in confirmed {
            dispatcher.wrap_tool(name, |tool| {
                if tool.confirmation().is_some() {
                    return tool;
                }
                let question = format!("The flow commits `{name}`: run it?");
                Arc::new(reel_tools::ConfirmTool::wrap(tool, question)) as Arc<dyn ToolFunction>
            });
        }
        let unconfirmable = dispatcher.confirmed_tools();
        if !unconfirmable.is_empty() && dispatcher.confirmation_provider().is_none() {
            return Err(BuildError::ConfirmationWithoutProvider {
                tools: unconfirmable,
            });
        }
        Ok(Some(dispatcher))
    }
}

fn failed(call: String, source: DispatchError) -> BuildError {
    BuildError::Tool { call, source }
}

fn register(
    dispatcher: &mut ToolDispatcher,
    tool: Arc<dyn ToolFunction>,
) -> Result<(), BuildError> {
    let name = tool.name().to_owned();
    dispatcher
        .register_arc(tool)
        .map_err(|source| failed(format!("tool(\"{name}\")"), source))
}

/// Adds `other`'s tools, each with the mode, time limit, concurrency limit and barge-in
/// policy it had there; `other`'s session limit, if it has one, becomes the session's.
fn merge(dispatcher: &mut ToolDispatcher, other: &ToolDispatcher) -> Result<(), BuildError> {
    for name in other.names() {
        let Some(tool) = other.get(&name) else {
            continue;
        };
        dispatcher
            .register_arc(Arc::clone(tool))
            .and_then(|()| dispatcher.set_mode(&name, other.mode(&name)))
            .and_then(|()| dispatcher.set_timeout(&name, other.timeout(&name)))
            .and_then(|()| dispatcher.set_barge_in(&name, other.barge_in(&name)))
            .and_then(|()| match other.tool_limit(&name) {
                Some(calls) => dispatcher.set_max_concurrent(&name, calls),
                None => Ok(()),
            })
            .map_err(|source| failed("tools(..)".to_owned(), source))?;
    }
    if let Some(calls) = other.session_limit() {
        *dispatcher = std::mem::take(dispatcher).max_concurrent(calls);
    }
    if let Some(provider) = other.confirmation_provider() {
        dispatcher.set_confirmation_provider(Arc::clone(provider));
    }
    Ok(())
}

impl LiveBuilder {
    /// Decides the calls of tools that must be confirmed
    /// ([`ConfirmTool`](reel_tools::ConfirmTool)) before they run: a prompt in
    /// the application, a policy, [`StaticConfirmation`](reel_tools::StaticConfirmation).
    /// A chain with such a tool and no provider is refused. A replay asks nobody: each call
    /// is answered as the recording (a file or one in memory) shows it was.
    ///
    /// ```
    /// use std::sync::Arc;
    /// use reel_tools::{ConfirmTool, SimpleTool, StaticConfirmation};
    /// use reel_fluent::{BuildError, Live};
    /// use serde_json::json;
    ///
    /// let send = || ConfirmTool::new(
    ///     SimpleTool::new("send_email", "Sends an email.", None, |_, _| async { Ok(json!({"sent": true})) }),
    ///     "This sends a real email. Send it?",
    /// );
    /// let refused = Live::builder().tool(send()).validate().unwrap_err();
    /// assert!(matches!(refused, BuildError::ConfirmationWithoutProvider { .. }));
    /// assert!(Live::builder()
    ///     .tool(send())
    ///     .confirmation_provider(Arc::new(StaticConfirmation::deny_all("not today")))
    ///     .validate()
    ///     .is_ok());
    /// ```
    pub fn confirmation_provider(mut self, provider: Arc<dyn ConfirmationProvider>) -> Self {
        self.tools.confirmations = Some(provider);
        self
    }

    /// Registers a tool: a [`TypedTool`](reel_tools::TypedTool) (typed arguments,
    /// schema generated), a [`SimpleTool`](reel_tools::SimpleTool) (raw JSON), or
    /// any [`ToolFunction`]. Its declaration joins the setup; the runtime answers its calls.
    ///
    /// ```
    /// use reel_tools::SimpleTool;
    /// use reel_fluent::Live;
    /// use serde_json::json;
    ///
    /// let clock = SimpleTool::new("get_time", "The time.", None, |_args, _ctx| async { Ok(json!({"time": "19:30"})) });
    /// let config = Live::builder().tool(clock).session_config().unwrap();
    /// assert_eq!(config.function_names(), ["get_time"]);
    /// ```
    pub fn tool(mut self, tool: impl ToolFunction) -> Self {
        self.tools.sources.push(Source::One(Arc::new(tool)));
        self
    }

    /// Registers the text agent `agent` as the tool `name` (a
    /// [`TextAgentTool`](reel_agents::TextAgentTool)): the model calls it with
    /// `{"request": "…"}`, the agent runs over the session's state (the builder's
    /// [`state`](LiveBuilder::state), made here if none was given: give yours before this
    /// call) and its output is the tool's result. Like every tool response it is on the
    /// wire log; a replay runs the tool again and compares, so give the agent a model
    /// wrapped in the session's cassette for its calls to replay from there.
    ///
    /// ```
    /// use reel_agents::FnTextAgent;
    /// use reel_fluent::Live;
    ///
    /// let verifier = FnTextAgent::new("verifier", |_state| Ok("verified".to_owned()));
    /// let config = Live::builder()
    ///     .agent_tool("verify_identity", "Verify the caller", verifier)
    ///     .session_config()
    ///     .unwrap();
    /// assert_eq!(config.function_names(), ["verify_identity"]);
    /// ```
    pub fn agent_tool(
        mut self,
        name: impl Into<String>,
        description: impl Into<String>,
        agent: impl reel_agents::TextAgent,
    ) -> Self {
        let state = self
            .state
            .get_or_insert_with(reel_actors::state::State::new)
            .clone();
        let tool = reel_agents::TextAgentTool::new(name, description, Arc::new(agent), state);
        self.tools.sources.push(Source::One(Arc::new(tool)));
        self
    }

    /// Registers a [`StreamingTool`]: it runs in the background and each result it sends
    /// reaches the model as it comes (`willContinue` responses, scheduled when the model
    /// is idle unless [`tool_background`](LiveBuilder::tool_background) says otherwise).
    pub fn streaming_tool(mut self, tool: impl StreamingTool) -> Self {
        self.tools
            .sources
            .push(Source::One(Arc::new(Streaming(Arc::new(tool)))));
        self
    }

    /// Registers an [`InputStreamingTool`]: a streaming tool whose calls also receive the
    /// user's live input (audio, video, streamed text, activity signals) from the call on,
    /// in a replay the recorded input in the same order.
    pub fn input_streaming_tool(mut self, tool: impl InputStreamingTool) -> Self {
        self.tools
            .sources
            .push(Source::One(Arc::new(InputStreaming(Arc::new(tool)))));
        self
    }

    /// Registers every tool of `dispatcher`, each with its mode and time limit. A
    /// dispatcher given before any other tool is used as it is (its default timeout
    /// included); later tools join it.
    ///
    /// ```
    /// use reel_tools::{SimpleTool, ToolDispatcher};
    /// use reel_fluent::Live;
    /// use serde_json::json;
    ///
    /// let mut tools = ToolDispatcher::new();
    /// tools.register(SimpleTool::new("get_time", "The time.", None, |_, _| async { Ok(json!({})) }))?;
    /// let config = Live::builder().tools(tools).session_config().unwrap();
    /// assert_eq!(config.function_names(), ["get_time"]);
    /// # Ok::<(), reel_tools::DispatchError>(())
    /// ```
    pub fn tools(mut self, dispatcher: ToolDispatcher) -> Self {
        self.tools.sources.push(Source::Dispatcher(dispatcher));
        self
    }

    /// Runs tool `name` in the background: the model gets a "running" answer at once and
    /// keeps talking, and the result follows when the model is idle
    /// ([`Scheduling::WhenIdle`]). Google AI only (Vertex AI runs it as a standard tool).
    ///
    /// ```
    /// use reel_tools::SimpleTool;
    /// use reel_fluent::Live;
    /// use reel_protocol::Behavior;
    /// use serde_json::json;
    ///
    /// let search = SimpleTool::new("search_flights", "Searches flights.", None, |_, _| async { Ok(json!([])) });
    /// let config = Live::builder().tool(search).tool_background("search_flights").session_config().unwrap();
    /// let tools = config.setup().tools.as_ref().unwrap();
    /// let declaration = &tools[0].function_declarations.as_ref().unwrap()[0];
    /// assert_eq!(declaration.behavior, Some(Behavior::NonBlocking));
    /// ```
    pub fn tool_background(self, name: impl Into<String>) -> Self {
        self.background(name.into(), Scheduling::WhenIdle, None, "tool_background")
    }

    /// Runs tool `name` in the background, its result delivered with `scheduling`
    /// (interrupt the model, wait until it is idle, or add silently).
    ///
    /// ```
    /// use reel_tools::SimpleTool;
    /// use reel_fluent::Live;
    /// use reel_protocol::Scheduling;
    /// use serde_json::json;
    ///
    /// let search = SimpleTool::new("search_flights", "Searches flights.", None, |_, _| async { Ok(json!([])) });
    /// let builder = Live::builder()
    ///     .tool(search)
    ///     .tool_background_with_scheduling("search_flights", Scheduling::Interrupt);
    /// assert!(builder.validate().is_ok());
    /// ```
    pub fn tool_background_with_scheduling(
        self,
        name: impl Into<String>,
        scheduling: Scheduling,
    ) -> Self {
        self.background(
            name.into(),
            scheduling,
            None,
            "tool_background_with_scheduling",
        )
    }

    /// Runs tool `name` in the background, its responses ("running", the result, an
    /// error, a cancellation) shaped by `formatter`.
    ///
    /// ```
    /// use std::sync::Arc;
    /// use reel_tools::{DefaultResultFormatter, SimpleTool};
    /// use reel_fluent::Live;
    /// use reel_protocol::Scheduling;
    /// use serde_json::json;
    ///
    /// let search = SimpleTool::new("search_flights", "Searches flights.", None, |_, _| async { Ok(json!([])) });
    /// let builder = Live::builder().tool(search).tool_background_with_formatter(
    ///     "search_flights",
    ///     Scheduling::WhenIdle,
    ///     Arc::new(DefaultResultFormatter),
    /// );
    /// assert!(builder.validate().is_ok());
    /// ```
    pub fn tool_background_with_formatter(
        self,
        name: impl Into<String>,
        scheduling: Scheduling,
        formatter: Arc<dyn ResultFormatter>,
    ) -> Self {
        self.background(
            name.into(),
            scheduling,
            Some(formatter),
            "tool_background_with_formatter",
        )
    }

    /// How long a call to tool `name` may run before it is aborted and the model told it
    /// timed out (the default is 30 s).
    ///
    /// ```
    /// use std::time::Duration;
    /// use reel_fluent::Live;
    ///
    /// let error = Live::builder().tool_timeout("get_weather", Duration::from_secs(5)).validate().unwrap_err();
    /// assert_eq!(
    ///     error.to_string(),
    ///     "`.tool_timeout(\"get_weather\")`: no tool named `get_weather` is registered; registered tools: (none)"
    /// );
    /// ```
    pub fn tool_timeout(mut self, name: impl Into<String>, timeout: Duration) -> Self {
        self.tools.settings.push(Setting::Timeout {
            name: name.into(),
            timeout,
        });
        self
    }

    fn background(
        mut self,
        name: String,
        scheduling: Scheduling,
        formatter: Option<Arc<dyn ResultFormatter>>,
        call: &'static str,
    ) -> Self {
        self.tools.settings.push(Setting::Mode {
            name,
            mode: ToolExecutionMode::Background {
                scheduling,
                formatter,
            },
            call,
        });
        self
    }
}

#[cfg(test)]
mod merge_tests {
    use reel_tools::{BargeIn, SimpleTool};
    use serde_json::json;

    use super::*;

    #[test]
    fn a_merged_dispatcher_keeps_its_limits_and_barge_in_policies() {
        let mut other = ToolDispatcher::new().max_concurrent(3);
        for name in ["read_out", "book"] {
            other
                .register(SimpleTool::new(
                    name,
                    "A tool.",
                    None,
                    |_args, _ctx| async { Ok(json!({})) },
                ))
                .unwrap();
        }
        other.set_max_concurrent("book", 1).unwrap();
        other.set_barge_in("read_out", BargeIn::Cancel).unwrap();
        let mut merged = ToolDispatcher::new();
        merge(&mut merged, &other).unwrap();
        assert_eq!(merged.session_limit(), Some(3));
        assert_eq!(
            (merged.tool_limit("book"), merged.tool_limit("read_out")),
            (Some(1), None)
        );
        assert_eq!(
            (merged.barge_in("read_out"), merged.barge_in("book")),
            (BargeIn::Cancel, BargeIn::Keep)
        );
    }
}
