//! A control lane that fails in the middle of the turn pipeline, after repair counted the
//! turn and queued its nudge and before the boundary's context was sent: the lane restarts,
//! that boundary's context is lost whole (never half of it sent), and the next boundary
//! sends its own batch whole, as one frame.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use crate::conversation_support::{context, sent_by_now, turn_complete};
use crate::support::{restarts, settle, start};

use reel_actors::conversation::{RepairConfig, SteeringMode};
use reel_actors::phases::{Phase, PhaseMachine};
use reel_actors::testing::ScriptedServer;
use reel_protocol::SessionConfig;
use serde_json::Value;

const NUDGE: &str = "I still need to collect: app:name.";

#[tokio::test(start_paused = true)]
async fn a_failure_mid_pipeline_loses_that_boundary_s_batch_whole_and_nothing_else() {
    crate::sim::quiet::silence_planned_panics();
    let armed = Arc::new(AtomicBool::new(true));
    let trigger = Arc::clone(&armed);
    let machine = PhaseMachine::builder("talk")
        .repair(RepairConfig::new(1, 10))
        .phase(
            Phase::new("talk")
                .instruction("Talk.")
                .needs(&["app:name"])
                .with_context(move |s| {
                    if s.contains("app:boom") && trigger.swap(false, Ordering::SeqCst) {
                        panic!("sim fault: the modifier fails mid-pipeline");
                    }
                    format!("turn {}", s.get::<u64>("session:turn_count").unwrap_or(0))
                }),
        )
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
    let mut seen = settle(&mut events).await;
    let mut frames: Vec<Value> = sent_by_now(&mut conn).await;
    for boom in [false, true, false] {
        if boom {
            handle.state().set("app:boom", true).await.unwrap();
        }
        conn.send_json(&turn_complete()).await;
        seen.extend(settle(&mut events).await);
        frames.push(serde_json::json!(format!("boundary (boom: {boom})")));
        frames.extend(sent_by_now(&mut conn).await);
    }
    assert!(!armed.load(Ordering::SeqCst), "the modifier failed once");
    assert_eq!(restarts(&seen), vec![("control_lane", 1)]);
    assert_eq!(
        frames,
        vec![
            context(&["turn 0", "Talk."], false),
            serde_json::json!("boundary (boom: false)"),
            // One unmet turn: the first nudge prompts; the modifiers did not change.
            context(&[NUDGE], true),
            serde_json::json!("boundary (boom: true)"),
            // The pipeline failed after repair counted the turn: nothing of it was sent.
            serde_json::json!("boundary (boom: false)"),
            // The turn count was not advanced by the failed boundary (its last step).
            context(&[NUDGE, "turn 1"], false),
        ]
    );
}
