//! Watchers, computed values and temporal patterns declared in the chain run in a whole
//! session on a loopback WebSocket: each fires exactly where the runtime's rules say, and
//! the same chain replaying the recording fires them again at the same points, writing
//! the same journal.

use crate::support;

use std::sync::{Arc, Mutex};
use std::time::Duration;

use reel_actors::testing::ScriptedServer;
use reel_fluent::{Live, LiveBuilder};
use reel_protocol::SessionEvent;
use reel_recorder::journal::StateMutation;
use reel_recorder::wire_log::WireEntry;
use reel_tools::SimpleTool;
use serde_json::{Value, json};
use support::{recording, text, turn_complete, until_turn_complete};

/// What the rules did, in order.
type Log = Arc<Mutex<Vec<String>>>;

fn push(log: &Log, line: String) {
    log.lock().unwrap().push(line);
}

/// A shop assistant: a tool fills the basket; a computed total; watchers on the basket,
/// the total and the free-shipping flag; a turn pattern nudging a user who buys nothing;
/// a rate pattern on tool calls.
fn shop(log: &Log) -> LiveBuilder {
    let (basket, total, shipping, nudge, spree) = (
        Arc::clone(log),
        Arc::clone(log),
        Arc::clone(log),
        Arc::clone(log),
        Arc::clone(log),
    );
    Live::builder()
        .model("gemini-live-2.5-flash-preview")
        .text_only()
        .tool(SimpleTool::new(
            "add_item",
            "Adds an item to the basket.",
            Some(json!({"type": "object", "properties": {"price": {"type": "number"}}})),
            |args, ctx| async move {
                let mut items: Vec<f64> = ctx.state.get("app:basket").unwrap_or_default();
                items.push(args["price"].as_f64().unwrap_or_default());
                ctx.state
                    .set("app:basket", &items)
                    .map_err(|e| ctx.fail(e))?;
                Ok(json!({"items": items.len()}))
            },
        ))
        .computed("total", &["app:basket"], |s| {
            let items = s.get::<Vec<f64>>("app:basket")?;
            Some(json!(items.iter().sum::<f64>()))
        })
        .watch("app:basket")
        .blocking()
        .then(move |old, new, _state| {
            let log = Arc::clone(&basket);
            async move { push(&log, format!("basket {old} -> {new}")) }
        })
        .watch("derived:total")
        .crossed_above(100.0)
        .blocking()
        .then(move |old, new, state| {
            let log = Arc::clone(&total);
            async move {
                push(&log, format!("total crossed 100: {old} -> {new}"));
                state.set("app:free_shipping", true).await.unwrap();
            }
        })
        .watch("app:free_shipping")
        .became_true()
        .blocking()
        .then(move |_, _, _| {
            let log = Arc::clone(&shipping);
            async move { push(&log, "free shipping".to_owned()) }
        })
        .when_turns(
            "buys_nothing",
            |s| !s.contains("app:basket"),
            2,
            move |state, _writer| {
                let log = Arc::clone(&nudge);
                async move {
                    push(&log, "nudge".to_owned());
                    state.set("app:nudged", true).await.unwrap();
                }
            },
        )
        .when_rate(
            "spree",
            |event| matches!(event, SessionEvent::ToolCall(_)),
            2,
            Duration::from_secs(60),
            move |_state, _writer| {
                let log = Arc::clone(&spree);
                async move { push(&log, "spree".to_owned()) }
            },
        )
}

struct Recorded {
    log: Vec<String>,
    wire: Vec<WireEntry>,
    journal: Vec<StateMutation>,
}

async fn record() -> Recorded {
    let log = Log::default();
    let mut server = ScriptedServer::bind().await;
    let (builder, memory) = recording(shop(&log));
    let mut events = builder.subscribe();
    let endpoint = server.endpoint();
    let script = async {
        let mut conn = server.accept().await;
        conn.recv().await.unwrap();
        conn.send_json(&json!({"setupComplete": {}})).await;
        conn
    };
    let (handle, mut conn) = tokio::join!(builder.connect(endpoint), script);
    let handle = handle.unwrap();

    // Two turns without a purchase: the turn pattern fires at the second.
    for answer in ["Welcome to the shop!", "Anything you like?"] {
        tokio::time::advance(Duration::from_millis(500)).await;
        conn.send_json(&text(answer)).await;
        conn.send_json(&turn_complete()).await;
        until_turn_complete(&mut events).await;
    }
    assert_eq!(*log.lock().unwrap(), ["nudge"]);

    // Two purchases in two turns: the rate pattern at the second call, the basket watcher
    // at each tool commit, the total (recalculated at each tool commit) crossing 100 at the
    // second one.
    for (id, price) in [("c-1", 60), ("c-2", 50)] {
        tokio::time::advance(Duration::from_millis(500)).await;
        conn.send_json(&json!({"toolCall": {"functionCalls": [
            {"id": id, "name": "add_item", "args": {"price": price}}
        ]}}))
        .await;
        conn.recv_json().await;
        conn.send_json(&text("Added.")).await;
        conn.send_json(&turn_complete()).await;
        until_turn_complete(&mut events).await;
    }
    // What the total watcher wrote is seen by the next evaluation: that turn's complete.
    tokio::time::advance(Duration::from_millis(500)).await;
    conn.send_json(&text("Shipping is on us.")).await;
    conn.send_json(&turn_complete()).await;
    until_turn_complete(&mut events).await;

    let (end, _) = tokio::join!(handle.disconnect(), conn.expect_closed());
    assert_eq!(end.reason, "closed with code 1000: client disconnect");
    let log = log.lock().unwrap().clone();
    Recorded {
        log,
        wire: memory.wire.entries(),
        journal: memory.journal.entries(),
    }
}

