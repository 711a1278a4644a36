//! 22_contract_testing: the mis-wired pipeline's exact violations, the fixed one run on its
//! script, and an extraction that breaks the schema refused.

#[allow(dead_code)] // the example's `main` is not called here
#[path = "../../../examples/cookbook/22_contract_testing.rs"]
mod example;

use example::cookbook::{MODEL, Models};
use example::{INVOICE, INVOICE_TEXT, NAME, SMUDGED};
use reel::compose::{ContractViolation, check_contracts_with};
use serde_json::json;

use super::support::{Script, check_printed, check_recorded, check_replayed};

const INVOICE_JSON: &str =
    r#"{"vendor":"ACME Tools","net":37.5,"vat_rate":0.2,"total":45.0,"currency":"EUR"}"#;
const ARITHMETIC: &str = "ok: 37.50 + 20% VAT = 45.00";
const TAX: &str = "ok: 20% is the standard rate for a French vendor";

/// The answers the bundled cassette holds. The two checkers run at once on the same input;
/// on the test's single-threaded runtime the first branch (arithmetic) asks first, every
/// time, so they are queued in that order.
fn script() -> Script {
    Script::new()
        .answer(MODEL, INVOICE_JSON)
        .answer(MODEL, ARITHMETIC)
        .answer(MODEL, TAX)
        .answer(MODEL, "ACME Tools, 45.00 EUR: arithmetic and VAT both check out.")
        .answer(MODEL, r#"{"vendor":"Brightline Ltd","net":1000,"vat_rate":0.2,"total":"twelve hundred","currency":"GBP"}"#)
}

#[test]
fn the_miswired_pipeline_has_exactly_its_four_mistakes() {
    assert_eq!(
        check_contracts_with(&example::miswired(), &[INVOICE_TEXT]),
        [
            ContractViolation::ParallelWriteConflict {
                key: "check".into(),
                first: "arithmetic".into(),
                second: "tax".into(),
            },
            ContractViolation::UnsatisfiedRead {
                agent: "arithmetic".into(),
                key: "invoice_json".into(),
            },
            ContractViolation::SiblingRead {
                reader: "tax".into(),
                writer: "arithmetic".into(),
                key: "check".into(),
            },
            ContractViolation::UnreadWrite {
                agent: "extractor".into(),
                key: "raw_lines".into(),
            },
        ]
    );
    assert_eq!(check_contracts_with(&example::fixed(), &[INVOICE_TEXT]), []);
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
            flash(INVOICE),
            flash(INVOICE_JSON),
            flash(INVOICE_JSON),
            flash(&format!("{ARITHMETIC}\n{TAX}")),
            flash(SMUDGED),
        ]
    );
    // The extractor asked for JSON matching its schema.
    let recorded: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(super::support::bundled_cassette(NAME)).unwrap(),
    )
    .unwrap();
    assert_eq!(
        recorded["interactions"][0]["request"]["generationConfig"],
        json!({
            "temperature": 0.0,
            "responseMimeType": "application/json",
            "responseSchema": example::invoice_schema(),
        })
    );
}

#[tokio::test]
async fn it_replays_its_bundled_cassette_offline() {
    check_replayed(NAME, |cassette| example::run(Models::replaying(cassette))).await;
}

#[test]
fn cargo_run_prints_the_bundled_output() {
    check_printed(NAME);
}
