//! What every cookbook example's test shares: a scripted model standing in for Gemini,
//! the check that the bundled cassette is exactly the script recorded, and the checks that
//! the example prints exactly its bundled output (`assets/cookbook/{name}.out`), in process
//! and as a real `cargo run --example` process. `REEL_BLESS=1` rewrites the bundled files
//! after an intended change.

use std::collections::{HashMap, VecDeque};
use std::error::Error;
use std::future::Future;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures_util::future::BoxFuture;
use reel::llm::{
    BaseLlm, Cassette, CassetteMode, LlmChunk, LlmError, LlmRequest, LlmStream, LlmUsage,
};
use reel::recorder::clock::TokioClock;
use reel::recorder::wire_log::{Direction, WireEntry};

use super::example_process::run_example;
use crate::cli_support::TempDir;

/// The epoch milliseconds a regenerated cassette's `recordedAt` counts from
/// (2026-11-27T00:00:00Z), with tokio's clock paused: a regeneration is byte for byte.
const RECORDED_FROM_MS: u64 = 1_795_737_600_000;

/// One scripted answer.
#[derive(Debug, Clone)]
enum Answer {
    /// A whole answer in one chunk.
    Chunk(LlmChunk),
    /// The call fails.
    #[allow(dead_code)] // built by `Script::fail`
    Fail(String),
    /// A whole answer in one chunk, after a delay (tokio time).
    #[allow(dead_code)] // built by `Script::slow`
    Slow(LlmChunk, Duration),
}

#[derive(Default)]
struct Lines {
    /// Answers by model id, in order.
    queued: HashMap<String, VecDeque<Answer>>,
    /// Answers by model id for a prompt holding a text (for calls made concurrently).
    when: Vec<(String, String, Answer)>,
    /// Every prompt asked, as `model: last user text`.
    asked: Vec<String>,
}

/// A scripted model standing in for Gemini: per model id, the answers in order, or the
/// answer for a prompt that holds a given text (checked first; for calls made
/// concurrently, whose order is not fixed). Clones share the script.
#[derive(Clone, Default)]
pub struct Script(Arc<Mutex<Lines>>);

impl Script {
    /// An empty script.
    pub fn new() -> Script {
        Script::default()
    }

    /// `model` answers `text` next (with fixed token usage: 60 prompt, 30 response).
    pub fn answer(self, model: &str, text: &str) -> Script {
        self.chunk(model, with_usage(LlmChunk::text(text)))
    }

    /// `model` answers `chunk` next.
    pub fn chunk(self, model: &str, chunk: LlmChunk) -> Script {
        self.queue(model, Answer::Chunk(chunk))
    }

    /// `model`'s next call fails with `message`.
    #[allow(dead_code)] // for the examples whose model fails (fallbacks)
    pub fn fail(self, model: &str, message: &str) -> Script {
        self.queue(model, Answer::Fail(message.to_owned()))
    }

    /// `model` answers `text` next, after `delay` of tokio time (paused in the recording
    /// test, so a race or a deadline between slow answers decides the same every time).
    #[allow(dead_code)] // for the examples whose calls race or run under a deadline
    pub fn slow(self, model: &str, text: &str, delay: Duration) -> Script {
        self.queue(model, Answer::Slow(with_usage(LlmChunk::text(text)), delay))
    }

    /// `model` answers `text` to any prompt whose last user text holds `holds`.
    #[allow(dead_code)] // for the examples whose calls run concurrently
    pub fn when(self, model: &str, holds: &str, text: &str) -> Script {
        self.0.lock().unwrap().when.push((
            model.to_owned(),
            holds.to_owned(),
            Answer::Chunk(with_usage(LlmChunk::text(text))),
        ));
        self
    }

    fn queue(self, model: &str, answer: Answer) -> Script {
        self.0
            .lock()
            .unwrap()
            .queued
            .entry(model.to_owned())
            .or_default()
            .push_back(answer);
        self
    }

    /// The model `id`, answering from this script.
    pub fn model(&self, id: &str) -> Arc<dyn BaseLlm> {
        Arc::new(ScriptedModel {
            id: id.to_owned(),
            script: self.clone(),
        })
    }

    /// Every prompt asked so far, as `model: last user text`.
    pub fn asked(&self) -> Vec<String> {
        self.0.lock().unwrap().asked.clone()
    }

