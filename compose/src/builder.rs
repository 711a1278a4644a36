//! [`AgentBuilder`]: a text agent's configuration, copy-on-write, built into a
//! [`ComposedAgent`].

use std::sync::Arc;

use reel_agents::{Decisions, SharedAgent};
use reel_llm::BaseLlm;

use crate::agent::ComposedAgent;
use crate::{
    Artifacts, ContextPolicy, Guards, Middleware, Prompt, RequestProcessor, RequestProcessorChain,
    ResponseProcessor, ResponseProcessorChain, Tools,
};

/// A text agent's configuration: its model and sampling, its instruction, its context
/// policy, tools, middleware, artifacts and guards, and its data contract (the keys it
/// reads and writes). Every setter returns a new builder (copy-on-write: clone a builder
/// to use it as a template). [`AgentBuilder::build`] makes a [`ComposedAgent`] around an
/// [`LlmTextAgent`](reel_agents::LlmTextAgent); the operators `>>`, `|`, `*`, `/` make a
/// [`Composable`](crate::Composable) tree.
///
/// ```
/// use reel_compose::{AgentBuilder, P};
///
/// let base = AgentBuilder::new("analyst")
///     .instruction(P::role("a data analyst") + P::task("Summarise the figures"))
///     .temperature(0.3);
/// let conservative = base.clone().temperature(0.1);
/// assert_eq!(base.config().temperature, Some(0.3));
/// assert_eq!(conservative.config().temperature, Some(0.1));
/// ```
#[derive(Debug, Clone)]
pub struct AgentBuilder {
    pub(crate) config: AgentConfig,
}

/// What an [`AgentBuilder`] holds.
#[derive(Debug, Clone, Default)]
#[non_exhaustive]
pub struct AgentConfig {
    /// The agent's name (in errors, decisions, traces and contracts).
    pub name: String,
    /// The model asked, replacing the `BaseLlm`'s own (`None`: the `BaseLlm`'s).
    pub model: Option<String>,
    /// The instruction.
    pub instruction: Prompt,
    /// `generationConfig.temperature`.
    pub temperature: Option<f64>,
    /// `generationConfig.topP`.
    pub top_p: Option<f64>,
    /// `generationConfig.topK`.
    pub top_k: Option<u32>,
    /// `generationConfig.maxOutputTokens`.
    pub max_output_tokens: Option<u32>,
    /// `generationConfig.thinkingConfig.thinkingBudget`.
    pub thinking_budget: Option<u32>,
    /// The state keys it reads (its contract).
    pub reads: Vec<String>,
    /// The state keys it writes (its contract).
    pub writes: Vec<String>,
    /// The state key its output is written to, besides `output`.
    pub output_key: Option<String>,
    /// The policy over the history it sends.
    pub context: ContextPolicy,
    /// Its tools.
    pub tools: Tools,
    /// The middleware around its model call.
    pub middleware: Middleware,
    /// Its input and output artifacts.
    pub artifacts: Artifacts,
    /// The guards on its output.
    pub guards: Guards,
    /// The processors its requests go through before the model sees them.
    pub request_processors: RequestProcessorChain,
    /// The processors the model's answers go through before it reads them.
    pub response_processors: ResponseProcessorChain,
}

impl AgentBuilder {
    /// A builder for the agent `name`.
    pub fn new(name: impl Into<String>) -> Self {
        AgentBuilder {
            config: AgentConfig {
                name: name.into(),
                ..AgentConfig::default()
            },
        }
    }

    /// What it holds.
    pub fn config(&self) -> &AgentConfig {
        &self.config
    }

    /// The agent's name.
    pub fn name(&self) -> &str {
        &self.config.name
    }

    /// Asks `model` (replacing the `BaseLlm`'s own model in each request).
    #[must_use]
    pub fn model(mut self, model: impl Into<String>) -> Self {
        self.config.model = Some(model.into());
        self
    }

    /// The instruction: text, or a [`Prompt`] composed with `P::`.
    #[must_use]
    pub fn instruction(mut self, instruction: impl Into<Prompt>) -> Self {
        self.config.instruction = instruction.into();
        self
    }

    /// The sampling temperature.
    #[must_use]
    pub fn temperature(mut self, temperature: f64) -> Self {
        self.config.temperature = Some(temperature);
        self
    }

    /// Nucleus sampling's `topP`.
    #[must_use]
    pub fn top_p(mut self, top_p: f64) -> Self {
        self.config.top_p = Some(top_p);
        self
    }

    /// `topK`.
    #[must_use]
    pub fn top_k(mut self, top_k: u32) -> Self {
        self.config.top_k = Some(top_k);
        self
    }

    /// The answer's length cap in tokens.
    #[must_use]
    pub fn max_output_tokens(mut self, tokens: u32) -> Self {
        self.config.max_output_tokens = Some(tokens);
        self
    }

    /// The thinking budget in tokens.
    #[must_use]
    pub fn thinking(mut self, budget: u32) -> Self {
        self.config.thinking_budget = Some(budget);
        self
    }

    /// Declares state keys the agent reads (checked by
    /// [`check_contracts`](crate::check_contracts)): one (`.reads("customer_name")`, as the
    /// seed writes it) or several (`.reads(["a", "b"])`).
    #[must_use]
    pub fn reads(mut self, keys: impl Keys) -> Self {
        self.config.reads.extend(keys.into_keys());
        self
    }

