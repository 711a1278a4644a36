//! [`Extract::record`]: a record of fields, each filled by a [`Recognizer`], run as a
//! [`TurnExtractor`].

use futures_util::future::BoxFuture;
use serde_json::{Map, Value};

use super::recognizer::Recognizer;
use reel_actors::extract::ExtractionContext;
use reel_actors::extract::ExtractionError;
use reel_actors::extract::ExtractionTrigger;
use reel_actors::extract::TurnExtractor;
use reel_actors::transcript::TranscriptTurn;

/// How many turns a record reads unless told otherwise.
pub const DEFAULT_RECORD_WINDOW: usize = 3;

/// The deterministic extraction kit: records of fields filled by [`Recognizer`]s, on the
/// CPU, with no model.
#[derive(Debug, Clone, Copy)]
pub struct Extract;

impl Extract {
    /// A record named `name` (its state key), to declare fields on.
    pub fn record(name: impl Into<String>) -> RecordBuilder {
        RecordBuilder {
            name: name.into(),
            window: DEFAULT_RECORD_WINDOW,
            trigger: ExtractionTrigger::EveryTurn,
            fields: Vec::new(),
        }
    }
}

/// Declares a record's fields; [`RecordBuilder::build`] makes the extractor.
///
/// ```
/// use reel_extract::{Extract, ExtractionContext, Recognizer, TurnExtractor};
/// use reel_actors::state::State;
/// use reel_actors::transcript::TranscriptTurn;
/// use serde_json::json;
///
/// let order = Extract::record("order")
///     .field("quantity", Recognizer::integer_near(["want", "get"]))
///     .field("item", Recognizer::one_of(["pizza", "salad", "soda"]))
///     .field("name", Recognizer::fuzzy(["Johnson", "Jackson"]))
///     .field("pickup", Recognizer::datetime())
///     .field("confirmed", Recognizer::yes_no())
///     .build();
///
/// // 2024-06-10T06:13:20Z, a Monday.
/// let monday = 1_718_000_000_000;
/// let window = [
///     TranscriptTurn::new(1, "I want two pizzas for tomorrow at 7pm", "Name?", monday),
///     TranscriptTurn::new(2, "Jonson. Yes please", "Done.", monday + 60_000),
/// ];
/// let ctx = ExtractionContext::for_state(2, &State::new());
/// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
/// assert_eq!(
///     order.extract(&window, &ctx).await.unwrap(),
///     json!({
///         "quantity": 2,
///         "item": "pizza",
///         "name": "Johnson",
///         "pickup": {"date": "2024-06-11", "time": "19:00"},
///         "confirmed": true
///     })
/// );
/// # });
/// ```
#[derive(Debug, Clone)]
pub struct RecordBuilder {
    name: String,
    window: usize,
    trigger: ExtractionTrigger,
    fields: Vec<(String, Recognizer)>,
}

impl RecordBuilder {
    /// A field named `name`, filled by `recognizer`. A second field of the same name
    /// replaces the first (in the first's place).
    pub fn field(mut self, name: impl Into<String>, recognizer: Recognizer) -> Self {
        let name = name.into();
        match self.fields.iter_mut().find(|(field, _)| *field == name) {
            Some(slot) => slot.1 = recognizer,
            None => self.fields.push((name, recognizer)),
        }
        self
    }

    /// The record's name (its state key, and where what runs on it lands).
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Reads the last `window` turns ([`DEFAULT_RECORD_WINDOW`] by default).
    pub fn window(mut self, window: usize) -> Self {
        self.window = window;
        self
    }

    /// Runs at `trigger` instead of every turn.
    pub fn trigger(mut self, trigger: ExtractionTrigger) -> Self {
        self.trigger = trigger;
        self
    }

    /// The extractor.
    pub fn build(self) -> RecordExtractor {
        RecordExtractor {
            name: self.name,
            window: self.window,
            trigger: self.trigger,
            fields: self.fields,
        }
    }
}

/// A record's extractor (made by [`Extract::record`]).
///
/// It reads the **user's side** of its window, oldest turn first, each turn with its own
/// session time; a field takes the value mentioned last, and a field the window does not
/// mention keeps its value from the record's last result in the state. The result is an
/// object of the fields known, in declaration order (the runtime also writes each under
/// `derived:{field}`); with none known yet it is `null`, which writes nothing.
#[derive(Debug, Clone)]
pub struct RecordExtractor {
    name: String,
    window: usize,
    trigger: ExtractionTrigger,
    fields: Vec<(String, Recognizer)>,
}

