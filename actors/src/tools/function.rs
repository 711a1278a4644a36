//! The one trait every tool implements.

use futures_util::future::BoxFuture;
use reel_protocol::{Args, FunctionDeclaration};
use serde_json::Value;

use super::{ToolContext, ToolError};

/// A function the model can call.
///
/// Object safe: the dispatcher keeps tools as `Arc<dyn ToolFunction>`. Most tools are built
/// with `reel_tools::SimpleTool` (JSON in, JSON out) or `reel_tools::TypedTool` (typed
/// arguments, schema generated); implement the trait by hand for tools that carry their own
/// state.
///
/// ```
/// use futures_util::future::{BoxFuture, FutureExt};
/// use reel_actors::tools::{ToolContext, ToolError, ToolFunction};
/// use serde_json::{Value, json};
///
/// struct Clock;
///
/// impl ToolFunction for Clock {
///     fn name(&self) -> &str {
///         "get_time"
///     }
///     fn description(&self) -> &str {
///         "The current time in the restaurant's time zone."
///     }
///     fn parameters(&self) -> Option<Value> {
///         None
///     }
///     fn call(&self, _args: Value, _ctx: ToolContext) -> BoxFuture<'static, Result<Value, ToolError>> {
///         async { Ok(json!({ "time": "19:30" })) }.boxed()
///     }
/// }
///
/// let declaration = Clock.declaration();
/// assert_eq!(declaration.name.as_deref(), Some("get_time"));
/// assert_eq!(declaration.parameters, None);
/// ```
pub trait ToolFunction: Send + Sync + 'static {
    /// The name the model calls the tool by (unique within a dispatcher).
    fn name(&self) -> &str;

    /// What the tool does, for the model.
    fn description(&self) -> &str;

    /// The parameters, as the Live API's OpenAPI-style object schema; `None` for a tool
    /// without parameters.
    fn parameters(&self) -> Option<Value>;

    /// Runs one call. In a session the future runs on the call's own task, under a timeout
    /// and the context's cancellation token, so it must own everything it uses.
    fn call(&self, args: Value, ctx: ToolContext) -> BoxFuture<'static, Result<Value, ToolError>>;

    /// Runs one call with its arguments as the frame carried them: the dispatcher calls
    /// this. The default reads them into a [`Value`] and runs [`ToolFunction::call`]; a
    /// tool that reads its arguments into a type (`reel_tools::TypedTool`) overrides it to
    /// read them straight from the JSON text, with no value tree (decision 0073).
    fn call_args(
        &self,
        args: Args,
        ctx: ToolContext,
    ) -> BoxFuture<'static, Result<Value, ToolError>> {
        self.call(args.into_value(), ctx)
    }

    /// The question to confirm before each call runs, for a tool that must be confirmed
    /// (`reel_tools::ConfirmTool` marks one); `None` for the others.
    fn confirmation(&self) -> Option<&str> {
        None
    }

    /// Whether the tool streams results while it runs ([`StreamingTool`](super::StreamingTool)):
    /// the dispatcher then runs it in the background.
    fn streams(&self) -> bool {
        false
    }

    /// For a tool that consumes the user's live input while it runs
    /// ([`InputStreamingTool`](super::InputStreamingTool)): how many pieces its queue holds.
    /// `None` (the default) for a tool that takes no input.
    fn input_capacity(&self) -> Option<usize> {
        None
    }

    /// The declaration sent in the setup frame: name, description and parameters.
    /// (The dispatcher adds `behavior: NON_BLOCKING` for background tools.)
    fn declaration(&self) -> FunctionDeclaration {
        FunctionDeclaration {
            name: Some(self.name().to_owned()),
            description: Some(self.description().to_owned()),
            parameters: self.parameters(),
            ..FunctionDeclaration::default()
        }
    }
}
