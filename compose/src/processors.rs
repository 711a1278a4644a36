//! Request and response processors: the seed's `RequestProcessor` / `ResponseProcessor`
//! and their chains, for text agents.
//!
//! A [`RequestProcessor`] transforms the [`LlmRequest`] before the model call; a
//! [`ResponseProcessor`] the [`LlmResponse`] after it. [`ProcessedLlm`] puts two chains
//! around any [`BaseLlm`]; [`AgentBuilder::request_processor`](crate::AgentBuilder::request_processor)
//! and [`AgentBuilder::response_processor`](crate::AgentBuilder::response_processor) put
//! them around a composed agent's model.
//!
//! The chains sit **outside** the model the agent was given: when that model is a
//! cassette (recording or replaying), the cassette sees the request as the processors
//! left it. A replay runs the same processors, so it sends — and the cassette matches on —
//! the same processed requests, and the recorded answers go through the same response
//! processors. A processor must therefore be deterministic (no clock, no random): one that
//! is not makes a replay miss.

use std::fmt;
use std::sync::Arc;

use futures_util::future::BoxFuture;
use reel_llm::{BaseLlm, LlmChunk, LlmError, LlmRequest, LlmResponse, LlmStream, collect_stream};

/// A processor refused the call: which one, at which end, and why.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ProcessorError {
    /// A request processor refused the request before it was sent.
    #[error("request processor `{processor}` refused the request: {reason}")]
    Request {
        /// The processor's name.
        processor: String,
        /// What was wrong.
        reason: String,
    },
    /// A response processor refused the model's answer.
    #[error("response processor `{processor}` refused the response: {reason}")]
    Response {
        /// The processor's name.
        processor: String,
        /// What was wrong.
        reason: String,
    },
}

impl ProcessorError {
    /// The request processor `processor` refused the request because of `reason`.
    pub fn request(processor: impl Into<String>, reason: impl Into<String>) -> Self {
        ProcessorError::Request {
            processor: processor.into(),
            reason: reason.into(),
        }
    }

    /// The response processor `processor` refused the response because of `reason`.
    pub fn response(processor: impl Into<String>, reason: impl Into<String>) -> Self {
        ProcessorError::Response {
            processor: processor.into(),
            reason: reason.into(),
        }
    }
}

impl From<ProcessorError> for LlmError {
    fn from(error: ProcessorError) -> Self {
        let (processor, message) = match &error {
            ProcessorError::Request { processor, .. }
            | ProcessorError::Response { processor, .. } => (processor.clone(), error.to_string()),
        };
        LlmError::Processor { processor, message }
    }
}

/// Transforms a request before it reaches the model.
///
/// ```
/// use futures_util::future::BoxFuture;
/// use reel_compose::{ProcessorError, RequestProcessor};
/// use reel_llm::LlmRequest;
///
/// /// Refuses a request holding no user text.
/// struct NonEmpty;
///
/// impl RequestProcessor for NonEmpty {
///     fn name(&self) -> &str {
///         "non_empty"
///     }
///
///     fn process_request(
///         &self,
///         request: LlmRequest,
///     ) -> BoxFuture<'_, Result<LlmRequest, ProcessorError>> {
///         Box::pin(async move {
///             match request.last_user_text() {
///                 Some(text) if !text.trim().is_empty() => Ok(request),
///                 _ => Err(ProcessorError::request("non_empty", "no user text")),
///             }
///         })
///     }
/// }
///
/// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
/// let refused = NonEmpty.process_request(LlmRequest::new("m").user(" ")).await;
/// assert_eq!(
///     refused.unwrap_err().to_string(),
///     "request processor `non_empty` refused the request: no user text"
/// );
/// # });
/// ```
pub trait RequestProcessor: Send + Sync + 'static {
    /// Its name (in errors and in [`RequestProcessorChain::names`]).
    fn name(&self) -> &str;

    /// The request to send in place of `request`, or why none may be sent.
    fn process_request(
        &self,
        request: LlmRequest,
    ) -> BoxFuture<'_, Result<LlmRequest, ProcessorError>>;
}

