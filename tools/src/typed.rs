//! A tool whose arguments are a Rust type: the schema is generated from the type, the
//! arguments are checked by deserializing them.

use std::fmt;
use std::future::Future;
use std::sync::Arc;

use futures_util::future::{BoxFuture, FutureExt};
use schemars::JsonSchema;
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

use reel_protocol::Args as CallArgs;

use super::{ToolContext, ToolError, ToolFunction, parameters_for};

/// A tool taking typed arguments.
///
/// The parameters schema comes from `Args`'s [`JsonSchema`] (see
/// [`parameters_for`](super::parameters_for): doc comments become descriptions, `Option`
/// and `#[serde(default)]` fields are not required). Arguments that do not deserialize into
/// `Args` never reach the closure: the call fails with [`ToolError::InvalidArgs`] carrying
/// serde's message (with the path to the bad field, e.g. "party_size: invalid type: string
/// \"four\", expected u8"). The result is any `Serialize` value.
///
/// In a session the arguments are read into `Args` straight from the `toolCall` frame's JSON
/// text ([`ToolFunction::call_args`]): no `serde_json::Value` is built for them (decision
/// 0073). [`ToolFunction::call`] with a `Value` reads the same `Args`.
///
/// ```
/// use reel_tools::{ToolFunction, TypedTool};
/// use schemars::JsonSchema;
/// use serde::Deserialize;
/// use serde_json::json;
///
/// #[derive(Deserialize, JsonSchema)]
/// struct WeatherArgs {
///     /// The city to look up.
///     city: String,
/// }
///
/// let weather = TypedTool::new("get_weather", "The current weather in a city.", |args: WeatherArgs, _ctx| async move {
///     Ok(json!({ "city": args.city, "sky": "clear" }))
/// });
/// assert_eq!(
///     weather.parameters(),
///     Some(json!({
///         "type": "object",
///         "properties": { "city": { "type": "string", "description": "The city to look up." } },
///         "required": ["city"]
///     }))
/// );
/// ```
#[derive(Clone)]
pub struct TypedTool {
    name: String,
    description: String,
    parameters: Option<Value>,
    body: TypedBody,
}

/// The erased body of a typed tool: the call's arguments (read into the tool's type inside)
/// and a context in, a boxed future out.
type TypedBody = Arc<
    dyn Fn(CallArgs, ToolContext) -> BoxFuture<'static, Result<Value, ToolError>> + Send + Sync,
>;

impl TypedTool {
    /// A tool that deserializes its arguments into `Args` and runs `f` on them.
    pub fn new<Args, F, Fut, Out>(
        name: impl Into<String>,
        description: impl Into<String>,
        f: F,
    ) -> Self
    where
        Args: DeserializeOwned + JsonSchema,
        F: Fn(Args, ToolContext) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<Out, ToolError>> + Send + 'static,
        Out: Serialize,
    {
        let name: String = name.into();
        let tool = name.clone();
        let body: TypedBody = Arc::new(move |args: CallArgs, ctx: ToolContext| {
            let tool = tool.clone();
            // Straight from the text; a failure is read again through the value, whose
            // message (with its path, without a line and column) is the one the tool's
            // error has always carried.
            let read = match args.deserialize::<Args>() {
                Ok(read) => Ok(read),
                Err(_) => serde_path_to_error::deserialize::<_, Args>(args.into_value()),
            };
            let args = match read {
                Ok(args) => args,
                Err(error) => {
                    let error = ToolError::InvalidArgs {
                        tool,
                        message: error.to_string(),
                    };
                    return async move { Err(error) }.boxed();
                }
            };
            let running = f(args, ctx);
            async move {
                let out = running.await?;
                serde_json::to_value(out).map_err(|error| ToolError::ExecutionFailed {
                    tool,
                    message: format!("the result is not representable as JSON: {error}"),
                })
            }
            .boxed()
        });
        TypedTool {
            name,
            description: description.into(),
            parameters: parameters_for::<Args>(),
            body,
        }
    }
}

impl ToolFunction for TypedTool {
    fn name(&self) -> &str {
        &self.name
    }

    fn description(&self) -> &str {
        &self.description
    }

    fn parameters(&self) -> Option<Value> {
        self.parameters.clone()
    }

    fn call(&self, args: Value, ctx: ToolContext) -> BoxFuture<'static, Result<Value, ToolError>> {
        (self.body)(CallArgs::from(args), ctx)
    }

    fn call_args(
        &self,
        args: CallArgs,
        ctx: ToolContext,
    ) -> BoxFuture<'static, Result<Value, ToolError>> {
        (self.body)(args, ctx)
    }
}

impl fmt::Debug for TypedTool {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TypedTool")
            .field("name", &self.name)
            .field("description", &self.description)
            .field("parameters", &self.parameters)
            .finish_non_exhaustive()
    }
}
