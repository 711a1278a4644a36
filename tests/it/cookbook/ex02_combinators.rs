//! 02_combinators: every operator and pattern runs on one scripted model; the contract
//! check names the misspelt key.

#[allow(dead_code)] // the example's `main` is not called here
#[path = "../../../examples/cookbook/02_combinators.rs"]
mod example;

use example::NAME;
use example::cookbook::{MODEL, Models};
use reel::compose::ContractViolation;

use super::support::{Script, check_printed, check_recorded, check_replayed};

/// The answers the bundled cassette holds, in call order. The fan-out's two calls have the
/// same user text, so they are answered in the order they are made: both run on the
/// test's single-threaded runtime, `tech` (spawned first) asks first; were that order to
/// change, the recorded cassette would pair the answers the other way and the byte-for-byte
/// check would fail.
fn script() -> Script {
    Script::new()
        .answer(MODEL, "1. quiet and emission-free\n2. fit narrow streets\n3. cheap to run")
        .answer(MODEL, "Electric cargo bikes carry parcels quietly through narrow streets at a fraction of a van's running cost.")
        .answer(MODEL, "Technically, a 250 W motor and a 100 kg box cover most inner-city rounds.")
        .answer(MODEL, "For business, lower fuel and parking costs pay a bike back within a year.")
        .answer(MODEL, "Cargo bikes deliver city parcels quietly and cheaply.")
        .answer(MODEL, "Cargo bikes deliver city parcels quietly, cheaply.")
        .answer(MODEL, "Pedal the parcels.")
        .answer(MODEL, "needs_work")
        .answer(MODEL, "Your parcel, pedalled here.")
        .answer(MODEL, "good")
        .answer(MODEL, "Run a three-month pilot with five bikes in the old town.")
        .answer(MODEL, "true")
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
    let topic = "gemini-2.5-flash: electric cargo bikes for city deliveries";
    assert_eq!(
        script.asked(),
        [
            topic,
            "gemini-2.5-flash: 1. quiet and emission-free\n2. fit narrow streets\n3. cheap to run",
            topic,
            topic,
            topic,
            "gemini-2.5-flash: Cargo bikes deliver city parcels quietly and cheaply.",
            topic,
            "gemini-2.5-flash: Pedal the parcels.",
            "gemini-2.5-flash: needs_work",
            "gemini-2.5-flash: Your parcel, pedalled here.",
            topic,
            "gemini-2.5-flash: Run a three-month pilot with five bikes in the old town.",
        ]
    );
}

#[tokio::test]
async fn it_replays_its_bundled_cassette_offline() {
    check_replayed(NAME, |cassette| example::run(Models::replaying(cassette))).await;
}

#[test]
fn the_miswired_pipeline_is_caught_with_typed_violations() {
    assert_eq!(
        example::miswired(&reel::compose::AuditLog::new()).check_contracts(),
        [
            ContractViolation::UnsatisfiedRead {
                agent: "editor".to_owned(),
                key: "drfat".to_owned(),
            },
            ContractViolation::UnreadWrite {
                agent: "author".to_owned(),
                key: "draft".to_owned(),
            },
        ]
    );
}

#[test]
fn cargo_run_prints_the_bundled_output() {
    check_printed(NAME);
}
