//! Governed sessions (`govern` / `observe`): a flow's monitor refuses inadmissible calls
//! at the before-tool seam with an error response naming the reason, a `once` tool never
//! runs twice, the active steps' postures and ground lines steer the model at the turn
//! boundary, `flow:active` / `flow:done` are kept in state, the handle explains the flow,
//! the flow is written beside the recording — and `reel flow check` of the recording
//! (`reel_flow::score`) agrees with the live monitor, and the recording replays CLEAN.

use crate::support;

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use reel_actors::testing::ScriptedServer;
use reel_flow::score::score_recording;
use reel_flow::{Flow, Guard, Verdict};
use reel_fluent::{GovernedHandle, Live, LiveBuilder};
use reel_tools::SimpleTool;
use serde_json::{Value, json};
use support::{TempFolder, accepted, text, turn_complete, until_turn_complete};

/// The flow's first step: the caller's identity, by `lookup_account`.
fn verify_step() -> Flow {
    Flow::new()
        .step("verify")
        .posture("Verify the caller's identity before anything else.")
        .allow(["lookup_account"])
        .done(Guard::is_true("identity_verified"))
}

/// The seed's debt collection, cut to what the test drives.
fn debt_flow() -> Flow {
    verify_step()
        .step("negotiate")
        .after("verify")
        .posture("Negotiate an affordable payment.")
        .ground("Balance due: {balance}")
        .allow(["charge_card"])
        .done(Guard::called_ok("charge_card"))
        .step("close")
        .after("negotiate")
        .terminal()
        .never("charge_card")
        .until(Guard::is_true("ptp_confirmed"))
        .once("charge_card")
        .require(["close"])
}

/// The tools: `lookup_account` verifies the caller, `confirm_plan` records the promise to
/// pay, `charge_card` counts its runs in `charges`.
fn chain(charges: Arc<AtomicUsize>) -> LiveBuilder {
    Live::builder()
        .text_only()
        .instruction("You collect debts politely.")
        .tool(SimpleTool::new(
            "lookup_account",
            "Looks the caller's account up.",
            None,
            |_, ctx| async move {
                ctx.state
                    .set("identity_verified", true)
                    .map_err(|e| ctx.fail(e))?;
                ctx.state.set("balance", 120).map_err(|e| ctx.fail(e))?;
                Ok(json!({"found": true}))
            },
        ))
        .tool(SimpleTool::new(
            "confirm_plan",
            "Records the caller's promise to pay.",
            None,
            |_, ctx| async move {
                ctx.state
                    .set("ptp_confirmed", true)
                    .map_err(|e| ctx.fail(e))?;
                Ok(json!({"confirmed": true}))
            },
        ))
        .tool(SimpleTool::new(
            "charge_card",
            "Charges the caller's card.",
            None,
            move |_, _| {
                let charges = Arc::clone(&charges);
                async move {
                    charges.fetch_add(1, Ordering::SeqCst);
                    Ok(json!({"charged": 120}))
                }
            },
        ))
}

/// Sends `frame` 10 ms of session time after the last: the scoring of the recording
/// orders the journal and the wire log on session time (decision 0053), which a real call
/// spaces by far more.
async fn send(conn: &mut reel_actors::testing::ServerConn, frame: &Value) {
    tokio::time::advance(Duration::from_millis(10)).await;
    conn.send_json(frame).await;
}

/// The first turn's steering: the `verify` step's posture after the instruction.
fn entry_instruction() -> Value {
    json!({"contextUpdate": {"systemInstruction": {"parts": [{
        "text": "You collect debts politely.\n\nVerify the caller's identity before anything else."
    }]}}})
}

fn call(id: &str, name: &str) -> Value {
    json!({"toolCall": {"functionCalls": [{"id": id, "name": name, "args": {}}]}})
}

fn response(id: &str, name: &str, response: Value) -> Value {
    json!({"toolResponse": {"functionResponses": [{"id": id, "name": name, "response": response}]}})
}

