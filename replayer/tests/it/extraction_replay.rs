//! Extractors under record & replay: a session whose LLM extractor calls a (scripted,
//! slow) model, recorded on loopback with its model calls traced through the session's
//! interceptor, replays offline with the calls answered from the trace — no model — and
//! writes the same journal, entry by entry, the same transcript and the same persisted
//! snapshot.

use crate::replay_support;

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures_util::future::BoxFuture;
use reel_actors::clock::TokioClock;
use reel_actors::llm::{
    BaseLlm, LlmChunk, LlmError, LlmRequest, LlmStream, TraceRecorder, TraceReplayLlm,
};
use reel_actors::testing::ScriptedServer;
use reel_actors::transcript::TranscriptTurn;
use reel_actors::{Lane, LiveEvent, LiveSessionBuilder};
use reel_extract::{LlmExtractor, RegexExtractor, TurnExtractor};
use reel_persistence::{MemoryPersistence, SessionPersistence, SessionSnapshot};
use reel_protocol::{ApiEndpoint, SessionConfig};
use reel_recorder::journal::{JournalSink, MemoryJournalSink, StateMutation};
use reel_recorder::wire_log::{MemoryWireRecorder, WireEntry, WireRecorder};
use replay_support::{connect, drain, lane, replay_to_end, seen, turn_complete};
use serde_json::json;

const T0: u64 = 1_718_000_000_000;
const ID: &str = "replayed-caller";

/// A live model: answers from a script after 1.5 s each.
struct SlowModel {
    answers: Mutex<VecDeque<String>>,
}

impl BaseLlm for SlowModel {
    fn model_id(&self) -> &str {
        "live-flash"
    }

    fn generate_stream(&self, _request: LlmRequest) -> BoxFuture<'_, Result<LlmStream, LlmError>> {
        let answer = self.answers.lock().unwrap().pop_front().unwrap();
        Box::pin(async move {
            tokio::time::sleep(Duration::from_millis(1500)).await;
            let chunks = [Ok(LlmChunk::text(answer))];
            Ok(Box::pin(futures_util::stream::iter(chunks)) as LlmStream)
        })
    }
}

/// A model that must not be called: in the replay, the trace answers.
struct Unreachable;

impl BaseLlm for Unreachable {
    fn model_id(&self) -> &str {
        "unreachable"
    }

    fn generate_stream(&self, _request: LlmRequest) -> BoxFuture<'_, Result<LlmStream, LlmError>> {
        panic!("the replay called the model instead of the trace")
    }
}

/// The extractors, the same in the recording and the replay but for the model.
fn extractors(model: Arc<dyn BaseLlm>) -> [Arc<dyn TurnExtractor>; 2] {
    let topic = LlmExtractor::new("Topic", model, "Extract the topic and the city.", 2)
        .with_schema(json!({"type": "object", "properties": {
            "topic": {"type": "string"}, "city": {"type": "string"}}}));
    let amounts = RegexExtractor::new("fields", 3, |text, _| {
        text.split_whitespace()
            .find(|w| w.starts_with('$'))
            .map(|w| ("amount".to_owned(), json!(w)))
    });
    [Arc::new(topic), Arc::new(amounts)]
}

struct Outcome {
    control: Vec<LiveEvent>,
    journal: Vec<StateMutation>,
    transcript: Vec<TranscriptTurn>,
    snapshot: Option<SessionSnapshot>,
}

