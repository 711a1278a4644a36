//! Turn extractors in the chain: structured data drawn from the conversation at turn
//! boundaries and written to the state ([`reel_actors::extract`]), and the callbacks that
//! see it.
//!
//! A typed extractor ([`LiveBuilder::extract_turns`]) is an
//! [`LlmExtractor`] named after its type, asking for JSON in the type's schema (schemars).
//! Its result is written whole under its name, and each field that is not `null` under
//! `derived:{field}`; the fields a typed extractor writes are known before the session
//! starts, so watchers and computed values may read them (see [`crate::reactive`]). An
//! extractor given whole ([`LiveBuilder::extractor`]) may write any field, so with one in
//! the chain the `derived:` check is lifted.
//!
//! The model calls of an LLM extractor go through the session's interceptor: a cassette
//! ([`LiveBuilder::llm_cassette`]) records them, and [`LiveBuilder::replay`] answers them
//! from it, offline.

use std::collections::BTreeSet;
use std::fmt;
use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use reel_actors::callbacks::{AsyncCallback, CallbackMode};
use reel_actors::llm::BaseLlm;
use reel_extract::{ExtractionTrigger, LlmExtractor, TurnExtractor};

use crate::record_orchestration::ExtractRecord;
use reel_tools::parameters_for;
use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde_json::Value;

use crate::builder::LiveBuilder;
use crate::error::BuildError;

/// How many of the last turns a typed extractor reads unless told otherwise.
pub const DEFAULT_EXTRACTION_WINDOW: usize = 3;

/// The name a typed extractor of `T` gets — its state key, and the name in events and
/// callbacks: the type's schema name, which for a plain struct is its name.
///
/// ```
/// use reel_fluent::extractor_name;
///
/// #[derive(serde::Deserialize, schemars::JsonSchema)]
/// struct CallerMood {
///     mood: String,
/// }
///
/// assert_eq!(extractor_name::<CallerMood>(), "CallerMood");
/// ```
pub fn extractor_name<T: JsonSchema>() -> String {
    T::schema_name().into_owned()
}

/// An extractor as the chain declared it.
#[derive(Clone)]
struct Declared {
    extractor: Arc<dyn TurnExtractor>,
    /// The `derived:` fields it writes, when they are known before it runs.
    fields: Option<Vec<String>>,
}

/// The `derived:` fields the chain's extractors write.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum ExtractedFields {
    /// Exactly these (every extractor's schema is known), in the order declared.
    Known(Vec<String>),
    /// Some extractor may write any field.
    Open,
}

impl ExtractedFields {
    /// Whether an extractor may write `derived:{field}`.
    pub(crate) fn covers(&self, field: &str) -> bool {
        match self {
            ExtractedFields::Known(fields) => fields.iter().any(|f| f == field),
            ExtractedFields::Open => true,
        }
    }

    /// The known fields, for error texts (empty when open).
    pub(crate) fn listed(&self) -> Vec<String> {
        match self {
            ExtractedFields::Known(fields) => fields.clone(),
            ExtractedFields::Open => Vec::new(),
        }
    }
}

/// The extractors part of a [`LiveBuilder`].
#[derive(Clone, Default)]
pub(crate) struct ExtractorsPart {
    declared: Vec<Declared>,
}

impl fmt::Debug for ExtractorsPart {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let names: Vec<&str> = self.declared.iter().map(|d| d.extractor.name()).collect();
        f.debug_struct("Extractors").field("names", &names).finish()
    }
}

/// The extractors a checked chain hands to the runtime.
#[derive(Clone, Default)]
pub(crate) struct Extractors {
    pub(crate) extractors: Vec<Arc<dyn TurnExtractor>>,
}