#[tokio::test(start_paused = true)]
async fn a_governed_session_refuses_steers_publishes_agrees_with_its_scoring_and_replays_clean() {
    let folder = TempFolder::new("governed");
    let log = folder.join("debt.wire.jsonl");
    let journal = folder.join("debt.journal.jsonl");
    let charges = Arc::new(AtomicUsize::new(0));
    let builder = chain(Arc::clone(&charges))
        .govern(debt_flow())
        .record_wire(&log)
        .journal(&journal);
    let mut events = builder.subscribe();
    let mut server = ScriptedServer::bind().await;
    let (handle, mut conn, _) = accepted(builder, &mut server, Duration::ZERO).await;
    let flow = handle.flow().expect("a governed session has a flow");
    assert_eq!(flow.verdict("verify"), Some(Verdict::Active));
    assert_eq!(conn.recv_json().await, entry_instruction());

    // Not before the promise to pay: refused, never run, the model told why.
    send(&mut conn, &call("c1", "charge_card")).await;
    assert_eq!(
        conn.recv_json().await,
        response(
            "c1",
            "charge_card",
            json!({"error": "tool `charge_card` was refused by the flow: \"charge_card\" is forbidden until is_true(ptp_confirmed)"})
        )
    );
    send(&mut conn, &call("c2", "lookup_account")).await;
    assert_eq!(
        conn.recv_json().await,
        response("c2", "lookup_account", json!({"found": true}))
    );
    // The turn boundary: the active step's posture and ground line follow the instruction
    // (the default steering mode, `InstructionUpdate`).
    send(&mut conn, &text("You're verified.")).await;
    send(&mut conn, &turn_complete()).await;
    assert_eq!(
        conn.recv_json().await,
        json!({"contextUpdate": {"systemInstruction": {"parts": [{
            "text": "You collect debts politely.\n\nNegotiate an affordable payment.\nBalance due: 120"
        }]}}})
    );
    until_turn_complete(&mut events).await;
    send(&mut conn, &call("c3", "confirm_plan")).await;
    assert_eq!(
        conn.recv_json().await,
        response("c3", "confirm_plan", json!({"confirmed": true}))
    );
    send(&mut conn, &call("c4", "charge_card")).await;
    assert_eq!(
        conn.recv_json().await,
        response("c4", "charge_card", json!({"charged": 120}))
    );
    // Once: the second charge is refused.
    send(&mut conn, &call("c5", "charge_card")).await;
    let refused = conn.recv_json().await;
    assert_eq!(
        refused,
        response(
            "c5",
            "charge_card",
            json!({"error": "tool `charge_card` was refused by the flow: \"charge_card\" may run once and already ran (frame 13)"})
        )
    );
    send(&mut conn, &text("Paid, thank you.")).await;
    send(&mut conn, &turn_complete()).await;
    until_turn_complete(&mut events).await;
    assert_eq!(charges.load(Ordering::SeqCst), 1, "charged exactly once");

    // What the handle says, and what the state holds.
    let explanation = handle.why_blocked().unwrap();
    assert_eq!(explanation, handle.explain().unwrap());
    assert_eq!(
        serde_json::to_value(&explanation).unwrap(),
        json!({
            "active": [],
            "done": ["verify", "negotiate", "close"],
            "blocked_tools": {
                "charge_card": "\"charge_card\" may run once and already ran (frame 13)",
                "lookup_account": "\"lookup_account\" is not allowed by any active step (no step is active)"
            },
            "missing_requirements": [],
            "complete": true
        })
    );
    assert!(flow.is_complete());
    assert_eq!(flow.unmet_requirements(), Vec::<String>::new());
    assert_eq!(flow.verdict("close"), Some(Verdict::Done));
    let violations: Vec<(u64, Option<String>, String)> = flow
        .violations()
        .into_iter()
        .map(|v| (v.seq, v.call_id, v.tool))
        .collect();
    assert_eq!(
        violations,
        [
            (4, Some("c1".to_owned()), "charge_card".to_owned()),
            (15, Some("c5".to_owned()), "charge_card".to_owned()),
        ]
    );
    assert_eq!(
        handle.state().get_raw("flow:done"),
        Some(json!(["verify", "negotiate", "close"]))
    );
    assert_eq!(handle.state().get_raw("flow:active"), Some(json!([])));
    let (end, _) = tokio::join!(handle.disconnect(), conn.expect_closed());
    assert!(!end.failed);

    // `flow:active` / `flow:done` were journaled each time they changed, in order.
    let published: Vec<(String, Value)> = reel_recorder::journal::read_journal(&journal)
        .unwrap()
        .into_iter()
        .filter(|m| m.key.starts_with("flow:"))
        .map(|m| (m.key, m.new))
        .collect();
    assert_eq!(
        published,
        [
            ("flow:done".to_owned(), json!([])),
            ("flow:active".to_owned(), json!(["verify"])),
            ("flow:done".to_owned(), json!(["verify"])),
            ("flow:active".to_owned(), json!(["negotiate"])),
            (
                "flow:done".to_owned(),
                json!(["verify", "negotiate", "close"])
            ),
            ("flow:active".to_owned(), json!([])),
        ]
    );

    // The flow beside the recording, as its serde JSON; scoring the recording with it
    // finds what the live monitor found.
    let beside = folder.join("debt.flow.json");
    assert_eq!(
        std::fs::read_to_string(&beside).unwrap(),
        debt_flow().to_json().unwrap()
    );
    let written = Flow::from_json(&std::fs::read_to_string(&beside).unwrap())
        .unwrap()
        .compile()
        .unwrap();
    let score = score_recording(&log, Some(&journal), &written).unwrap();
    assert_eq!(score.violations, flow.violations());
    assert!(score.complete);
    assert_eq!(
        score
            .verdicts
            .iter()
            .map(|v| (v.step.as_str(), v.verdict))
            .collect::<Vec<_>>(),
        [
            ("verify", Verdict::Done),
            ("negotiate", Verdict::Done),
            ("close", Verdict::Done)
        ]
    );

    // The replay: the same chain, governed by the same flow, reproduces every frame (the
    // refusals among them) and the journal entry by entry; the tool runs once again.
    let replay_charges = Arc::new(AtomicUsize::new(0));
    let outcome = chain(Arc::clone(&replay_charges))
        .govern(debt_flow())
        .replay(&log)
        .await
        .unwrap()
        .finish()
        .await;
    assert!(outcome.is_clean(), "{}", outcome.verdict());
    assert_eq!(replay_charges.load(Ordering::SeqCst), 1);

    // A changed flow (`charge_card` neither step-gated nor forbidden until the promise):
    // the replay admits the first charge the session refused, and shows it where it
    // happened — the refused call's response.
    let loosened = verify_step()
        .step("negotiate")
        .after("verify")
        .posture("Negotiate an affordable payment.")
        .ground("Balance due: {balance}")
        .done(Guard::called_ok("charge_card"))
        .step("close")
        .after("negotiate")
        .terminal()
        .once("charge_card")
        .require(["close"]);
    let outcome = chain(Arc::default())
        .govern(loosened)
        .replay(&log)
        .await
        .unwrap()
        .finish()
        .await;
    assert!(!outcome.is_clean());
    let first = outcome.divergences.first().unwrap();
    assert_eq!(
        first.to_string(),
        "frame 5: the replayed frame differs\n  \
         toolResponse.functionResponses[0].response.error: expected \"tool `charge_card` was \
         refused by the flow: \\\"charge_card\\\" is forbidden until is_true(ptp_confirmed)\", \
         actual (absent)\n  \
         toolResponse.functionResponses[0].response.charged: expected (absent), actual 120"
    );
}

