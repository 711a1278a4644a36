//! What a live session records: the exact wire log, no credential anywhere in it, and a
//! Recorder that loses no entry when it fails.

use crate::support;

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use reel_actors::testing::{SCRIPTED_API_KEY, ScriptedServer};
use reel_protocol::SessionConfig;
use reel_recorder::wire_log::{MemoryWireRecorder, WireEntry, WireRecorder};
use serde_json::json;
use support::{settle, start};

fn lines(entries: &[WireEntry]) -> Vec<String> {
    entries
        .iter()
        .map(|e| serde_json::to_string(e).unwrap())
        .collect()
}

fn b64(text: &str) -> String {
    reel_protocol::Base64Data(bytes::Bytes::copy_from_slice(text.as_bytes())).encode()
}

#[tokio::test(start_paused = true)]
async fn a_session_records_every_frame_both_ways_and_where_it_ended() {
    let mut server = ScriptedServer::bind().await;
    let recorder = Arc::new(MemoryWireRecorder::new());
    let sink = recorder.clone() as Arc<dyn WireRecorder>;
    let (handle, mut conn, _, mut events) = start(
        &mut server,
        |b| b.record_wire(sink),
        SessionConfig::default().text_only(),
    )
    .await;
    handle.send_text("Hi").unwrap();
    conn.recv_json().await;
    conn.send_json(&json!({"serverContent": {"modelTurn": {"parts": [{"text": "Hello!"}]}, "turnComplete": true}}))
        .await;
    settle(&mut events).await;
    let (end, _) = tokio::join!(handle.disconnect(), conn.expect_closed());
    assert!(!end.failed);

    let setup = r#"{"setup":{"model":"models/gemini-live-2.5-flash-native-audio","generationConfig":{"responseModalities":["TEXT"]}}}"#;
    let text = r#"{"clientContent":{"turns":[{"role":"user","parts":[{"text":"Hi"}]}],"turnComplete":true}}"#;
    let answer =
        r#"{"serverContent":{"modelTurn":{"parts":[{"text":"Hello!"}]},"turnComplete":true}}"#;
    // `settle` waits 500 ms of virtual time after each quiet moment.
    assert_eq!(
        lines(&recorder.entries()),
        [
            format!(
                r#"{{"seq":1,"dir":"out","ts_ms":{},"payload_b64":"{}"}}"#,
                support::T0,
                b64(setup)
            ),
            format!(
                r#"{{"seq":2,"dir":"in","ts_ms":{},"payload_b64":"{}"}}"#,
                support::T0,
                b64(r#"{"setupComplete":{}}"#)
            ),
            format!(
                r#"{{"seq":3,"dir":"out","ts_ms":{},"payload_b64":"{}","source":"app"}}"#,
                support::T0,
                b64(text)
            ),
            format!(
                r#"{{"seq":4,"dir":"in","ts_ms":{},"payload_b64":"{}"}}"#,
                support::T0,
                b64(answer)
            ),
            format!(
                r#"{{"seq":5,"dir":"in","ts_ms":{},"payload_b64":"","close":{{"code":1000,"reason":"client disconnect","client":true}}}}"#,
                support::T0 + 500
            ),
        ]
    );
}

#[tokio::test(start_paused = true)]
async fn no_credential_reaches_the_recording() {
    let mut server = ScriptedServer::bind().await;
    let recorder = Arc::new(MemoryWireRecorder::new());
    let sink = recorder.clone() as Arc<dyn WireRecorder>;
    let (handle, mut conn, _, mut events) = start(
        &mut server,
        |b| b.record_wire(sink),
        SessionConfig::default(),
    )
    .await;
    // The key went to the server (in the URL)…
    assert_eq!(conn.query_param("key"), Some(SCRIPTED_API_KEY));
    handle.send_text("Hi").unwrap();
    conn.recv_json().await;
    settle(&mut events).await;
    let (_, _) = tokio::join!(handle.disconnect(), conn.expect_closed());
    // …and nowhere into the log, in any form.
    let log = lines(&recorder.entries()).join("\n");
    let encoded = b64(SCRIPTED_API_KEY);
    assert!(!log.contains(SCRIPTED_API_KEY));
    assert!(!log.contains(encoded.trim_end_matches('=')));
    for entry in recorder.entries() {
        let payload = String::from_utf8_lossy(&entry.payload);
        assert!(!payload.contains(SCRIPTED_API_KEY), "{payload}");
    }
}

/// A wire recorder that fails once, on the entry with sequence number 3.
struct FailsOnce {
    inner: MemoryWireRecorder,
    failed: AtomicBool,
}

impl WireRecorder for FailsOnce {
    fn record(&self, entry: WireEntry) {
        if entry.seq == 3 && !self.failed.swap(true, Ordering::SeqCst) {
            panic!("the disk controller caught fire (on purpose)");
        }
        self.inner.record(entry);
    }
}

#[tokio::test(start_paused = true)]
async fn a_recorder_restart_loses_no_entry() {
    let mut server = ScriptedServer::bind().await;
    let recorder = Arc::new(FailsOnce {
        inner: MemoryWireRecorder::new(),
        failed: AtomicBool::new(false),
    });
    let sink = recorder.clone() as Arc<dyn WireRecorder>;
    let (handle, mut conn, _, mut events) = start(
        &mut server,
        |b| b.record_wire(sink),
        SessionConfig::default(),
    )
    .await;
    for i in 0..5 {
        conn.send_json(
            &json!({"serverContent": {"modelTurn": {"parts": [{"text": format!("t{i}")}]}}}),
        )
        .await;
    }
    let seen = settle(&mut events).await;
    let (_, _) = tokio::join!(handle.disconnect(), conn.expect_closed());
    assert!(recorder.failed.load(Ordering::SeqCst));
    assert!(seen.iter().any(|e| matches!(
        e.event,
        reel_actors::LiveEvent::Restarted {
            actor: reel_actors::Child::Recorder,
            ..
        }
    )));
    let seqs: Vec<u64> = recorder.inner.entries().iter().map(|e| e.seq).collect();
    assert_eq!(
        seqs,
        (1..=8).collect::<Vec<u64>>(),
        "every entry once, in order"
    );
    assert_eq!(handle.telemetry().restarts, 1);
}