impl ExtractorsPart {
    /// The extractors, in the order declared, once their names are checked: not empty, and
    /// each used once (a name is a state key).
    pub(crate) fn checked(&self) -> Result<Extractors, BuildError> {
        let mut seen = BTreeSet::new();
        for (index, declared) in self.declared.iter().enumerate() {
            let name = declared.extractor.name();
            if name.is_empty() {
                return Err(BuildError::EmptyExtractorName {
                    position: index + 1,
                });
            }
            if !seen.insert(name) {
                return Err(BuildError::DuplicateExtractor {
                    name: name.to_owned(),
                });
            }
        }
        Ok(Extractors {
            extractors: self
                .declared
                .iter()
                .map(|d| Arc::clone(&d.extractor))
                .collect(),
        })
    }

    /// The `derived:` fields the extractors write.
    pub(crate) fn fields(&self) -> ExtractedFields {
        let mut known = Vec::new();
        for declared in &self.declared {
            match &declared.fields {
                None => return ExtractedFields::Open,
                Some(fields) => known.extend(fields.iter().cloned()),
            }
        }
        ExtractedFields::Known(known)
    }
}

/// The properties of `T`'s schema in the form the Gemini API takes, and their names;
/// `None` when it has none (its fields are then unknown).
fn schema_of<T: JsonSchema>() -> Option<(Value, Vec<String>)> {
    let schema = parameters_for::<T>()?;
    let fields = schema
        .get("properties")
        .and_then(Value::as_object)
        .map(|properties| properties.keys().cloned().collect())
        .unwrap_or_default();
    Some((schema, fields))
}

impl LiveBuilder {
    /// Extracts a `T` from the last [`DEFAULT_EXTRACTION_WINDOW`] turns at every turn
    /// complete, by asking `llm` with `prompt` for JSON in `T`'s schema (generated by
    /// schemars; doc comments become descriptions). The extractor is named after the type
    /// ([`extractor_name`]): the whole answer is written under that key and each field
    /// that is not `null` under `derived:{field}`, so watchers and computed values can read
    /// the fields. Turns on input and output transcription (the transcript is what the
    /// extractor reads); a later [`transcription`](LiveBuilder::transcription) call wins.
    ///
    /// The model's calls go through the session's interceptor: recorded with
    /// [`llm_cassette`](LiveBuilder::llm_cassette) and answered from the recording by
    /// [`replay`](LiveBuilder::replay).
    ///
    /// A watcher on an extracted field fires on the first extraction too: before it the
    /// field is absent, and an absent key's first value crosses into the side of the
    /// threshold it lands on (see [`LiveWatch::crossed_above`](crate::LiveWatch::crossed_above)).
    /// Here the model is a `GeminiLlm` on a loopback stand-in of the REST API and the Live
    /// API a scripted server, so the example runs offline:
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// use std::sync::Arc;
    /// use reel_actors::{Lane, LiveEvent};
    /// use reel_actors::testing::ScriptedServer;
    /// use reel_actors::testing::gemini_standin::{Answer, GeminiStandin};
    /// use reel_fluent::Live;
    /// use reel_protocol::SessionEvent;
    /// use serde_json::json;
    ///
    /// #[derive(serde::Deserialize, schemars::JsonSchema)]
    /// struct CallerMood {
    ///     /// calm, worried or angry.
    ///     mood: String,
    ///     /// How urgent the caller's problem is, 1 to 5.
    ///     urgency: u8,
    /// }
    ///
    /// // The extractor's model answers the first turn with urgency 5.
    /// let standin = GeminiStandin::bind().await;
    /// standin.push(Answer::json(&json!({"candidates": [{"content": {"role": "model",
    ///     "parts": [{"text": r#"{"mood": "angry", "urgency": 5}"#}]}, "finishReason": "STOP"}]})));
    /// // In production: `GeminiLlm::from_env("gemini-2.5-flash")?`.
    /// let llm = Arc::new(standin.llm_builder("gemini-2.5-flash").build()?);
    /// let builder = Live::builder()
    ///     .text_only()
    ///     .extract_turns::<CallerMood>(llm, "Extract the caller's mood and urgency.")
    ///     .watch("derived:urgency")
    ///     .crossed_above(4.0)
    ///     .blocking()
    ///     .then(|_old, _new, state| async move {
    ///         let _ = state.set("app:escalated", true).await;
    ///     });
    /// assert!(builder.validate().is_ok());
    ///
    /// // One turn of a call, from a scripted Live server.
    /// let mut server = ScriptedServer::bind().await;
    /// let mut events = builder.subscribe();
    /// let endpoint = server.endpoint();
    /// let (handle, mut conn) = tokio::join!(builder.connect(endpoint), async {
    ///     let mut conn = server.accept().await;
    ///     conn.recv().await;
    ///     conn.send_json(&json!({"setupComplete": {}})).await;
    ///     conn.send_json(&json!({"serverContent": {"inputTranscription":
    ///         {"text": "My line is down and I have a call in ten minutes!", "finished": true}}})).await;
    ///     conn.send_json(&json!({"serverContent": {"turnComplete": true}})).await;
    ///     conn
    /// });
    /// let handle = handle?;
    /// while let Some(envelope) = events.recv().await {
    ///     // Published once the turn's pipeline (extraction, watchers) is done.
    ///     if envelope.lane == Lane::Control
    ///         && matches!(envelope.event, LiveEvent::Session(SessionEvent::TurnComplete { .. }))
    ///     {
    ///         break;
    ///     }
    /// }
    /// // absent → 5 crossed 4: the watcher fired on the first extraction.
    /// assert_eq!(handle.state().get::<u8>("derived:urgency"), Some(5));
    /// assert_eq!(handle.state().get::<bool>("app:escalated"), Some(true));
    /// let _ = tokio::join!(handle.disconnect(), conn.expect_closed());
    /// # Ok(())
    /// # }
    /// ```
    pub fn extract_turns<T>(self, llm: Arc<dyn BaseLlm>, prompt: impl Into<String>) -> Self
    where
        T: JsonSchema + DeserializeOwned,
    {
        self.extract_turns_windowed::<T>(llm, prompt, DEFAULT_EXTRACTION_WINDOW)
    }

