//! Conversation control's rules through the whole tree: repair (a nudge at N unmet turns,
//! the first one at once even under deferred delivery, the escalation at M with its
//! latches and transition), an entry guard that blocks a transition, an enter prompt
//! computed from the state and the transcript, and tool filtering in the phase the
//! escalation moved to.

use std::sync::Arc;

use crate::conversation_support::{
    NAV_IDENTIFY, PERSONA, context, nav_close, screening, sent_by_now, turn_complete, user_text,
};
use crate::support::{settle, start};

use reel_actors::conversation::{
    ContextDelivery, PhaseDefaults, REPAIR_ESCALATION_KEY, REPAIR_UNFULFILLED_KEY, RepairConfig,
    SteeringMode,
};
use reel_actors::phases::{Phase, PhaseMachine};
use reel_actors::testing::ScriptedServer;
use reel_actors::{LiveEvent, state::State};
use reel_protocol::SessionConfig;
use serde_json::{Value, json};

const NAME: &str = "[Context: caller_name=Ada]";
const ENTER: &str = "I'll now ask for the organization.";
const NUDGE: &str = "I still need to collect: caller_org.";

fn app() -> Value {
    json!("app sends")
}

#[tokio::test(start_paused = true)]
async fn unmet_needs_nudge_at_n_and_escalate_at_m() {
    let escalated = Arc::new(std::sync::Mutex::new(Vec::<Option<Value>>::new()));
    let seen = Arc::clone(&escalated);
    let repair =
        RepairConfig::new(2, 4)
            .escalate_to("close")
            .on_escalate(move |state: State, _writer| {
                let seen = Arc::clone(&seen);
                async move {
                    seen.lock()
                        .unwrap()
                        .push(state.get_raw(REPAIR_UNFULFILLED_KEY));
                }
            });
    let mut server = ScriptedServer::bind().await;
    let (handle, mut conn, _setup, mut events) = start(
        &mut server,
        |b| {
            b.phases(screening(Some(repair)))
                .steering_mode(SteeringMode::ContextInjection)
                .context_delivery(ContextDelivery::Deferred)
        },
        SessionConfig::default().system_instruction(PERSONA),
    )
    .await;
    let mut seen_events = handle.events();
    settle(&mut events).await;
    handle.state().set("caller_name", "Ada").await.unwrap();
    handle.state().set("app:ready", true).await.unwrap();
    let mut log = Vec::new();
    // Five boundaries, the user speaking after each: the first enters `identify`, the
    // next four find `caller_org` missing (unmet turns 1, 2, 3, 4).
    for turn in 1..=5 {
        conn.send_json(&turn_complete()).await;
        settle(&mut events).await;
        log.extend(sent_by_now(&mut conn).await);
        log.push(app());
        handle.send_text(format!("turn {turn}")).unwrap();
        settle(&mut events).await;
        log.extend(sent_by_now(&mut conn).await);
    }
    assert_eq!(
        log,
        vec![
            // Turn 1: the transition (its enter prompt goes at once); the connect's
            // queued context goes with it, first.
            context(
                &[
                    "Greet the caller.",
                    "[Navigation]\nCurrent phase: greeting -- Greet the caller.\nStill needed: caller_name\nPossible next:\n  -> identify: when the caller is ready\n  -> close",
                    NAME,
                    "Ask for the organization.",
                    NAV_IDENTIFY,
                    ENTER
                ],
                true
            ),
            app(),
            user_text("turn 1"),
            // Turn 2: one unmet turn, nothing.
            app(),
            user_text("turn 2"),
            // Turn 3: the first nudge asks the model to answer: at once.
            context(&[NUDGE], true),
            app(),
            user_text("turn 3"),
            // Turn 4: the second nudge waits for the user's next send.
            app(),
            context(&[NUDGE], false),
            user_text("turn 4"),
            // Turn 5: escalation to `close`, whose context waits too.
            app(),
            context(&[NAME, "Say goodbye.", &nav_close(4)], false),
            user_text("turn 5"),
        ]
    );
    assert_eq!(
        handle.state().get::<bool>(REPAIR_ESCALATION_KEY),
        Some(true)
    );
    assert_eq!(
        handle.state().get_raw(REPAIR_UNFULFILLED_KEY),
        Some(json!(["caller_org"]))
    );
    assert_eq!(
        handle
            .state()
            .get::<String>("session:active_phase")
            .as_deref(),
        Some("close")
    );
    assert_eq!(
        *escalated.lock().unwrap(),
        vec![Some(json!(["caller_org"]))]
    );
    let transitions: Vec<(String, String, String)> = seen_events
        .collect_until_idle(
            std::time::Duration::from_millis(500),
            std::time::Duration::from_secs(60),
        )
        .await
        .into_iter()
        .filter_map(|e| match e.event {
            LiveEvent::PhaseTransition { from, to, reason } => Some((from, to, reason)),
            _ => None,
        })
        .collect();
    assert_eq!(
        transitions,
        vec![
            (
                "greeting".to_owned(),
                "identify".to_owned(),
                "when the caller is ready".to_owned()
            ),
            (
                "identify".to_owned(),
                "close".to_owned(),
                "repair: caller_org still needed after 4 turns".to_owned()
            ),
        ]
    );
}