/// The journal's entries for the application's keys: (key, old, new).
fn app_keys(journal: &[StateMutation]) -> Vec<(String, Value, Value)> {
    journal
        .iter()
        .filter(|m| m.key.starts_with("app:") || m.key.starts_with("derived:"))
        .map(|m| (m.key.clone(), m.old.clone(), m.new.clone()))
        .collect()
}

#[tokio::test(start_paused = true)]
async fn the_chains_rules_fire_where_the_runtime_says() {
    let recorded = record().await;
    assert_eq!(
        recorded.log,
        [
            "nudge",
            "basket null -> [60.0]",
            // Counted when the call is handled; the tool's writes are committed after it ran.
            "spree",
            "basket [60.0] -> [60.0,50.0]",
            "total crossed 100: 60.0 -> 110.0",
            "free shipping",
        ]
    );
    let change = |key: &str, old: Value, new: Value| (key.to_owned(), old, new);
    assert_eq!(
        app_keys(&recorded.journal),
        [
            change("app:nudged", Value::Null, json!(true)),
            change("app:basket", Value::Null, json!([60.0])),
            change("derived:total", Value::Null, json!(60.0)),
            change("app:basket", json!([60.0]), json!([60.0, 50.0])),
            change("derived:total", json!(60.0), json!(110.0)),
            change("app:free_shipping", Value::Null, json!(true)),
        ]
    );
}

#[tokio::test(start_paused = true)]
async fn the_same_chain_replays_its_rules_exactly() {
    let recorded = record().await;
    let log = Log::default();
    let outcome = shop(&log)
        .replay(recorded.wire.clone())
        .await
        .unwrap()
        .finish()
        .await;
    assert_eq!(outcome.divergences, vec![]);
    assert_eq!(*log.lock().unwrap(), recorded.log, "the same firings");
    assert_eq!(outcome.journal, recorded.journal, "journal, entry by entry");
}

/// Issue 26, promise 3, through the chain: a `.watch(..).blocking()` action that hangs is cut
/// off at the session's callback timeout (set with `customize`) and reported; the next tool
/// call is answered and the turn completes.
#[tokio::test(start_paused = true)]
async fn a_hung_blocking_watch_action_times_out_and_the_next_call_is_answered() {
    let mut server = ScriptedServer::bind().await;
    let builder = Live::builder()
        .model("gemini-live-2.5-flash-preview")
        .text_only()
        .tool(SimpleTool::new(
            "add_item",
            "Adds an item to the basket.",
            None,
            |_args, ctx| async move {
                let count: u32 = ctx.state.get("app:count").unwrap_or_default();
                ctx.state
                    .set("app:count", count + 1)
                    .map_err(|e| ctx.fail(e))?;
                Ok(json!({"count": count + 1}))
            },
        ))
        .watch("app:count")
        .changed_to(1)
        .blocking()
        .then(|_, _, _| std::future::pending::<()>())
        .customize(|session| session.callback_timeout(Duration::from_secs(2)));
    let mut events = builder.subscribe();
    let endpoint = server.endpoint();
    let script = async {
        let mut conn = server.accept().await;
        conn.recv().await.unwrap();
        conn.send_json(&json!({"setupComplete": {}})).await;
        conn
    };
    let (handle, mut conn) = tokio::join!(builder.connect(endpoint), script);
    let handle = handle.unwrap();
    for id in ["c-1", "c-2"] {
        conn.send_json(&json!({"toolCall": {"functionCalls": [
            {"id": id, "name": "add_item", "args": {}}
        ]}}))
        .await;
        let answer = tokio::time::timeout(Duration::from_secs(60), conn.recv_json())
            .await
            .unwrap_or_else(|_| panic!("{id} is answered"));
        assert_eq!(
            answer["toolResponse"]["functionResponses"][0]["id"],
            json!(id)
        );
    }
    conn.send_json(&turn_complete()).await;
    let seen = tokio::time::timeout(Duration::from_secs(60), until_turn_complete(&mut events))
        .await
        .expect("the turn completes");
    let errors: Vec<String> = seen
        .iter()
        .filter_map(|e| match &e.event {
            reel_actors::LiveEvent::Session(SessionEvent::Error(error)) => Some(error.to_string()),
            _ => None,
        })
        .collect();
    assert_eq!(
        errors,
        ["callback `watch action` did not return within 2s; the session went on without it"]
    );
    let (end, _) = tokio::join!(handle.disconnect(), conn.expect_closed());
    assert_eq!(end.reason, "closed with code 1000: client disconnect");
}