    /// [`extract_turns`](LiveBuilder::extract_turns) reading the last `window` turns.
    ///
    /// ```
    /// # use std::sync::Arc;
    /// # use reel_actors::llm::BaseLlm;
    /// use reel_fluent::Live;
    ///
    /// #[derive(serde::Deserialize, schemars::JsonSchema)]
    /// struct Order {
    ///     number: Option<String>,
    /// }
    ///
    /// # fn build(llm: Arc<dyn BaseLlm>) {
    /// let builder = Live::builder().extract_turns_windowed::<Order>(llm, "Extract the order number.", 5);
    /// assert!(builder.validate().is_ok());
    /// # }
    /// ```
    pub fn extract_turns_windowed<T>(
        self,
        llm: Arc<dyn BaseLlm>,
        prompt: impl Into<String>,
        window: usize,
    ) -> Self
    where
        T: JsonSchema + DeserializeOwned,
    {
        self.extract_turns_triggered::<T>(llm, prompt, window, ExtractionTrigger::EveryTurn)
    }

    /// [`extract_turns_windowed`](LiveBuilder::extract_turns_windowed) run at `trigger`
    /// instead of every turn complete: every n-th turn, after tool calls, or after a phase
    /// change.
    ///
    /// ```
    /// # use std::sync::Arc;
    /// # use reel_actors::llm::BaseLlm;
    /// use reel_extract::ExtractionTrigger;
    /// use reel_fluent::Live;
    ///
    /// #[derive(serde::Deserialize, schemars::JsonSchema)]
    /// struct Summary {
    ///     topics: Vec<String>,
    /// }
    ///
    /// # fn build(llm: Arc<dyn BaseLlm>) {
    /// let builder = Live::builder().extract_turns_triggered::<Summary>(
    ///     llm,
    ///     "List the topics discussed.",
    ///     10,
    ///     ExtractionTrigger::Interval(5),
    /// );
    /// assert!(builder.validate().is_ok());
    /// # }
    /// ```
    pub fn extract_turns_triggered<T>(
        mut self,
        llm: Arc<dyn BaseLlm>,
        prompt: impl Into<String>,
        window: usize,
        trigger: ExtractionTrigger,
    ) -> Self
    where
        T: JsonSchema + DeserializeOwned,
    {
        let extractor =
            LlmExtractor::new(extractor_name::<T>(), llm, prompt, window).with_trigger(trigger);
        let (extractor, fields) = match schema_of::<T>() {
            Some((schema, fields)) => (extractor.with_schema(schema), Some(fields)),
            None => (extractor, None),
        };
        self.config = self.config.input_transcription().output_transcription();
        self.extractors.declared.push(Declared {
            extractor: Arc::new(extractor),
            fields,
        });
        self
    }

