//! The `proxy` example: a real Python SDK client (`google-genai`, installed once under
//! `target/interop/python`) holds a session through the example's recording proxy, whose
//! upstream is a tape server playing the bundled tape; the recording the proxy writes
//! decodes, matches the tape frame for frame, and replays clean.
//!
//! The bundled tape is what reel records when a `Live::builder()` chain has the same
//! session with a scripted model — so this also shows the Python SDK and reel sending the
//! same frames for the same session. It is regenerated here and compared byte for byte;
//! after an intended change: `REEL_BLESS=1 cargo test --test it example_proxy::`.

#[allow(dead_code)] // the example's `main` is not called here
#[path = "../../examples/proxy.rs"]
mod proxy;

use crate::bundled_tape;

use crate::python_sdk;

use std::path::PathBuf;
use std::process::Command;
use std::sync::Arc;
use std::time::Duration;

use reel_actors::clock::TokioClock;
use reel_actors::testing::ScriptedServer;
use reel_actors::{Lane, LiveEvent};
use reel_fluent::Live;
use reel_protocol::SessionEvent;
use reel_recorder::wire_log::{Direction, MemoryWireRecorder, WireEntry, WireRecorder};
use reel_tape_server::{
    Outcome, SelfSignedCertificate, TapeLibrary, TapeServer, Upstream, canonical,
};
use serde_json::{Value, json};

/// The session `examples/support/proxy_client.py` has.
const MODEL: &str = "gemini-live-2.5-flash-preview";
const INSTRUCTION: &str = "Answer in one short sentence.";
const QUESTION: &str = "In one sentence: what is a tape recorder?";
const ANSWER: [&str; 2] = [
    "A tape recorder stores sound on magnetic tape",
    " and plays it back later.",
];

/// The tape's start time: 2025-06-01T10:00:00Z.
const START_MS: u64 = 1_748_772_000_000;

/// Each frame as the tape server compares it: client frames in canonical form (key casing,
/// order and base64 alphabet aside), server frames as sent; close markers left out.
fn frames(entries: &[WireEntry]) -> Vec<(Direction, Value)> {
    entries
        .iter()
        .filter(|entry| !entry.is_close_marker())
        .map(|entry| match entry.dir {
            Direction::Out => (entry.dir, canonical(&entry.payload).unwrap()),
            Direction::In => (entry.dir, serde_json::from_slice(&entry.payload).unwrap()),
        })
        .collect()
}