#[tokio::test(start_paused = true)]
async fn an_observed_session_runs_what_the_flow_would_refuse_and_records_the_violation() {
    let charges = Arc::new(AtomicUsize::new(0));
    let builder = chain(Arc::clone(&charges)).observe(debt_flow());
    let mut server = ScriptedServer::bind().await;
    let (handle, mut conn, _) = accepted(builder, &mut server, Duration::ZERO).await;
    assert_eq!(conn.recv_json().await, entry_instruction());
    send(&mut conn, &call("c1", "charge_card")).await;
    assert_eq!(
        conn.recv_json().await,
        response("c1", "charge_card", json!({"charged": 120}))
    );
    assert_eq!(
        charges.load(Ordering::SeqCst),
        1,
        "observing blocks nothing"
    );
    let flow = handle.flow().unwrap();
    assert_eq!(flow.mode(), reel_flow::Mode::Observe);
    let violations: Vec<(u64, String)> = flow
        .violations()
        .into_iter()
        .map(|v| (v.seq, v.reason))
        .collect();
    assert_eq!(
        violations,
        [(
            4,
            "\"charge_card\" is forbidden until is_true(ptp_confirmed)".to_owned()
        )]
    );
    let (end, _) = tokio::join!(handle.disconnect(), conn.expect_closed());
    assert!(!end.failed);
}

