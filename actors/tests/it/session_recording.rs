//! What a live session records: the exact wire log, no credential anywhere in it, and a
//! Recorder that loses no entry when it fails.

use crate::support;

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use reel_actors::testing::{SCRIPTED_API_KEY, ScriptedServer, ServerConn};
use reel_actors::{EventStream, LiveHandle};
use reel_protocol::SessionConfig;
use reel_recorder::wire_log::{MemoryWireRecorder, WireEntry, WireRecorder};
use serde_json::json;
use support::{settle, start};

/// Starts a session recording its wire into `recorder`.
async fn start_recording(
    server: &mut ScriptedServer,
    recorder: Arc<dyn WireRecorder>,
    config: SessionConfig,
) -> (LiveHandle, ServerConn, EventStream) {
    let (handle, conn, _, events) = start(server, |b| b.record_wire(recorder), config).await;
    (handle, conn, events)
}

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
    let (handle, mut conn, mut events) = start_recording(
        &mut server,
        recorder.clone(),
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
    let (handle, mut conn, mut events) =
        start_recording(&mut server, recorder.clone(), SessionConfig::default()).await;
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
    let (handle, mut conn, mut events) =
        start_recording(&mut server, recorder.clone(), SessionConfig::default()).await;
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

/// A wire recorder that counts its flushes and notes how many entries it held at each.
#[derive(Default)]
struct CountsFlushes {
    inner: MemoryWireRecorder,
    flushed_at: std::sync::Mutex<Vec<usize>>,
}

impl WireRecorder for CountsFlushes {
    fn record(&self, entry: WireEntry) {
        self.inner.record(entry);
    }

    fn flush(&self) {
        let held = self.inner.entries().len();
        self.flushed_at.lock().unwrap().push(held);
    }
}

/// A voice session's frames come one at a time, 50 a second: each used to wake the
/// Recorder for a trip to the blocking pool, a write and a flush. Now the frames of a
/// [`reel_actors::recorder::FLUSH_INTERVAL`] are written together at its tick, and a frame
/// that ends a turn at once, with everything before it.
#[tokio::test(start_paused = true)]
async fn lone_frames_are_written_at_the_tick_and_a_turns_end_at_once() {
    let mut server = ScriptedServer::bind().await;
    let recorder = Arc::new(CountsFlushes::default());
    let (handle, mut conn, mut events) =
        start_recording(&mut server, recorder.clone(), SessionConfig::default()).await;
    settle(&mut events).await;
    let before = recorder.flushed_at.lock().unwrap().len();
    // 50 frames, 20 ms apart: one second of a model speaking.
    for i in 0..50 {
        conn.send_json(
            &json!({"serverContent": {"modelTurn": {"parts": [{"text": format!("t{i}")}]}}}),
        )
        .await;
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    let lone = recorder.flushed_at.lock().unwrap().len() - before;
    // A tick every 50 ms over the second: about 20 flushes, not 50.
    assert!(
        (18..=22).contains(&lone),
        "{lone} flushes for 50 lone frames over a second"
    );
    // The turn's end is written and flushed at once (no virtual time passes: no tick),
    // with every frame before it.
    let sent_at = tokio::time::Instant::now();
    conn.send_json(&json!({"serverContent": {"turnComplete": true}}))
        .await;
    let turn_end: &[u8] = br#"{"serverContent":{"turnComplete":true}}"#;
    loop {
        tokio::task::yield_now().await;
        let entries = recorder.inner.entries();
        let flushed = recorder.flushed_at.lock().unwrap().last().copied();
        if entries
            .last()
            .is_some_and(|e| e.payload.as_ref() == turn_end)
            && flushed == Some(entries.len())
        {
            break;
        }
    }
    assert_eq!(tokio::time::Instant::now(), sent_at);
    let texts = recorder
        .inner
        .entries()
        .iter()
        .filter(|e| e.payload.starts_with(br#"{"serverContent":{"modelTurn""#))
        .count();
    assert_eq!(texts, 50, "every frame before the turn's end is written");
    let (_, _) = tokio::join!(handle.disconnect(), conn.expect_closed());
}
