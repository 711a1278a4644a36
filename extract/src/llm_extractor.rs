//! [`LlmExtractor`]: asks an out-of-band model for JSON about the last turns.

use std::fmt;
use std::sync::Arc;

use futures_util::future::BoxFuture;
use serde_json::{Value, json};

use reel_actors::extract::ExtractionContext;
use reel_actors::extract::ExtractionError;
use reel_actors::extract::ExtractionTrigger;
use reel_actors::extract::TurnExtractor;
use reel_actors::transcript::{TranscriptTurn, format_turns};
use reel_llm::{BaseLlm, LlmInterceptor, LlmRequest};

/// How many characters of an answer that is not JSON an error quotes.
const EXCERPT_CHARS: usize = 80;

/// An extractor that sends the transcript window to a model and parses its JSON answer.
///
/// The request ([`LlmExtractor::request`]) has the prompt as its system instruction, the
/// window ([`format_turns`]) as its one user turn, temperature 0, and asks for JSON
/// (`responseMimeType: application/json`, plus `responseSchema` when a schema is set).
/// The answer is parsed with [`LlmResponse::json`](reel_llm::LlmResponse::json).
///
/// ```
/// use std::sync::Arc;
/// # use futures_util::future::BoxFuture;
/// # use reel_llm::{BaseLlm, LlmError, LlmRequest, LlmStream};
/// use reel_extract::LlmExtractor;
/// use serde_json::json;
/// # struct Model;
/// # impl BaseLlm for Model {
/// #     fn model_id(&self) -> &str { "gemini-2.5-flash" }
/// #     fn generate_stream(&self, _: LlmRequest) -> BoxFuture<'_, Result<LlmStream, LlmError>> {
/// #         unimplemented!()
/// #     }
/// # }
/// # let llm: Arc<dyn BaseLlm> = Arc::new(Model);
///
/// let sentiment = LlmExtractor::new(
///     "SentimentAnalysis",
///     llm,
///     "Extract the customer's emotional state.",
///     3,
/// )
/// .with_schema(json!({
///     "type": "object",
///     "properties": {"sentiment": {"type": "string", "enum": ["positive", "neutral", "negative"]}}
/// }))
/// .with_min_words(5); // skip "uh huh", "ok", "yes" turns
/// ```
#[derive(Clone)]
pub struct LlmExtractor {
    name: String,
    llm: Arc<dyn BaseLlm>,
    prompt: String,
    window: usize,
    schema: Option<Value>,
    min_words: usize,
    trigger: ExtractionTrigger,
}

impl LlmExtractor {
    /// An extractor named `name` asking `llm`, with `prompt`, about the last `window`
    /// turns.
    pub fn new(
        name: impl Into<String>,
        llm: Arc<dyn BaseLlm>,
        prompt: impl Into<String>,
        window: usize,
    ) -> Self {
        LlmExtractor {
            name: name.into(),
            llm,
            prompt: prompt.into(),
            window,
            schema: None,
            min_words: 0,
            trigger: ExtractionTrigger::EveryTurn,
        }
    }

    /// Asks for JSON matching `schema` (an OpenAPI-style schema, as the Gemini API takes).
    pub fn with_schema(mut self, schema: Value) -> Self {
        self.schema = Some(schema);
        self
    }

    /// Skips turns whose user said fewer than `words` words (the last turn of the window).
    pub fn with_min_words(mut self, words: usize) -> Self {
        self.min_words = words;
        self
    }

    /// Runs at `trigger` instead of every turn.
    pub fn with_trigger(mut self, trigger: ExtractionTrigger) -> Self {
        self.trigger = trigger;
        self
    }

    /// The model it asks.
    pub fn llm(&self) -> &Arc<dyn BaseLlm> {
        &self.llm
    }

    /// The request it sends for `window`.
    ///
    /// ```
    /// # use std::sync::Arc;
    /// # use futures_util::future::BoxFuture;
    /// # use reel_llm::{BaseLlm, LlmError, LlmRequest, LlmStream};
    /// use reel_extract::LlmExtractor;
    /// use reel_actors::transcript::TranscriptTurn;
    /// use serde_json::json;
    /// # struct Model;
    /// # impl BaseLlm for Model {
    /// #     fn model_id(&self) -> &str { "gemini-2.5-flash" }
    /// #     fn generate_stream(&self, _: LlmRequest) -> BoxFuture<'_, Result<LlmStream, LlmError>> {
    /// #         unimplemented!()
    /// #     }
    /// # }
    ///
    /// let extractor = LlmExtractor::new("Mood", Arc::new(Model), "Extract the mood.", 3);
    /// let request = extractor.request(&[TranscriptTurn::new(1, "I'm fine", "Great!", 0)]);
    /// assert_eq!(
    ///     serde_json::to_value(&request).unwrap(),
    ///     json!({
    ///         "model": "gemini-2.5-flash",
    ///         "systemInstruction": "Extract the mood.",
    ///         "contents": [{"role": "user", "parts": [{"text":
    ///             "Conversation (oldest turn first):\n\n[Turn 1]\nUser: I'm fine\nModel: Great!\n\n\
    ///              Answer with one JSON object."}]}],
    ///         "generationConfig": {"temperature": 0.0, "responseMimeType": "application/json"}
    ///     })
    /// );
    /// ```
    pub fn request(&self, window: &[TranscriptTurn]) -> LlmRequest {
        let conversation = format!(
            "Conversation (oldest turn first):\n\n{}\n\nAnswer with one JSON object.",
            format_turns(window)
        );
        let request = LlmRequest::new(self.llm.model_id())
            .system(self.prompt.clone())
            .user(conversation)
            .setting("temperature", json!(0.0));
        match &self.schema {
            Some(schema) => request.json_schema(schema.clone()),
            None => request.setting("responseMimeType", json!("application/json")),
        }
    }
}

impl TurnExtractor for LlmExtractor {
    fn name(&self) -> &str {
        &self.name
    }

    fn window_size(&self) -> usize {
        self.window
    }

    fn should_extract(&self, window: &[TranscriptTurn]) -> bool {
        window
            .last()
            .is_some_and(|turn| turn.user_words() >= self.min_words)
    }

    fn extract<'a>(
        &'a self,
        window: &'a [TranscriptTurn],
        _ctx: &'a ExtractionContext,
    ) -> BoxFuture<'a, Result<Value, ExtractionError>> {
        let request = self.request(window);
        Box::pin(async move {
            let answer =
                self.llm
                    .generate(request)
                    .await
                    .map_err(|source| ExtractionError::Llm {
                        extractor: self.name.clone(),
                        source,
                    })?;
            answer.json().map_err(|source| ExtractionError::NotJson {
                extractor: self.name.clone(),
                source,
                excerpt: answer.text.chars().take(EXCERPT_CHARS).collect(),
            })
        })
    }

    fn trigger(&self) -> ExtractionTrigger {
        self.trigger
    }

    fn intercept(&self, interceptor: &dyn LlmInterceptor) -> Option<Arc<dyn TurnExtractor>> {
        let mut wrapped = self.clone();
        wrapped.llm = interceptor.wrap(Arc::clone(&self.llm));
        Some(Arc::new(wrapped))
    }
}

impl fmt::Debug for LlmExtractor {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("LlmExtractor")
            .field("name", &self.name)
            .field("model", &self.llm.model_id())
            .field("window", &self.window)
            .field("schema", &self.schema.is_some())
            .field("min_words", &self.min_words)
            .field("trigger", &self.trigger)
            .finish_non_exhaustive()
    }
}