impl RecordExtractor {
    /// The record's field names, in declaration order: the `derived:{field}` keys it may
    /// write.
    ///
    /// ```
    /// use reel_extract::{Extract, Recognizer};
    ///
    /// let order = Extract::record("order")
    ///     .field("guests", Recognizer::integer())
    ///     .field("when", Recognizer::datetime())
    ///     .build();
    /// assert_eq!(order.field_names(), ["guests", "when"]);
    /// ```
    pub fn field_names(&self) -> Vec<&str> {
        self.fields.iter().map(|(name, _)| name.as_str()).collect()
    }

    /// The fields known after `window`, starting from `existing` (the record's last
    /// result), in declaration order.
    pub fn recognize(
        &self,
        window: &[TranscriptTurn],
        existing: &Map<String, Value>,
    ) -> Map<String, Value> {
        let mut known = Map::new();
        for (field, recognizer) in &self.fields {
            let mut value = existing.get(field).filter(|v| !v.is_null()).cloned();
            for turn in window.iter().filter(|t| !t.user.is_empty()) {
                if let Some(found) =
                    recognizer.find_after(value.as_ref(), &turn.user, turn.timestamp_ms)
                {
                    value = Some(found);
                }
            }
            if let Some(value) = value {
                known.insert(field.clone(), value);
            }
        }
        known
    }
}

impl TurnExtractor for RecordExtractor {
    fn name(&self) -> &str {
        &self.name
    }

    fn window_size(&self) -> usize {
        self.window
    }

    fn should_extract(&self, window: &[TranscriptTurn]) -> bool {
        window.iter().any(|turn| !turn.user.trim().is_empty())
    }

    fn extract<'a>(
        &'a self,
        window: &'a [TranscriptTurn],
        ctx: &'a ExtractionContext,
    ) -> BoxFuture<'a, Result<Value, ExtractionError>> {
        let known = self.recognize(window, &ctx.existing(&self.name));
        let value = if known.is_empty() {
            Value::Null
        } else {
            Value::Object(known)
        };
        Box::pin(async move { Ok(value) })
    }

    fn trigger(&self) -> ExtractionTrigger {
        self.trigger
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use reel_actors::state::State;

    fn turn(number: u32, user: &str) -> TranscriptTurn {
        TranscriptTurn::new(number, user, "ok", 1_718_000_000_000)
    }

    async fn run(record: &RecordExtractor, window: &[TranscriptTurn], state: &State) -> Value {
        let ctx = ExtractionContext::for_state(1, state);
        record.extract(window, &ctx).await.unwrap()
    }

    #[tokio::test]
    async fn fields_not_mentioned_keep_their_state_values() {
        let record = Extract::record("order")
            .field("quantity", Recognizer::integer())
            .field("item", Recognizer::one_of(["pizza"]))
            .field(
                "code",
                Recognizer::custom(|text| text.find('#').map(|at| json!(&text[at..]))),
            )
            .build();
        let state = State::new();
        let earlier = json!({"item": "pizza", "quantity": 1, "stale": true});
        state.set("order", earlier).await.unwrap();
        assert_eq!(
            run(
                &record,
                &[turn(1, "make it 3"), turn(2, "code #A7")],
                &state
            )
            .await,
            json!({"quantity": 3, "item": "pizza", "code": "#A7"})
        );
    }

    #[tokio::test]
    async fn nothing_known_is_null_and_an_empty_window_is_skipped() {
        let record = Extract::record("r")
            .field("yes", Recognizer::yes_no())
            .build();
        assert_eq!(
            run(&record, &[turn(1, "hmm")], &State::new()).await,
            Value::Null
        );
        assert!(!record.should_extract(&[turn(1, " ")]));
        assert!(record.should_extract(&[turn(1, ""), turn(2, "no")]));
        assert_eq!(record.window_size(), DEFAULT_RECORD_WINDOW);
        assert_eq!(record.trigger(), ExtractionTrigger::EveryTurn);
    }

    #[tokio::test]
    async fn a_field_declared_twice_keeps_its_place_and_the_last_recognizer() {
        let record = Extract::record("r")
            .field("a", Recognizer::integer())
            .field("b", Recognizer::yes_no())
            .field("a", Recognizer::money())
            .window(1)
            .trigger(ExtractionTrigger::Interval(2))
            .build();
        assert_eq!(
            run(&record, &[turn(1, "yes, 3 or $4")], &State::new()).await,
            json!({"a": {"amount": 4.0, "currency": "USD"}, "b": true})
        );
        assert_eq!(record.window_size(), 1);
        assert_eq!(record.trigger(), ExtractionTrigger::Interval(2));
    }
}
