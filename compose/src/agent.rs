//! [`ComposedAgent`]: what an [`AgentBuilder`](crate::AgentBuilder) builds, an
//! [`LlmTextAgent`] with the builder's request shaping, middleware, artifacts and guards
//! around it.

use std::sync::Arc;

use futures_util::future::BoxFuture;
use reel_actors::state::State;
use reel_actors::tools::ToolDispatcher;
use reel_agents::{
    AgentError, Decisions, INPUT_KEY, LlmTextAgent, OUTPUT_KEY, SharedAgent, TextAgent,
};
use reel_llm::{BaseLlm, LlmError, LlmRequest, LlmResponse, LlmStream};
use reel_protocol::{Content, Tool};
use serde_json::{Map, Value, json};

use crate::artifacts::{Artifact, validate};
use crate::builder::AgentConfig;
use crate::context_policy::HISTORY_KEY;
use crate::middleware::{AgentLayer, CostLlm, FallbackModelLlm, LayerCtx, LayerSpec, run_layered};
use crate::{Artifacts, ProcessedLlm, Tools};

/// A built agent: each run renders the instruction from the state, shapes the conversation
/// with its `C::` policy (a `C::summarize` step's summary call included, before the `M::`
/// layers: a cache hit still follows it), checks its input artifacts, makes one
/// [`LlmTextAgent`] call through its `M::` layers, then checks its output guards and
/// artifacts and writes its output keys.
///
/// Every model call goes through the `BaseLlm` it was built with, so a cassette records
/// and replays it as any agent's; a layer that reads the clock records what it decided in
/// the [`Decisions`] log given to [`AgentBuilder::build_with`](crate::AgentBuilder::build_with).
#[derive(Clone)]
pub struct ComposedAgent {
    inner: Arc<Inner>,
}

struct Inner {
    config: AgentConfig,
    llm: Arc<dyn BaseLlm>,
    decisions: Option<Decisions>,
    layers: Vec<Arc<dyn AgentLayer>>,
    /// The dispatcher of its `T::` function tools (`None` without any), or why it could
    /// not be made (two tools of one name: every run fails with it).
    dispatcher: Result<Option<Arc<ToolDispatcher>>, String>,
}

impl std::fmt::Debug for ComposedAgent {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ComposedAgent")
            .field("config", &self.inner.config)
            .field("model", &self.inner.llm.model_id())
            .finish_non_exhaustive()
    }
}

impl ComposedAgent {
    pub(crate) fn new(
        config: AgentConfig,
        llm: Arc<dyn BaseLlm>,
        decisions: Option<Decisions>,
    ) -> Self {
        let mut llm = llm;
        // `M::cost` sits next to the model, so each call is priced at the model it asked
        // (a fallback's at the fallback's), whatever order the layers are written in.
        for spec in &config.middleware.layers {
            if let LayerSpec::Cost(ledger) = spec {
                llm = Arc::new(CostLlm::new(llm, ledger.clone()));
            }
        }
        let mut layers = Vec::new();
        for spec in &config.middleware.layers {
            match spec {
                LayerSpec::FallbackModel(model) => {
                    llm = Arc::new(FallbackModelLlm::new(llm, model.clone()));
                }
                LayerSpec::Cost(_) => {}
                other => layers.extend(other.instantiate()),
            }
        }
        if !config.request_processors.is_empty() || !config.response_processors.is_empty() {
            // Outside the model it was given (a cassette, when recording or replaying), so
            // the cassette sees and matches the processed requests.
            llm = Arc::new(ProcessedLlm::new(
                llm,
                config.request_processors.clone(),
                config.response_processors.clone(),
            ));
        }
        let dispatcher = if config.tools.functions().is_empty() {
            Ok(None)
        } else {
            config
                .tools
                .dispatcher()
                .map(|dispatcher| Some(Arc::new(dispatcher)))
                .map_err(|error| format!("its tools: {error}"))
        };
        ComposedAgent {
            inner: Arc::new(Inner {
                config,
                llm,
                decisions,
                layers,
                dispatcher,
            }),
        }
    }

    /// What it was built from.
    pub fn config(&self) -> &AgentConfig {
        &self.inner.config
    }

    /// Its tools (`T::`): the function tools are offered in every request and the model's
    /// calls of them run through [`LlmTextAgent`]'s tool loop (up to its round bound); the
    /// built-in tools ([`Tools::declarations`]) are declared in every request and run by
    /// the API.
    pub fn tools(&self) -> &Tools {
        &self.inner.config.tools
    }

    /// This agent, shared.
    pub fn shared(&self) -> SharedAgent {
        Arc::new(self.clone())
    }

