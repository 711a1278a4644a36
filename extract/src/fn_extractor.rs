//! [`FnExtractor`]: an extractor from a closure over the window.

use std::fmt;
use std::sync::Arc;

use futures_util::future::BoxFuture;
use serde_json::Value;

use reel_actors::extract::ExtractionContext;
use reel_actors::extract::ExtractionError;
use reel_actors::extract::ExtractionTrigger;
use reel_actors::extract::TurnExtractor;
use reel_actors::transcript::TranscriptTurn;

type ExtractFn = Arc<
    dyn Fn(&[TranscriptTurn], &ExtractionContext) -> Result<Value, ExtractionError> + Send + Sync,
>;
type CheckFn = Arc<dyn Fn(&[TranscriptTurn]) -> bool + Send + Sync>;

/// A deterministic extractor: a synchronous closure over the window and the context. No
/// model, no I/O; it runs on the control lane, so keep it quick.
///
/// ```
/// use reel_extract::{ExtractionContext, ExtractionPoint, FnExtractor, TurnExtractor};
/// use reel_actors::state::State;
/// use reel_actors::transcript::TranscriptTurn;
/// use serde_json::json;
///
/// let words = FnExtractor::new("talk", 3, |window, _ctx| {
///     let count: usize = window.iter().map(TranscriptTurn::user_words).sum();
///     Ok(json!({"user_words": count}))
/// });
/// let window = [TranscriptTurn::new(1, "one two three", "ok", 0)];
/// let ctx = ExtractionContext::for_state(1, &State::new());
/// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
/// assert_eq!(words.extract(&window, &ctx).await.unwrap(), json!({"user_words": 3}));
/// # });
/// ```
#[derive(Clone)]
pub struct FnExtractor {
    name: String,
    window: usize,
    trigger: ExtractionTrigger,
    extract: ExtractFn,
    check: Option<CheckFn>,
}

impl FnExtractor {
    /// An extractor named `name` reading the last `window` turns with `extract`.
    pub fn new<F>(name: impl Into<String>, window: usize, extract: F) -> Self
    where
        F: Fn(&[TranscriptTurn], &ExtractionContext) -> Result<Value, ExtractionError>
            + Send
            + Sync
            + 'static,
    {
        FnExtractor {
            name: name.into(),
            window,
            trigger: ExtractionTrigger::EveryTurn,
            extract: Arc::new(extract),
            check: None,
        }
    }

    /// Runs at `trigger` instead of every turn.
    pub fn with_trigger(mut self, trigger: ExtractionTrigger) -> Self {
        self.trigger = trigger;
        self
    }

    /// Runs only when `check` accepts the window ([`TurnExtractor::should_extract`]).
    pub fn when<F>(mut self, check: F) -> Self
    where
        F: Fn(&[TranscriptTurn]) -> bool + Send + Sync + 'static,
    {
        self.check = Some(Arc::new(check));
        self
    }
}

impl TurnExtractor for FnExtractor {
    fn name(&self) -> &str {
        &self.name
    }

    fn window_size(&self) -> usize {
        self.window
    }

    fn should_extract(&self, window: &[TranscriptTurn]) -> bool {
        self.check.as_ref().is_none_or(|check| check(window))
    }

    fn extract<'a>(
        &'a self,
        window: &'a [TranscriptTurn],
        ctx: &'a ExtractionContext,
    ) -> BoxFuture<'a, Result<Value, ExtractionError>> {
        let result = (self.extract)(window, ctx);
        Box::pin(async move { result })
    }

    fn trigger(&self) -> ExtractionTrigger {
        self.trigger
    }
}

impl fmt::Debug for FnExtractor {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("FnExtractor")
            .field("name", &self.name)
            .field("window", &self.window)
            .field("trigger", &self.trigger)
            .finish_non_exhaustive()
    }
}
