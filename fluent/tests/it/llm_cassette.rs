//! The model-call cassette in the chain: where it goes and what is refused, a cassette at a
//! path of the chain's choosing recorded live and read by the replay, and the application's
//! interceptors inside it (a call the cassette answers never reaches them).

use crate::support;

use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures_util::future::BoxFuture;
use reel_actors::llm::{
    BaseLlm, CassetteError, CassetteMode, LlmChunk, LlmError, LlmInterceptor, LlmRequest, LlmStream,
};
use reel_actors::testing::ScriptedServer;
use reel_fluent::{BuildError, ConnectError, Live, LiveBuilder};
use reel_protocol::ApiEndpoint;
use reel_recorder::llm_tape::DocumentError;
use reel_recorder::wire_log::{MemoryWireRecorder, WireRecorder};
use serde_json::json;
use support::{accepted, recording, until_turn_complete};

#[derive(Debug, PartialEq, serde::Deserialize, schemars::JsonSchema)]
struct Topic {
    topic: String,
}

/// A model answering from a script, counting its calls.
struct Scripted {
    answers: Mutex<Vec<&'static str>>,
}

impl BaseLlm for Scripted {
    fn model_id(&self) -> &str {
        "gemini-2.5-flash"
    }

    fn generate_stream(&self, _: LlmRequest) -> BoxFuture<'_, Result<LlmStream, LlmError>> {
        let answer = self.answers.lock().unwrap().remove(0);
        Box::pin(async move {
            let chunks = [Ok(LlmChunk::text(answer))];
            Ok(Box::pin(futures_util::stream::iter(chunks)) as LlmStream)
        })
    }
}

/// Counts the calls that reach the models it wraps.
#[derive(Default)]
struct Counting {
    calls: Arc<AtomicUsize>,
}

impl LlmInterceptor for Counting {
    fn wrap(&self, llm: Arc<dyn BaseLlm>) -> Arc<dyn BaseLlm> {
        Arc::new(Counted {
            inner: llm,
            calls: Arc::clone(&self.calls),
        })
    }
}

struct Counted {
    inner: Arc<dyn BaseLlm>,
    calls: Arc<AtomicUsize>,
}

impl BaseLlm for Counted {
    fn model_id(&self) -> &str {
        self.inner.model_id()
    }

    fn generate_stream(&self, request: LlmRequest) -> BoxFuture<'_, Result<LlmStream, LlmError>> {
        self.calls.fetch_add(1, Ordering::SeqCst);
        self.inner.generate_stream(request)
    }
}

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!(
        "reel-fluent-llm-cassette-{}-{name}",
        std::process::id()
    ));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

#[test]
fn a_cassette_beside_the_wire_log_needs_a_wire_log_file() {
    let recorder = Arc::new(MemoryWireRecorder::new()) as Arc<dyn WireRecorder>;
    let to_memory = Live::builder()
        .record_wire_to(recorder)
        .llm_cassette(CassetteMode::Record);
    assert!(matches!(
        to_memory.validate(),
        Err(BuildError::CassetteWithoutWireLog)
    ));
    let beside = Live::builder()
        .record_wire("calls/a.wire.jsonl")
        .llm_cassette(CassetteMode::Replay);
    assert!(beside.validate().is_ok());
    let named = Live::builder().llm_cassette_at("calls/a.cassette.json", CassetteMode::Record);
    assert!(named.validate().is_ok());
}

#[tokio::test]
async fn a_cassette_to_replay_from_must_exist_before_anything_connects() {
    let dir = scratch("missing");
    let path = dir.join("none.cassette.json");
    let refused = Live::builder()
        .llm_cassette_at(&path, CassetteMode::Replay)
        .connect(ApiEndpoint::offline())
        .await
        .unwrap_err();
    match &refused {
        ConnectError::Cassette {
            path: reported,
            source: CassetteError::File(DocumentError::Io { .. }),
        } => assert_eq!(*reported, path),
        other => panic!("{other:?}"),
    }
    assert_eq!(
        refused.to_string(),
        format!(
            "cannot open the model-call cassette: cannot access the cassette `{}`: No such file \
             or directory (os error 2)",
            path.display()
        )
    );
    assert!(!path.exists(), "nothing was created");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// An app whose extractor asks `llm`, through `counting`, with its cassette at `cassette`.
fn app(llm: Arc<dyn BaseLlm>, counting: Counting, cassette: &PathBuf) -> LiveBuilder {
    Live::builder()
        .text_only()
        .extract_turns::<Topic>(llm, "Extract the topic.")
        .llm_interceptor(Arc::new(counting))
        .llm_cassette_at(cassette, CassetteMode::Record)
}

#[tokio::test(start_paused = true)]
async fn a_named_cassette_records_live_and_answers_the_replay_before_any_interceptor() {
    let dir = scratch("named");
    let cassette = dir.join("models.cassette.json");
    let live_calls = Counting::default();
    let calls = Arc::clone(&live_calls.calls);
    let model = Arc::new(Scripted {
        answers: Mutex::new(vec![r#"{"topic": "billing"}"#]),
    });
    let mut server = ScriptedServer::bind().await;
    let (builder, memory) = recording(app(model, live_calls, &cassette));
    let mut events = builder.subscribe();
    let (handle, mut conn, _setup) = accepted(builder, &mut server, Duration::ZERO).await;
    conn.send_json(&json!({"serverContent": {"inputTranscription": {"text": "My bill is wrong.", "finished": true}}}))
        .await;
    conn.send_json(&json!({"serverContent": {"outputTranscription": {"text": "Let me look."}}}))
        .await;
    conn.send_json(&json!({"serverContent": {"turnComplete": true}}))
        .await;
    until_turn_complete(&mut events).await;
    handle.disconnect().await;
    assert_eq!(
        calls.load(Ordering::SeqCst),
        1,
        "live, the call went through"
    );
    assert_eq!(
        handle.extracted::<Topic>("Topic"),
        Some(Topic {
            topic: "billing".into()
        })
    );

    // The replay reads the named cassette; the model has no answer left and the
    // interceptor sees nothing: the cassette answered first.
    let replay_calls = Counting::default();
    let calls = Arc::clone(&replay_calls.calls);
    let exhausted = Arc::new(Scripted {
        answers: Mutex::new(Vec::new()),
    });
    let replay = app(exhausted, replay_calls, &cassette)
        .replay(memory.wire.entries())
        .await
        .unwrap();
    assert_eq!(
        replay.cassette().map(|c| (c.path().to_owned(), c.mode())),
        Some((cassette.clone(), CassetteMode::Replay))
    );
    let outcome = replay.finish().await;
    assert!(
        outcome.is_clean(),
        "{:?} {:?}",
        outcome.divergences,
        outcome.llm_drift
    );
    assert_eq!(calls.load(Ordering::SeqCst), 0);
    assert_eq!(outcome.journal, memory.journal.entries());
    assert_eq!(
        outcome.extracted::<Topic>("Topic"),
        Some(Topic {
            topic: "billing".into()
        })
    );
    std::fs::remove_dir_all(&dir).unwrap();
}
