//! [`RegexExtractor`]: fields matched in the window's text, accumulated over the session.

use std::collections::BTreeMap;
use std::fmt;
use std::sync::Arc;

use futures_util::future::BoxFuture;
use serde_json::{Map, Value};

use reel_actors::extract::ExtractionContext;
use reel_actors::extract::ExtractionError;
use reel_actors::extract::ExtractionTrigger;
use reel_actors::extract::TurnExtractor;
use reel_actors::transcript::TranscriptTurn;

type MatchFn = Arc<dyn Fn(&str, &Map<String, Value>) -> Vec<(String, Value)> + Send + Sync>;

/// A deterministic extractor over the window's text: a closure gets the text and the fields
/// found so far, and returns the fields it finds now (with the regex crate, or any
/// matching of its own).
///
/// The text is every turn of the window, oldest first, each as its user line then its
/// model line (`"{user}\n{model}"`, empty sides left out), joined by newlines. The fields
/// found so far are this extractor's last result in the state (an empty object at first).
/// The result is the fields so far with the new ones over them, keys in sorted order — so
/// a field, once found, stays until the closure finds another value for it.
///
/// ```
/// use reel_extract::{ExtractionContext, RegexExtractor, TurnExtractor};
/// use reel_actors::state::State;
/// use reel_actors::transcript::TranscriptTurn;
/// use serde_json::json;
///
/// let amounts = RegexExtractor::new("debt_fields", 10, |text, existing| {
///     let mut found = Vec::new();
///     if !existing.contains_key("dollar_amount") {
///         if let Some(word) = text.split_whitespace().find(|w| w.starts_with('$')) {
///             found.push(("dollar_amount".to_owned(), json!(word)));
///         }
///     }
///     found
/// });
/// let window = [TranscriptTurn::new(1, "I owe $120 I think", "Thanks.", 0)];
/// let ctx = ExtractionContext::for_state(1, &State::new());
/// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
/// assert_eq!(
///     amounts.extract(&window, &ctx).await.unwrap(),
///     json!({"dollar_amount": "$120"})
/// );
/// # });
/// ```
#[derive(Clone)]
pub struct RegexExtractor {
    name: String,
    window: usize,
    trigger: ExtractionTrigger,
    matcher: MatchFn,
}

impl RegexExtractor {
    /// An extractor named `name` over the last `window` turns. `matcher` gets the text and
    /// the fields found so far and returns new fields (a `HashMap`, a `Vec` of pairs, …).
    pub fn new<F, M>(name: impl Into<String>, window: usize, matcher: F) -> Self
    where
        F: Fn(&str, &Map<String, Value>) -> M + Send + Sync + 'static,
        M: IntoIterator<Item = (String, Value)>,
    {
        RegexExtractor {
            name: name.into(),
            window,
            trigger: ExtractionTrigger::EveryTurn,
            matcher: Arc::new(move |text, existing| matcher(text, existing).into_iter().collect()),
        }
    }

    /// Runs at `trigger` instead of every turn.
    pub fn with_trigger(mut self, trigger: ExtractionTrigger) -> Self {
        self.trigger = trigger;
        self
    }

    /// The text the matcher gets for `window`.
    pub fn text_of(window: &[TranscriptTurn]) -> String {
        window
            .iter()
            .flat_map(|turn| [turn.user.as_str(), turn.model.as_str()])
            .filter(|side| !side.is_empty())
            .collect::<Vec<_>>()
            .join("\n")
    }
}

impl TurnExtractor for RegexExtractor {
    fn name(&self) -> &str {
        &self.name
    }

    fn window_size(&self) -> usize {
        self.window
    }

    fn should_extract(&self, window: &[TranscriptTurn]) -> bool {
        !window.is_empty()
    }

    fn extract<'a>(
        &'a self,
        window: &'a [TranscriptTurn],
        ctx: &'a ExtractionContext,
    ) -> BoxFuture<'a, Result<Value, ExtractionError>> {
        let existing = ctx.existing(&self.name);
        let found = (self.matcher)(&Self::text_of(window), &existing);
        let mut fields: BTreeMap<String, Value> = existing.into_iter().collect();
        fields.extend(found);
        let value = Value::Object(fields.into_iter().collect());
        Box::pin(async move { Ok(value) })
    }

    fn trigger(&self) -> ExtractionTrigger {
        self.trigger
    }
}

impl fmt::Debug for RegexExtractor {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RegexExtractor")
            .field("name", &self.name)
            .field("window", &self.window)
            .field("trigger", &self.trigger)
            .finish_non_exhaustive()
    }
}
