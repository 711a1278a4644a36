//! The registry of a session's tools: names, declarations, timeouts, execution modes.

use std::collections::BTreeMap;
use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use reel_protocol::{Behavior, FunctionDeclaration, Scheduling};

use tokio::sync::Semaphore;

use super::{
    BargeIn, ConfirmationProvider, DispatchError, ResultFormatter, ToolExecutionMode, ToolFunction,
    validate_name,
};

/// How long a call may run when neither the dispatcher nor the tool says otherwise.
pub const DEFAULT_TOOL_TIMEOUT: Duration = Duration::from_secs(30);

/// One registered tool and its settings.
#[derive(Clone)]
struct Entry {
    tool: Arc<dyn ToolFunction>,
    mode: ToolExecutionMode,
    timeout: Option<Duration>,
    /// At most this many calls of the tool run at once (a permit each), if limited.
    limit: Option<(usize, Arc<Semaphore>)>,
    barge_in: BargeIn,
}

/// The tools of a session, by name.
///
/// Kept in a `BTreeMap`, so [`declarations`](Self::declarations) and [`names`](Self::names)
/// come out sorted by name: the setup frame's bytes never depend on hash order or on the
/// order tools were registered in. Tools are fixed at connect (the Live API does not change
/// them mid-session). Running a call is [`run_call`](super::run_call).
///
/// ```
/// use std::time::Duration;
/// use reel_actors::tools::ToolDispatcher;
/// use reel_protocol::{Behavior, Scheduling};
/// use reel_tools::SimpleTool;
/// use serde_json::json;
///
/// let mut tools = ToolDispatcher::new().with_timeout(Duration::from_secs(10));
/// tools.register(SimpleTool::new("get_weather", "The weather.", None, |_, _| async { Ok(json!({})) }))?;
/// tools.register(SimpleTool::new("book_table", "Books a table.", None, |_, _| async { Ok(json!({})) }))?;
/// tools.set_background("book_table", Scheduling::WhenIdle)?;
/// tools.set_timeout("get_weather", Duration::from_secs(2))?;
///
/// assert_eq!(tools.names(), ["book_table", "get_weather"]);
/// let declarations = tools.declarations();
/// assert_eq!(declarations[0].behavior, Some(Behavior::NonBlocking));
/// assert_eq!(declarations[1].behavior, None);
/// assert_eq!(tools.timeout("book_table"), Duration::from_secs(10));
/// assert_eq!(tools.timeout("get_weather"), Duration::from_secs(2));
/// # Ok::<(), reel_actors::tools::DispatchError>(())
/// ```
#[derive(Clone)]
pub struct ToolDispatcher {
    tools: BTreeMap<String, Entry>,
    default_timeout: Duration,
    /// At most this many calls run at once in the session, whatever their tool.
    limit: Option<(usize, Arc<Semaphore>)>,
    /// Decides the calls of tools that must be confirmed.
    confirmations: Option<Arc<dyn ConfirmationProvider>>,
}

impl Default for ToolDispatcher {
    fn default() -> Self {
        ToolDispatcher::new()
    }
}

impl ToolDispatcher {
    /// No tools; calls time out after [`DEFAULT_TOOL_TIMEOUT`] (30 s).
    pub fn new() -> Self {
        ToolDispatcher {
            tools: BTreeMap::new(),
            default_timeout: DEFAULT_TOOL_TIMEOUT,
            limit: None,
            confirmations: None,
        }
    }

    /// Asks `provider` before each call of a tool that must be confirmed
    /// ([`ToolFunction::confirmation`](super::ToolFunction::confirmation), e.g.
    /// `reel_tools::ConfirmTool`).
    #[must_use]
    pub fn with_confirmation_provider(mut self, provider: Arc<dyn ConfirmationProvider>) -> Self {
        self.confirmations = Some(provider);
        self
    }

    /// [`with_confirmation_provider`](Self::with_confirmation_provider), in place.
    pub fn set_confirmation_provider(&mut self, provider: Arc<dyn ConfirmationProvider>) {
        self.confirmations = Some(provider);
    }

    /// The provider asked before calls of tools that must be confirmed, if set.
    pub fn confirmation_provider(&self) -> Option<&Arc<dyn ConfirmationProvider>> {
        self.confirmations.as_ref()
    }

    /// The tools that must be confirmed before they run, sorted.
    pub fn confirmed_tools(&self) -> Vec<String> {
        self.tools
            .iter()
            .filter(|(_, entry)| entry.tool.confirmation().is_some())
            .map(|(name, _)| name.clone())
            .collect()
    }

