//! Turning outcomes into the `FunctionResponse`s the model gets.

use reel_protocol::{FunctionCall, FunctionResponse, Scheduling};
use serde_json::{Map, Value};

use super::{DefaultResultFormatter, ToolError, ToolExecutionMode, ToolOutcome};

impl ToolOutcome {
    /// The response to send for this outcome, with the call's id and name.
    ///
    /// Standard mode: a JSON object result is the `response` itself; any other value `v` is
    /// sent as `{"result": v}` (the API wants an object); an error as
    /// `{"error": "<the error's text>"}`.
    /// Background mode: the mode's formatter shapes the response
    /// ([`format_cancelled`](super::ResultFormatter::format_cancelled) for a cancelled
    /// call, [`format_result`](super::ResultFormatter::format_result) otherwise) and the
    /// mode's `scheduling` is set.
    ///
    /// ```
    /// use std::time::Duration;
    /// use reel_actors::tools::{ToolError, ToolExecutionMode, ToolOutcome};
    /// use serde_json::json;
    ///
    /// let outcome = ToolOutcome {
    ///     call_id: "fc_1".into(),
    ///     name: "get_weather".into(),
    ///     args: json!({ "city": "Lisbon" }).into(),
    ///     result: Ok(json!(21)),
    ///     duration: Duration::from_millis(40),
    /// };
    /// let response = outcome.to_response(&ToolExecutionMode::Standard);
    /// assert_eq!(
    ///     serde_json::to_string(&response)?,
    ///     r#"{"id":"fc_1","name":"get_weather","response":{"result":21}}"#
    /// );
    /// # Ok::<(), serde_json::Error>(())
    /// ```
    pub fn to_response(&self, mode: &ToolExecutionMode) -> FunctionResponse {
        let (response, scheduling) = match mode {
            ToolExecutionMode::Standard => (standard_response(&self.result), None),
            ToolExecutionMode::Background {
                scheduling,
                formatter,
            } => {
                let formatter = formatter.as_deref().unwrap_or(&DefaultResultFormatter);
                let response = match &self.result {
                    Err(ToolError::Cancelled { .. }) => formatter.format_cancelled(&self.call_id),
                    result => formatter.format_result(&self.call(), result),
                };
                (response, Some(scheduling.clone()))
            }
        };
        FunctionResponse {
            id: Some(self.call_id.clone()),
            name: Some(self.name.clone()),
            response: Some(response),
            scheduling,
            ..FunctionResponse::default()
        }
    }
}

/// The immediate acknowledgement of a background call: the formatter's "running"
/// response, with `willContinue: true` (the result follows) and `scheduling: SILENT` (the
/// model takes it in without interrupting itself or replying to it). `None` for a standard
/// tool, which is answered only once it is done.
///
/// ```
/// use reel_actors::tools::{ToolExecutionMode, running_ack};
/// use reel_protocol::{FunctionCall, Scheduling};
///
/// let call = FunctionCall { id: Some("fc_7".into()), name: Some("find_flights".into()), ..Default::default() };
/// let ack = running_ack(&call, &ToolExecutionMode::background(Scheduling::WhenIdle));
/// assert_eq!(
///     serde_json::to_string(&ack)?,
///     r#"{"id":"fc_7","name":"find_flights","response":{"status":"running","tool":"find_flights"},"scheduling":"SILENT","willContinue":true}"#
/// );
/// assert_eq!(running_ack(&call, &ToolExecutionMode::Standard), None);
/// # Ok::<(), serde_json::Error>(())
/// ```
pub fn running_ack(call: &FunctionCall, mode: &ToolExecutionMode) -> Option<FunctionResponse> {
    let formatter = mode.formatter()?;
    Some(FunctionResponse {
        id: Some(call.id.clone().unwrap_or_default()),
        name: Some(call.name.clone().unwrap_or_default()),
        response: Some(formatter.format_running(call)),
        scheduling: Some(Scheduling::Silent),
        will_continue: Some(true),
        ..FunctionResponse::default()
    })
}

