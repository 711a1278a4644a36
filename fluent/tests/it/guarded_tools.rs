//! Guarded tools: a tool that must be confirmed runs only once the provider agrees (a denial
//! reaches the model with its reason, a provider still deciding is cancelled with the call
//! or timed out with it), and a cached tool answers repeated arguments without running.
//! Both replay from the recording: a replay asks no provider, and hits the cache where the
//! session did.

use crate::support;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use reel_actors::testing::ScriptedServer;
use reel_fluent::{Live, LiveBuilder};
use reel_tools::{CachedTool, ConfirmTool, ConfirmationRequest, SimpleTool, ToolConfirmation};
use serde_json::{Value, json};
use support::{TempFolder, accepted, text, turn_complete, until_turn_complete};

/// A transfer tool that must be confirmed; `runs` counts the times it really ran.
fn transfer(runs: Arc<AtomicUsize>) -> ConfirmTool {
    ConfirmTool::new(
        SimpleTool::new(
            "transfer",
            "Moves money between the caller's accounts.",
            None,
            move |args, _| {
                let runs = Arc::clone(&runs);
                async move {
                    runs.fetch_add(1, Ordering::SeqCst);
                    Ok(json!({"moved": args["amount"]}))
                }
            },
        ),
        "Move this amount?",
    )
}

fn call(id: &str, name: &str, args: Value) -> Value {
    json!({"toolCall": {"functionCalls": [{"id": id, "name": name, "args": args}]}})
}

fn response(id: &str, name: &str, response: Value) -> Value {
    json!({"toolResponse": {"functionResponses": [{"id": id, "name": name, "response": response}]}})
}

#[tokio::test(start_paused = true)]
async fn a_confirmed_tool_runs_only_when_the_provider_agrees_and_its_replay_asks_nobody() {
    let folder = TempFolder::new("confirm");
    let log = folder.join("confirm.wire.jsonl");
    let runs = Arc::new(AtomicUsize::new(0));
    let asked: Arc<Mutex<Vec<ConfirmationRequest>>> = Arc::default();
    let seen = Arc::clone(&asked);
    let builder = Live::builder()
        .text_only()
        .tool(transfer(Arc::clone(&runs)))
        .confirmation_provider(Arc::new(move |request: ConfirmationRequest| {
            seen.lock().unwrap().push(request.clone());
            async move {
                if request.args["amount"].as_i64().unwrap_or(0) <= 100 {
                    ToolConfirmation::Confirmed
                } else {
                    ToolConfirmation::denied("transfers over 100 need an agent")
                }
            }
        }))
        .record_wire(&log);
    let mut events = builder.subscribe();
    let mut server = ScriptedServer::bind().await;
    let (handle, mut conn, _) = accepted(builder, &mut server, Duration::ZERO).await;

    conn.send_json(&call("c1", "transfer", json!({"amount": 50})))
        .await;
    assert_eq!(
        conn.recv_json().await,
        response("c1", "transfer", json!({"moved": 50}))
    );
    conn.send_json(&call("c2", "transfer", json!({"amount": 500})))
        .await;
    assert_eq!(
        conn.recv_json().await,
        response(
            "c2",
            "transfer",
            json!({"error": "the user did not confirm `transfer`: transfers over 100 need an agent"})
        )
    );
    conn.send_json(&text("I moved 50; 500 needs an agent."))
        .await;
    conn.send_json(&turn_complete()).await;
    until_turn_complete(&mut events).await;
    let (end, _) = tokio::join!(handle.disconnect(), conn.expect_closed());
    assert!(!end.failed);
    assert_eq!(runs.load(Ordering::SeqCst), 1, "the denied call never ran");
    let asked: Vec<(String, String, Value, String)> = asked
        .lock()
        .unwrap()
        .iter()
        .map(|r| {
            (
                r.call_id.clone(),
                r.tool.clone(),
                r.args.clone(),
                r.message.clone(),
            )
        })
        .collect();
    assert_eq!(
        asked,
        [
            (
                "c1".into(),
                "transfer".into(),
                json!({"amount": 50}),
                "Move this amount?".into()
            ),
            (
                "c2".into(),
                "transfer".into(),
                json!({"amount": 500}),
                "Move this amount?".into()
            ),
        ]
    );

    // The replay: the same chain with a provider that must never be asked.
    let replay_runs = Arc::new(AtomicUsize::new(0));
    let outcome = Live::builder()
        .text_only()
        .tool(transfer(Arc::clone(&replay_runs)))
        .confirmation_provider(Arc::new(|request: ConfirmationRequest| async move {
            panic!("a replay asked for {request:?}")
        }))
        .replay(&log)
        .await
        .unwrap()
        .finish()
        .await;
    assert_eq!(outcome.divergences, vec![]);
    assert_eq!(replay_runs.load(Ordering::SeqCst), 1);

    // The same from a recording in memory: the decisions come from the tape as it is read.
    let entries = reel_recorder::read_wire_log(&log).unwrap();
    let outcome = Live::builder()
        .text_only()
        .tool(transfer(Arc::clone(&replay_runs)))
        .confirmation_provider(Arc::new(|request: ConfirmationRequest| async move {
            panic!("a replay asked for {request:?}")
        }))
        .replay(entries)
        .await
        .unwrap()
        .finish()
        .await;
    assert_eq!(outcome.divergences, vec![]);
    assert_eq!(replay_runs.load(Ordering::SeqCst), 2);
}

