//! `T::`: the tools an agent holds, built from `reel-tools`' kinds, and the Gemini
//! built-in tools' declarations.

use std::collections::BTreeMap;
use std::fmt;
use std::future::Future;
use std::ops::BitOr;
use std::sync::Arc;
use std::time::Duration;

use reel_protocol::Tool;
use reel_tools::{
    CachedTool, ConfirmTool, DispatchError, SimpleTool, ToolContext, ToolDispatcher, ToolError,
    ToolFunction,
};
use serde_json::{Value, json};

/// A tool the Gemini API runs itself, declared in the request's `tools` list.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BuiltinTool {
    /// `{"googleSearch": {}}`
    GoogleSearch,
    /// `{"codeExecution": {}}`
    CodeExecution,
    /// `{"urlContext": {}}`
    UrlContext,
}

impl BuiltinTool {
    /// Its entry in a request's `tools` list.
    pub fn tool(self) -> Tool {
        let on = Some(json!({}));
        match self {
            BuiltinTool::GoogleSearch => Tool {
                google_search: on,
                ..Tool::default()
            },
            BuiltinTool::CodeExecution => Tool {
                code_execution: on,
                ..Tool::default()
            },
            BuiltinTool::UrlContext => Tool {
                url_context: on,
                ..Tool::default()
            },
        }
    }

    /// Its declaration, as the API takes it in `tools`.
    pub fn declaration(self) -> Value {
        match self {
            BuiltinTool::GoogleSearch => json!({"googleSearch": {}}),
            BuiltinTool::CodeExecution => json!({"codeExecution": {}}),
            BuiltinTool::UrlContext => json!({"urlContext": {}}),
        }
    }
}

/// An agent's tools: function tools (run by reel, through a [`ToolDispatcher`]) and
/// built-in tools (run by the API). `|` joins two sets.
///
/// **Where they plug in.** A composed agent offers its function tools in every request and
/// runs the model's calls of them through [`LlmTextAgent`](reel_agents::LlmTextAgent)'s tool
/// loop ([`Tools::dispatcher`]); its built-in tools are declared after them (each its own
/// `tools` entry) and run by the API. The same set gives a live session its tools
/// (`Live::builder().tool(..)` per function).
///
/// ```
/// use reel_compose::T;
/// use serde_json::json;
///
/// let tools = T::simple("get_weather", "Get weather for a city", |args| async move {
///         Ok(json!({"temp": 22, "city": args["city"]}))
///     })
///     | T::google_search()
///     | T::code_execution();
/// assert_eq!(tools.len(), 3);
/// assert_eq!(tools.names(), ["get_weather"]);
/// assert_eq!(tools.declarations(), [json!({"googleSearch": {}}), json!({"codeExecution": {}})]);
/// ```
#[derive(Clone, Default)]
pub struct Tools {
    functions: Vec<Arc<dyn ToolFunction>>,
    builtins: Vec<BuiltinTool>,
    timeouts: BTreeMap<String, Duration>,
}

impl fmt::Debug for Tools {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Tools")
            .field("functions", &self.names())
            .field("builtins", &self.builtins)
            .field("timeouts", &self.timeouts)
            .finish()
    }
}

impl Tools {
    fn functions_of(functions: Vec<Arc<dyn ToolFunction>>) -> Self {
        Tools {
            functions,
            ..Tools::default()
        }
    }

    fn builtin(tool: BuiltinTool) -> Self {
        Tools {
            builtins: vec![tool],
            ..Tools::default()
        }
    }