    /// Lets at most `calls` tool calls run at once in the session; calls past it wait, in
    /// the order they were made, for one to finish (the wait does not count against the
    /// tool's timeout; a cancellation ends it). At least 1. The limit belongs to this
    /// dispatcher: clones share it.
    #[must_use]
    pub fn max_concurrent(mut self, calls: usize) -> Self {
        let calls = calls.max(1);
        self.limit = Some((calls, Arc::new(Semaphore::new(calls))));
        self
    }

    /// The session's limit on calls running at once, if set.
    pub fn session_limit(&self) -> Option<usize> {
        self.limit.as_ref().map(|(calls, _)| *calls)
    }

    /// The limit on calls of `name` running at once, if set.
    pub fn tool_limit(&self, name: &str) -> Option<usize> {
        self.tools
            .get(name)
            .and_then(|entry| entry.limit.as_ref())
            .map(|(calls, _)| *calls)
    }

    /// Lets at most `calls` calls of the tool `name` run at once (see
    /// [`ToolDispatcher::max_concurrent`]).
    pub fn set_max_concurrent(&mut self, name: &str, calls: usize) -> Result<(), DispatchError> {
        let calls = calls.max(1);
        self.entry_mut(name)?.limit = Some((calls, Arc::new(Semaphore::new(calls))));
        Ok(())
    }

    /// Sets what the tool's running calls do when the user barges in ([`BargeIn`]).
    pub fn set_barge_in(&mut self, name: &str, barge_in: BargeIn) -> Result<(), DispatchError> {
        self.entry_mut(name)?.barge_in = barge_in;
        Ok(())
    }

    /// What the running calls of `name` do on a barge-in ([`BargeIn::Keep`] for an unknown
    /// name).
    pub fn barge_in(&self, name: &str) -> BargeIn {
        self.tools
            .get(name)
            .map(|entry| entry.barge_in)
            .unwrap_or_default()
    }

    /// The permits a call of `name` must hold to run: the tool's, then the session's.
    pub(crate) fn limits(&self, name: &str) -> [Option<Arc<Semaphore>>; 2] {
        [
            self.tools
                .get(name)
                .and_then(|entry| entry.limit.as_ref())
                .map(|(_, limit)| Arc::clone(limit)),
            self.limit.as_ref().map(|(_, limit)| Arc::clone(limit)),
        ]
    }

    /// Sets the timeout of every tool that has none of its own.
    #[must_use]
    pub fn with_timeout(mut self, timeout: Duration) -> Self {
        self.default_timeout = timeout;
        self
    }

    /// Registers a tool (standard mode, default timeout).
    ///
    /// Fails if the name is taken or is not one the Live API accepts.
    pub fn register(&mut self, tool: impl ToolFunction) -> Result<(), DispatchError> {
        self.register_arc(Arc::new(tool))
    }

    /// Registers a shared tool (standard mode, default timeout).
    pub fn register_arc(&mut self, tool: Arc<dyn ToolFunction>) -> Result<(), DispatchError> {
        let name = tool.name().to_owned();
        if let Err(reason) = validate_name(&name) {
            return Err(DispatchError::InvalidName { name, reason });
        }
        if self.tools.contains_key(&name) {
            return Err(DispatchError::Duplicate { name });
        }
        // A streaming tool runs in the background, so that its results can continue.
        let mode = if tool.streams() {
            ToolExecutionMode::background(Scheduling::WhenIdle)
        } else {
            ToolExecutionMode::Standard
        };
        self.tools.insert(
            name,
            Entry {
                tool,
                mode,
                timeout: None,
                limit: None,
                barge_in: BargeIn::Keep,
            },
        );
        Ok(())
    }

    /// Registers a [`StreamingTool`](super::StreamingTool): in the background, its results
    /// scheduled when the model is idle (change it with
    /// [`set_background`](Self::set_background)).
    pub fn register_streaming(
        &mut self,
        tool: Arc<dyn super::StreamingTool>,
    ) -> Result<(), DispatchError> {
        self.register_arc(Arc::new(super::streaming::Streaming(tool)))
    }

    /// Registers an [`InputStreamingTool`](super::InputStreamingTool): like a streaming
    /// tool, and each call receives the user's live input while it runs.
    pub fn register_input_streaming(
        &mut self,
        tool: Arc<dyn super::InputStreamingTool>,
    ) -> Result<(), DispatchError> {
        self.register_arc(Arc::new(super::InputStreaming(tool)))
    }