/// A standard response body: the object itself, `{"result": v}` or `{"error": text}`.
fn standard_response(result: &Result<Value, ToolError>) -> Value {
    match result {
        Ok(Value::Object(object)) => Value::Object(object.clone()),
        Ok(value) => {
            let mut object = Map::new();
            object.insert("result".into(), value.clone());
            Value::Object(object)
        }
        Err(error) => {
            let mut object = Map::new();
            object.insert("error".into(), Value::String(error.to_string()));
            Value::Object(object)
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;
    use std::time::Duration;

    use serde_json::json;

    use super::super::ResultFormatter;
    use super::*;

    fn outcome(result: Result<Value, ToolError>) -> ToolOutcome {
        ToolOutcome {
            call_id: "fc_42".into(),
            name: "find_flights".into(),
            args: json!({ "to": "LIS" }).into(),
            result,
            duration: Duration::from_secs(3),
        }
    }

    fn wire(response: &FunctionResponse) -> String {
        serde_json::to_string(response).unwrap_or_default()
    }

    #[test]
    fn standard_responses_pair_with_the_call() {
        let standard = ToolExecutionMode::Standard;
        assert_eq!(
            wire(&outcome(Ok(json!({ "flights": 2 }))).to_response(&standard)),
            r#"{"id":"fc_42","name":"find_flights","response":{"flights":2}}"#
        );
        assert_eq!(
            wire(&outcome(Ok(json!(["LH 1", "TP 2"]))).to_response(&standard)),
            r#"{"id":"fc_42","name":"find_flights","response":{"result":["LH 1","TP 2"]}}"#
        );
        assert_eq!(
            wire(&outcome(Ok(Value::Null)).to_response(&standard)),
            r#"{"id":"fc_42","name":"find_flights","response":{"result":null}}"#
        );
        let error = ToolError::Timeout {
            tool: "find_flights".into(),
            after: Duration::from_secs(30),
        };
        assert_eq!(
            wire(&outcome(Err(error)).to_response(&standard)),
            r#"{"id":"fc_42","name":"find_flights","response":{"error":"tool `find_flights` timed out after 30s"}}"#
        );
    }

    #[test]
    fn background_responses_use_the_formatter_and_scheduling() {
        let background = ToolExecutionMode::background(Scheduling::WhenIdle);
        assert_eq!(
            wire(&outcome(Ok(json!({ "flights": 2 }))).to_response(&background)),
            r#"{"id":"fc_42","name":"find_flights","response":{"status":"completed","tool":"find_flights","result":{"flights":2}},"scheduling":"WHEN_IDLE"}"#
        );
        let failed = ToolError::ExecutionFailed {
            tool: "find_flights".into(),
            message: "no route".into(),
        };
        assert_eq!(
            wire(&outcome(Err(failed)).to_response(&background)),
            r#"{"id":"fc_42","name":"find_flights","response":{"status":"error","tool":"find_flights","error":"tool `find_flights` failed: no route"},"scheduling":"WHEN_IDLE"}"#
        );
        let cancelled = ToolError::Cancelled {
            tool: "find_flights".into(),
        };
        assert_eq!(
            wire(&outcome(Err(cancelled)).to_response(&background)),
            r#"{"id":"fc_42","name":"find_flights","response":{"status":"cancelled","call_id":"fc_42"},"scheduling":"WHEN_IDLE"}"#
        );
    }

    /// Quotes the arguments back, to show a formatter sees the call.
    struct Quoting;

    impl ResultFormatter for Quoting {
        fn format_running(&self, call: &FunctionCall) -> Value {
            json!({ "searching": call.args })
        }
        fn format_result(&self, call: &FunctionCall, result: &Result<Value, ToolError>) -> Value {
            json!({ "for": call.args, "ok": result.is_ok() })
        }
        fn format_cancelled(&self, call_id: &str) -> Value {
            json!({ "dropped": call_id })
        }
    }

    #[test]
    fn custom_formatters_see_the_call() {
        let mode = ToolExecutionMode::Background {
            scheduling: Scheduling::Interrupt,
            formatter: Some(Arc::new(Quoting)),
        };
        assert_eq!(
            wire(&outcome(Ok(json!(1))).to_response(&mode)),
            r#"{"id":"fc_42","name":"find_flights","response":{"for":{"to":"LIS"},"ok":true},"scheduling":"INTERRUPT"}"#
        );
        let call = outcome(Ok(json!(1))).call();
        assert_eq!(
            running_ack(&call, &mode).as_ref().map(wire).as_deref(),
            Some(
                r#"{"id":"fc_42","name":"find_flights","response":{"searching":{"to":"LIS"}},"scheduling":"SILENT","willContinue":true}"#
            )
        );
    }
}
