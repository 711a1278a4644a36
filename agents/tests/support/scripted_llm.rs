//! A scripted model for the combinator tests: answers by the request's last user text, or
//! in queue order, after an optional virtual delay, and keeps every request it got.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures_util::future::BoxFuture;
use reel_llm::{BaseLlm, LlmChunk, LlmError, LlmRequest, LlmStream};

/// A model answering from a script.
pub struct ScriptedLlm {
    id: String,
    answers: Mutex<VecDeque<String>>,
    delay: Duration,
    pub log: Arc<Mutex<Vec<String>>>,
}

impl ScriptedLlm {
    /// A model `id` answering `answers` in order, logging each prompt as `id: prompt`
    /// into `log`.
    pub fn new(id: &str, answers: &[&str], log: Arc<Mutex<Vec<String>>>) -> Arc<Self> {
        Arc::new(ScriptedLlm {
            id: id.to_owned(),
            answers: Mutex::new(answers.iter().map(|a| (*a).to_owned()).collect()),
            delay: Duration::ZERO,
            log,
        })
    }

    /// The same, each answer after `delay` (virtual time in paused tests).
    pub fn slow(
        id: &str,
        answers: &[&str],
        delay: Duration,
        log: Arc<Mutex<Vec<String>>>,
    ) -> Arc<Self> {
        Arc::new(ScriptedLlm {
            id: id.to_owned(),
            answers: Mutex::new(answers.iter().map(|a| (*a).to_owned()).collect()),
            delay,
            log,
        })
    }
}

impl BaseLlm for ScriptedLlm {
    fn model_id(&self) -> &str {
        &self.id
    }

    fn generate_stream(&self, request: LlmRequest) -> BoxFuture<'_, Result<LlmStream, LlmError>> {
        Box::pin(async move {
            let prompt = request.last_user_text().unwrap_or_default();
            self.log
                .lock()
                .unwrap()
                .push(format!("{}: {prompt}", self.id));
            if !self.delay.is_zero() {
                tokio::time::sleep(self.delay).await;
            }
            let answer = self
                .answers
                .lock()
                .unwrap()
                .pop_front()
                .unwrap_or_else(|| format!("{} has no answer left", self.id));
            let chunk = LlmChunk::text(answer);
            Ok(Box::pin(futures_util::stream::iter([Ok(chunk)])) as LlmStream)
        })
    }
}

/// The shared log of prompts.
pub type Log = Arc<Mutex<Vec<String>>>;

/// A fresh shared log.
pub fn log() -> Arc<Mutex<Vec<String>>> {
    Arc::default()
}

/// What the log holds now.
pub fn entries(log: &Arc<Mutex<Vec<String>>>) -> Vec<String> {
    log.lock().unwrap().clone()
}
