//! `C::summarize`: the context step that calls a model. The older part of the conversation
//! is replaced by one user turn holding a model-written summary of it (decision 0070).
//!
//! The summary request is a pure function of the turns it summarizes and the model asked:
//! the same history gives the same request bytes, so a cassette records the summary call
//! and answers it again offline.

use std::sync::Arc;

use reel_llm::{BaseLlm, LlmError, LlmRequest};
use reel_protocol::Content;
use serde_json::Value;

/// The system instruction of every summary call.
pub const SUMMARY_INSTRUCTION: &str = "You summarize a conversation between a user and an \
assistant for the assistant who continues it. Keep every name, number, identifier, \
decision and open request; say who asked for what. Reply with the summary only, in at most \
five sentences.";

/// What the summary turn starts with, before the model's summary.
pub const SUMMARY_PREFIX: &str = "Summary of the earlier conversation:";

/// Why a context policy could not shape the history.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ContextError {
    /// A `C::summarize` step's model call failed.
    #[error("{step}: the summary call to `{model}` failed: {source}")]
    SummaryCall {
        /// The step (`C::summarize(4)`).
        step: String,
        /// The model asked.
        model: String,
        /// The model's error.
        #[source]
        source: LlmError,
    },
    /// A `C::summarize` step's model answered with no text.
    #[error("{step}: `{model}` answered the summary call with no text")]
    EmptySummary {
        /// The step (`C::summarize(4)`).
        step: String,
        /// The model asked.
        model: String,
    },
}

/// One `C::summarize` step: keeps the last `keep_last` turns and summarizes the ones
/// before them with `llm` (the agent's own model when `None`).
#[derive(Clone)]
pub(crate) struct Summarize {
    pub(crate) keep_last: usize,
    pub(crate) llm: Option<Arc<dyn BaseLlm>>,
}

impl Summarize {
    /// `contents` with the turns before the last `keep_last` replaced by a summary turn,
    /// asking `llm` as `model` unless the step has its own model; `contents` as they are
    /// when there is nothing before the last `keep_last` (no call).
    pub(crate) async fn apply(
        &self,
        label: &str,
        contents: Vec<Content>,
        llm: &dyn BaseLlm,
        model: &str,
    ) -> Result<Vec<Content>, ContextError> {
        if contents.len() <= self.keep_last {
            return Ok(contents);
        }
        let (llm, model) = match &self.llm {
            Some(own) => (own.as_ref(), own.model_id()),
            None => (llm, model),
        };
        let split = contents.len() - self.keep_last;
        let mut contents = contents;
        let kept = contents.split_off(split);
        let request = summary_request(model, &contents);
        let response = llm
            .generate(request)
            .await
            .map_err(|source| ContextError::SummaryCall {
                step: label.to_owned(),
                model: model.to_owned(),
                source,
            })?;
        let summary = response.text.trim();
        if summary.is_empty() {
            return Err(ContextError::EmptySummary {
                step: label.to_owned(),
                model: model.to_owned(),
            });
        }
        let mut shaped = Vec::with_capacity(kept.len() + 1);
        shaped.push(Content::user_text(format!("{SUMMARY_PREFIX}\n{summary}")));
        shaped.extend(kept);
        Ok(shaped)
    }
}

/// The summary call for `turns`: [`SUMMARY_INSTRUCTION`], one user turn holding the turns
/// as a transcript (one [`transcript_line`] each, under `Conversation:`), temperature 0.
///
/// ```
/// use reel_compose::summary_request;
/// use reel_protocol::Content;
///
/// let request = summary_request("gemini-2.5-flash", &[
///     Content::user_text("Where is order A-1042?"),
///     Content::model_text("It ships tomorrow."),
/// ]);
/// assert_eq!(
///     request.last_user_text().as_deref(),
///     Some("Conversation:\nuser: Where is order A-1042?\nmodel: It ships tomorrow."),
/// );
/// ```
pub fn summary_request(model: &str, turns: &[Content]) -> LlmRequest {
    let lines: Vec<String> = turns.iter().map(transcript_line).collect();
    LlmRequest::new(model)
        .system(SUMMARY_INSTRUCTION)
        .setting("temperature", Value::from(0.0))
        .user(format!("Conversation:\n{}", lines.join("\n")))
}

/// One turn as a transcript line: `role: text`, a function call as
/// `model called NAME(ARGS)`, a function response as `tool NAME returned RESPONSE` (the
/// JSON as it serializes: the same value, the same text), the parts of one turn joined by ` / `.
///
/// ```
/// use reel_compose::transcript_line;
/// use reel_protocol::{Content, FunctionCall, Part};
///
/// let call = Content::new("model", vec![Part {
///     function_call: Some(FunctionCall {
///         name: Some("get_order".into()),
///         args: Some(serde_json::json!({"id": "A-1042"}).into()),
///         ..FunctionCall::default()
///     }),
///     ..Part::default()
/// }]);
/// assert_eq!(transcript_line(&call), r#"model called get_order({"id":"A-1042"})"#);
/// assert_eq!(transcript_line(&Content::user_text("hi")), "user: hi");
/// ```
pub fn transcript_line(turn: &Content) -> String {
    let role = turn.role.as_deref().unwrap_or("user");
    let mut text = String::new();
    let mut pieces: Vec<String> = Vec::new();
    for part in turn.parts() {
        if let Some(part_text) = &part.text {
            text.push_str(part_text);
        }
        if let Some(call) = &part.function_call {
            pieces.push(format!(
                "{role} called {}({})",
                call.name.as_deref().unwrap_or("?"),
                json_text(call.args.as_ref().map(reel_protocol::Args::value))
            ));
        }
        if let Some(response) = &part.function_response {
            pieces.push(format!(
                "tool {} returned {}",
                response.name.as_deref().unwrap_or("?"),
                json_text(response.response.as_ref())
            ));
        }
    }
    if !text.is_empty() || pieces.is_empty() {
        pieces.insert(0, format!("{role}: {text}"));
    }
    pieces.join(" / ")
}

fn json_text(value: Option<&Value>) -> String {
    value.map_or_else(|| "{}".to_owned(), Value::to_string)
}