    /// Whether a registered tool consumes the user's live input (the session then hands it
    /// to their calls).
    pub fn takes_input(&self) -> bool {
        self.tools
            .values()
            .any(|entry| entry.tool.input_capacity().is_some())
    }

    /// Sets the timeout of one tool.
    pub fn set_timeout(&mut self, name: &str, timeout: Duration) -> Result<(), DispatchError> {
        self.entry_mut(name)?.timeout = Some(timeout);
        Ok(())
    }

    /// Sets how a tool's calls are answered.
    pub fn set_mode(&mut self, name: &str, mode: ToolExecutionMode) -> Result<(), DispatchError> {
        self.entry_mut(name)?.mode = mode;
        Ok(())
    }

    /// Runs a tool in the background with the default formatter: its declaration gets
    /// `behavior: NON_BLOCKING`, and its result is delivered with `scheduling`.
    pub fn set_background(
        &mut self,
        name: &str,
        scheduling: Scheduling,
    ) -> Result<(), DispatchError> {
        self.set_mode(name, ToolExecutionMode::background(scheduling))
    }

    /// Runs a tool in the background with a formatter of its own.
    pub fn set_background_with_formatter(
        &mut self,
        name: &str,
        scheduling: Scheduling,
        formatter: Arc<dyn ResultFormatter>,
    ) -> Result<(), DispatchError> {
        self.set_mode(
            name,
            ToolExecutionMode::Background {
                scheduling,
                formatter: Some(formatter),
            },
        )
    }

    /// The tool registered under `name`.
    pub fn get(&self, name: &str) -> Option<&Arc<dyn ToolFunction>> {
        self.tools.get(name).map(|entry| &entry.tool)
    }

    /// Replaces the tool registered under `name` with `wrap` of it (the same name; its
    /// mode, timeout, limit and barge-in policy kept): how a governed flow marks its
    /// `commit` tools as needing confirmation. Returns whether `name` was registered.
    pub fn wrap_tool(
        &mut self,
        name: &str,
        wrap: impl FnOnce(Arc<dyn ToolFunction>) -> Arc<dyn ToolFunction>,
    ) -> bool {
        match self.tools.get_mut(name) {
            Some(entry) => {
                entry.tool = wrap(Arc::clone(&entry.tool));
                true
            }
            None => false,
        }
    }

    /// Whether a tool of that name is registered.
    pub fn contains(&self, name: &str) -> bool {
        self.tools.contains_key(name)
    }

    /// The registered names, sorted.
    pub fn names(&self) -> Vec<String> {
        self.tools.keys().cloned().collect()
    }

    /// How many tools are registered.
    pub fn len(&self) -> usize {
        self.tools.len()
    }

    /// Whether no tool is registered.
    pub fn is_empty(&self) -> bool {
        self.tools.is_empty()
    }

    /// The execution mode of `name` ([`ToolExecutionMode::Standard`] for an unknown name:
    /// the error response to an unknown tool is a standard one).
    pub fn mode(&self, name: &str) -> ToolExecutionMode {
        self.tools
            .get(name)
            .map(|entry| entry.mode.clone())
            .unwrap_or_default()
    }

    /// The time limit of a call to `name`: its own timeout, else the dispatcher's.
    pub fn timeout(&self, name: &str) -> Duration {
        self.tools
            .get(name)
            .and_then(|entry| entry.timeout)
            .unwrap_or(self.default_timeout)
    }

    /// The timeout of tools without one of their own.
    pub fn default_timeout(&self) -> Duration {
        self.default_timeout
    }

    /// The declarations for the setup frame, sorted by name; background tools say
    /// `behavior: NON_BLOCKING`.
    pub fn declarations(&self) -> Vec<FunctionDeclaration> {
        self.tools
            .values()
            .map(|entry| {
                let mut declaration = entry.tool.declaration();
                if entry.mode.is_background() {
                    declaration.behavior = Some(Behavior::NonBlocking);
                }
                declaration
            })
            .collect()
    }

    fn entry_mut(&mut self, name: &str) -> Result<&mut Entry, DispatchError> {
        let available = if self.tools.contains_key(name) {
            Vec::new()
        } else {
            self.names()
        };
        self.tools
            .get_mut(name)
            .ok_or_else(|| DispatchError::UnknownTool {
                name: name.to_owned(),
                available,
            })
    }
}

