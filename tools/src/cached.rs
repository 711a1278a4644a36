//! [`CachedTool`]: an idempotent tool answered from memory when it is called again with the
//! same arguments.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};

use futures_util::FutureExt;
use futures_util::future::BoxFuture;
use reel_protocol::FunctionDeclaration;
use serde_json::Value;

use super::{ToolContext, ToolError, ToolFunction};

/// A tool whose successful results are kept, by its arguments (compared as JSON, key order
/// ignored), and given again without running it. Errors are not kept: a failed call runs
/// again next time. Two calls with the same arguments at once both run (the first to
/// finish is kept).
///
/// The cache belongs to the tool value, so a chain's tools (built anew for each session)
/// start each session empty; it is not bounded (an idempotent lookup's answers, for one
/// call). A replay calls the same tools in the same order, so it hits the cache where
/// the session did.
///
/// ```
/// use reel_tools::{CachedTool, SimpleTool, ToolFunction};
/// use serde_json::json;
///
/// let rate = CachedTool::new(SimpleTool::new("get_rate", "An exchange rate.", None, |_, _| async {
///     Ok(json!({"rate": 1.17}))
/// }));
/// assert_eq!(rate.name(), "get_rate");
/// assert_eq!(rate.cached(), 0);
/// ```
pub struct CachedTool {
    inner: Arc<dyn ToolFunction>,
    results: Arc<Mutex<HashMap<String, Value>>>,
}

impl CachedTool {
    /// `tool`, cached.
    pub fn new(tool: impl ToolFunction) -> CachedTool {
        CachedTool::wrap(Arc::new(tool))
    }

    /// [`new`](CachedTool::new) for a tool already shared.
    pub fn wrap(tool: Arc<dyn ToolFunction>) -> CachedTool {
        CachedTool {
            inner: tool,
            results: Arc::default(),
        }
    }

    /// How many results are kept.
    pub fn cached(&self) -> usize {
        self.results
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .len()
    }
}

impl ToolFunction for CachedTool {
    fn name(&self) -> &str {
        self.inner.name()
    }

    fn description(&self) -> &str {
        self.inner.description()
    }

    fn parameters(&self) -> Option<Value> {
        self.inner.parameters()
    }

    fn declaration(&self) -> FunctionDeclaration {
        self.inner.declaration()
    }

    fn confirmation(&self) -> Option<&str> {
        self.inner.confirmation()
    }

    fn call(&self, args: Value, ctx: ToolContext) -> BoxFuture<'static, Result<Value, ToolError>> {
        let key = canonical(&args);
        let results = Arc::clone(&self.results);
        let kept = results
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .get(&key)
            .cloned();
        if let Some(result) = kept {
            return async move { Ok(result) }.boxed();
        }
        let call = self.inner.call(args, ctx);
        async move {
            let result = call.await?;
            results
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .entry(key)
                .or_insert_with(|| result.clone());
            Ok(result)
        }
        .boxed()
    }
}

/// `value` as JSON text with every object's keys sorted: equal for equal arguments,
/// whatever order the model wrote them in.
fn canonical(value: &Value) -> String {
    fn sorted(value: &Value) -> Value {
        match value {
            Value::Object(map) => {
                let mut keys: Vec<&String> = map.keys().collect();
                keys.sort();
                Value::Object(
                    keys.into_iter()
                        .map(|key| (key.clone(), sorted(&map[key])))
                        .collect(),
                )
            }
            Value::Array(items) => Value::Array(items.iter().map(sorted).collect()),
            other => other.clone(),
        }
    }
    sorted(value).to_string()
}

#[cfg(test)]
mod tests {
    use super::canonical;
    use serde_json::json;

    #[test]
    fn key_order_does_not_matter_but_values_do() {
        assert_eq!(
            canonical(&json!({"b": 1, "a": {"y": [1, {"d": 2, "c": 3}], "x": null}})),
            r#"{"a":{"x":null,"y":[1,{"c":3,"d":2}]},"b":1}"#
        );
        assert_ne!(canonical(&json!({"a": 1})), canonical(&json!({"a": 2})));
    }
}
