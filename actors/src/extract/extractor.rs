//! The [`TurnExtractor`] trait.

use std::sync::Arc;

use futures_util::future::BoxFuture;
use serde_json::Value;

use super::context::ExtractionContext;
use super::error::ExtractionError;
use super::trigger::ExtractionTrigger;
use crate::llm::LlmInterceptor;
use crate::transcript::TranscriptTurn;

/// Draws structured data from the last turns of the conversation.
///
/// ```
/// use futures_util::future::BoxFuture;
/// use reel_actors::extract::{ExtractionContext, ExtractionError, TurnExtractor};
/// use reel_actors::transcript::TranscriptTurn;
/// use serde_json::{Value, json};
///
/// /// The last order number the user said ("order 1234").
/// struct OrderNumber;
///
/// impl TurnExtractor for OrderNumber {
///     fn name(&self) -> &str {
///         "order_info"
///     }
///     fn window_size(&self) -> usize {
///         5
///     }
///     fn should_extract(&self, window: &[TranscriptTurn]) -> bool {
///         window.iter().any(|t| t.user.contains("order"))
///     }
///     fn extract<'a>(
///         &'a self,
///         window: &'a [TranscriptTurn],
///         _ctx: &'a ExtractionContext,
///     ) -> BoxFuture<'a, Result<Value, ExtractionError>> {
///         let number = window.iter().rev().find_map(|turn| {
///             let words: Vec<&str> = turn.user.split_whitespace().collect();
///             words.windows(2).rev().find(|w| w[0] == "order").map(|w| w[1].to_owned())
///         });
///         Box::pin(async move { Ok(json!({"order_number": number})) })
///     }
/// }
/// ```
pub trait TurnExtractor: Send + Sync + 'static {
    /// The extractor's name: the state key its whole result is written under, and the name
    /// in events and callbacks.
    fn name(&self) -> &str;

    /// How many of the last turns it reads.
    fn window_size(&self) -> usize;

    /// A cheap check before [`TurnExtractor::extract`]: `false` skips this run (no model
    /// call, no write, no event). Runs on the same window. By default, always `true`.
    fn should_extract(&self, window: &[TranscriptTurn]) -> bool {
        let _ = window;
        true
    }

    /// Extracts from `window` (the last [`window_size`](TurnExtractor::window_size) turns,
    /// oldest first; after a tool call, the last one is the turn in progress).
    fn extract<'a>(
        &'a self,
        window: &'a [TranscriptTurn],
        ctx: &'a ExtractionContext,
    ) -> BoxFuture<'a, Result<Value, ExtractionError>>;

    /// When it runs. By default at every turn complete.
    fn trigger(&self) -> ExtractionTrigger {
        ExtractionTrigger::EveryTurn
    }

    /// This extractor with its models passed through `interceptor`, if it holds any; `None`
    /// keeps it as it is (the default). Called once, when the session starts.
    fn intercept(&self, interceptor: &dyn LlmInterceptor) -> Option<Arc<dyn TurnExtractor>> {
        let _ = interceptor;
        None
    }
}