    /// Adds an extractor of any kind ([`LlmExtractor`] with options of its own,
    /// [`RegexExtractor`](reel_extract::RegexExtractor),
    /// [`FnExtractor`](reel_extract::FnExtractor), your own [`TurnExtractor`]),
    /// after the others. The chain cannot know which `derived:` fields it writes, so with
    /// one in the chain watchers and computed values may read any `derived:` key. Does not
    /// change transcription: turn it on with [`transcription`](LiveBuilder::transcription)
    /// if the extractor reads what was said.
    ///
    /// ```
    /// use std::sync::Arc;
    /// use reel_extract::RegexExtractor;
    /// use reel_fluent::Live;
    /// use serde_json::json;
    ///
    /// let amounts = RegexExtractor::new("amounts", 3, |text, _| {
    ///     text.split_whitespace()
    ///         .find(|word| word.starts_with('$'))
    ///         .map(|word| ("amount".to_owned(), json!(word)))
    /// });
    /// let builder = Live::builder()
    ///     .transcription(true, true)
    ///     .extractor(Arc::new(amounts))
    ///     .watch("derived:amount")
    ///     .then(|_, amount, _| async move { println!("amount {amount}") });
    /// assert!(builder.validate().is_ok());
    /// ```
    pub fn extractor(mut self, extractor: Arc<dyn TurnExtractor>) -> Self {
        self.extractors.declared.push(Declared {
            extractor,
            fields: None,
        });
        self
    }

    /// Adds a deterministic record extractor
    /// ([`Extract::record`](reel_extract::Extract::record): numbers, money, choices,
    /// yes/no, dates and times recognized in what the user said or typed; no model), after
    /// the others. Its fields are known, so watchers and computed values on its
    /// `derived:{field}` keys are checked like a typed extractor's. Turns on input and
    /// output transcription (the transcript is what it reads); a later
    /// [`transcription`](LiveBuilder::transcription) call wins.
    ///
    /// ```
    /// use reel_extract::{Extract, Recognizer};
    /// use reel_fluent::Live;
    ///
    /// let booking = Extract::record("booking")
    ///     .field("guests", Recognizer::integer_near(["for", "party"]))
    ///     .field("when", Recognizer::datetime())
    ///     .build();
    /// let builder = Live::builder()
    ///     .extract_record(booking)
    ///     .watch("derived:guests")
    ///     .then(|_, guests, _| async move { println!("guests {guests}") });
    /// assert!(builder.validate().is_ok());
    /// assert!(Live::builder()
    ///     .extract_record(Extract::record("b").field("guests", Recognizer::integer()).build())
    ///     .watch("derived:guest")
    ///     .then(|_, _, _| async {})
    ///     .validate()
    ///     .is_err());
    /// ```
    pub fn extract_record(mut self, record: impl Into<ExtractRecord>) -> Self {
        let ExtractRecord {
            extractor: record,
            work,
        } = record.into();
        if !work.is_empty() {
            self.orchestration.add_record(work);
        }
        let fields = record
            .field_names()
            .into_iter()
            .map(str::to_owned)
            .collect();
        self.config = self.config.input_transcription().output_transcription();
        self.extractors.declared.push(Declared {
            extractor: Arc::new(record),
            fields: Some(fields),
        });
        self
    }