    /// How many tools, function and built-in.
    pub fn len(&self) -> usize {
        self.functions.len() + self.builtins.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The function tools' names, in order.
    pub fn names(&self) -> Vec<String> {
        self.functions.iter().map(|t| t.name().to_owned()).collect()
    }

    /// The function tools.
    pub fn functions(&self) -> &[Arc<dyn ToolFunction>] {
        &self.functions
    }

    /// The built-in tools.
    pub fn builtins(&self) -> &[BuiltinTool] {
        &self.builtins
    }

    /// The built-in tools' declarations.
    pub fn declarations(&self) -> Vec<Value> {
        self.builtins.iter().map(|t| t.declaration()).collect()
    }

    /// The per-tool time limits set by [`T::timeout`].
    pub fn timeouts(&self) -> &BTreeMap<String, Duration> {
        &self.timeouts
    }

    /// A dispatcher holding the function tools, with [`T::timeout`]'s limits set (the
    /// dispatcher enforces them: a call past its limit is `ToolError::Timeout`). Two tools
    /// of one name are the dispatcher's [`DispatchError`].
    pub fn dispatcher(&self) -> Result<ToolDispatcher, DispatchError> {
        let mut dispatcher = ToolDispatcher::new();
        for tool in &self.functions {
            dispatcher.register_arc(Arc::clone(tool))?;
        }
        for (name, limit) in &self.timeouts {
            dispatcher.set_timeout(name, *limit)?;
        }
        Ok(dispatcher)
    }

    fn map_functions(mut self, f: impl Fn(Arc<dyn ToolFunction>) -> Arc<dyn ToolFunction>) -> Self {
        self.functions = self.functions.into_iter().map(f).collect();
        self
    }
}

impl BitOr for Tools {
    type Output = Tools;

    /// Both sets, `self`'s first.
    fn bitor(mut self, rhs: Tools) -> Tools {
        self.functions.extend(rhs.functions);
        self.builtins.extend(rhs.builtins);
        self.timeouts.extend(rhs.timeouts);
        self
    }
}

/// The `T::` namespace: tool sets ([`Tools`]) and per-tool policies.
#[derive(Debug, Clone, Copy)]
pub struct T;

impl T {
    /// A tool from a name, a description and an async closure over the call's arguments
    /// (a [`SimpleTool`] with no declared parameters).
    pub fn simple<F, Fut>(name: &str, description: &str, f: F) -> Tools
    where
        F: Fn(Value) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<Value, ToolError>> + Send + 'static,
    {
        let f = Arc::new(f);
        let tool = SimpleTool::new(name, description, None, move |args, _ctx: ToolContext| {
            f(args)
        });
        Tools::functions_of(vec![Arc::new(tool)])
    }

    /// An existing tool.
    pub fn function(tool: Arc<dyn ToolFunction>) -> Tools {
        Tools::functions_of(vec![tool])
    }

    /// Several existing tools as one set.
    pub fn toolset(tools: Vec<Arc<dyn ToolFunction>>) -> Tools {
        Tools::functions_of(tools)
    }

    /// The tools of an MCP server: `reel_tools::mcp::McpToolset::into_tools()` (the `mcp`
    /// feature of `reel-tools`), which are function tools like any other.
    pub fn mcp(tools: Vec<Arc<dyn ToolFunction>>) -> Tools {
        Tools::functions_of(tools)
    }

    /// Google Search, run by the API.
    pub fn google_search() -> Tools {
        Tools::builtin(BuiltinTool::GoogleSearch)
    }

    /// Code execution, run by the API.
    pub fn code_execution() -> Tools {
        Tools::builtin(BuiltinTool::CodeExecution)
    }

    /// URL context fetching, run by the API.
    pub fn url_context() -> Tools {
        Tools::builtin(BuiltinTool::UrlContext)
    }

    /// Each function tool of `tools` keeping its successful results by arguments
    /// ([`CachedTool`]).
    pub fn cached(tools: Tools) -> Tools {
        tools.map_functions(|tool| Arc::new(CachedTool::wrap(tool)))
    }

    /// Each function tool of `tools` asking the dispatcher's confirmation provider first,
    /// with `message` ([`ConfirmTool`]).
    pub fn confirm(tools: Tools, message: &str) -> Tools {
        tools.map_functions(|tool| Arc::new(ConfirmTool::wrap(tool, message)))
    }

    /// Each function tool of `tools` limited to `limit` per call, enforced by the
    /// dispatcher [`Tools::dispatcher`] builds (its deadline is the session tree's,
    /// recorded with the call's outcome like every tool result).
    pub fn timeout(mut tools: Tools, limit: Duration) -> Tools {
        for name in tools.names() {
            tools.timeouts.insert(name, limit);
        }
        tools
    }
}
