//! Conversation control from `Live::builder()`: steering mode, context delivery, phase
//! defaults merged into each phase, needs with repair, navigation, a guard, an enter
//! prompt and `prompt_on_enter`, on a loopback WebSocket — the exact frames at each
//! boundary — and the same chain replaying the recording CLEAN, journal entry by entry.

use crate::support;

use std::time::Duration;

use reel_actors::testing::{ScriptedServer, ServerConn};
use reel_fluent::{ContextDelivery, Live, LiveBuilder, RepairConfig, SteeringMode};
use reel_recorder::journal::StateMutation;
use reel_recorder::wire_log::WireEntry;
use reel_tools::SimpleTool;
use serde_json::{Value, json};
use support::{recording, turn_complete, until_turn_complete};

fn chain() -> LiveBuilder {
    Live::builder()
        .text_only()
        .instruction("You are a courteous collections agent.")
        .steering_mode(SteeringMode::Hybrid)
        .context_delivery(ContextDelivery::Deferred)
        .phase_defaults(|d| {
            d.with_state(&["emotional_state"])
                .when(
                    |s| s.get::<String>("emotional_state").as_deref() == Some("angry"),
                    "Use extra empathy.",
                )
                .navigation()
                .prompt_on_enter(true)
        })
        .repair(RepairConfig::new(1, 3))
        .tool(SimpleTool::new(
            "note",
            "Notes what the caller said.",
            None,
            |args, ctx| async move {
                let key = args["key"].as_str().unwrap_or("app:unknown").to_owned();
                ctx.state
                    .set(&key, &args["value"])
                    .map_err(|e| ctx.fail(e))?;
                Ok(json!({"ok": true}))
            },
        ))
        .phase("disclosure", |p| {
            p.instruction("Give the disclosure.")
                .needs(&["disclosure_given"])
                .transition_with(
                    "negotiate",
                    |s| s.get::<bool>("disclosure_given") == Some(true),
                    "once the disclosure is given",
                )
        })
        .phase("negotiate", |p| {
            p.instruction("Negotiate a plan.")
                .guard(|s| s.get::<bool>("disclosure_given") == Some(true))
                .with_context(|s| format!("Balance: {}", s.get::<u64>("balance").unwrap_or(0)))
                .enter_prompt("I'll now discuss a payment plan.")
                .terminal()
        })
}

fn instruction(text: &str) -> Value {
    json!({"contextUpdate": {"systemInstruction": {"parts": [{"text": text}]}}})
}

fn context(turns: &[&str], prompt: bool) -> Value {
    let turns: Vec<Value> = turns
        .iter()
        .map(|text| json!({"role": "model", "parts": [{"text": text}]}))
        .collect();
    json!({"clientContent": {"turns": turns, "turnComplete": prompt}})
}

async fn note(conn: &mut ServerConn, id: &str, key: &str, value: Value) {
    conn.send_json(&json!({"toolCall": {"functionCalls": [
        {"id": id, "name": "note", "args": {"key": key, "value": value}}
    ]}}))
    .await;
    assert_eq!(
        conn.recv_json().await,
        json!({"toolResponse": {"functionResponses": [
            {"id": id, "name": "note", "response": {"ok": true}}
        ]}})
    );
}

const NAV_DISCLOSURE: &str = "[Navigation]\nCurrent phase: disclosure -- Give the disclosure.\nStill needed: disclosure_given\nPossible next:\n  -> negotiate: once the disclosure is given";
const NAV_NEGOTIATE: &str =
    "[Navigation]\nCurrent phase: negotiate -- Negotiate a plan.\nPrevious: disclosure (turn 2)";
const NUDGE: &str = "I still need to collect: disclosure_given.";
const ANGRY: &str = "[Context: emotional_state=angry]\nUse extra empathy.";

async fn record() -> (Vec<WireEntry>, Vec<StateMutation>) {
    let mut server = ScriptedServer::bind().await;
    let (builder, memory) = recording(chain());
    let mut events = builder.subscribe();
    let endpoint = server.endpoint();
    let script = async {
        let mut conn = server.accept().await;
        let setup = conn.recv_json().await;
        conn.send_json(&json!({"setupComplete": {}})).await;
        (conn, setup)
    };
    let (handle, (mut conn, setup)) = tokio::join!(builder.connect(endpoint), script);
    let handle = handle.unwrap();
    // Hybrid: the setup carries the phase's instruction; the navigation block baked into
    // it follows at once, then `prompt_on_enter` (from the defaults) asks for the greeting.
    assert_eq!(
        setup["setup"]["systemInstruction"]["parts"][0]["text"],
        json!("Give the disclosure.")
    );
    assert_eq!(
        conn.recv_json().await,
        instruction(&format!("Give the disclosure.\n\n{NAV_DISCLOSURE}"))
    );
    assert_eq!(conn.recv_json().await, context(&[], true));
    tokio::time::advance(Duration::from_millis(200)).await;
    note(&mut conn, "n1", "emotional_state", json!("angry")).await;
    // Turn 1: the first nudge (prompts: at once) and the changed modifiers, one frame.
    conn.send_json(&turn_complete()).await;
    assert_eq!(conn.recv_json().await, context(&[NUDGE, ANGRY], true));
    until_turn_complete(&mut events).await;
    // Turn 2: the second nudge waits for the user's next send.
    tokio::time::advance(Duration::from_millis(200)).await;
    conn.send_json(&turn_complete()).await;
    until_turn_complete(&mut events).await;
    handle.send_text("Fine.").unwrap();
    assert_eq!(conn.recv_json().await, context(&[NUDGE], false));
    assert_eq!(
        conn.recv_json().await,
        json!({"clientContent": {"turns": [{"role": "user", "parts": [{"text": "Fine."}]}], "turnComplete": true}})
    );
    // Turn 3: the disclosure is given: `negotiate`, its instruction with navigation, its
    // modifiers (the defaults' first) and enter prompt as one prompting frame.
    tokio::time::advance(Duration::from_millis(200)).await;
    note(&mut conn, "n2", "disclosure_given", json!(true)).await;
    conn.send_json(&turn_complete()).await;
    assert_eq!(
        conn.recv_json().await,
        instruction(&format!("Negotiate a plan.\n\n{NAV_NEGOTIATE}"))
    );
    assert_eq!(
        conn.recv_json().await,
        context(
            &[
                &format!("{ANGRY}\nBalance: 0"),
                "I'll now discuss a payment plan."
            ],
            true
        )
    );
    until_turn_complete(&mut events).await;
    assert_eq!(
        handle
            .state()
            .get::<String>("session:navigation_context")
            .as_deref(),
        Some(NAV_NEGOTIATE)
    );
    let (_, _) = tokio::join!(handle.disconnect(), conn.expect_closed());
    (memory.wire.entries(), memory.journal.entries())
}

#[tokio::test(start_paused = true)]
async fn the_chain_steers_and_replays_clean() {
    let (wire, journal) = record().await;
    let outcome = chain().replay(wire).await.unwrap().finish().await;
    assert_eq!(outcome.divergences, vec![]);
    assert_eq!(outcome.journal, journal, "journal, entry by entry");
}
