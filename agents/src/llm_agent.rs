//! [`LlmTextAgent`]: one model call over the state's `input`, through [`BaseLlm`].

use std::sync::Arc;

use futures_util::future::BoxFuture;
use reel_actors::state::State;
use reel_llm::{BaseLlm, LlmRequest};
use serde_json::Value;

use crate::agent::{INPUT_KEY, OUTPUT_KEY, write};
use crate::{AgentError, TextAgent};

/// The core agent: sends its instruction and the state's [`INPUT_KEY`] to the model
/// through [`BaseLlm::generate`], writes the answer to [`OUTPUT_KEY`] and returns it.
///
/// Every call goes through the model it was given, so a model wrapped in a
/// [`reel_llm::Cassette`] records the call, and a cassette replay answers it with no model
/// call. A missing `input` is sent as an empty user turn. The call is made as this agent's
/// ([`reel_llm::in_agent`]), so a [`reel_llm::TraceRecorder`] wrapping the model records it
/// as this agent's step.
pub struct LlmTextAgent {
    name: String,
    llm: Arc<dyn BaseLlm>,
    instruction: Option<String>,
    temperature: Option<f64>,
    max_output_tokens: Option<u32>,
}

impl LlmTextAgent {
    /// An agent called `name` asking `llm`.
    pub fn new(name: impl Into<String>, llm: Arc<dyn BaseLlm>) -> Self {
        LlmTextAgent {
            name: name.into(),
            llm,
            instruction: None,
            temperature: None,
            max_output_tokens: None,
        }
    }

    /// The system instruction.
    #[must_use]
    pub fn instruction(mut self, instruction: impl Into<String>) -> Self {
        self.instruction = Some(instruction.into());
        self
    }

    /// The sampling temperature (`generationConfig.temperature`).
    #[must_use]
    pub fn temperature(mut self, temperature: f64) -> Self {
        self.temperature = Some(temperature);
        self
    }

    /// The answer's length cap (`generationConfig.maxOutputTokens`).
    #[must_use]
    pub fn max_output_tokens(mut self, tokens: u32) -> Self {
        self.max_output_tokens = Some(tokens);
        self
    }

    /// The request this agent sends for `input`.
    pub fn request(&self, input: &str) -> LlmRequest {
        let mut request = LlmRequest::new(self.llm.model_id());
        if let Some(instruction) = &self.instruction {
            request = request.system(instruction.clone());
        }
        if let Some(temperature) = self.temperature {
            request = request.setting("temperature", Value::from(temperature));
        }
        if let Some(tokens) = self.max_output_tokens {
            request = request.setting("maxOutputTokens", Value::from(tokens));
        }
        request.user(input)
    }
}

impl std::fmt::Debug for LlmTextAgent {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LlmTextAgent")
            .field("name", &self.name)
            .field("model", &self.llm.model_id())
            .field("instruction", &self.instruction)
            .finish_non_exhaustive()
    }
}

impl TextAgent for LlmTextAgent {
    fn name(&self) -> &str {
        &self.name
    }

    fn run<'a>(&'a self, state: &'a State) -> BoxFuture<'a, Result<String, AgentError>> {
        Box::pin(async move {
            let input = state.get::<String>(INPUT_KEY).unwrap_or_default();
            let call = self.llm.generate(self.request(&input));
            let response =
                reel_llm::in_agent(self.name.as_str(), call)
                    .await
                    .map_err(|source| AgentError::Llm {
                        agent: self.name.clone(),
                        source,
                    })?;
            write(state, &self.name, OUTPUT_KEY, &response.text).await?;
            Ok(response.text)
        })
    }
}
