//! The chain's hooks on what the runtime sends reach the control lane:
//! `before_tool_response` redacts the frame on the wire, the instruction hooks send their
//! exact texts (none when unchanged), `on_turn_boundary`'s context frame goes out before
//! `on_turn_complete` runs.

use crate::support;

use std::sync::{Arc, Mutex};
use std::time::Duration;

use reel_actors::testing::ScriptedServer;
use reel_fluent::Live;
use reel_protocol::Content;
use reel_tools::SimpleTool;
use serde_json::{Value, json};
use support::{accepted, turn_complete, until_turn_complete};

type Log = Arc<Mutex<Vec<String>>>;

fn push(log: &Log, line: impl Into<String>) {
    log.lock().unwrap().push(line.into());
}

fn instruction(text: &str) -> Value {
    json!({"contextUpdate": {"systemInstruction": {"parts": [{"text": text}]}}})
}

#[tokio::test(start_paused = true)]
async fn the_four_hooks_shape_what_the_chain_sends() {
    let mut server = ScriptedServer::bind().await;
    let log = Log::default();
    let (boundary_log, complete_log) = (log.clone(), log.clone());
    let builder = Live::builder()
        .text_only()
        .instruction("Take the order.")
        .tool(SimpleTool::new(
            "add_item",
            "Adds an item to the order.",
            None,
            |args, ctx| async move {
                let items = ctx.state.get::<u32>("app:items").unwrap_or(0) + 1;
                ctx.state.set("app:items", items).map_err(|e| ctx.fail(e))?;
                Ok(json!({"item": args["item"], "card": "4111 1111 1111 1111"}))
            },
        ))
        .before_tool_response(|mut responses, _state| async move {
            for response in &mut responses {
                if let Some(fields) = response.response.as_mut().and_then(Value::as_object_mut) {
                    fields.insert("card".into(), json!("****"));
                }
            }
            responses
        })
        .instruction_template(|state| {
            (state.get::<u32>("app:items")? >= 2).then(|| "Confirm the order.".to_owned())
        })
        .instruction_amendment(|state| {
            let items = state.get::<u32>("app:items")?;
            Some(format!("The order has {items} items."))
        })
        .on_turn_boundary(move |state, writer| {
            let log = boundary_log.clone();
            async move {
                let items = state.get::<u32>("app:items").unwrap_or(0);
                push(&log, format!("boundary {items}"));
                let note = Content::user_text(format!("(items: {items})"));
                writer.send_client_content(vec![note], false).unwrap();
            }
        })
        .on_turn_complete(move || {
            let log = complete_log.clone();
            async move { push(&log, "turn complete") }
        });
    let (handle, mut conn, _setup) = accepted(builder, &mut server, Duration::ZERO).await;
    let mut events = handle.events();
    let context = |items: u32| json!({"clientContent": {"turns": [{"role": "user", "parts": [{"text": format!("(items: {items})")}]}], "turnComplete": false}});
    let add = |id: &str| json!({"toolCall": {"functionCalls": [{"id": id, "name": "add_item", "args": {"item": "tea"}}]}});
    let added = |id: &str| {
        json!({"toolResponse": {"functionResponses": [
            {"id": id, "name": "add_item", "response": {"item": "tea", "card": "****"}}
        ]}})
    };

    // Turn 1: one item: the amendment joins the session's instruction.
    conn.send_json(&add("a1")).await;
    assert_eq!(conn.recv_json().await, added("a1"));
    conn.send_json(&turn_complete()).await;
    assert_eq!(
        conn.recv_json().await,
        instruction("Take the order.\n\nThe order has 1 items.")
    );
    assert_eq!(conn.recv_json().await, context(1));
    until_turn_complete(&mut events).await;

    // Turn 2: nothing changed: no update, only the boundary's frame.
    conn.send_json(&turn_complete()).await;
    assert_eq!(conn.recv_json().await, context(1));
    until_turn_complete(&mut events).await;

    // Turn 3: two items: the template wins over the amendment.
    conn.send_json(&add("a2")).await;
    assert_eq!(conn.recv_json().await, added("a2"));
    conn.send_json(&turn_complete()).await;
    assert_eq!(conn.recv_json().await, instruction("Confirm the order."));
    assert_eq!(conn.recv_json().await, context(2));
    until_turn_complete(&mut events).await;

    assert_eq!(
        log.lock().unwrap().clone(),
        [
            "boundary 1",
            "turn complete",
            "boundary 1",
            "turn complete",
            "boundary 2",
            "turn complete"
        ]
    );
}