/// Runs `examples/support/proxy_client.py` against `base_url`, trusting `cert`; returns
/// what it printed (the model's answer).
async fn python_client(base_url: String, cert: PathBuf) -> String {
    let python = python_sdk::python().to_owned();
    let client = python_sdk::root().join("examples/support/proxy_client.py");
    let output = tokio::task::spawn_blocking(move || {
        Command::new(python)
            .arg(client)
            .arg(base_url)
            .env("SSL_CERT_FILE", cert)
            .output()
            .unwrap()
    })
    .await
    .unwrap();
    let text = python_sdk::output_text(&output);
    assert!(output.status.success(), "the Python client failed:\n{text}");
    String::from_utf8(output.stdout).unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_python_sdk_session_recorded_through_the_proxy_matches_its_tape_and_replays_clean() {
    let dir = python_sdk::tempdir("proxy-example");
    let out_dir = dir.join("recordings");
    // The tape server stands in for the API…
    let mut api = proxy::serve_bundled_tape().await.unwrap();
    // …and the example's proxy sits between the SDK and it.
    let upstream = Upstream::new(&api.base_url()).unwrap();
    let mut running = proxy::RecordingProxy::start(upstream, &out_dir, &dir.join("tls"))
        .await
        .unwrap();
    let (base_url, cert) = (running.sdk_base_url(), running.tls.cert.clone());
    assert!(
        running.instructions().contains(&format!(
            "SSL_CERT_FILE={} python examples/support/proxy_client.py {base_url}",
            cert.display()
        )),
        "{}",
        running.instructions()
    );

    let answer = python_client(base_url, cert.clone()).await;
    assert_eq!(answer, format!("{}\n", ANSWER.concat()));
    let recorded = running.server.next_report().await.unwrap();
    assert!(
        matches!(
            &recorded.outcome,
            Outcome::Recorded {
                frames_out: 2,
                frames_in: 5,
                ..
            }
        ),
        "{recorded}"
    );
    let played = api.next_report().await.unwrap();
    assert!(
        matches!(&played.outcome, Outcome::Replayed { frames: 2, .. }),
        "{played}"
    );
    running.shutdown().await;
    api.shutdown().await;

    // The recording exists, decodes, and matches the tape the upstream played.
    let found = proxy::recordings(&out_dir).unwrap();
    assert_eq!(
        found
            .iter()
            .map(|p| p.file_name().unwrap().to_string_lossy().into_owned())
            .collect::<Vec<_>>(),
        [format!("{MODEL}-1.wire.jsonl")]
    );
    let recording = reel_recorder::read_wire_log(&found[0]).unwrap();
    assert_eq!(frames(&recording), frames(&proxy::bundled_tape().unwrap()));
    // No credential reached the recording: not the SDK's key, not anyone's.
    let raw = std::fs::read_to_string(&found[0]).unwrap();
    assert!(!raw.contains("not-a-real-key"), "{raw}");

    // It replays clean: served back to the same SDK client, every frame matches…
    let certificate = SelfSignedCertificate::generate().unwrap();
    let files = certificate.write_to(dir.join("tls-replay")).unwrap();
    let mut replay = TapeServer::replay(TapeLibrary::open(&out_dir).unwrap())
        .tls(certificate.identity().clone())
        .start()
        .await
        .unwrap();
    let again = python_client(format!("https://{}/", replay.local_addr()), files.cert).await;
    assert_eq!(again, answer);
    let replayed = replay.next_report().await.unwrap();
    assert!(
        matches!(&replayed.outcome, Outcome::Replayed { frames: 2, .. }),
        "{replayed}"
    );
    replay.shutdown().await;

    // …and `reel replay` runs it through the session tree, turn by turn. (It sends the
    // setup again in reel's encoding, which differs from the Python SDK's in whitespace
    // only: the frames compared above are equal in canonical form.)
    let replay = Command::new(env!("CARGO_BIN_EXE_reel"))
        .arg("replay")
        .arg(&found[0])
        .output()
        .unwrap();
    let report = python_sdk::output_text(&replay);
    assert!(replay.status.success(), "reel replay:\n{report}");
    assert!(
        report.contains(&format!("“{}”", ANSWER.concat())),
        "{report}"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

fn text(t: &str) -> Value {
    json!({"serverContent": {"modelTurn": {"role": "model", "parts": [{"text": t}]}}})
}

#[tokio::test(start_paused = true)]
async fn the_bundled_proxy_tape_is_what_reel_records_today() {
    let mut server = ScriptedServer::bind().await;
    let recorder = Arc::new(MemoryWireRecorder::new());
    let session = Live::builder()
        .model(MODEL)
        .text_only()
        .instruction(INSTRUCTION)
        .greeting(QUESTION)
        .record_wire_to(recorder.clone() as Arc<dyn WireRecorder>)
        .customize(|session| session.clock(Arc::new(TokioClock::anchored_at(START_MS))));
    let mut events = session.subscribe();
    let endpoint = server.endpoint().without_credential();
    let model = async {
        let mut conn = server.accept().await;
        conn.recv().await.unwrap();
        tokio::time::advance(Duration::from_millis(60)).await;
        conn.send_json(&json!({"setupComplete": {}})).await;
        let question = conn.recv().await.unwrap();
        tokio::time::advance(Duration::from_millis(240)).await;
        for part in ANSWER {
            conn.send_json(&text(part)).await;
        }
        conn.send_json(&json!({"serverContent": {"generationComplete": true}}))
            .await;
        conn.send_json(&json!({
            "serverContent": {"turnComplete": true},
            "usageMetadata": {"promptTokenCount": 21, "responseTokenCount": 12, "totalTokenCount": 33}
        }))
        .await;
        conn.expect_closed().await;
        question
    };
    let client = async {
        let handle = session.connect(endpoint).await.unwrap();
        let mut answer = String::new();
        while let Some(envelope) = events.recv().await {
            match (envelope.lane, envelope.event) {
                (Lane::Fast, LiveEvent::Session(SessionEvent::TextComplete(text))) => {
                    answer = text;
                }
                (Lane::Control, event) if event.kind() == "turn_complete" => break,
                _ => {}
            }
        }
        tokio::time::advance(Duration::from_millis(100)).await;
        (answer, handle.disconnect().await)
    };
    let (question, (answer, end)) = tokio::join!(model, client);
    assert_eq!(
        question.json().unwrap(),
        json!({"clientContent": {"turns": [{"role": "user", "parts": [{"text": QUESTION}]}], "turnComplete": true}})
    );
    assert_eq!(answer, ANSWER.concat());
    assert_eq!(end.reason, "closed with code 1000: client disconnect");

    bundled_tape::check_or_bless("proxy.wire.jsonl", &recorder.entries(), proxy::PROXY_TAPE);
}
