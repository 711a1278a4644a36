//! Issue 32: what one lone frame costs the tree in wake-ups. A frame that arrives alone
//! (the usual case for a voice session: one 20 ms chunk at a time) is routed by the
//! transport's reader itself while the router is idle (decision 0090), waking no task; when
//! the router's task routes it instead, it wakes the router once: never a second time only
//! to find its inbox empty.

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
async fn a_lone_frame_is_routed_in_place_or_wakes_the_router_once() {
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
    // Each frame either is routed in place by the reader (the router idle, its state free)
    // or wakes the router exactly once: the router disarms its doorbell (finds its inbox
    // empty) before it pushes the frame's event to the fast lane, so the next frame rings
    // it anew. On a quiet machine every frame is routed in place; on a busy one the
    // router's task may still be finishing the last frame's push when the next arrives.
    let router_wakes = after.router.wakes - before.router.wakes;
    let in_place = after.router.in_place - before.router.in_place;
    assert_eq!(
        (
            after.router.pushed - before.router.pushed,
            in_place + router_wakes,
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