/// Transforms the model's whole answer before the agent reads it.
///
/// ```
/// use futures_util::future::BoxFuture;
/// use reel_compose::{ProcessorError, ResponseProcessor};
/// use reel_llm::LlmResponse;
///
/// /// Drops Markdown code fences from the answer.
/// struct Unfence;
///
/// impl ResponseProcessor for Unfence {
///     fn name(&self) -> &str {
///         "unfence"
///     }
///
///     fn process_response(
///         &self,
///         mut response: LlmResponse,
///     ) -> BoxFuture<'_, Result<LlmResponse, ProcessorError>> {
///         response.text = response.text.replace("```", "");
///         Box::pin(async move { Ok(response) })
///     }
/// }
///
/// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
/// let answer = LlmResponse { text: "```x```".into(), ..LlmResponse::default() };
/// assert_eq!(Unfence.process_response(answer).await.unwrap().text, "x");
/// # });
/// ```
pub trait ResponseProcessor: Send + Sync + 'static {
    /// Its name (in errors and in [`ResponseProcessorChain::names`]).
    fn name(&self) -> &str;

    /// The answer to hand on in place of `response`, or why it may not be used.
    fn process_response(
        &self,
        response: LlmResponse,
    ) -> BoxFuture<'_, Result<LlmResponse, ProcessorError>>;
}

/// Processors run in order, each on the one before's output; the first refusal ends the
/// chain. Used as [`RequestProcessorChain`] (before the model call) and
/// [`ResponseProcessorChain`] (after it).
pub struct ProcessorChain<P: ?Sized> {
    processors: Vec<Arc<P>>,
}

/// Request processors run in order, each on the one before's output.
///
/// ```
/// use reel_compose::{InstructionInserter, RequestProcessorChain};
/// use reel_llm::LlmRequest;
///
/// let mut chain = RequestProcessorChain::new();
/// chain.add(InstructionInserter::new("Be concise."));
/// chain.add(InstructionInserter::new("Respond in English."));
/// assert_eq!(chain.names(), ["instruction_inserter", "instruction_inserter"]);
/// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
/// let request = chain.process(LlmRequest::new("gemini-2.5-flash").user("hi")).await.unwrap();
/// assert_eq!(request.system_instruction.as_deref(), Some("Be concise.\nRespond in English."));
/// # });
/// ```
pub type RequestProcessorChain = ProcessorChain<dyn RequestProcessor>;

/// Response processors run in order, each on the one before's output.
///
/// ```
/// use futures_util::future::BoxFuture;
/// use reel_compose::{ProcessorError, ResponseProcessor, ResponseProcessorChain};
/// use reel_llm::LlmResponse;
///
/// struct Trim;
/// impl ResponseProcessor for Trim {
///     fn name(&self) -> &str { "trim" }
///     fn process_response(&self, mut r: LlmResponse) -> BoxFuture<'_, Result<LlmResponse, ProcessorError>> {
///         r.text = r.text.trim().to_owned();
///         Box::pin(async move { Ok(r) })
///     }
/// }
///
/// let mut chain = ResponseProcessorChain::new();
/// chain.add(Trim);
/// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
/// let answer = LlmResponse { text: "  ok \n".into(), ..LlmResponse::default() };
/// assert_eq!(chain.process(answer).await.unwrap().text, "ok");
/// # });
/// ```
pub type ResponseProcessorChain = ProcessorChain<dyn ResponseProcessor>;

mod sealed {
    use futures_util::future::BoxFuture;

    use super::ProcessorError;

    /// What a chain needs of its processors: the two processor traits, one shape.
    pub trait Stage: Send + Sync {
        /// What passes through the chain.
        type Item: Send;

        /// The processor's name.
        fn stage_name(&self) -> &str;