#[tokio::test(start_paused = true)]
async fn a_session_without_a_flow_has_no_flow_view() {
    let builder = chain(Arc::default());
    let mut server = ScriptedServer::bind().await;
    let (handle, mut conn, _) = accepted(builder, &mut server, Duration::ZERO).await;
    assert!(handle.flow().is_none());
    assert_eq!(handle.why_blocked(), None);
    assert_eq!(handle.state().get_raw("flow:active"), None);
    let (end, _) = tokio::join!(handle.disconnect(), conn.expect_closed());
    assert!(!end.failed);
}

#[tokio::test]
async fn a_flow_that_does_not_compile_is_refused_when_the_chain_is_checked() {
    let flow = Flow::new()
        .step("a")
        .done(Guard::is_true("x"))
        .never("charge_card")
        .until(Guard::done("missing"));
    let error = chain(Arc::default()).govern(flow).validate().unwrap_err();
    assert!(matches!(error, reel_fluent::BuildError::Flow(_)));
    assert_eq!(
        error.to_string(),
        "invalid flow: never(\"charge_card\").until(..) waits for done(\"missing\"), which is not a \
         step of the flow: the tool would be forbidden forever; declare the step or fix the name"
    );
}

#[tokio::test(start_paused = true)]
async fn under_context_injection_the_posture_is_a_context_turn_and_an_unmet_requirement_is_nudged()
{
    let flow = Flow::new()
        .step("verify")
        .posture("Verify the caller's identity before anything else.")
        .ground("Verified: {identity_verified?yes:no}")
        .allow(["lookup_account"])
        .done(Guard::is_true("identity_verified"))
        .require(["verify"]);
    let builder = chain(Arc::default())
        .steering_mode(reel_fluent::SteeringMode::ContextInjection)
        .govern(flow);
    let mut events = builder.subscribe();
    let mut server = ScriptedServer::bind().await;
    let (handle, mut conn, _) = accepted(builder, &mut server, Duration::ZERO).await;
    let context = |text: &str, prompt: bool| {
        json!({"clientContent": {
            "turns": [{"role": "model", "parts": [{"text": text}]}],
            "turnComplete": prompt
        }})
    };
    // The first turn's steering: a context turn, the instruction left as it is.
    assert_eq!(
        conn.recv_json().await,
        context(
            "Verify the caller's identity before anything else.\nVerified: no",
            false
        )
    );
    // Turn 1: unmet once, nothing to say (the steering did not change).
    send(&mut conn, &text("Hello.")).await;
    send(&mut conn, &turn_complete()).await;
    until_turn_complete(&mut events).await;
    // Turn 2: unmet twice, the first nudge, which asks the model to answer.
    send(&mut conn, &text("How can I help?")).await;
    send(&mut conn, &turn_complete()).await;
    assert_eq!(
        conn.recv_json().await,
        context("I still need to collect: verify.", true)
    );
    // Turn 3: the second nudge.
    send(&mut conn, &text("Anything else?")).await;
    send(&mut conn, &turn_complete()).await;
    assert_eq!(
        conn.recv_json().await,
        context("I still need to collect: verify.", false)
    );
    // Turn 4: the escalation is latched.
    send(&mut conn, &text("Goodbye.")).await;
    send(&mut conn, &turn_complete()).await;
    until_turn_complete(&mut events).await;
    until_turn_complete(&mut events).await;
    until_turn_complete(&mut events).await;
    assert_eq!(
        handle.state().get_raw("repair:escalation"),
        Some(json!(true))
    );
    assert_eq!(
        handle.state().get_raw("repair:unfulfilled"),
        Some(json!(["verify"]))
    );
    assert_eq!(handle.flow().unwrap().unmet_requirements(), ["verify"]);
    let (end, _) = tokio::join!(handle.disconnect(), conn.expect_closed());
    assert!(!end.failed);
}

