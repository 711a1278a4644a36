//! [`AgentHarness`]: a test harness around a composed agent — a scripted model standing
//! in for Gemini, the state the run starts from, the build-time contracts checked first,
//! and exact checks on the output, the state and the requests the model was asked.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex, PoisonError};

use futures_util::future::BoxFuture;
use reel_actors::state::State;
use reel_agents::{AgentError, INPUT_KEY};
use reel_llm::{BaseLlm, LlmChunk, LlmError, LlmRequest, LlmStream};
use serde_json::Value;

use crate::composable::Composable;
use crate::contracts::{ContractViolation, check_contracts_with};

/// Why a harness run, or a check on it, failed.
#[derive(Debug, thiserror::Error)]
pub enum HarnessError {
    /// The tree's data contracts do not hold (checked before it runs, with the harness's
    /// state keys and `input` as given).
    #[error("the agent's contracts do not hold: {}", join(violations))]
    Contracts {
        /// Every violation, in tree order.
        violations: Vec<ContractViolation>,
    },
    /// The state the run starts from could not be set.
    #[error("the harness could not set `{key}`: {reason}")]
    Setup {
        /// The key.
        key: String,
        /// Why.
        reason: String,
    },
    /// The agent failed.
    #[error(transparent)]
    Agent(#[from] AgentError),
    /// The run's output is not the one expected.
    #[error("the output is {actual:?}, not {expected:?}")]
    Output {
        /// What was expected.
        expected: String,
        /// What the agent returned.
        actual: String,
    },
    /// A state key does not hold the value expected (`actual` is `None` when unset).
    #[error("state `{key}` is {}, not {expected}", shown(actual.as_deref()))]
    State {
        /// The key.
        key: String,
        /// What was expected.
        expected: Box<Value>,
        /// What the state holds.
        actual: Option<Box<Value>>,
    },
    /// The scripted model was not asked as often as it has answers.
    #[error("the scripted model has {left} answers left unused")]
    Unused {
        /// How many answers were not asked for.
        left: usize,
    },
}

fn join(violations: &[ContractViolation]) -> String {
    violations
        .iter()
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join("; ")
}

fn shown(value: Option<&Value>) -> String {
    value.map_or_else(|| "unset".to_owned(), Value::to_string)
}

/// One scripted answer.
#[derive(Debug, Clone)]
enum Scripted {
    Chunk(LlmChunk),
    Fail(String),
}

#[derive(Default)]
struct Script {
    answers: VecDeque<Scripted>,
    asked: Vec<LlmRequest>,
}

/// The harness's model: answers in the order scripted, records every request.
struct HarnessModel {
    id: String,
    script: Arc<Mutex<Script>>,
}

impl BaseLlm for HarnessModel {
    fn model_id(&self) -> &str {
        &self.id
    }

    fn generate_stream(&self, request: LlmRequest) -> BoxFuture<'_, Result<LlmStream, LlmError>> {
        // A poisoned script only means a panicking test thread held it; it is whole.
        let mut script = self.script.lock().unwrap_or_else(PoisonError::into_inner);
        script.asked.push(request);
        let call = script.asked.len();
        let answer = script.answers.pop_front();
        drop(script);
        let url = format!("harness://{}", self.id);
        Box::pin(async move {
            match answer {
                Some(Scripted::Chunk(chunk)) => {
                    Ok(Box::pin(futures_util::stream::iter([Ok(chunk)])) as LlmStream)
                }
                Some(Scripted::Fail(message)) => Err(LlmError::Http {
                    status: 503,
                    url,
                    message,
                }),
                None => Err(LlmError::Http {
                    status: 500,
                    url,
                    message: format!("the harness's script has no answer for call {call}"),
                }),
            }
        })
    }
}

/// A test harness around a composed agent (the seed's `AgentHarness`): script what the
/// model answers, set the state the run starts from, run the agent (its contracts are
/// checked first), then check the output, the state and the requests exactly.
///
/// ```
/// use reel_compose::{AgentBuilder, AgentHarness, P};
/// use serde_json::json;
///
/// let writer = AgentBuilder::new("writer")
///     .instruction(P::task("Write one line about the topic.") + P::with_state(&["topic"]))
///     .reads(["topic"])
///     .output_key("draft");
/// let harness = AgentHarness::new()
///     .state("topic", json!("the sea"))
///     .answer("The sea keeps every secret.");
/// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
/// let run = harness.run(writer, "go").await.unwrap();
/// run.expect_output("The sea keeps every secret.").unwrap();
/// run.expect_state("draft", json!("The sea keeps every secret.")).unwrap();
/// assert_eq!(
///     run.requests()[0].system_instruction.as_deref(),
///     Some("Your task: Write one line about the topic.\n\n[Context: topic=the sea]")
/// );
/// harness.expect_all_used().unwrap();
/// # });
/// ```
#[derive(Clone)]
pub struct AgentHarness {
    model: String,
    script: Arc<Mutex<Script>>,
    state: Vec<(String, Value)>,
}

