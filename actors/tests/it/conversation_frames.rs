//! Conversation control through the whole tree, frame by frame: for each steering mode and
//! each context delivery, the exact frames a session sends at connect, at a transition
//! (with its enter prompt), at a turn whose modifiers changed and at a turn where nothing
//! changed — and that a turn boundary's context is one `clientContent` frame.

use crate::conversation_support::{
    NAV_GREETING, NAV_IDENTIFY, PERSONA, context, instruction, screening, sent_by_now,
    turn_complete, user_text,
};
use crate::support::{settle, start};

use reel_actors::conversation::{ContextDelivery, NAVIGATION_CONTEXT_KEY, SteeringMode};
use reel_actors::testing::ScriptedServer;
use reel_protocol::SessionConfig;
use serde_json::{Value, json};

/// Connect; the user says "one"; the caller's name is known and a turn completes
/// (greeting → identify, with the enter prompt); the user says "two"; a turn completes with
/// nothing new; the user says "three"; the caller turns upset and a turn completes; the
/// user says "four". Returns the setup's instruction and every frame after the setup, with
/// `"app sends"` where the application sent, so what went out before it is told apart from
/// what went out with it.
async fn script(steering: SteeringMode, delivery: ContextDelivery) -> (Value, Vec<Value>) {
    let mut server = ScriptedServer::bind().await;
    let (handle, mut conn, setup, mut events) = start(
        &mut server,
        |b| {
            b.phases(screening(None))
                .steering_mode(steering)
                .context_delivery(delivery)
        },
        SessionConfig::default().system_instruction(PERSONA),
    )
    .await;
    let mut log = Vec::new();
    settle(&mut events).await;
    for (text, change) in [
        ("one", Some("caller_name")),
        ("two", None),
        ("three", Some("app:upset")),
        ("four", None),
    ] {
        log.extend(sent_by_now(&mut conn).await);
        log.push(json!("app sends"));
        handle.send_text(text).unwrap();
        settle(&mut events).await;
        log.extend(sent_by_now(&mut conn).await);
        if text == "four" {
            break;
        }
        match change {
            Some("caller_name") => {
                handle.state().set("caller_name", "Ada").await.unwrap();
                handle.state().set("app:ready", true).await.unwrap();
            }
            Some(key) => handle.state().set(key, true).await.unwrap(),
            None => {}
        }
        conn.send_json(&turn_complete()).await;
        settle(&mut events).await;
    }
    assert_eq!(
        handle
            .state()
            .get::<String>(NAVIGATION_CONTEXT_KEY)
            .as_deref(),
        Some(NAV_IDENTIFY)
    );
    (setup["setup"]["systemInstruction"].clone(), log)
}

fn app() -> Value {
    json!("app sends")
}

fn text_of(instruction: &Value) -> &str {
    instruction["parts"][0]["text"].as_str().unwrap()
}

const NAME: &str = "[Context: caller_name=Ada]";
const NAME_UPSET: &str = "[Context: caller_name=Ada]\nUse extra empathy.";
const ENTER: &str = "I'll now ask for the organization.";

#[tokio::test(start_paused = true)]
async fn context_injection_immediate_sends_each_boundary_as_one_frame_at_once() {
    let (setup, frames) = script(SteeringMode::ContextInjection, ContextDelivery::Immediate).await;
    assert_eq!(text_of(&setup), PERSONA);
    assert_eq!(
        frames,
        vec![
            context(&["Greet the caller.", NAV_GREETING], false),
            app(),
            user_text("one"),
            context(
                &[NAME, "Ask for the organization.", NAV_IDENTIFY, ENTER],
                true
            ),
            app(),
            user_text("two"),
            // Nothing changed at this boundary: nothing is sent.
            app(),
            user_text("three"),
            context(&[NAME_UPSET], false),
            app(),
            user_text("four"),
        ]
    );
}

#[tokio::test(start_paused = true)]
async fn context_injection_deferred_holds_context_for_the_next_send_but_not_a_prompt() {
    let (setup, frames) = script(SteeringMode::ContextInjection, ContextDelivery::Deferred).await;
    assert_eq!(text_of(&setup), PERSONA);
    assert_eq!(
        frames,
        vec![
            app(),
            context(&["Greet the caller.", NAV_GREETING], false),
            user_text("one"),
            // The enter prompt asks the model to answer: sent at once.
            context(
                &[NAME, "Ask for the organization.", NAV_IDENTIFY, ENTER],
                true
            ),
            app(),
            user_text("two"),
            app(),
            user_text("three"),
            app(),
            context(&[NAME_UPSET], false),
            user_text("four"),
        ]
    );
}

#[tokio::test(start_paused = true)]
async fn instruction_update_bakes_modifiers_and_navigation_into_the_instruction() {
    for delivery in [ContextDelivery::Immediate, ContextDelivery::Deferred] {
        let (setup, frames) = script(SteeringMode::InstructionUpdate, delivery).await;
        assert_eq!(text_of(&setup), "Greet the caller.");
        assert_eq!(
            frames,
            vec![
                instruction(&format!("Greet the caller.\n\n{NAV_GREETING}")),
                app(),
                user_text("one"),
                instruction(&format!(
                    "Ask for the organization.\n\n{NAME}\n\n{NAV_IDENTIFY}"
                )),
                // The enter prompt is context (and a prompt) in every mode.
                context(&[ENTER], true),
                app(),
                user_text("two"),
                app(),
                user_text("three"),
                instruction(&format!(
                    "Ask for the organization.\n\n{NAME_UPSET}\n\n{NAV_IDENTIFY}"
                )),
                app(),
                user_text("four"),
            ],
            "{delivery:?}"
        );
    }
}

#[tokio::test(start_paused = true)]
async fn hybrid_replaces_the_instruction_and_sends_modifiers_as_context() {
    let (setup, frames) = script(SteeringMode::Hybrid, ContextDelivery::Immediate).await;
    assert_eq!(text_of(&setup), "Greet the caller.");
    assert_eq!(
        frames,
        vec![
            instruction(&format!("Greet the caller.\n\n{NAV_GREETING}")),
            app(),
            user_text("one"),
            instruction(&format!("Ask for the organization.\n\n{NAV_IDENTIFY}")),
            context(&[NAME, ENTER], true),
            app(),
            user_text("two"),
            app(),
            user_text("three"),
            context(&[NAME_UPSET], false),
            app(),
            user_text("four"),
        ]
    );
}

#[tokio::test(start_paused = true)]
async fn hybrid_deferred_sends_changed_modifiers_with_the_next_send() {
    let (_, frames) = script(SteeringMode::Hybrid, ContextDelivery::Deferred).await;
    assert_eq!(
        frames,
        vec![
            instruction(&format!("Greet the caller.\n\n{NAV_GREETING}")),
            app(),
            user_text("one"),
            instruction(&format!("Ask for the organization.\n\n{NAV_IDENTIFY}")),
            context(&[NAME, ENTER], true),
            app(),
            user_text("two"),
            app(),
            user_text("three"),
            app(),
            context(&[NAME_UPSET], false),
            user_text("four"),
        ]
    );
}
