//! Streams the chain hands out before the session exists (decision 0047): a stream
//! subscribed before `connect` holds every event from the very first, each lane numbered
//! from 1 without a gap, and ends with the session.

use crate::support;

use std::time::Duration;

use reel_actors::testing::ScriptedServer;
use reel_actors::{EventEnvelope, Lane};
use reel_fluent::Live;
use support::{accepted, drain, text, turn_complete, until_turn_complete};

/// Each event of `lane` as `seq kind`, in the order the stream gave them.
fn listed(events: &[EventEnvelope], lane: Lane) -> Vec<String> {
    events
        .iter()
        .filter(|e| e.lane == lane)
        .map(|e| format!("{} {}", e.seq, e.event.kind()))
        .collect()
}

/// Each lane's events, as [`listed`].
fn by_lane(events: &[EventEnvelope]) -> [Vec<String>; 3] {
    [Lane::Fast, Lane::Control, Lane::Supervisor].map(|lane| listed(events, lane))
}

#[tokio::test(start_paused = true)]
async fn a_stream_subscribed_before_connect_misses_no_event() {
    let builder = Live::builder().text_only();
    let mut early = builder.subscribe();
    let mut second = builder.subscribe();
    let mut server = ScriptedServer::bind().await;
    let (handle, mut conn, _setup) = accepted(builder, &mut server, Duration::ZERO).await;
    conn.send_json(&text("Hi.")).await;
    conn.send_json(&turn_complete()).await;
    let mut seen = until_turn_complete(&mut early).await;
    handle.disconnect().await;
    seen.extend(drain(&mut early).await);
    let lines = |lines: &[&str]| lines.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    let expected = [
        lines(&[
            "1 phase_changed",
            "2 phase_changed",
            "3 phase_changed",
            "4 text",
            "5 phase_changed",
            "6 text_complete",
            "7 phase_changed",
            "8 phase_changed",
            "9 phase_changed",
        ]),
        lines(&[
            "1 phase_changed",
            "2 phase_changed",
            "3 connected",
            "4 phase_changed",
            "5 phase_changed",
            "6 text_complete",
            "7 turn_complete",
            "8 phase_changed",
            "9 phase_changed",
            "10 disconnected",
            "11 phase_changed",
        ]),
        lines(&["1 session_ended"]),
    ];
    assert_eq!(by_lane(&seen), expected);
    // A second stream handed out before the start sees the same.
    assert_eq!(by_lane(&drain(&mut second).await), expected);
}
