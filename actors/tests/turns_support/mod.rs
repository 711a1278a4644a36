//! Shared by the transcript, extractor and persistence tests: a scripted model, an
//! interceptor that logs every call, and a session driven turn by turn.

#![allow(dead_code)] // each test file uses its own subset

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures_util::future::BoxFuture;
use reel_actors::llm::{BaseLlm, LlmChunk, LlmError, LlmInterceptor, LlmRequest, LlmStream};
use reel_actors::testing::{ScriptedServer, ServerConn};
use reel_actors::{EventEnvelope, EventStream, Lane, LiveEvent, LiveHandle, LiveSessionBuilder};
use reel_protocol::{SessionConfig, SessionEvent};
use reel_recorder::journal::{JournalSink, MemoryJournalSink, StateMutation};
use serde_json::{Value, json};
use tokio::time::Instant;

use crate::support::{T0, settle, start};

/// A model that answers from a script, each answer after `delay` (virtual time), and
/// keeps every request it got.
pub struct ScriptedLlm {
    model: String,
    answers: Mutex<VecDeque<Result<String, LlmError>>>,
    delay: Duration,
    pub requests: Mutex<Vec<LlmRequest>>,
}

impl ScriptedLlm {
    pub fn new(answers: impl IntoIterator<Item = Result<String, LlmError>>) -> Arc<Self> {
        ScriptedLlm::slow(answers, Duration::ZERO)
    }

    pub fn slow(
        answers: impl IntoIterator<Item = Result<String, LlmError>>,
        delay: Duration,
    ) -> Arc<Self> {
        ScriptedLlm::model("scripted-flash", answers, delay)
    }

    pub fn model(
        model: &str,
        answers: impl IntoIterator<Item = Result<String, LlmError>>,
        delay: Duration,
    ) -> Arc<Self> {
        Arc::new(ScriptedLlm {
            model: model.to_owned(),
            answers: Mutex::new(answers.into_iter().collect()),
            delay,
            requests: Mutex::new(Vec::new()),
        })
    }

    pub fn requests(&self) -> Vec<LlmRequest> {
        self.requests.lock().unwrap().clone()
    }
}

impl BaseLlm for ScriptedLlm {
    fn model_id(&self) -> &str {
        &self.model
    }

    fn generate_stream(&self, request: LlmRequest) -> BoxFuture<'_, Result<LlmStream, LlmError>> {
        self.requests.lock().unwrap().push(request);
        let answer = self.answers.lock().unwrap().pop_front();
        Box::pin(async move {
            tokio::time::sleep(self.delay).await;
            let text = match answer {
                Some(answer) => answer?,
                None => panic!("the scripted model has no answer left"),
            };
            // Two chunks, to go through the stream collector.
            let (a, b) = text.split_at(text.len() / 2);
            let chunks = [Ok(LlmChunk::text(a)), Ok(LlmChunk::text(b))];
            Ok(Box::pin(futures_util::stream::iter(chunks)) as LlmStream)
        })
    }
}

/// An interceptor that logs `(tag, model, last user text)` for every call made through a
/// model it wrapped, then passes the call on.
#[derive(Default)]
pub struct LoggingInterceptor {
    pub log: Arc<Mutex<Vec<(String, String)>>>,
    pub wrapped: Mutex<Vec<String>>,
}

impl LoggingInterceptor {
    pub fn calls(&self) -> Vec<(String, String)> {
        self.log.lock().unwrap().clone()
    }
}

struct Logged {
    inner: Arc<dyn BaseLlm>,
    log: Arc<Mutex<Vec<(String, String)>>>,
}

impl BaseLlm for Logged {
    fn model_id(&self) -> &str {
        self.inner.model_id()
    }

    fn generate_stream(&self, request: LlmRequest) -> BoxFuture<'_, Result<LlmStream, LlmError>> {
        self.log.lock().unwrap().push((
            request.model.clone(),
            request.last_user_text().unwrap_or_default(),
        ));
        self.inner.generate_stream(request)
    }
}

impl LlmInterceptor for LoggingInterceptor {
    fn wrap(&self, llm: Arc<dyn BaseLlm>) -> Arc<dyn BaseLlm> {
        self.wrapped.lock().unwrap().push(llm.model_id().to_owned());
        Arc::new(Logged {
            inner: llm,
            log: Arc::clone(&self.log),
        })
    }
}