async fn record() -> (Outcome, Vec<WireEntry>, TraceRecorder) {
    let mut server = ScriptedServer::bind().await;
    let recorder = Arc::new(MemoryWireRecorder::new());
    let journal = Arc::new(MemoryJournalSink::new());
    let store = Arc::new(MemoryPersistence::new());
    let clock = Arc::new(TokioClock::anchored_at(T0));
    let traces = TraceRecorder::new("extraction", "Topic", clock.clone());
    let model: Arc<dyn BaseLlm> = Arc::new(SlowModel {
        answers: Mutex::new(VecDeque::from([
            r#"{"topic": "weather", "city": "Paris"}"#.to_owned(),
            r#"{"topic": "booking", "city": "Paris"}"#.to_owned(),
        ])),
    });
    let [topic, amounts] = extractors(model);
    let builder = LiveSessionBuilder::new(SessionConfig::default(), server.endpoint())
        .clock(clock)
        .extractor(topic)
        .extractor(amounts)
        .llm_interceptor(Arc::new(traces.clone()))
        .persistence(store.clone() as Arc<dyn SessionPersistence>)
        .session_id(ID)
        .record_wire(recorder.clone() as Arc<dyn WireRecorder>)
        .journal_sink(journal.clone() as Arc<dyn JournalSink>);
    let mut events = builder.subscribe();
    let mut sync = builder.subscribe();
    let (handle, mut conn) = connect(builder, &mut server, 40).await;
    let turns = [
        ("What's the weather in Paris?", "Sunny and 21 degrees."),
        ("Book me a table, I can spend $80.", "Booked for 8 pm."),
    ];
    for (user, model) in turns {
        tokio::time::advance(Duration::from_millis(700)).await;
        conn.send_json(
            &json!({"serverContent": {"inputTranscription": {"text": user, "finished": true}}}),
        )
        .await;
        tokio::time::advance(Duration::from_millis(300)).await;
        conn.send_json(&json!({"serverContent": {"outputTranscription": {"text": model}}}))
            .await;
        conn.send_json(&json!({"serverContent": {"turnComplete": true}}))
            .await;
        seen(&mut sync, turn_complete).await;
    }
    let (end, _) = tokio::join!(handle.disconnect(), conn.expect_closed());
    assert!(!end.failed);
    let outcome = Outcome {
        control: lane(&drain(&mut events).await, Lane::Control),
        journal: journal.entries(),
        transcript: handle.transcript().to_vec(),
        snapshot: store.get(ID),
    };
    (outcome, recorder.entries(), traces)
}

async fn replay(entries: Vec<WireEntry>, traces: &TraceRecorder) -> Outcome {
    let journal = Arc::new(MemoryJournalSink::new());
    let store = Arc::new(MemoryPersistence::new());
    let [topic, amounts] = extractors(Arc::new(Unreachable));
    let builder = LiveSessionBuilder::new(SessionConfig::default(), ApiEndpoint::offline())
        .extractor(topic)
        .extractor(amounts)
        .llm_interceptor(Arc::new(TraceReplayLlm::new(traces.trace())))
        .persistence(store.clone() as Arc<dyn SessionPersistence>)
        .session_id(ID)
        .journal_sink(journal.clone() as Arc<dyn JournalSink>);
    let (replay, events, end) = replay_to_end(builder, entries).await;
    assert!(!end.failed);
    assert_eq!(replay.divergences(), vec![], "no divergence");
    Outcome {
        control: lane(&events, Lane::Control),
        journal: journal.entries(),
        transcript: replay.handle().transcript().to_vec(),
        snapshot: store.get(ID),
    }
}

#[tokio::test(start_paused = true)]
async fn a_session_with_an_llm_extractor_replays_from_its_trace_with_an_equal_journal() {
    let (live, entries, traces) = record().await;
    // What the extractors wrote live: the model's answers and the regex's find, flattened.
    let extracted: Vec<(String, serde_json::Value)> = live
        .journal
        .iter()
        .filter(|m| !m.key.starts_with("session:"))
        .map(|m| (m.key.clone(), m.new.clone()))
        .collect();
    assert_eq!(
        extracted,
        [
            (
                "Topic".to_owned(),
                json!({"topic": "weather", "city": "Paris"})
            ),
            ("derived:topic".to_owned(), json!("weather")),
            ("derived:city".to_owned(), json!("Paris")),
            ("fields".to_owned(), json!({})),
            (
                "Topic".to_owned(),
                json!({"topic": "booking", "city": "Paris"})
            ),
            ("derived:topic".to_owned(), json!("booking")),
            ("fields".to_owned(), json!({"amount": "$80."})),
            ("derived:amount".to_owned(), json!("$80.")),
        ]
    );
    assert_eq!(traces.trace().turns().len(), 2, "both model calls traced");

    let replayed = replay(entries, &traces).await;
    assert_eq!(replayed.journal, live.journal, "journal, entry by entry");
    assert_eq!(replayed.control, live.control, "control lane");
    assert_eq!(replayed.transcript, live.transcript, "transcript");
    assert!(live.snapshot.is_some());
    assert_eq!(replayed.snapshot, live.snapshot, "final snapshot");
}
