//! Issue 32: what one lone frame costs the tree in wake-ups. A frame that arrives alone
//! (the usual case for a voice session: one 20 ms chunk at a time) wakes the router once:
//! it does not wake a second time only to find its inbox empty.

use crate::support;

use std::sync::Arc;

use reel_actors::callbacks::FastCallbacks;
use reel_actors::testing::ScriptedServer;
use reel_protocol::SessionConfig;
use serde_json::json;
use support::start;

/// The number of lone frames the test sends after its first one.
const FRAMES: u64 = 20;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_lone_frame_wakes_the_router_once() {
    let mut server = ScriptedServer::bind().await;
    let (heard, mut hearing) = tokio::sync::mpsc::unbounded_channel::<()>();
    let callbacks = FastCallbacks {
        on_audio: Some(Arc::new(move |_pcm: &bytes::Bytes| {
            let _ = heard.send(());
        })),
        ..Default::default()
    };
    let (handle, mut conn, _, _events) = start(
        &mut server,
        |b| b.fast_callbacks(callbacks),
        SessionConfig::default(),
    )
    .await;
    let frame = json!({"serverContent": {"modelTurn": {"parts": [
        {"inlineData": {"mimeType": "audio/pcm;rate=24000", "data": "AAAAAAAAAAAAAAAA"}}
    ]}}});
    // The first frame moves the phase (its `PhaseChanged` goes to the lanes too); the
    // figures are taken once it has been heard.
    conn.send_json(&frame).await;
    hearing.recv().await.expect("the first frame is heard");
    let before = handle.buffers();
    // Each frame alone: the next is sent once the callback heard the last.
    for _ in 0..FRAMES {
        conn.send_json(&frame).await;
        hearing.recv().await.expect("every frame is heard");
    }
    let after = handle.buffers();
    // The router disarms its doorbell (finds its inbox empty) before it pushes the frame's
    // event to the fast lane, so every next frame rings it anew: exactly one wake each.
    // (The fast lane's count is not exact: it disarms after the callback, so the next
    // frame may reach it while it is still awake.)
    assert_eq!(
        (
            after.router.pushed - before.router.pushed,
            after.router.wakes - before.router.wakes,
            after.fast_lane.pushed - before.fast_lane.pushed,
        ),
        (FRAMES, FRAMES, FRAMES),
        "router: {:?}; fast lane: {:?}",
        after.router,
        after.fast_lane
    );
    let (done, _) = tokio::join!(handle.disconnect(), conn.expect_closed());
    assert!(!done.failed, "{}", done.reason);
}