    /// The request this agent sends for `state` (what a run would send to the model).
    /// An error when its context policy calls a model (`C::summarize`): that request is
    /// [`ComposedAgent::request_async`]'s.
    pub fn request(&self, state: &State) -> Result<LlmRequest, AgentError> {
        let config = &self.inner.config;
        if config.context.calls_model() {
            return Err(AgentError::failed(
                &config.name,
                format!(
                    "its context policy `{}` calls a model: its request is request_async's",
                    config.context.label()
                ),
            ));
        }
        let history = self.history(state)?;
        let history = if config.context.is_empty() {
            history
        } else {
            config
                .context
                .apply_with_state(&history, &state.snapshot().to_json())
        };
        let input = state.get::<String>(INPUT_KEY).unwrap_or_default();
        let shape = self.shape(history);
        Ok(shape.apply(self.core(&shape, state)?.request(&input)))
    }

    /// The request this agent sends for `state`, its context policy applied whole: a
    /// `C::summarize` step makes its summary call (through the agent's model, as a run
    /// does, so a cassette records it).
    pub async fn request_async(&self, state: &State) -> Result<LlmRequest, AgentError> {
        let input = state.get::<String>(INPUT_KEY).unwrap_or_default();
        let shape = self.shape(self.shaped_history(state).await?);
        Ok(shape.apply(self.core(&shape, state)?.request(&input)))
    }

    /// The history at [`HISTORY_KEY`] as it is.
    fn history(&self, state: &State) -> Result<Vec<Content>, AgentError> {
        match state.get_raw(HISTORY_KEY) {
            None => Ok(Vec::new()),
            Some(value) => serde_json::from_value(value).map_err(|error| AgentError::BadInput {
                agent: self.inner.config.name.clone(),
                key: HISTORY_KEY.to_owned(),
                problem: format!("is not a list of conversation turns: {error}"),
            }),
        }
    }

    /// The history shaped by the whole context policy: a summary call goes through the
    /// agent's model (its cost, fallback and processor layers, then the cassette), asking
    /// the model its requests name, as this agent's call.
    async fn shaped_history(&self, state: &State) -> Result<Vec<Content>, AgentError> {
        let config = &self.inner.config;
        let history = self.history(state)?;
        if config.context.is_empty() {
            return Ok(history);
        }
        let llm = self.inner.llm.as_ref();
        let model = config
            .model
            .clone()
            .unwrap_or_else(|| llm.model_id().to_owned());
        let snapshot = state.snapshot().to_json();
        let shaping = config.context.apply_async(&history, &snapshot, llm, &model);
        reel_llm::in_agent(config.name.as_str(), shaping)
            .await
            .map_err(|error| {
                AgentError::failed(&config.name, format!("its context policy: {error}"))
            })
    }

    fn shape(&self, history: Vec<Content>) -> Shape {
        let config = &self.inner.config;
        let mut settings = Map::new();
        if let Some(top_p) = config.top_p {
            settings.insert("topP".into(), json!(top_p));
        }
        if let Some(top_k) = config.top_k {
            settings.insert("topK".into(), json!(top_k));
        }
        if let Some(budget) = config.thinking_budget {
            settings.insert("thinkingConfig".into(), json!({ "thinkingBudget": budget }));
        }
        Shape {
            model: config.model.clone(),
            settings,
            history,
            json_schema: json_request(&config.artifacts),
            builtins: config.tools.builtins().iter().map(|b| b.tool()).collect(),
        }
    }

    fn core(&self, shape: &Shape, state: &State) -> Result<LlmTextAgent, AgentError> {
        let config = &self.inner.config;
        let shaped: Arc<dyn BaseLlm> = Arc::new(ShapedLlm {
            inner: Arc::clone(&self.inner.llm),
            shape: shape.clone(),
        });
        // The guards judge the answer before anything is written: the core leaves
        // `OUTPUT_KEY` to `write_outputs` (which also writes a cached answer there).
        let mut core = LlmTextAgent::new(config.name.clone(), shaped).writes_output(false);
        let instruction = config.instruction.render(state);
        if !instruction.is_empty() {
            core = core.instruction(instruction);
        }
        if let Some(temperature) = config.temperature {
            core = core.temperature(temperature);
        }
        if let Some(tokens) = config.max_output_tokens {
            core = core.max_output_tokens(tokens);
        }
        match &self.inner.dispatcher {
            Ok(Some(dispatcher)) => core = core.shared_tools(Arc::clone(dispatcher)),
            Ok(None) => {}
            Err(problem) => return Err(AgentError::failed(&config.name, problem)),
        }
        Ok(core)
    }

    fn check_inputs(&self, state: &State) -> Result<(), AgentError> {
        let name = &self.inner.config.name;
        for artifact in self.inner.config.artifacts.all_inputs() {
            let bad = |problem: String| AgentError::BadInput {
                agent: name.clone(),
                key: artifact.name.clone(),
                problem,
            };
            let value = state
                .get_raw(&artifact.name)
                .ok_or_else(|| bad("is not set (an input artifact)".to_owned()))?;
            if artifact.is_text() && !value.is_string() {
                return Err(bad("is not text (a text input artifact)".to_owned()));
            }
            if let Some(schema) = &artifact.schema {
                validate(schema, &value).map_err(bad)?;
            }
        }
        Ok(())
    }

