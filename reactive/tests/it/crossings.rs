//! Issue 29: a crossing from an absent key, through a whole session. An absent key is on
//! neither side of a threshold, so its first value crosses into the side it lands on; a
//! removal crosses nothing; the key's next first value crosses again.

use std::sync::{Arc, Mutex};

use reel_actors::testing::{ScriptedServer, ServerConn};
use reel_actors::{EventStream, Lane, LiveEvent, LiveHandle, LiveSessionBuilder};
use reel_protocol::{SessionConfig, SessionEvent};
use reel_reactive::{ReactiveConfig, WatchBuilder, Watcher};
use serde_json::{Value, json};

type Log = Arc<Mutex<Vec<(&'static str, Value, Value)>>>;

/// A blocking watcher that logs `(label, old, new)`.
fn logged(builder: WatchBuilder, label: &'static str, log: &Log) -> Watcher {
    let log = Arc::clone(log);
    builder.blocking().then(move |old, new, _state| {
        let log = Arc::clone(&log);
        async move { log.lock().unwrap().push((label, old, new)) }
    })
}

/// Ends the model's turn (a commit point) and waits until its pipeline is done.
async fn turn(conn: &mut ServerConn, events: &mut EventStream) {
    conn.send_json(&json!({"serverContent": {"turnComplete": true}}))
        .await;
    while let Some(envelope) = events.recv().await {
        if envelope.lane == Lane::Control
            && matches!(
                envelope.event,
                LiveEvent::Session(SessionEvent::TurnComplete { .. })
            )
        {
            return;
        }
    }
    panic!("the session ended");
}

async fn start(log: &Log) -> (LiveHandle, ServerConn, EventStream, ScriptedServer) {
    let reactive = ReactiveConfig::new()
        .watch(logged(
            Watcher::on("app:score").crossed_above(3.0),
            "above",
            log,
        ))
        .watch(logged(
            Watcher::on("app:score").crossed_below(3.0),
            "below",
            log,
        ))
        .build()
        .unwrap();
    let mut server = ScriptedServer::bind().await;
    let builder = LiveSessionBuilder::new(SessionConfig::default(), server.endpoint())
        .reactor(Box::new(reactive));
    let events = builder.subscribe();
    let connecting = tokio::spawn(builder.connect());
    let mut conn = server.accept().await;
    conn.recv_json().await;
    conn.send_json(&json!({"setupComplete": {}})).await;
    let handle = connecting.await.unwrap().unwrap();
    (handle, conn, events, server)
}

#[tokio::test(start_paused = true)]
async fn a_first_value_crosses_into_its_side_and_a_removal_crosses_nothing() {
    let log: Log = Arc::default();
    let (handle, mut conn, mut events, _server) = start(&log).await;
    let state = handle.state().clone();
    let entries = || log.lock().unwrap().clone();

    // Absent → 5: above 3.
    state.set("app:score", 5).await.unwrap();
    turn(&mut conn, &mut events).await;
    assert_eq!(entries(), [("above", Value::Null, json!(5))]);

    // 5 → absent: no side, no crossing.
    state.remove("app:score").await.unwrap();
    turn(&mut conn, &mut events).await;
    assert_eq!(entries().len(), 1);

    // Absent → 1: below 3.
    state.set("app:score", 1).await.unwrap();
    turn(&mut conn, &mut events).await;
    // 1 → 3: at the threshold is above it.
    state.set("app:score", 3).await.unwrap();
    turn(&mut conn, &mut events).await;
    // 3 → 8: stays above.
    state.set("app:score", 8).await.unwrap();
    turn(&mut conn, &mut events).await;
    assert_eq!(
        entries()[1..],
        [
            ("below", Value::Null, json!(1)),
            ("above", json!(1), json!(3)),
        ]
    );

    // 8 → a string: not a number, on no side.
    state.set("app:score", "high").await.unwrap();
    turn(&mut conn, &mut events).await;
    assert_eq!(entries().len(), 3);
    let (end, _) = tokio::join!(handle.disconnect(), conn.expect_closed());
    assert_eq!(end.reason, "closed with code 1000: client disconnect");
}
