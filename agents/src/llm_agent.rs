//! [`LlmTextAgent`]: a model call over the state's `input`, through [`BaseLlm`], with a
//! tool loop when it has tools.

use std::sync::Arc;

use futures_util::future::BoxFuture;
use reel_actors::state::State;
use reel_actors::tools::ToolDispatcher;
use reel_llm::{BaseLlm, LlmRequest, LlmResponse};
use serde_json::Value;

use crate::agent::{INPUT_KEY, OUTPUT_KEY, write};
use crate::tool_round::run_tool_calls;
use crate::{AgentError, TextAgent};

/// How many rounds of tool calls an [`LlmTextAgent`] runs unless told otherwise
/// ([`LlmTextAgent::max_tool_rounds`]).
pub const DEFAULT_MAX_TOOL_ROUNDS: usize = 8;

/// The core agent: sends its instruction and the state's [`INPUT_KEY`] to the model
/// through [`BaseLlm::generate`], writes the answer to [`OUTPUT_KEY`] and returns it.
///
/// **Tools.** Given a [`ToolDispatcher`] ([`LlmTextAgent::tools`]), the request offers the
/// model its declarations, and the agent loops: generate; if the answer calls functions, run
/// them (all of a round's calls at once, on this task, each under its timeout, its state
/// writes settled when it is done), append the model's turn and a turn of their responses
/// in call order, and generate again — until an answer calls nothing, whose text is the
/// output. A tool's failure (an unknown tool, bad arguments, an error, a timeout) goes back
/// to the model as an error response (`{"error": "…"}`) for it to read, not as the agent's
/// error. After [`LlmTextAgent::max_tool_rounds`] rounds, an answer that still calls tools
/// is [`AgentError::ToolRounds`].
///
/// Every call goes through the model it was given, so a model wrapped in a
/// [`reel_llm::Cassette`] records each call of the loop (the tools offered, the calls made,
/// the responses sent back), and a cassette replay answers them with no model call; the
/// tools run again in the replay, as a session replay's do, and a response that differs
/// from the recorded one is a cassette miss. A missing `input` is sent as an empty user
/// turn. The calls are made as this agent's ([`reel_llm::in_agent`]), so a
/// [`reel_llm::TraceRecorder`] wrapping the model records each as this agent's step, with
/// its tool calls and their results.
pub struct LlmTextAgent {
    name: String,
    llm: Arc<dyn BaseLlm>,
    instruction: Option<String>,
    temperature: Option<f64>,
    max_output_tokens: Option<u32>,
    tools: Option<Arc<ToolDispatcher>>,
    max_tool_rounds: usize,
    writes_output: bool,
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
            tools: None,
            max_tool_rounds: DEFAULT_MAX_TOOL_ROUNDS,
            writes_output: true,
        }
    }

    /// Whether the answer is written to [`OUTPUT_KEY`] (yes by default). A wrapper that
    /// judges the answer before it counts (a composed agent's `G::` guards) turns it off
    /// and writes the key itself once the answer holds.
    #[must_use]
    pub fn writes_output(mut self, writes: bool) -> Self {
        self.writes_output = writes;
        self
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

    /// The tools the model may call (their timeouts and execution modes as the dispatcher
    /// holds them; a confirmation provider on it is not consulted).
    #[must_use]
    pub fn tools(self, tools: ToolDispatcher) -> Self {
        self.shared_tools(Arc::new(tools))
    }

    /// [`LlmTextAgent::tools`], with a dispatcher shared with other agents.
    #[must_use]
    pub fn shared_tools(mut self, tools: Arc<ToolDispatcher>) -> Self {
        self.tools = Some(tools);
        self
    }

    /// At most `rounds` rounds of tool calls per run (default
    /// [`DEFAULT_MAX_TOOL_ROUNDS`]); `0` runs no tool, so any call is
    /// [`AgentError::ToolRounds`].
    #[must_use]
    pub fn max_tool_rounds(mut self, rounds: usize) -> Self {
        self.max_tool_rounds = rounds;
        self
    }

    /// The first request this agent sends for `input`.
    pub fn request(&self, input: &str) -> LlmRequest {
        let mut request = LlmRequest::new(self.llm.model_id());
        if let Some(instruction) = &self.instruction {
            request = request.system(instruction.clone());
        }
        if let Some(tools) = &self.tools {
            request = request.functions(tools.declarations());
        }
        if let Some(temperature) = self.temperature {
            request = request.setting("temperature", Value::from(temperature));
        }
        if let Some(tokens) = self.max_output_tokens {
            request = request.setting("maxOutputTokens", Value::from(tokens));
        }
        request.user(input)
    }

    /// One model call, made as this agent's.
    async fn generate(&self, request: LlmRequest) -> Result<LlmResponse, AgentError> {
        let call = self.llm.generate(request);
        reel_llm::in_agent(self.name.as_str(), call)
            .await
            .map_err(|source| AgentError::Llm {
                agent: self.name.clone(),
                source,
            })
    }
}

impl std::fmt::Debug for LlmTextAgent {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LlmTextAgent")
            .field("name", &self.name)
            .field("model", &self.llm.model_id())
            .field("instruction", &self.instruction)
            .field("tools", &self.tools.as_ref().map(|tools| tools.names()))
            .field("max_tool_rounds", &self.max_tool_rounds)
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
            let mut request = self.request(&input);
            let mut rounds = 0;
            let empty = ToolDispatcher::new();
            let response = loop {
                let response = self.generate(request.clone()).await?;
                if response.function_calls.is_empty() {
                    break response;
                }
                if rounds == self.max_tool_rounds {
                    return Err(AgentError::ToolRounds {
                        agent: self.name.clone(),
                        bound: self.max_tool_rounds,
                        calls: response
                            .function_calls
                            .iter()
                            .map(|call| call.name.clone().unwrap_or_default())
                            .collect(),
                    });
                }
                rounds += 1;
                let tools = self.tools.as_deref().unwrap_or(&empty);
                let responses =
                    run_tool_calls(&self.name, tools, &response.function_calls, state).await?;
                request = request
                    .content(response.model_content())
                    .function_responses(responses);
            };
            if self.writes_output {
                write(state, &self.name, OUTPUT_KEY, &response.text).await?;
            }
            Ok(response.text)
        })
    }
}