    async fn write_outputs(&self, state: &State, output: &str) -> Result<(), AgentError> {
        let config = &self.inner.config;
        let failed = |message: String| AgentError::failed(&config.name, message);
        config
            .guards
            .check(output)
            .map_err(|violation| failed(violation.to_string()))?;
        let outputs = config.artifacts.all_outputs();
        let json_outputs: Vec<&Artifact> = outputs.iter().filter(|a| a.is_json()).collect();
        let parsed = if json_outputs.is_empty() {
            None
        } else {
            Some(serde_json::from_str::<Value>(output).map_err(|error| {
                failed(format!(
                    "output artifact `{}`: the answer is not JSON: {error}",
                    json_outputs[0].name
                ))
            })?)
        };
        let mut writes: Vec<(String, Value)> =
            vec![(OUTPUT_KEY.to_owned(), Value::String(output.to_owned()))];
        for artifact in outputs {
            let value = if artifact.is_json() {
                let whole = parsed.clone().unwrap_or(Value::Null);
                if json_outputs.len() == 1 {
                    whole
                } else {
                    whole.get(&artifact.name).cloned().ok_or_else(|| {
                        failed(format!(
                            "output artifact `{}`: the answer has no `{}` field",
                            artifact.name, artifact.name
                        ))
                    })?
                }
            } else {
                Value::String(output.to_owned())
            };
            if let Some(schema) = &artifact.schema {
                validate(schema, &value).map_err(|problem| {
                    failed(format!("output artifact `{}` {problem}", artifact.name))
                })?;
            }
            writes.push((artifact.name.clone(), value));
        }
        if let Some(key) = &config.output_key {
            writes.push((key.clone(), Value::String(output.to_owned())));
        }
        for (key, value) in writes {
            state
                .set(&key, value)
                .await
                .map_err(|source| AgentError::State {
                    agent: config.name.clone(),
                    key,
                    source,
                })?;
        }
        Ok(())
    }
}

/// The request settings a composed agent adds to its `LlmTextAgent`'s request.
#[derive(Clone)]
struct Shape {
    model: Option<String>,
    settings: Map<String, Value>,
    history: Vec<Content>,
    json_schema: Option<Option<Value>>,
    /// The built-in tools' `tools` entries (after the function declarations).
    builtins: Vec<Tool>,
}

impl Shape {
    fn apply(&self, mut request: LlmRequest) -> LlmRequest {
        if let Some(model) = &self.model {
            request.model.clone_from(model);
        }
        for (key, value) in &self.settings {
            request = request.setting(key.clone(), value.clone());
        }
        match &self.json_schema {
            Some(Some(schema)) => request = request.json_schema(schema.clone()),
            Some(None) => request = request.setting("responseMimeType", json!("application/json")),
            None => {}
        }
        request.tools.extend(self.builtins.iter().cloned());
        if !self.history.is_empty() {
            let mut contents = self.history.clone();
            contents.append(&mut request.contents);
            request.contents = contents;
        }
        request
    }
}

/// `Some(schema)` when the agent asks for JSON: the schema when exactly one JSON output
/// has one, else `None` (JSON, no schema).
fn json_request(artifacts: &Artifacts) -> Option<Option<Value>> {
    let json: Vec<&Artifact> = artifacts
        .all_outputs()
        .iter()
        .filter(|a| a.is_json())
        .collect();
    match json.as_slice() {
        [] => None,
        [one] => Some(one.schema.clone()),
        _ => Some(None),
    }
}

/// The agent's model with its [`Shape`] applied to every request.
struct ShapedLlm {
    inner: Arc<dyn BaseLlm>,
    shape: Shape,
}

impl BaseLlm for ShapedLlm {
    fn model_id(&self) -> &str {
        self.inner.model_id()
    }

    fn generate_stream(&self, request: LlmRequest) -> BoxFuture<'_, Result<LlmStream, LlmError>> {
        self.inner.generate_stream(self.shape.apply(request))
    }

    fn generate(&self, request: LlmRequest) -> BoxFuture<'_, Result<LlmResponse, LlmError>> {
        self.inner.generate(self.shape.apply(request))
    }
}

impl TextAgent for ComposedAgent {
    fn name(&self) -> &str {
        &self.inner.config.name
    }

    fn run<'a>(&'a self, state: &'a State) -> BoxFuture<'a, Result<String, AgentError>> {
        Box::pin(async move {
            self.check_inputs(state)?;
            let input = state.get::<String>(INPUT_KEY).unwrap_or_default();
            let shape = self.shape(self.shaped_history(state).await?);
            let core = self.core(&shape, state)?;
            let request = shape.apply(core.request(&input));
            // Serializing strings, numbers and JSON values cannot fail.
            let key = serde_json::to_string(&request).unwrap_or_default();
            let ctx = LayerCtx {
                agent: self.inner.config.name.clone(),
                decisions: self.inner.decisions.clone(),
                key,
                input,
            };
            let output = run_layered(&self.inner.layers, &ctx, Arc::new(core), state).await?;
            self.write_outputs(state, &output).await?;
            Ok(output)
        })
    }
}