#[tokio::test(start_paused = true)]
async fn a_commit_tool_is_marked_for_confirmation() {
    let flow = || {
        Flow::new()
            .step("pay")
            .done(Guard::called_ok("charge_card"))
            .commit("charge_card", Guard::is_true("ptp_confirmed"))
    };
    // Without a provider the chain is refused: a commit tool never runs unconfirmed.
    let error = chain(Arc::default()).govern(flow()).validate().unwrap_err();
    assert!(
        matches!(&error, reel_fluent::BuildError::ConfirmationWithoutProvider { tools } if tools == &["charge_card"]),
        "{error:?}"
    );
    let charges = Arc::new(AtomicUsize::new(0));
    let asked = Arc::new(std::sync::Mutex::new(Vec::new()));
    let seen = Arc::clone(&asked);
    let builder = chain(Arc::clone(&charges))
        .govern(flow())
        .confirmation_provider(Arc::new(move |request: reel_tools::ConfirmationRequest| {
            seen.lock().unwrap().push(request.message.clone());
            async { reel_tools::ToolConfirmation::denied("the caller hung up") }
        }));
    let mut server = ScriptedServer::bind().await;
    let (handle, mut conn, _) = accepted(builder, &mut server, Duration::ZERO).await;
    send(&mut conn, &call("c1", "confirm_plan")).await;
    conn.recv_json().await;
    send(&mut conn, &call("c2", "charge_card")).await;
    assert_eq!(
        conn.recv_json().await,
        response(
            "c2",
            "charge_card",
            json!({"error": "the user did not confirm `charge_card`: the caller hung up"})
        )
    );
    assert_eq!(charges.load(Ordering::SeqCst), 0);
    assert_eq!(
        *asked.lock().unwrap(),
        ["The flow commits `charge_card`: run it?"]
    );
    let (end, _) = tokio::join!(handle.disconnect(), conn.expect_closed());
    assert!(!end.failed);
}

#[tokio::test(start_paused = true)]
async fn under_deferred_delivery_the_steering_waits_for_the_application_s_next_send() {
    let flow = verify_step();
    let builder = chain(Arc::default())
        .steering_mode(reel_fluent::SteeringMode::Hybrid)
        .context_delivery(reel_fluent::ContextDelivery::Deferred)
        .govern(flow);
    let mut server = ScriptedServer::bind().await;
    let (handle, mut conn, _) = accepted(builder, &mut server, Duration::ZERO).await;
    // Nothing goes out at connect: the steering is queued, then sent just before the
    // application's first line, in that order.
    handle.send_text("Hello?").unwrap();
    assert_eq!(
        conn.recv_json().await,
        json!({"clientContent": {
            "turns": [{"role": "model", "parts": [{"text": "Verify the caller's identity before anything else."}]}],
            "turnComplete": false
        }})
    );
    assert_eq!(
        conn.recv_json().await,
        json!({"clientContent": {
            "turns": [{"role": "user", "parts": [{"text": "Hello?"}]}],
            "turnComplete": true
        }})
    );
    let (end, _) = tokio::join!(handle.disconnect(), conn.expect_closed());
    assert!(!end.failed);
}