#[tokio::test(start_paused = true)]
async fn a_provider_still_deciding_is_cancelled_with_its_call_or_timed_out_with_it() {
    let runs = Arc::new(AtomicUsize::new(0));
    // A human who never answers.
    let builder: LiveBuilder = Live::builder()
        .text_only()
        .tool(transfer(Arc::clone(&runs)))
        .tool_timeout("transfer", Duration::from_secs(5))
        .confirmation_provider(Arc::new(|_request: ConfirmationRequest| {
            std::future::pending::<ToolConfirmation>()
        }));
    let mut server = ScriptedServer::bind().await;
    let (handle, mut conn, _) = accepted(builder, &mut server, Duration::ZERO).await;

    // Cancelled by the model while the provider waits: no response at all.
    conn.send_json(&call("c1", "transfer", json!({"amount": 10})))
        .await;
    tokio::time::advance(Duration::from_secs(1)).await;
    conn.send_json(&json!({"toolCallCancellation": {"ids": ["c1"]}}))
        .await;
    // Timed out while the provider waits: the timeout's error, the tool never run.
    conn.send_json(&call("c2", "transfer", json!({"amount": 20})))
        .await;
    assert_eq!(
        conn.recv_json().await,
        response(
            "c2",
            "transfer",
            json!({"error": "tool `transfer` timed out after 5s"})
        )
    );
    let (end, _) = tokio::join!(handle.disconnect(), conn.expect_closed());
    assert!(!end.failed);
    assert_eq!(runs.load(Ordering::SeqCst), 0);
}

#[tokio::test(start_paused = true)]
async fn a_cached_tool_answers_repeated_arguments_without_running_and_replays_the_same() {
    let folder = TempFolder::new("cached");
    let log = folder.join("cached.wire.jsonl");
    let chain = |runs: Arc<AtomicUsize>| {
        Live::builder()
            .text_only()
            .tool(CachedTool::new(SimpleTool::new(
                "get_rate",
                "An exchange rate.",
                None,
                move |args, ctx| {
                    let runs = Arc::clone(&runs);
                    async move {
                        let n = runs.fetch_add(1, Ordering::SeqCst);
                        // The first GBP lookup fails: a failure is not kept.
                        if args["from"] == "GBP" && n == 1 {
                            return Err(ctx.fail("the rates service is busy"));
                        }
                        Ok(json!({"rate": if args["from"] == "GBP" { 1.27 } else { 1.08 }}))
                    }
                },
            )))
    };
    let runs = Arc::new(AtomicUsize::new(0));
    let builder = chain(Arc::clone(&runs)).record_wire(&log);
    let mut server = ScriptedServer::bind().await;
    let (handle, mut conn, _) = accepted(builder, &mut server, Duration::ZERO).await;
    let rate = |rate: f64| json!({"rate": rate});
    for (id, args, answer) in [
        ("c1", json!({"from": "EUR", "to": "USD"}), rate(1.08)),
        // The same arguments in another order: from the cache.
        ("c2", json!({"to": "USD", "from": "EUR"}), rate(1.08)),
        (
            "c3",
            json!({"from": "GBP", "to": "USD"}),
            json!({"error": "tool `get_rate` failed: the rates service is busy"}),
        ),
        ("c4", json!({"from": "GBP", "to": "USD"}), rate(1.27)),
        ("c5", json!({"from": "GBP", "to": "USD"}), rate(1.27)),
    ] {
        conn.send_json(&call(id, "get_rate", args)).await;
        assert_eq!(
            conn.recv_json().await,
            response(id, "get_rate", answer),
            "{id}"
        );
    }
    let (end, _) = tokio::join!(handle.disconnect(), conn.expect_closed());
    assert!(!end.failed);
    assert_eq!(
        runs.load(Ordering::SeqCst),
        3,
        "EUR once, GBP twice (the failure)"
    );

    let replay_runs = Arc::new(AtomicUsize::new(0));
    let outcome = chain(Arc::clone(&replay_runs))
        .replay(&log)
        .await
        .unwrap()
        .finish()
        .await;
    assert_eq!(outcome.divergences, vec![]);
    assert_eq!(replay_runs.load(Ordering::SeqCst), 3);
}