        /// The processor run on `item`.
        fn run(&self, item: Self::Item) -> BoxFuture<'_, Result<Self::Item, ProcessorError>>;
    }
}

impl<'a> sealed::Stage for dyn RequestProcessor + 'a {
    type Item = LlmRequest;

    fn stage_name(&self) -> &str {
        self.name()
    }

    fn run(&self, item: LlmRequest) -> BoxFuture<'_, Result<LlmRequest, ProcessorError>> {
        self.process_request(item)
    }
}

impl<'a> sealed::Stage for dyn ResponseProcessor + 'a {
    type Item = LlmResponse;

    fn stage_name(&self) -> &str {
        self.name()
    }

    fn run(&self, item: LlmResponse) -> BoxFuture<'_, Result<LlmResponse, ProcessorError>> {
        self.process_response(item)
    }
}

impl<P: ?Sized> Clone for ProcessorChain<P> {
    fn clone(&self) -> Self {
        ProcessorChain {
            processors: self.processors.clone(),
        }
    }
}

impl<P: ?Sized> Default for ProcessorChain<P> {
    fn default() -> Self {
        ProcessorChain {
            processors: Vec::new(),
        }
    }
}

impl<P: ?Sized + sealed::Stage> ProcessorChain<P> {
    /// An empty chain (it passes everything through).
    pub fn new() -> Self {
        ProcessorChain::default()
    }

    /// Adds the shared `processor` at the end.
    pub fn add_shared(&mut self, processor: Arc<P>) -> &mut Self {
        self.processors.push(processor);
        self
    }

    /// Adds the shared `processor` at the front (it runs first).
    pub fn prepend_shared(&mut self, processor: Arc<P>) -> &mut Self {
        self.processors.insert(0, processor);
        self
    }

    /// How many processors it holds.
    pub fn len(&self) -> usize {
        self.processors.len()
    }

    /// Whether it holds none.
    pub fn is_empty(&self) -> bool {
        self.processors.is_empty()
    }

    /// Its processors' names, in the order they run.
    pub fn names(&self) -> Vec<String> {
        self.processors
            .iter()
            .map(|p| p.stage_name().to_owned())
            .collect()
    }

    /// Runs every processor on `item` in order; the first refusal ends the chain.
    pub async fn process(&self, item: P::Item) -> Result<P::Item, ProcessorError> {
        let mut item = item;
        for processor in &self.processors {
            item = processor.run(item).await?;
        }
        Ok(item)
    }
}

impl RequestProcessorChain {
    /// Adds `processor` at the end.
    pub fn add(&mut self, processor: impl RequestProcessor) -> &mut Self {
        self.add_shared(Arc::new(processor))
    }

    /// Adds `processor` at the front (it runs first).
    pub fn prepend(&mut self, processor: impl RequestProcessor) -> &mut Self {
        self.prepend_shared(Arc::new(processor))
    }
}

impl ResponseProcessorChain {
    /// Adds `processor` at the end.
    pub fn add(&mut self, processor: impl ResponseProcessor) -> &mut Self {
        self.add_shared(Arc::new(processor))
    }

    /// Adds `processor` at the front (it runs first).
    pub fn prepend(&mut self, processor: impl ResponseProcessor) -> &mut Self {
        self.prepend_shared(Arc::new(processor))
    }
}

impl<P: ?Sized + sealed::Stage> fmt::Debug for ProcessorChain<P> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.names()).finish()
    }
}

/// A built-in request processor: adds a line to the system instruction (after the
/// instruction already there, on a new line; the whole instruction when there is none).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InstructionInserter {
    line: String,
}

impl InstructionInserter {
    /// Adds `line` to every request's system instruction.
    pub fn new(line: impl Into<String>) -> Self {
        InstructionInserter { line: line.into() }
    }
}

impl RequestProcessor for InstructionInserter {
    fn name(&self) -> &str {
        "instruction_inserter"
    }