#[tokio::test(start_paused = true)]
async fn an_entry_guard_blocks_the_transition_until_it_holds() {
    let mut server = ScriptedServer::bind().await;
    let (handle, mut conn, _setup, mut events) = start(
        &mut server,
        |b| b.phases(screening(None)),
        SessionConfig::default(),
    )
    .await;
    settle(&mut events).await;
    // `identify`'s transition guard holds, its entry guard (`caller_name`) does not.
    handle.state().set("app:ready", true).await.unwrap();
    conn.send_json(&turn_complete()).await;
    settle(&mut events).await;
    assert_eq!(
        handle
            .state()
            .get::<String>("session:active_phase")
            .as_deref(),
        Some("greeting")
    );
    handle.state().set("caller_name", "Ada").await.unwrap();
    conn.send_json(&turn_complete()).await;
    settle(&mut events).await;
    assert_eq!(
        handle
            .state()
            .get::<String>("session:active_phase")
            .as_deref(),
        Some("identify")
    );
}

#[tokio::test(start_paused = true)]
async fn enter_prompt_fn_sees_the_state_and_the_finished_turns() {
    let machine = PhaseMachine::builder("ask")
        .defaults(PhaseDefaults::default().prompt_on_enter(false))
        .phase(Phase::new("ask").transition("confirm", |s| s.contains("app:city")))
        .phase(Phase::new("confirm").enter_prompt_fn(|state, turns| {
            let city = state.get::<String>("app:city").unwrap_or_default();
            let said = turns.last().map(|t| t.user.clone()).unwrap_or_default();
            format!(
                "{city}, after {} turn(s); the user said: {said}",
                turns.len()
            )
        }))
        .build()
        .unwrap();
    let mut server = ScriptedServer::bind().await;
    let (handle, mut conn, _setup, mut events) = start(
        &mut server,
        |b| {
            b.phases(machine)
                .steering_mode(SteeringMode::ContextInjection)
        },
        SessionConfig::default(),
    )
    .await;
    settle(&mut events).await;
    handle.send_text("Paris please").unwrap();
    assert_eq!(conn.recv_json().await, user_text("Paris please"));
    handle.state().set("app:city", "Paris").await.unwrap();
    conn.send_json(&turn_complete()).await;
    // The enter prompt always asks the model to answer, whatever the defaults say.
    assert_eq!(
        conn.recv_json().await,
        context(
            &["Paris, after 1 turn(s); the user said: Paris please"],
            true
        )
    );
}

#[test]
fn a_phase_s_modifiers_extend_the_defaults_in_order() {
    let machine = screening(None);
    let identify = machine.phase("identify").unwrap();
    let state = State::new();
    let kinds: Vec<String> = machine
        .modifiers_of(identify)
        .map(|m| format!("{m:?}"))
        .collect();
    assert_eq!(
        kinds,
        vec![
            "StateAppend([\"caller_name\"])",
            "Conditional(\"Use extra empathy.\")",
            "StateAppend([\"caller_org\"])",
        ]
    );
    assert_eq!(
        reel_actors::conversation::modifiers::render_all(machine.modifiers_of(identify), &state),
        None
    );
}
