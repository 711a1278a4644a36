//! A tool from a closure over raw JSON.

use std::fmt;
use std::future::Future;
use std::sync::Arc;

use futures_util::future::{BoxFuture, FutureExt};
use serde_json::Value;

use super::{ToolContext, ToolError, ToolFunction};

/// The erased body of a tool: JSON arguments and a context in, a boxed future out.
pub(crate) type ToolBody =
    Arc<dyn Fn(Value, ToolContext) -> BoxFuture<'static, Result<Value, ToolError>> + Send + Sync>;

/// A tool made of a name, a description, an optional parameter schema and a closure that
/// takes the raw JSON arguments.
///
/// The schema is sent as given: write it in the Live API's OpenAPI-style form, or pass a
/// JSON Schema through [`live_schema`](super::live_schema) first.
///
/// ```
/// use reel_tools::{SimpleTool, ToolFunction};
/// use serde_json::{Value, json};
///
/// let weather = SimpleTool::new(
///     "get_weather",
///     "The current weather in a city.",
///     Some(json!({
///         "type": "object",
///         "properties": { "city": { "type": "string" } },
///         "required": ["city"]
///     })),
///     |args: Value, _ctx| async move {
///         let city = args["city"].as_str().unwrap_or("nowhere").to_owned();
///         Ok(json!({ "city": city, "sky": "clear", "celsius": 21 }))
///     },
/// );
/// assert_eq!(weather.name(), "get_weather");
/// ```
#[derive(Clone)]
pub struct SimpleTool {
    name: String,
    description: String,
    parameters: Option<Value>,
    body: ToolBody,
}

impl SimpleTool {
    /// A tool that runs `f` on each call.
    pub fn new<F, Fut>(
        name: impl Into<String>,
        description: impl Into<String>,
        parameters: Option<Value>,
        f: F,
    ) -> Self
    where
        F: Fn(Value, ToolContext) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<Value, ToolError>> + Send + 'static,
    {
        SimpleTool {
            name: name.into(),
            description: description.into(),
            parameters,
            body: Arc::new(move |args, ctx| f(args, ctx).boxed()),
        }
    }
}

impl ToolFunction for SimpleTool {
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
        (self.body)(args, ctx)
    }
}

impl fmt::Debug for SimpleTool {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SimpleTool")
            .field("name", &self.name)
            .field("description", &self.description)
            .field("parameters", &self.parameters)
            .finish_non_exhaustive()
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn declaration_carries_name_description_and_schema_as_given() {
        let schema = json!({ "type": "object", "properties": { "city": { "type": "string" } } });
        let tool = SimpleTool::new(
            "get_weather",
            "The weather.",
            Some(schema.clone()),
            |_args, _ctx| async { Ok(json!({})) },
        );
        let declaration = tool.declaration();
        assert_eq!(declaration.name.as_deref(), Some("get_weather"));
        assert_eq!(declaration.description.as_deref(), Some("The weather."));
        assert_eq!(declaration.parameters, Some(schema));
        assert_eq!(declaration.behavior, None);
        assert_eq!(
            serde_json::to_string(&declaration).ok().as_deref(),
            Some(
                r#"{"name":"get_weather","description":"The weather.","parameters":{"type":"object","properties":{"city":{"type":"string"}}}}"#
            )
        );
    }
}