impl fmt::Debug for ToolDispatcher {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let tools: BTreeMap<&str, (&ToolExecutionMode, Option<Duration>)> = self
            .tools
            .iter()
            .map(|(name, entry)| (name.as_str(), (&entry.mode, entry.timeout)))
            .collect();
        f.debug_struct("ToolDispatcher")
            .field("tools", &tools)
            .field("default_timeout", &self.default_timeout)
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use futures_util::FutureExt;
    use futures_util::future::BoxFuture;
    use serde_json::{Value, json};

    use super::super::{ToolContext, ToolError};
    use super::*;

    /// A tool with a name and a description, answering `{}`: the tool kinds live above the
    /// tree (`reel-tools`), so the dispatcher's own tests declare theirs.
    struct Named {
        name: String,
        description: String,
    }

    impl ToolFunction for Named {
        fn name(&self) -> &str {
            &self.name
        }

        fn description(&self) -> &str {
            &self.description
        }

        fn parameters(&self) -> Option<Value> {
            None
        }

        fn call(&self, _: Value, _: ToolContext) -> BoxFuture<'static, Result<Value, ToolError>> {
            async { Ok(json!({})) }.boxed()
        }
    }

    fn tool(name: &str) -> Named {
        Named {
            name: name.into(),
            description: format!("The {name} tool."),
        }
    }

    #[test]
    fn duplicate_names_are_refused() {
        let mut tools = ToolDispatcher::new();
        assert_eq!(tools.register(tool("get_weather")), Ok(()));
        assert_eq!(
            tools.register(tool("get_weather")),
            Err(DispatchError::Duplicate {
                name: "get_weather".into()
            })
        );
        assert_eq!(tools.len(), 1);
    }

    #[test]
    fn invalid_names_are_refused() {
        let mut tools = ToolDispatcher::new();
        assert_eq!(
            tools.register(tool("get weather")),
            Err(DispatchError::InvalidName {
                name: "get weather".into(),
                reason: "only letters, digits, `_`, `.`, `:` and `-` are allowed",
            })
        );
        assert!(tools.is_empty());
    }

    #[test]
    fn settings_for_unknown_tools_are_refused() {
        let mut tools = ToolDispatcher::new();
        assert_eq!(tools.register(tool("b")), Ok(()));
        assert_eq!(tools.register(tool("a")), Ok(()));
        let unknown = Err(DispatchError::UnknownTool {
            name: "c".into(),
            available: vec!["a".into(), "b".into()],
        });
        assert_eq!(tools.set_timeout("c", Duration::from_secs(1)), unknown);
        assert_eq!(tools.set_background("c", Scheduling::Silent), unknown);
    }

    #[test]
    fn declarations_are_sorted_and_background_ones_non_blocking() {
        let mut tools = ToolDispatcher::new();
        for name in ["search_flights", "book_table", "get_weather"] {
            assert_eq!(tools.register(tool(name)), Ok(()));
        }
        assert_eq!(
            tools.set_background("search_flights", Scheduling::WhenIdle),
            Ok(())
        );
        assert_eq!(
            serde_json::to_string(&tools.declarations()).ok().as_deref(),
            Some(concat!(
                r#"[{"name":"book_table","description":"The book_table tool."},"#,
                r#"{"name":"get_weather","description":"The get_weather tool."},"#,
                r#"{"name":"search_flights","description":"The search_flights tool.","behavior":"NON_BLOCKING"}]"#
            ))
        );
        assert_eq!(
            tools.names(),
            ["book_table", "get_weather", "search_flights"]
        );
        assert!(tools.mode("search_flights").is_background());
        assert_eq!(
            tools.mode("search_flights").scheduling(),
            Some(&Scheduling::WhenIdle)
        );
        assert!(!tools.mode("book_table").is_background());
        assert!(!tools.mode("nope").is_background());
    }

    #[test]
    fn timeouts_fall_back_to_the_dispatcher_default() {
        let mut tools = ToolDispatcher::new();
        assert_eq!(tools.register(tool("fast")), Ok(()));
        assert_eq!(tools.register(tool("slow")), Ok(()));
        assert_eq!(tools.timeout("fast"), Duration::from_secs(30));
        assert_eq!(tools.set_timeout("slow", Duration::from_secs(90)), Ok(()));
        assert_eq!(tools.timeout("slow"), Duration::from_secs(90));
        let tools = tools.with_timeout(Duration::from_secs(5));
        assert_eq!(tools.timeout("fast"), Duration::from_secs(5));
        assert_eq!(tools.timeout("slow"), Duration::from_secs(90));
        assert_eq!(tools.timeout("unknown"), Duration::from_secs(5));
    }
}