    /// Whether every queued answer was given.
    pub fn used_up(&self) -> bool {
        self.0
            .lock()
            .unwrap()
            .queued
            .values()
            .all(VecDeque::is_empty)
    }
}

fn with_usage(mut chunk: LlmChunk) -> LlmChunk {
    chunk.finish_reason.get_or_insert_with(|| "STOP".to_owned());
    chunk.usage.get_or_insert(LlmUsage {
        prompt_tokens: 60,
        response_tokens: 30,
        total_tokens: 90,
    });
    chunk
}

struct ScriptedModel {
    id: String,
    script: Script,
}

impl BaseLlm for ScriptedModel {
    fn model_id(&self) -> &str {
        &self.id
    }

    fn generate_stream(&self, request: LlmRequest) -> BoxFuture<'_, Result<LlmStream, LlmError>> {
        let prompt = request.last_user_text().unwrap_or_default();
        let answer = {
            let mut lines = self.script.0.lock().unwrap();
            lines.asked.push(format!("{}: {prompt}", self.id));
            let matched = lines
                .when
                .iter()
                .find(|(model, holds, _)| *model == self.id && prompt.contains(holds.as_str()))
                .map(|(_, _, answer)| answer.clone());
            matched.or_else(|| lines.queued.get_mut(&self.id).and_then(VecDeque::pop_front))
        };
        let id = self.id.clone();
        Box::pin(async move {
            match answer {
                Some(Answer::Chunk(chunk)) => {
                    Ok(Box::pin(futures_util::stream::iter([Ok(chunk)])) as LlmStream)
                }
                Some(Answer::Slow(chunk, delay)) => {
                    tokio::time::sleep(delay).await;
                    Ok(Box::pin(futures_util::stream::iter([Ok(chunk)])) as LlmStream)
                }
                Some(Answer::Fail(message)) => Err(LlmError::Http {
                    status: 503,
                    url: format!("script://{id}"),
                    message,
                }),
                None => Err(LlmError::Http {
                    status: 500,
                    url: format!("script://{id}"),
                    message: format!("the script has no answer for: {prompt}"),
                }),
            }
        })
    }
}

/// The bundled file `assets/cookbook/{file}`.
pub fn bundled(file: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("assets/cookbook")
        .join(file)
}

/// The bundled cassette of the example `name`.
pub fn bundled_cassette(name: &str) -> PathBuf {
    bundled(&format!("{name}.cassette.json"))
}

/// What the example `name` prints (`assets/cookbook/{name}.out`).
pub fn bundled_output(name: &str) -> PathBuf {
    bundled(&format!("{name}.out"))
}

fn blessing() -> bool {
    std::env::var_os("REEL_BLESS").is_some()
}

fn read(path: &PathBuf) -> String {
    std::fs::read_to_string(path)
        .unwrap_or_else(|error| panic!("{} cannot be read ({error})", path.display()))
}

/// Checks that `printed` is the bundled output of `name` (or writes it, blessing).
pub fn check_output(name: &str, printed: &str) {
    check_bundled(&format!("{name}.out"), printed);
}

/// Checks that `text` is the bundled `assets/cookbook/{file}` (or writes it, blessing).
pub fn check_bundled(file: &str, text: &str) {
    let path = bundled(file);
    if blessing() {
        std::fs::write(&path, text).unwrap();
        return;
    }
    assert_eq!(
        text,
        read(&path),
        "{} is stale: re-bless it with REEL_BLESS=1",
        path.display()
    );
}

/// A wire log's entries as the lines of a tape file.
#[allow(dead_code)] // for the live examples' tests
pub fn as_tape(entries: &[reel::recorder::wire_log::WireEntry]) -> String {
    entries
        .iter()
        .map(|entry| serde_json::to_string(entry).unwrap() + "\n")
        .collect()
}