    /// Declares state keys the agent writes: one or several, as [`AgentBuilder::reads`].
    #[must_use]
    pub fn writes(mut self, keys: impl Keys) -> Self {
        self.config.writes.extend(keys.into_keys());
        self
    }

    /// Writes the agent's output to `key` too (and declares the write).
    #[must_use]
    pub fn output_key(mut self, key: &str) -> Self {
        self.config.output_key = Some(key.to_owned());
        self
    }

    /// The policy over the history the agent sends (`C::`).
    #[must_use]
    pub fn context(mut self, policy: ContextPolicy) -> Self {
        self.config.context = self.config.context + policy;
        self
    }

    /// Adds tools (`T::`).
    #[must_use]
    pub fn tools(mut self, tools: Tools) -> Self {
        self.config.tools = std::mem::take(&mut self.config.tools) | tools;
        self
    }

    /// Adds Google Search (`T::google_search()`).
    #[must_use]
    pub fn google_search(self) -> Self {
        self.tools(crate::T::google_search())
    }

    /// Adds middleware layers (`M::`), inside those already added.
    #[must_use]
    pub fn middleware(mut self, middleware: Middleware) -> Self {
        self.config.middleware = std::mem::take(&mut self.config.middleware) | middleware;
        self
    }

    /// Declares artifacts (`A::`).
    #[must_use]
    pub fn artifacts(mut self, artifacts: Artifacts) -> Self {
        self.config.artifacts = std::mem::take(&mut self.config.artifacts) + artifacts;
        self
    }

    /// Adds output guards (`G::`).
    #[must_use]
    pub fn guard(mut self, guards: Guards) -> Self {
        self.config.guards = std::mem::take(&mut self.config.guards) | guards;
        self
    }

    /// Adds a request processor, after those already added: every request the agent
    /// makes (each round of its tool loop too) goes through it before the model — or the
    /// cassette the model is — sees it, so a replay sends and matches the same requests.
    ///
    /// ```
    /// use reel_compose::{AgentBuilder, InstructionInserter};
    ///
    /// let agent = AgentBuilder::new("writer")
    ///     .instruction("Write a haiku.")
    ///     .request_processor(InstructionInserter::new("Answer in French."));
    /// assert_eq!(agent.config().request_processors.names(), ["instruction_inserter"]);
    /// ```
    #[must_use]
    pub fn request_processor(mut self, processor: impl RequestProcessor) -> Self {
        self.config.request_processors.add(processor);
        self
    }

    /// Adds a response processor, after those already added: every answer the model (or
    /// the cassette) gives goes through it before the agent reads it.
    #[must_use]
    pub fn response_processor(mut self, processor: impl ResponseProcessor) -> Self {
        self.config.response_processors.add(processor);
        self
    }

    /// Every key the agent reads: its declared reads, its `P::with_state` and
    /// `C::from_state` keys and its input artifacts.
    pub fn declared_reads(&self) -> Vec<String> {
        let config = &self.config;
        let mut keys = config.reads.clone();
        keys.extend(config.instruction.reads());
        keys.extend(config.context.reads());
        keys.extend(config.artifacts.all_inputs().iter().map(|a| a.name.clone()));
        unique(keys)
    }

    /// Every key the agent writes: its declared writes, its output key and its output
    /// artifacts.
    pub fn declared_writes(&self) -> Vec<String> {
        let config = &self.config;
        let mut keys = config.writes.clone();
        keys.extend(config.output_key.clone());
        keys.extend(
            config
                .artifacts
                .all_outputs()
                .iter()
                .map(|a| a.name.clone()),
        );
        unique(keys)
    }

    /// The agent, asking `llm`; its timing-dependent middleware decides live and records
    /// nothing (see [`AgentBuilder::build_with`]).
    pub fn build(self, llm: Arc<dyn BaseLlm>) -> ComposedAgent {
        ComposedAgent::new(self.config, llm, None)
    }

    /// The agent, asking `llm`, its timing-dependent middleware recording into (or
    /// replaying from) `decisions`.
    pub fn build_with(self, llm: Arc<dyn BaseLlm>, decisions: &Decisions) -> ComposedAgent {
        ComposedAgent::new(self.config, llm, Some(decisions.clone()))
    }

    /// [`AgentBuilder::build`], shared.
    pub fn build_shared(self, llm: Arc<dyn BaseLlm>) -> SharedAgent {
        Arc::new(self.build(llm))
    }
}

/// One state key or several: `"key"`, `&["a", "b"]`, `["a", "b"]`, `vec![..]`.
pub trait Keys {
    /// The keys, in order.
    fn into_keys(self) -> Vec<String>;
}

impl Keys for &str {
    fn into_keys(self) -> Vec<String> {
        vec![self.to_owned()]
    }
}

impl Keys for String {
    fn into_keys(self) -> Vec<String> {
        vec![self]
    }
}

impl Keys for &[&str] {
    fn into_keys(self) -> Vec<String> {
        self.iter().map(|key| (*key).to_owned()).collect()
    }
}

impl<const N: usize> Keys for &[&str; N] {
    fn into_keys(self) -> Vec<String> {
        self.iter().map(|key| (*key).to_owned()).collect()
    }
}

impl<const N: usize> Keys for [&str; N] {
    fn into_keys(self) -> Vec<String> {
        self.iter().map(|key| (*key).to_owned()).collect()
    }
}

impl Keys for Vec<String> {
    fn into_keys(self) -> Vec<String> {
        self
    }
}

pub(crate) fn unique(keys: Vec<String>) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for key in keys {
        if !out.contains(&key) {
            out.push(key);
        }
    }
    out
}