impl Default for AgentHarness {
    fn default() -> Self {
        AgentHarness::new()
    }
}

impl AgentHarness {
    /// The model id the scripted model answers as unless [`AgentHarness::model`] says.
    pub const MODEL: &'static str = "gemini-2.5-flash";

    /// A harness whose model has no answers yet and whose state is empty.
    pub fn new() -> Self {
        AgentHarness {
            model: Self::MODEL.to_owned(),
            script: Arc::default(),
            state: Vec::new(),
        }
    }

    /// The scripted model answers as `model`.
    #[must_use]
    pub fn model(mut self, model: impl Into<String>) -> Self {
        self.model = model.into();
        self
    }

    /// The model's next answer is `text` (finish reason `STOP`).
    #[must_use]
    pub fn answer(self, text: impl Into<String>) -> Self {
        let mut chunk = LlmChunk::text(text);
        chunk.finish_reason = Some("STOP".to_owned());
        self.chunk(chunk)
    }

    /// The model's next answer is `chunk` (function calls, usage, …).
    #[must_use]
    pub fn chunk(self, chunk: LlmChunk) -> Self {
        self.push(Scripted::Chunk(chunk))
    }

    /// The model's next call fails (HTTP 503) with `message`.
    #[must_use]
    pub fn fail(self, message: impl Into<String>) -> Self {
        self.push(Scripted::Fail(message.into()))
    }

    fn push(self, answer: Scripted) -> Self {
        self.script
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .answers
            .push_back(answer);
        self
    }

    /// The run starts with `key` set to `value`.
    #[must_use]
    pub fn state(mut self, key: impl Into<String>, value: Value) -> Self {
        self.state.push((key.into(), value));
        self
    }

    /// The scripted model, to build an agent with by hand.
    pub fn llm(&self) -> Arc<dyn BaseLlm> {
        Arc::new(HarnessModel {
            id: self.model.clone(),
            script: Arc::clone(&self.script),
        })
    }

    /// Checks `tree`'s contracts (the harness's state keys and `input` given), builds it
    /// on the scripted model, sets the state and `input`, and runs it once.
    pub async fn run(
        &self,
        tree: impl Into<Composable>,
        input: &str,
    ) -> Result<HarnessRun, HarnessError> {
        let tree = tree.into();
        let mut given: Vec<&str> = self.state.iter().map(|(key, _)| key.as_str()).collect();
        given.push(INPUT_KEY);
        let violations = check_contracts_with(&tree, &given);
        if !violations.is_empty() {
            return Err(HarnessError::Contracts { violations });
        }
        let asked_before = self.asked().len();
        let agent = tree.compile(self.llm());
        let state = State::new();
        let input = Value::String(input.to_owned());
        for (key, value) in self
            .state
            .iter()
            .chain([(INPUT_KEY.to_owned(), input)].iter())
        {
            state
                .set(key, value)
                .await
                .map_err(|error| HarnessError::Setup {
                    key: key.clone(),
                    reason: error.to_string(),
                })?;
        }
        let output = agent.run(&state).await?;
        let requests = self.asked().split_off(asked_before);
        Ok(HarnessRun {
            output,
            state,
            requests,
        })
    }

    /// Every request the scripted model was asked, in order.
    pub fn asked(&self) -> Vec<LlmRequest> {
        self.script
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .asked
            .clone()
    }

    /// Checks that every scripted answer was asked for.
    pub fn expect_all_used(&self) -> Result<(), HarnessError> {
        let left = self
            .script
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .answers
            .len();
        if left == 0 {
            Ok(())
        } else {
            Err(HarnessError::Unused { left })
        }
    }
}

/// What one harness run did: its output, its state at the end, the requests it made.
#[derive(Debug, Clone)]
pub struct HarnessRun {
    output: String,
    state: State,
    requests: Vec<LlmRequest>,
}

impl HarnessRun {
    /// What the agent returned.
    pub fn output(&self) -> &str {
        &self.output
    }

    /// The state at the end of the run.
    pub fn state(&self) -> &State {
        &self.state
    }

    /// The requests the scripted model was asked during the run, in order.
    pub fn requests(&self) -> &[LlmRequest] {
        &self.requests
    }

    /// Checks that the output is exactly `expected`.
    pub fn expect_output(&self, expected: &str) -> Result<(), HarnessError> {
        if self.output == expected {
            Ok(())
        } else {
            Err(HarnessError::Output {
                expected: expected.to_owned(),
                actual: self.output.clone(),
            })
        }
    }

    /// Checks that the state holds exactly `expected` under `key`.
    pub fn expect_state(&self, key: &str, expected: Value) -> Result<(), HarnessError> {
        let actual = self.state.get::<Value>(key);
        if actual.as_ref() == Some(&expected) {
            Ok(())
        } else {
            Err(HarnessError::State {
                key: key.to_owned(),
                expected: Box::new(expected),
                actual: actual.map(Box::new),
            })
        }
    }
}