/// A fresh scratch directory for the test `test` of the example `example`.
#[allow(dead_code)] // for the live examples' tests
pub fn scratch(example: &str, test: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("reel-{example}-{}-{test}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Runs the example `name` with its calls recorded into a fresh cassette (stamped from a
/// fixed instant: run it in a test with tokio's clock paused) and checks that it printed
/// the bundled output and that the cassette is the bundled one byte for byte (or, blessing,
/// writes both). `run` gets the recording cassette and runs the example on the script.
pub async fn check_recorded<F, Fut>(name: &str, run: F)
where
    F: FnOnce(Cassette) -> Fut,
    Fut: Future<Output = Result<String, Box<dyn Error>>>,
{
    record_and_check(name, false, run).await;
}

/// [`check_recorded`] with a cassette that keeps failed calls (decision 0063), for an
/// example whose script fails a call on purpose (a fallback).
#[allow(dead_code)] // for the examples whose model fails
pub async fn check_recorded_keeping_failures<F, Fut>(name: &str, run: F)
where
    F: FnOnce(Cassette) -> Fut,
    Fut: Future<Output = Result<String, Box<dyn Error>>>,
{
    record_and_check(name, true, run).await;
}

async fn record_and_check<F, Fut>(name: &str, keep_failures: bool, run: F)
where
    F: FnOnce(Cassette) -> Fut,
    Fut: Future<Output = Result<String, Box<dyn Error>>>,
{
    let dir = TempDir::new(&format!("cookbook-{name}"));
    let path = dir.join(&format!("{name}.cassette.json"));
    let cassette = Cassette::builder(&path, CassetteMode::Record)
        .clock(Arc::new(TokioClock::anchored_at(RECORDED_FROM_MS)))
        .keep_failures(keep_failures)
        .open()
        .unwrap();
    let printed = run(cassette)
        .await
        .unwrap_or_else(|error| panic!("{name} on its script failed: {error}"));
    check_output(name, &printed);
    let recorded = read(&path);
    let bundled = bundled_cassette(name);
    if blessing() {
        std::fs::write(&bundled, recorded).unwrap();
        return;
    }
    assert_eq!(
        recorded,
        read(&bundled),
        "{} is not the script recorded: re-bless it with REEL_BLESS=1",
        bundled.display()
    );
}

/// Runs the example `name` answered from its bundled cassette alone and checks that it
/// printed the bundled output and used every recorded call. `run` gets the cassette.
pub async fn check_replayed<F, Fut>(name: &str, run: F)
where
    F: FnOnce(Cassette) -> Fut,
    Fut: Future<Output = Result<String, Box<dyn Error>>>,
{
    let cassette = Cassette::open(bundled_cassette(name), CassetteMode::Replay).unwrap();
    let printed = run(cassette.clone())
        .await
        .unwrap_or_else(|error| panic!("{name} from its bundled cassette failed: {error}"));
    assert_eq!(printed, read(&bundled_output(name)), "{name} printed");
    assert_eq!(
        cassette.unused().await,
        Vec::<usize>::new(),
        "{name} left recorded calls unused"
    );
}

/// Runs the example `name` as a real process, the way its README line says
/// (`cargo run --example NAME`), and checks that it printed the bundled output.
pub fn check_printed(name: &str) {
    assert_eq!(
        run_example(name, &[]),
        read(&bundled_output(name)),
        "{name}"
    );
}

/// The answer frames a flow's refusals sent (a `toolResponse` whose first response is an
/// `error`), as they crossed the wire.
pub fn refused_frames(entries: &[WireEntry]) -> Vec<serde_json::Value> {
    entries
        .iter()
        .filter(|e| e.dir == Direction::Out)
        .filter_map(|e| serde_json::from_slice::<serde_json::Value>(&e.payload).ok())
        .filter(|frame| {
            frame
                .pointer("/toolResponse/functionResponses/0/response/error")
                .is_some()
        })
        .collect()
}

/// The frames of a scripted Live model's whole text answer `t`: the turn, generation
/// complete, turn complete.
#[allow(dead_code)] // for the live examples' tests
pub fn text_turn(t: &str) -> Vec<serde_json::Value> {
    vec![
        serde_json::json!({"serverContent": {"modelTurn": {"role": "model", "parts": [{"text": t}]}}}),
        serde_json::json!({"serverContent": {"generationComplete": true}}),
        serde_json::json!({"serverContent": {"turnComplete": true}}),
    ]
}

/// The frame of a scripted Live model calling tool `name` with `args` as call `id`.
#[allow(dead_code)] // for the live examples' tests
pub fn tool_call(id: &str, name: &str, args: serde_json::Value) -> Vec<serde_json::Value> {
    vec![
        serde_json::json!({"toolCall": {"functionCalls": [{"id": id, "name": name, "args": args}]}}),
    ]
}
