//! A scripted model for the composition tests: answers (or fails) in queue order, after an
//! optional virtual delay each, and keeps every request it got.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures_util::future::BoxFuture;
use reel_llm::{BaseLlm, LlmChunk, LlmError, LlmRequest, LlmStream};
use reel_protocol::FunctionCall;

/// One scripted answer: its text or its failure, after a delay; for the request whose
/// system instruction is `instruction`, when set (so concurrent branches get their own
/// answers whatever order they ask in).
#[derive(Clone)]
pub struct Step {
    pub answer: Result<String, String>,
    /// Function calls the answer makes instead of text, when not empty.
    pub calls: Vec<FunctionCall>,
    pub delay: Duration,
    pub instruction: Option<String>,
}

impl Step {
    /// This answer, only for the request with system instruction `instruction`.
    pub fn for_instruction(mut self, instruction: &str) -> Self {
        self.instruction = Some(instruction.to_owned());
        self
    }
}

/// `text`, at once.
pub fn ok(text: &str) -> Step {
    Step {
        answer: Ok(text.to_owned()),
        calls: Vec::new(),
        delay: Duration::ZERO,
        instruction: None,
    }
}

/// An answer calling the function `name` with `args` (call id `call-1`), at once.
pub fn calling(name: &str, args: serde_json::Value) -> Step {
    Step {
        answer: Ok(String::new()),
        calls: vec![FunctionCall {
            id: Some("call-1".to_owned()),
            name: Some(name.to_owned()),
            args: Some(args.into()),
            ..FunctionCall::default()
        }],
        delay: Duration::ZERO,
        instruction: None,
    }
}

/// A failure saying `message`, at once.
pub fn fail(message: &str) -> Step {
    Step {
        answer: Err(message.to_owned()),
        calls: Vec::new(),
        delay: Duration::ZERO,
        instruction: None,
    }
}

/// `text`, after `delay` (virtual time in paused tests).
pub fn slow(text: &str, delay: Duration) -> Step {
    Step {
        answer: Ok(text.to_owned()),
        calls: Vec::new(),
        delay,
        instruction: None,
    }
}

/// A model answering from a script.
pub struct Scripted {
    id: String,
    steps: Mutex<VecDeque<Step>>,
    requests: Mutex<Vec<LlmRequest>>,
}

impl Scripted {
    /// A model `id` answering `steps` in order.
    pub fn new(id: &str, steps: Vec<Step>) -> Arc<Self> {
        Arc::new(Scripted {
            id: id.to_owned(),
            steps: Mutex::new(steps.into()),
            requests: Mutex::default(),
        })
    }

    /// Every request so far.
    pub fn requests(&self) -> Vec<LlmRequest> {
        self.requests.lock().unwrap().clone()
    }

    /// Each request as `model: last user text`.
    pub fn prompts(&self) -> Vec<String> {
        self.requests()
            .iter()
            .map(|r| format!("{}: {}", r.model, r.last_user_text().unwrap_or_default()))
            .collect()
    }

    /// How many calls were made.
    pub fn calls(&self) -> usize {
        self.requests.lock().unwrap().len()
    }
}

impl BaseLlm for Scripted {
    fn model_id(&self) -> &str {
        &self.id
    }

    fn generate_stream(&self, request: LlmRequest) -> BoxFuture<'_, Result<LlmStream, LlmError>> {
        Box::pin(async move {
            let step = {
                let mut steps = self.steps.lock().unwrap();
                let position = steps.iter().position(|step| {
                    step.instruction.is_none() || step.instruction == request.system_instruction
                });
                position.and_then(|at| steps.remove(at))
            }
            .unwrap_or(Step {
                answer: Err(format!("{} has no answer left", self.id)),
                calls: Vec::new(),
                delay: Duration::ZERO,
                instruction: None,
            });
            self.requests.lock().unwrap().push(request);
            if !step.delay.is_zero() {
                tokio::time::sleep(step.delay).await;
            }
            match step.answer {
                Ok(_) if !step.calls.is_empty() => {
                    let chunk = LlmChunk {
                        function_calls: step.calls,
                        ..LlmChunk::default()
                    };
                    Ok(Box::pin(futures_util::stream::iter([Ok(chunk)])) as LlmStream)
                }
                Ok(text) => {
                    let chunk = LlmChunk::text(text);
                    Ok(Box::pin(futures_util::stream::iter([Ok(chunk)])) as LlmStream)
                }
                Err(message) => Err(LlmError::Http {
                    status: 503,
                    url: "scripted".to_owned(),
                    message,
                }),
            }
        })
    }
}

/// A state with `input` set.
pub async fn state_with_input(input: &str) -> reel_actors::state::State {
    let state = reel_actors::state::State::new();
    state.set("input", input).await.unwrap();
    state
}
