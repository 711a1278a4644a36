//! 24_customer_support: four turns; the escalation goes self_service → priority → human and
//! the route follows it (billing, technical, billing at priority, the hand-over).

#[allow(dead_code)] // the example's `main` is not called here
#[path = "../../../examples/cookbook/24_customer_support.rs"]
mod example;

use example::cookbook::{MODEL, Models};
use example::{MESSAGES, NAME, escalate};

use super::support::{Script, check_printed, check_recorded, check_replayed};

const REPLY_1: &str = "Sorry about that: I have flagged the duplicate March charge for a refund.";
const REPLY_2: &str = "Please update the app to 4.2; the invoices page crash is fixed there.";
const REPLY_3: &str = "I apologise: the duplicate charge will be refunded by 3 December.";

/// Per turn, the classifier's label and then the answer of the agent the route picks.
fn script() -> Script {
    Script::new()
        .answer(MODEL, "billing|calm")
        .answer(MODEL, REPLY_1)
        .answer(MODEL, "technical|calm")
        .answer(MODEL, REPLY_2)
        .answer(MODEL, "billing|angry")
        .answer(MODEL, REPLY_3)
        .answer(MODEL, "other|angry")
        .answer(MODEL, "Customer charged twice for March, app crash on invoices fixed by update, refund promised by 3 December, now asks for a person.")
}

#[test]
fn the_escalation_machine_moves_as_documented() {
    assert_eq!(escalate("self_service", "calm"), "self_service");
    assert_eq!(escalate("self_service", "angry"), "priority");
    assert_eq!(escalate("priority", "calm"), "priority");
    assert_eq!(escalate("priority", "angry"), "human");
    assert_eq!(escalate("human", "calm"), "human");
}

#[tokio::test(start_paused = true)]
async fn the_bundled_cassette_is_the_script_recorded() {
    let script = script();
    let models = script.clone();
    check_recorded(NAME, |cassette| {
        example::run(Models::scripted(move |id| models.model(id), Some(cassette)))
    })
    .await;
    assert!(script.used_up());
    let flash = |prompt: &str| format!("{MODEL}: {prompt}");
    assert_eq!(
        script.asked(),
        [
            flash(MESSAGES[0]),
            flash(MESSAGES[0]),
            flash(MESSAGES[1]),
            flash(MESSAGES[1]),
            flash(MESSAGES[2]),
            flash(MESSAGES[2]),
            flash(MESSAGES[3]),
            // The hand-over writer reads the whole transcript.
            flash(&format!(
                "customer: {}\nsupport: {REPLY_1}\ncustomer: {}\nsupport: {REPLY_2}\ncustomer: {}\nsupport: {REPLY_3}\ncustomer: {}",
                MESSAGES[0], MESSAGES[1], MESSAGES[2], MESSAGES[3]
            )),
        ]
    );
    // The responders saw the escalation level in their instruction.
    let cassette: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(super::support::bundled_cassette(NAME)).unwrap(),
    )
    .unwrap();
    let instruction = |i: usize| {
        cassette["interactions"][i]["request"]["systemInstruction"]
            .as_str()
            .unwrap()
            .lines()
            .last()
            .unwrap()
            .to_owned()
    };
    assert_eq!(instruction(1), "[Context: escalation=self_service]");
    assert_eq!(instruction(5), "[Context: escalation=priority]");
}

#[tokio::test]
async fn it_replays_its_bundled_cassette_offline() {
    check_replayed(NAME, |cassette| example::run(Models::replaying(cassette))).await;
}

#[test]
fn cargo_run_prints_the_bundled_output() {
    check_printed(NAME);
}