    /// How long the control lane waits for one extractor (default 30 s); past it the
    /// extraction fails with a timeout, reported to
    /// [`on_extraction_error`](LiveBuilder::on_extraction_error).
    ///
    /// ```
    /// use std::time::Duration;
    /// use reel_fluent::Live;
    /// let builder = Live::builder().extraction_timeout(Duration::from_secs(5));
    /// assert!(builder.validate().is_ok());
    /// ```
    pub fn extraction_timeout(mut self, timeout: Duration) -> Self {
        self.options.extraction_timeout = timeout;
        self
    }

    /// An extractor produced a value: its name and the value, already in the state. Runs
    /// after the extractor's state writes, in registration order.
    ///
    /// ```
    /// use reel_fluent::Live;
    /// let builder = Live::builder().on_extracted(|name, value| async move {
    ///     println!("{name}: {value}");
    /// });
    /// assert!(builder.validate().is_ok());
    /// ```
    pub fn on_extracted<F, Fut>(mut self, f: F) -> Self
    where
        F: Fn(String, Value) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = ()> + Send + 'static,
    {
        self.control.on_extracted = Some(pair(CallbackMode::Blocking, f));
        self
    }

    /// [`on_extracted`](LiveBuilder::on_extracted), spawned.
    ///
    /// ```
    /// use reel_fluent::Live;
    /// let builder = Live::builder().on_extracted_concurrent(|_name, _value| async {});
    /// assert!(builder.validate().is_ok());
    /// ```
    pub fn on_extracted_concurrent<F, Fut>(mut self, f: F) -> Self
    where
        F: Fn(String, Value) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = ()> + Send + 'static,
    {
        self.control.on_extracted = Some(pair(CallbackMode::Concurrent, f));
        self
    }

    /// An extractor failed (its model call failed or answered something that is not JSON,
    /// it timed out, …): its name and the error's message. Nothing was written for it.
    /// Without this callback a failure is logged as a warning.
    ///
    /// ```
    /// use reel_fluent::Live;
    /// let builder = Live::builder().on_extraction_error(|name, error| async move {
    ///     eprintln!("extractor {name} failed: {error}");
    /// });
    /// assert!(builder.validate().is_ok());
    /// ```
    pub fn on_extraction_error<F, Fut>(mut self, f: F) -> Self
    where
        F: Fn(String, String) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = ()> + Send + 'static,
    {
        self.control.on_extraction_error = Some(pair(CallbackMode::Blocking, f));
        self
    }

    /// [`on_extraction_error`](LiveBuilder::on_extraction_error), spawned.
    ///
    /// ```
    /// use reel_fluent::Live;
    /// let builder = Live::builder().on_extraction_error_concurrent(|_name, _error| async {});
    /// assert!(builder.validate().is_ok());
    /// ```
    pub fn on_extraction_error_concurrent<F, Fut>(mut self, f: F) -> Self
    where
        F: Fn(String, String) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = ()> + Send + 'static,
    {
        self.control.on_extraction_error = Some(pair(CallbackMode::Concurrent, f));
        self
    }
}

/// A control-lane callback taking a pair, from a closure taking two arguments.
pub(crate) fn pair<A, B, F, Fut>(mode: CallbackMode, f: F) -> AsyncCallback<(A, B)>
where
    A: Send + 'static,
    B: Send + 'static,
    F: Fn(A, B) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = ()> + Send + 'static,
{
    AsyncCallback::new(mode, move |(a, b)| f(a, b))
}
