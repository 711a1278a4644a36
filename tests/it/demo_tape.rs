//! The bundled demo tape is what reel records when the demo's assistant talks to the
//! scripted model: regenerated here and compared byte for byte, so it can never drift from
//! the code. After an intended change: `REEL_BLESS=1 cargo test --test it demo_tape::`.

use crate::bundled_tape;

use std::sync::Arc;
use std::time::Duration;

use reel::demo::{WEATHER_TAPE, conversation, model_script, weather};
use reel_actors::LiveSessionBuilder;
use reel_actors::clock::TokioClock;
use reel_actors::testing::ScriptedServer;
use reel_recorder::wire_log::{MemoryWireRecorder, WireRecorder};

/// The tape's start time: 2025-06-01T09:00:00Z.
const START_MS: u64 = 1_748_768_400_000;

#[tokio::test(start_paused = true)]
async fn the_bundled_tape_is_what_reel_records_today() {
    let mut server = ScriptedServer::bind().await;
    let recorder = Arc::new(MemoryWireRecorder::new());
    let builder =
        LiveSessionBuilder::new(weather::config(), server.endpoint().without_credential())
            .clock(Arc::new(TokioClock::anchored_at(START_MS)))
            .dispatcher(weather::tools().unwrap())
            .phases(weather::phases().unwrap())
            .record_wire(recorder.clone() as Arc<dyn WireRecorder>);
    let mut events = builder.subscribe();
    let handle = builder.spawn().await.unwrap();
    let mut conn = server.accept().await;
    let model = async {
        model_script::play(&mut conn).await;
    };
    let user = async {
        conversation::run(&handle, &mut events, Duration::from_secs(30))
            .await
            .unwrap();
        tokio::time::advance(Duration::from_millis(400)).await;
        handle.disconnect().await
    };
    let ((), end) = tokio::join!(model, user);
    assert_eq!(end.reason, "closed with code 1000: client disconnect");

    bundled_tape::check_or_bless("weather.wire.jsonl", &recorder.entries(), WEATHER_TAPE);
}
