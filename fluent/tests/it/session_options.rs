//! One place defines each session option (decision 0047): the chain's setters write into
//! one `SessionOptions`, which reaches the runtime's builder whole; the runtime's builder
//! takes the same struct and its setters write the same fields.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use reel_actors::audio::{JitterConfig, VadConfig};
use reel_actors::{LiveSessionBuilder, SessionOptions};
use reel_fluent::{Live, ReplayError};
use reel_protocol::{ApiEndpoint, SessionConfig};
use reel_recorder::wire_log::WireEntry;

#[tokio::test]
async fn what_the_chain_sets_reaches_the_runtime_as_one_options_value() {
    let jitter = JitterConfig {
        frame_ms: 40,
        ..JitterConfig::default()
    };
    let seen: Arc<Mutex<Option<SessionOptions>>> = Arc::default();
    let keep = Arc::clone(&seen);
    let error = Live::builder()
        .playback_buffer(64)
        .jitter_buffer(jitter)
        .client_vad(VadConfig::default())
        .extraction_timeout(Duration::from_secs(5))
        .customize(move |session| {
            *keep.lock().unwrap() = Some(*session.session_options());
            session
        })
        // An empty recording stops the replay once its builder is made.
        .replay(Vec::<WireEntry>::new())
        .await
        .unwrap_err();
    assert!(
        matches!(
            error,
            ReplayError::Replay(reel_replayer::ReplayError::Empty { .. })
        ),
        "{error}"
    );
    let mut expected = SessionOptions::default();
    expected.playback_buffer = Some(64);
    expected.jitter_buffer = Some(jitter);
    expected.client_vad = Some(VadConfig::default());
    expected.extraction_timeout = Duration::from_secs(5);
    assert_eq!(seen.lock().unwrap().take(), Some(expected));
}

#[test]
fn the_runtime_builder_takes_the_same_options_and_its_setters_write_them() {
    let mut options = SessionOptions::default();
    options.client_vad = Some(VadConfig::default());
    options.callback_timeout = Duration::from_secs(2);
    let session = LiveSessionBuilder::new(SessionConfig::default(), ApiEndpoint::offline())
        .options(options)
        .session_budget(Duration::from_secs(60));
    let mut expected = options;
    expected.session_budget = Duration::from_secs(60);
    assert_eq!(session.session_options(), &expected);
    // Client VAD in the options turns the server's detection off in the setup.
    assert!(SessionConfig::default().server_vad());
    assert!(!session.resolved_config().unwrap().server_vad());
}
