//! A scripted model for the tape and cassette tests: each call plays the next scripted
//! answer, chunk by chunk after scripted delays on tokio's clock, and counts what it
//! produced and what it was asked.

#![allow(dead_code)]

use std::collections::VecDeque;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures_util::StreamExt;
use futures_util::future::BoxFuture;
use futures_util::stream;
use reel_llm::{BaseLlm, LlmChunk, LlmError, LlmRequest, LlmStream, LlmUsage};
use tokio::time::Instant;

/// One step of a scripted answer.
#[derive(Debug, Clone)]
pub enum Step {
    /// A chunk, `after` the previous step.
    Chunk(Duration, LlmChunk),
    /// A failure (HTTP 503 with this message), `after` the previous step; ends the answer.
    Fail(Duration, &'static str),
}

/// A scripted answer: steps, or a failure before any stream.
#[derive(Debug, Clone)]
pub enum Answer {
    /// A stream of steps.
    Steps(Vec<Step>),
    /// `generate_stream` itself fails (HTTP 500 with this message).
    Refuse(&'static str),
}

/// Steps of text chunks: `(milliseconds after the previous, text)`.
pub fn texts(steps: &[(u64, &str)]) -> Answer {
    Answer::Steps(
        steps
            .iter()
            .map(|(ms, text)| Step::Chunk(Duration::from_millis(*ms), LlmChunk::text(*text)))
            .collect(),
    )
}

/// The last chunk of an answer: text, `STOP` and usage.
pub fn last_chunk(text: &str, prompt: u64, response: u64) -> LlmChunk {
    LlmChunk {
        text: text.to_owned(),
        finish_reason: Some("STOP".to_owned()),
        usage: Some(LlmUsage {
            prompt_tokens: prompt,
            response_tokens: response,
            total_tokens: prompt + response,
        }),
        ..LlmChunk::default()
    }
}

/// A model that plays scripted answers, one per call, in order.
pub struct ScriptedLlm {
    model: String,
    answers: Mutex<VecDeque<Answer>>,
    requests: Mutex<Vec<LlmRequest>>,
    produced: Arc<AtomicUsize>,
}

impl ScriptedLlm {
    /// A model `model` with these answers.
    pub fn new(model: &str, answers: impl IntoIterator<Item = Answer>) -> Arc<Self> {
        Arc::new(ScriptedLlm {
            model: model.to_owned(),
            answers: Mutex::new(answers.into_iter().collect()),
            requests: Mutex::new(Vec::new()),
            produced: Arc::new(AtomicUsize::new(0)),
        })
    }

    /// The requests it was asked, in order.
    pub fn requests(&self) -> Vec<LlmRequest> {
        self.requests.lock().unwrap().clone()
    }

    /// How many calls reached it.
    pub fn calls(&self) -> usize {
        self.requests.lock().unwrap().len()
    }

    /// How many chunks its streams have yielded, all calls together.
    pub fn produced(&self) -> usize {
        self.produced.load(Ordering::SeqCst)
    }
}

impl BaseLlm for ScriptedLlm {
    fn model_id(&self) -> &str {
        &self.model
    }

    fn generate_stream(&self, request: LlmRequest) -> BoxFuture<'_, Result<LlmStream, LlmError>> {
        self.requests.lock().unwrap().push(request);
        let answer = self.answers.lock().unwrap().pop_front();
        let produced = Arc::clone(&self.produced);
        Box::pin(async move {
            let steps = match answer {
                Some(Answer::Steps(steps)) => steps,
                Some(Answer::Refuse(message)) => {
                    return Err(LlmError::Http {
                        status: 500,
                        url: "http://scripted/".to_owned(),
                        message: message.to_owned(),
                    });
                }
                None => panic!("the scripted model has no answer left"),
            };
            let stream = stream::iter(steps).then(move |step| {
                let produced = Arc::clone(&produced);
                async move {
                    match step {
                        Step::Chunk(after, chunk) => {
                            tokio::time::sleep(after).await;
                            produced.fetch_add(1, Ordering::SeqCst);
                            Ok(chunk)
                        }
                        Step::Fail(after, message) => {
                            tokio::time::sleep(after).await;
                            Err(LlmError::Http {
                                status: 503,
                                url: "http://scripted/".to_owned(),
                                message: message.to_owned(),
                            })
                        }
                    }
                }
            });
            Ok(Box::pin(stream) as LlmStream)
        })
    }
}

/// Reads `stream` to its end: each item with the time it came, since `start`.
pub async fn timed(
    start: Instant,
    mut stream: LlmStream,
) -> Vec<(Duration, Result<LlmChunk, String>)> {
    let mut items = Vec::new();
    while let Some(item) = stream.next().await {
        items.push((start.elapsed(), item.map_err(|error| error.to_string())));
    }
    items
}

/// Milliseconds.
pub fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

/// A folder under the system temp dir, unique to this process and test, removed when
/// dropped.
pub struct TempDir(PathBuf);

impl TempDir {
    /// A fresh, empty folder named after `name`.
    pub fn new(name: &str) -> Self {
        let path =
            std::env::temp_dir().join(format!("reel-actors-llm-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&path);
        std::fs::create_dir_all(&path).unwrap();
        TempDir(path)
    }

    /// `name` inside the folder.
    pub fn join(&self, name: &str) -> PathBuf {
        self.0.join(name)
    }

    /// The folder.
    pub fn path(&self) -> &Path {
        &self.0
    }

    /// The names of the files in the folder, sorted.
    pub fn names(&self) -> Vec<String> {
        let mut names: Vec<String> = std::fs::read_dir(&self.0)
            .unwrap()
            .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        names
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// The JSON in the file at `path`.
pub fn read_json(path: &Path) -> serde_json::Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}
