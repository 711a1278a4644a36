//! The instruction after a reconnect: a new connection's setup carries the session's
//! starting instruction, so when the runtime has sent another since (a phase's), the
//! control lane sends it again as soon as the new connection is live — and only then.

use crate::support;

use std::sync::Arc;
use std::time::Duration;

use reel_actors::LiveHandle;
use reel_actors::phases::{Phase, PhaseMachine};
use reel_actors::testing::{ScriptedServer, ServerConn};
use reel_protocol::SessionConfig;
use serde_json::{Value, json};
use support::{settle, start};

fn greeting_then_booking() -> PhaseMachine {
    PhaseMachine::builder("greeting")
        .phase(
            Phase::new("greeting")
                .instruction("Greet the caller.")
                .transition("booking", |s| s.contains("app:name")),
        )
        .phase(Phase::new("booking").instruction("Book a table."))
        .build()
        .unwrap()
}

fn turn_complete() -> Value {
    json!({"serverContent": {"turnComplete": true}})
}

/// Every setup of the session, exactly: the starting phase's instruction, and the
/// resumption handle presented when there is one.
fn setup_text(handle: Option<&str>) -> String {
    let resumption = match handle {
        Some(handle) => format!(r#"{{"handle":"{handle}"}}"#),
        None => "{}".to_owned(),
    };
    concat!(
        r#"{"setup":{"model":"models/gemini-live-2.5-flash-native-audio","#,
        r#""generationConfig":{"responseModalities":["AUDIO"]},"#,
        r#""systemInstruction":{"parts":[{"text":"Greet the caller."}]},"#,
        r#""sessionResumption":RESUMPTION}}"#
    )
    .replace("RESUMPTION", &resumption)
}

/// A session in phases greeting → booking, with resumption on, live and settled; the
/// server has handed out the handle `h-1`.
async fn phased_session(
    server: &mut ScriptedServer,
) -> (LiveHandle, ServerConn, reel_actors::EventStream) {
    let config = SessionConfig::default().session_resume(true);
    let (handle, mut conn, setup, mut events) =
        start(server, |b| b.phases(greeting_then_booking()), config).await;
    assert_eq!(setup.to_string(), setup_text(None));
    conn.send_json(&json!({"sessionResumptionUpdate": {"newHandle": "h-1", "resumable": true}}))
        .await;
    settle(&mut events).await;
    (handle, conn, events)
}

/// `goAway` on `conn`: the next connection's exact setup, then `setupComplete`.
async fn reconnected(server: &mut ScriptedServer, conn: &mut ServerConn) -> ServerConn {
    conn.send_json(&json!({"goAway": {"timeLeft": "5s"}})).await;
    let mut next = server.accept().await;
    let setup = next.recv().await.unwrap();
    assert_eq!(setup.text(), Some(setup_text(Some("h-1")).as_str()));
    next.send_json(&json!({"setupComplete": {}})).await;
    assert_eq!(
        conn.expect_closed().await,
        Some((1000, "go_away".to_owned()))
    );
    next
}

/// The application says "Hello": the next frame `conn` receives is that text (so the
/// runtime sent nothing in between).
async fn hello_is_next(handle: &LiveHandle, conn: &mut ServerConn) {
    handle.send_text("Hello").unwrap();
    assert_eq!(
        conn.recv().await.unwrap().text(),
        Some(
            r#"{"clientContent":{"turns":[{"role":"user","parts":[{"text":"Hello"}]}],"turnComplete":true}}"#
        )
    );
}

#[tokio::test(start_paused = true)]
async fn after_a_phase_change_the_new_connection_gets_the_phase_instruction_again() {
    let mut server = ScriptedServer::bind().await;
    let (handle, mut conn, mut events) = phased_session(&mut server).await;
    // The phase changes: its instruction goes out on the first connection.
    handle.state().set("app:name", "Ada").await.unwrap();
    conn.send_json(&turn_complete()).await;
    assert_eq!(
        conn.recv().await.unwrap().text(),
        Some(r#"{"contextUpdate":{"systemInstruction":{"parts":[{"text":"Book a table."}]}}}"#)
    );
    settle(&mut events).await;

    let mut conn2 = reconnected(&mut server, &mut conn).await;
    // The setup carried "Greet the caller."; the booking phase's instruction comes next
    // (within the test's patience: without it, nothing would come).
    let next = tokio::time::timeout(Duration::from_secs(5), conn2.recv()).await;
    assert_eq!(
        next.unwrap().unwrap().text(),
        Some(r#"{"contextUpdate":{"systemInstruction":{"parts":[{"text":"Book a table."}]}}}"#)
    );
    settle(&mut events).await;
    // Once: a turn without a change sends nothing, so the next frame is the user's text.
    conn2.send_json(&turn_complete()).await;
    settle(&mut events).await;
    hello_is_next(&handle, &mut conn2).await;
    let phase: Option<String> = handle.state().get("session:active_phase");
    assert_eq!(phase.as_deref(), Some("booking"));
}

#[tokio::test(start_paused = true)]
async fn without_a_change_the_setup_instruction_stands_and_nothing_is_sent_again() {
    let mut server = ScriptedServer::bind().await;
    let (handle, mut conn, mut events) = phased_session(&mut server).await;
    conn.send_json(&turn_complete()).await;
    settle(&mut events).await;

    let mut conn2 = reconnected(&mut server, &mut conn).await;
    settle(&mut events).await;
    hello_is_next(&handle, &mut conn2).await;
}

fn instruction_frame(text: &str) -> String {
    format!(r#"{{"contextUpdate":{{"systemInstruction":{{"parts":[{{"text":"{text}"}}]}}}}}}"#)
}

/// The application's instruction, set on the first connection, is the one the next
/// connection gets after its setup (decision 0051).
#[tokio::test(start_paused = true)]
async fn the_applications_instruction_is_sent_again_after_a_reconnect() {
    let mut server = ScriptedServer::bind().await;
    let (handle, mut conn, mut events) = phased_session(&mut server).await;
    handle.update_instruction("Speak French.").unwrap();
    assert_eq!(
        conn.recv().await.unwrap().text(),
        Some(instruction_frame("Speak French.").as_str())
    );
    settle(&mut events).await;

    let mut conn2 = reconnected(&mut server, &mut conn).await;
    let next = tokio::time::timeout(Duration::from_secs(5), conn2.recv()).await;
    assert_eq!(
        next.unwrap().unwrap().text(),
        Some(instruction_frame("Speak French.").as_str())
    );
    settle(&mut events).await;
    hello_is_next(&handle, &mut conn2).await;
}

/// An instruction the application sets while the connection is down waits for the next
/// one and goes out with its setup, before the control lane re-sends the older one it knew
/// of: the lane then sends the application's again, so it is the last on the wire.
#[tokio::test(start_paused = true)]
async fn an_instruction_set_while_reconnecting_is_the_last_on_the_new_connection() {
    let mut server = ScriptedServer::bind().await;
    let (handle, mut conn, mut events) = phased_session(&mut server).await;
    handle.update_instruction("Speak French.").unwrap();
    conn.recv().await.unwrap();
    settle(&mut events).await;

    conn.send_json(&json!({"goAway": {"timeLeft": "5s"}})).await;
    let mut conn2 = server.accept().await;
    let setup = conn2.recv().await.unwrap();
    assert_eq!(setup.text(), Some(setup_text(Some("h-1")).as_str()));
    // Set while the new connection waits for its setup to complete: held.
    handle.update_instruction("Speak German.").unwrap();
    conn2.send_json(&json!({"setupComplete": {}})).await;
    let mut frames = Vec::new();
    for _ in 0..3 {
        let next = tokio::time::timeout(Duration::from_secs(5), conn2.recv()).await;
        frames.push(next.unwrap().unwrap().text().unwrap().to_owned());
    }
    assert_eq!(
        frames,
        [
            instruction_frame("Speak German."),
            instruction_frame("Speak French."),
            instruction_frame("Speak German."),
        ]
    );
    settle(&mut events).await;
    hello_is_next(&handle, &mut conn2).await;
}

/// The control lane fails on the item that notes the application's instruction (a fault
/// injected before it handles it): its successor notes it, and the next connection still
/// gets the application's instruction.
#[tokio::test(start_paused = true)]
async fn a_control_lane_failure_on_the_instructions_report_loses_nothing() {
    use std::sync::atomic::{AtomicBool, Ordering};

    use reel_actors::Child;
    use reel_actors::fault::FaultHook;

    /// Fails the control lane on the first item it takes once armed.
    #[derive(Default)]
    struct FailNextControlItem(AtomicBool);
    impl FaultHook for FailNextControlItem {
        fn before(&self, child: Child, input: u64) {
            if child == Child::ControlLane && self.0.swap(false, Ordering::SeqCst) {
                panic!("injected fault in {child} at input {input}");
            }
        }
    }

    let mut server = ScriptedServer::bind().await;
    let hook = Arc::new(FailNextControlItem::default());
    let config = SessionConfig::default().session_resume(true);
    let (handle, mut conn, _, mut events) = start(
        &mut server,
        |b| b.phases(greeting_then_booking()).fault_hook(hook.clone()),
        config,
    )
    .await;
    conn.send_json(&json!({"sessionResumptionUpdate": {"newHandle": "h-1", "resumable": true}}))
        .await;
    settle(&mut events).await;
    // Nothing else flows: the next item the control lane takes is the instruction's report.
    hook.0.store(true, Ordering::SeqCst);
    handle.update_instruction("Speak French.").unwrap();
    assert_eq!(
        conn.recv().await.unwrap().text(),
        Some(instruction_frame("Speak French.").as_str())
    );
    let seen = settle(&mut events).await;
    assert_eq!(support::restarts(&seen), [("control_lane", 1)]);

    let mut conn2 = reconnected(&mut server, &mut conn).await;
    let next = tokio::time::timeout(Duration::from_secs(5), conn2.recv()).await;
    assert_eq!(
        next.unwrap().unwrap().text(),
        Some(instruction_frame("Speak French.").as_str())
    );
    settle(&mut events).await;
    hello_is_next(&handle, &mut conn2).await;
}