    fn process_request(
        &self,
        mut request: LlmRequest,
    ) -> BoxFuture<'_, Result<LlmRequest, ProcessorError>> {
        request.system_instruction = Some(match request.system_instruction.take() {
            Some(existing) if !existing.is_empty() => format!("{existing}\n{}", self.line),
            _ => self.line.clone(),
        });
        Box::pin(async move { Ok(request) })
    }
}

/// A model with processor chains around it: each request goes through `requests` before
/// `inner` sees it, each answer through `responses` after.
///
/// With response processors, a streamed answer is collected and handed on as one chunk
/// (a processor reads the whole answer); with none, the stream passes through as it comes.
///
/// ```
/// use std::sync::Arc;
/// use futures_util::future::BoxFuture;
/// use reel_compose::{InstructionInserter, ProcessedLlm, RequestProcessorChain, ResponseProcessorChain};
/// use reel_llm::{BaseLlm, LlmChunk, LlmError, LlmRequest, LlmStream};
///
/// /// Answers with the system instruction it was sent.
/// struct Mirror;
/// impl BaseLlm for Mirror {
///     fn model_id(&self) -> &str { "mirror" }
///     fn generate_stream(&self, request: LlmRequest) -> BoxFuture<'_, Result<LlmStream, LlmError>> {
///         let chunk = LlmChunk::text(request.system_instruction.unwrap_or_default());
///         Box::pin(async move { Ok(Box::pin(futures_util::stream::iter([Ok(chunk)])) as LlmStream) })
///     }
/// }
///
/// let mut requests = RequestProcessorChain::new();
/// requests.add(InstructionInserter::new("Answer in French."));
/// // In an agent, `Mirror` would be the cassette: it sees the processed request.
/// let llm = ProcessedLlm::new(Arc::new(Mirror), requests, ResponseProcessorChain::new());
/// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
/// let answer = llm.generate(LlmRequest::new("mirror").system("Be kind.").user("hi")).await.unwrap();
/// assert_eq!(answer.text, "Be kind.\nAnswer in French.");
/// # });
/// ```
#[derive(Clone)]
pub struct ProcessedLlm {
    inner: Arc<dyn BaseLlm>,
    requests: RequestProcessorChain,
    responses: ResponseProcessorChain,
}

impl ProcessedLlm {
    /// `inner` behind `requests` and `responses`.
    pub fn new(
        inner: Arc<dyn BaseLlm>,
        requests: RequestProcessorChain,
        responses: ResponseProcessorChain,
    ) -> Self {
        ProcessedLlm {
            inner,
            requests,
            responses,
        }
    }
}

impl fmt::Debug for ProcessedLlm {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ProcessedLlm")
            .field("model", &self.inner.model_id())
            .field("requests", &self.requests)
            .field("responses", &self.responses)
            .finish()
    }
}

impl BaseLlm for ProcessedLlm {
    fn model_id(&self) -> &str {
        self.inner.model_id()
    }

    fn generate_stream(&self, request: LlmRequest) -> BoxFuture<'_, Result<LlmStream, LlmError>> {
        Box::pin(async move {
            let request = self.requests.process(request).await?;
            let stream = self.inner.generate_stream(request).await?;
            if self.responses.is_empty() {
                return Ok(stream);
            }
            let response = self
                .responses
                .process(collect_stream(stream).await?)
                .await?;
            let chunk = LlmChunk {
                text: response.text,
                finish_reason: response.finish_reason,
                usage: response.usage,
                function_calls: response.function_calls,
            };
            Ok(Box::pin(futures_util::stream::iter([Ok(chunk)])) as LlmStream)
        })
    }

    fn generate(&self, request: LlmRequest) -> BoxFuture<'_, Result<LlmResponse, LlmError>> {
        Box::pin(async move {
            let request = self.requests.process(request).await?;
            let response = self.inner.generate(request).await?;
            Ok(self.responses.process(response).await?)
        })
    }
}