#[tokio::test(start_paused = true)]
async fn with_conversation_control_the_flow_s_first_steering_joins_the_initial_phase_s_frame() {
    let flow = verify_step();
    let builder = chain(Arc::default())
        .steering_mode(reel_fluent::SteeringMode::ContextInjection)
        .phase("open", |p| {
            p.instruction("Greet the caller.")
                .enter_prompt("I'll greet the caller.")
                .terminal()
        })
        .initial_phase("open")
        .govern(flow);
    let mut server = ScriptedServer::bind().await;
    let (handle, mut conn, _) = accepted(builder, &mut server, Duration::ZERO).await;
    // One frame at entry: the phase's instruction and enter prompt, then the flow's
    // steering.
    assert_eq!(
        conn.recv_json().await,
        json!({"clientContent": {
            "turns": [
                {"role": "model", "parts": [{"text": "Greet the caller."}]},
                {"role": "model", "parts": [{"text": "I'll greet the caller."}]},
                {"role": "model", "parts": [{"text": "Verify the caller's identity before anything else."}]}
            ],
            "turnComplete": true
        }})
    );
    let (end, _) = tokio::join!(handle.disconnect(), conn.expect_closed());
    assert!(!end.failed);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn connect_returns_once_the_first_steering_is_out_so_the_first_line_follows_it() {
    // Without phases, `connect` used to return at setupComplete, before the control lane
    // had handled the connection: an application's first line could then leave before
    // the flow's first steering (a live run of the `screening` example against its
    // recorded tape diverged on it). It was a race, lost about one run in three on two
    // cores: twenty sessions make losing it at least once all but certain.
    for _ in 0..20 {
        first_line_after_first_steering().await;
    }
}

async fn first_line_after_first_steering() {
    let flow = verify_step();
    let builder = chain(Arc::default()).govern(flow);
    let mut server = ScriptedServer::bind().await;
    let endpoint = server.endpoint();
    let script = async {
        let mut conn = server.accept().await;
        conn.recv().await.unwrap();
        conn.send_json(&json!({"setupComplete": {}})).await;
        conn
    };
    let (handle, mut conn) = tokio::join!(builder.connect(endpoint), script);
    let handle = handle.unwrap();
    // Nothing awaited between `connect` returning and this check.
    assert_eq!(
        handle.state().get_raw("flow:active"),
        Some(json!(["verify"]))
    );
    handle.send_text("Hello?").unwrap();
    assert_eq!(
        conn.recv_json().await,
        json!({"contextUpdate": {"systemInstruction": {"parts": [{"text":
            "You collect debts politely.\n\nVerify the caller's identity before anything else."}]}}})
    );
    assert_eq!(
        conn.recv_json().await,
        json!({"clientContent": {
            "turns": [{"role": "user", "parts": [{"text": "Hello?"}]}],
            "turnComplete": true
        }})
    );
    let (end, _) = tokio::join!(handle.disconnect(), conn.expect_closed());
    assert!(!end.failed);
}

/// A governed session whose application answers tool calls itself (`on_tool_call`): the
/// flow decides first, the callback is handed only the admitted calls, and one frame
/// answers the `toolCall` — the refusal and the application's answer in call order.
#[tokio::test(start_paused = true)]
async fn calls_answered_by_on_tool_call_pass_the_gate_first() {
    let handed = Arc::new(std::sync::Mutex::new(Vec::new()));
    let seen = Arc::clone(&handed);
    let builder = Live::builder()
        .text_only()
        .instruction("You collect debts politely.")
        .govern(debt_flow())
        .on_tool_call(move |calls, _state| {
            let seen = Arc::clone(&seen);
            async move {
                let names: Vec<String> = calls.iter().filter_map(|c| c.name.clone()).collect();
                seen.lock().unwrap().push(names);
                Some(
                    calls
                        .iter()
                        .map(|c| reel_protocol::FunctionResponse {
                            id: c.id.clone(),
                            name: c.name.clone(),
                            response: Some(json!({"found": true})),
                            ..Default::default()
                        })
                        .collect(),
                )
            }
        });
    let mut server = ScriptedServer::bind().await;
    let (handle, mut conn, _) = accepted(builder, &mut server, Duration::ZERO).await;
    assert_eq!(conn.recv_json().await, entry_instruction());

    send(
        &mut conn,
        &json!({"toolCall": {"functionCalls": [
            {"id": "c1", "name": "charge_card", "args": {}},
            {"id": "c2", "name": "lookup_account", "args": {}}
        ]}}),
    )
    .await;
    assert_eq!(
        conn.recv_json().await,
        json!({"toolResponse": {"functionResponses": [
            {"id": "c1", "name": "charge_card", "response": {"error": "tool `charge_card` was refused by the flow: \"charge_card\" is forbidden until is_true(ptp_confirmed)"}},
            {"id": "c2", "name": "lookup_account", "response": {"found": true}}
        ]}})
    );
    assert_eq!(*handed.lock().unwrap(), [vec!["lookup_account".to_owned()]]);
    // Every call refused: the application is not asked at all.
    send(&mut conn, &call("c3", "charge_card")).await;
    assert_eq!(
        conn.recv_json().await,
        response(
            "c3",
            "charge_card",
            json!({"error": "tool `charge_card` was refused by the flow: \"charge_card\" is forbidden until is_true(ptp_confirmed)"})
        )
    );
    assert_eq!(handed.lock().unwrap().len(), 1);
    let violations = handle.flow().unwrap().violations();
    assert_eq!(violations.len(), 2, "{violations:?}");

    let (end, _) = tokio::join!(handle.disconnect(), conn.expect_closed());
    assert_eq!(end.reason, "closed with code 1000: client disconnect");
}
