//! A session that ended lets go of everything the application gave it: once it has ended
//! and its handle is dropped, no part of the tree holds its callbacks. A reference cycle
//! through the tree's shared state (the router's state holding the peers that point back
//! at it, decision 0090) kept every session's tree, its tasks' runtime and its sockets
//! alive after its end; the fault simulator, which runs tens of thousands of sessions in
//! one process, ran out of file descriptors.

use crate::support;

use std::sync::Arc;

use reel_actors::callbacks::FastCallbacks;
use reel_actors::testing::ScriptedServer;
use reel_protocol::SessionConfig;
use serde_json::json;
use support::{settle, start};

#[tokio::test(start_paused = true)]
async fn an_ended_session_lets_go_of_its_callbacks() {
    let mut server = ScriptedServer::bind().await;
    // Held by the callback: counted once more for as long as the tree holds it.
    let held = Arc::new(());
    let in_callback = Arc::clone(&held);
    let callbacks = FastCallbacks {
        on_audio: Some(Arc::new(move |_pcm: &bytes::Bytes| {
            let _ = &in_callback;
        })),
        ..Default::default()
    };
    let (handle, mut conn, _, mut events) = start(
        &mut server,
        |b| b.fast_callbacks(callbacks),
        SessionConfig::default(),
    )
    .await;
    // Frames routed the usual way for a voice session: by the reader, in place.
    for _ in 0..3 {
        conn.send_json(&json!({"serverContent": {"modelTurn": {"parts": [
            {"inlineData": {"mimeType": "audio/pcm;rate=24000", "data": "AAAA"}}
        ]}}}))
        .await;
    }
    settle(&mut events).await;
    assert!(
        handle.buffers().router.in_place > 0,
        "{:?}",
        handle.buffers().router
    );
    let (done, _) = tokio::join!(handle.disconnect(), conn.expect_closed());
    assert!(!done.failed, "{}", done.reason);
    drop((handle, events));
    // The tree's tasks finish after the end is announced: virtual time, no wait.
    tokio::time::sleep(std::time::Duration::from_secs(60)).await;
    assert_eq!(
        Arc::strong_count(&held),
        1,
        "the tree still holds the callbacks"
    );
}