/// A session against a scripted server, driven frame by frame, with its journal.
pub struct Rig {
    pub handle: LiveHandle,
    pub conn: ServerConn,
    pub setup: Value,
    pub events: EventStream,
    pub seen: Vec<EventEnvelope>,
    pub journal: Arc<MemoryJournalSink>,
    origin: Instant,
}

impl Rig {
    pub async fn start(
        server: &mut ScriptedServer,
        build: impl FnOnce(LiveSessionBuilder) -> LiveSessionBuilder,
    ) -> Rig {
        let journal = Arc::new(MemoryJournalSink::new());
        let sink: Arc<dyn JournalSink> = journal.clone();
        // The session clock reads T0 at this instant (see `support::start`).
        let origin = Instant::now();
        let (handle, conn, setup, mut events) = start(
            server,
            |b| build(b.journal_sink(sink)),
            SessionConfig::default(),
        )
        .await;
        let seen = settle(&mut events).await;
        Rig {
            handle,
            conn,
            setup,
            events,
            seen,
            journal,
            origin,
        }
    }

    /// Session time now: the time the next frame is stamped with.
    pub fn now(&self) -> u64 {
        T0 + u64::try_from(self.origin.elapsed().as_millis()).unwrap()
    }

    /// The user said `text` (a finished input transcription).
    pub async fn user(&mut self, text: &str) {
        self.conn
            .send_json(
                &json!({"serverContent": {"inputTranscription": {"text": text, "finished": true}}}),
            )
            .await;
    }

    /// The model said `text` (an output transcription chunk, finalized at turn complete).
    pub async fn model(&mut self, text: &str) {
        self.conn
            .send_json(&json!({"serverContent": {"outputTranscription": {"text": text}}}))
            .await;
    }

    /// The model wrote `text` (answer text, no transcription).
    pub async fn model_text(&mut self, text: &str) {
        self.conn
            .send_json(&json!({"serverContent": {"modelTurn": {"parts": [{"text": text}]}}}))
            .await;
    }

    /// Ends the model's turn and waits until the turn pipeline is done; returns the time
    /// the turn complete frame was sent at.
    pub async fn turn(&mut self) -> u64 {
        let at = self.now();
        self.conn
            .send_json(&json!({"serverContent": {"turnComplete": true}}))
            .await;
        self.until(|e| matches!(e, SessionEvent::TurnComplete { .. }))
            .await;
        at
    }

    /// A full turn: the user says `user`, the model says `model`, turn complete.
    pub async fn exchange(&mut self, user: &str, model: &str) -> u64 {
        self.user(user).await;
        self.model(model).await;
        self.turn().await
    }

    /// Waits for the control lane to publish a protocol event matching `pred`, keeping
    /// every event seen on the way.
    pub async fn until(&mut self, pred: impl Fn(&SessionEvent) -> bool) {
        while let Some(envelope) = self.events.recv().await {
            let hit = envelope.lane == Lane::Control
                && matches!(&envelope.event, LiveEvent::Session(e) if pred(e));
            self.seen.push(envelope);
            if hit {
                return;
            }
        }
        panic!("the session ended first");
    }

    /// Reads every event until the tree is quiet.
    pub async fn settle(&mut self) {
        let more = settle(&mut self.events).await;
        self.seen.extend(more);
    }

    /// The control lane's events of the kinds given, in order.
    pub fn control(&self, kinds: &[&str]) -> Vec<LiveEvent> {
        self.seen
            .iter()
            .filter(|e| e.lane == Lane::Control && kinds.contains(&e.event.kind()))
            .map(|e| e.event.clone())
            .collect()
    }

    /// The journal entries of keys not under `session:`, as
    /// `(key, old, new, timestamp_ms)`.
    pub fn writes(&self) -> Vec<(String, Value, Value, u64)> {
        self.journal
            .entries()
            .into_iter()
            .filter(|m| !m.key.starts_with("session:"))
            .map(|m: StateMutation| (m.key, m.old, m.new, m.timestamp_ms))
            .collect()
    }
}
