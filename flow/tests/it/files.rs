//! Flows as data: the JSON file format (golden files, round trips, refusals) and Mermaid.

use reel_flow::{Flow, FlowError, Guard};

/// Every verb and every serializable guard atom.
fn full() -> Flow {
    Flow::new()
        .step("greet")
        .posture("Greet the caller.")
        .deny(["transfer_call"])
        .done(Guard::is_set("caller_name"))
        .step("verify")
        .after("greet")
        .posture("Verify the caller's identity.")
        .ground("Caller: {caller_name}; verified: {identity_verified?yes:no}.")
        .allow(["lookup_account"])
        .done(Guard::all([
            Guard::is_true("identity_verified"),
            Guard::called_ok("lookup_account"),
        ]))
        .step("offer")
        .after("verify")
        .gate(Guard::any([
            Guard::eq("tier", "gold"),
            Guard::resolved("eligibility"),
        ]))
        .allow(["payment_plans"])
        .done(Guard::captured(["plan", "start_date"]))
        .step("close")
        .after("verify")
        .terminal()
        .once("payment_plans")
        .before("verify", "offer")
        .never("transfer_call")
        .until(Guard::not(Guard::is_true("spam")))
        .require(["close"])
        .commit("enroll", Guard::done("offer"))
        .build()
        .unwrap()
}

fn golden(name: &str) -> String {
    std::fs::read_to_string(format!(
        "{}/tests/golden/{name}",
        env!("CARGO_MANIFEST_DIR")
    ))
    .unwrap()
}

#[test]
fn a_full_flow_writes_its_golden_json_and_reads_back_the_same() {
    let text = full().to_json().unwrap();
    assert_eq!(text, golden("full.flow.json").trim_end());
    let again = Flow::from_json(&text).unwrap();
    assert_eq!(again.to_json().unwrap(), text);
    // The flow read back behaves as the one built.
    assert!(again.compile().is_ok());
}

#[test]
fn the_example_file_is_the_seed_flow() {
    let example = std::fs::read_to_string(format!(
        "{}/examples/debt_collection.flow.json",
        env!("CARGO_MANIFEST_DIR")
    ))
    .unwrap();
    assert_eq!(
        crate::debt_collection().to_json().unwrap(),
        example.trim_end()
    );
    Flow::from_json(&example).unwrap().compile().unwrap();
}

#[test]
fn a_custom_guard_cannot_be_written_and_says_where_it_is() {
    let flow = Flow::new()
        .step("a")
        .done(Guard::is_true("a"))
        .step("big")
        .after("a")
        .done(Guard::all([Guard::custom("over_100", |_| true)]));
    assert_eq!(
        flow.to_json().unwrap_err(),
        FlowError::CustomGuard {
            place: "step \"big\" (done)".into()
        }
    );
    let never = Flow::new()
        .step("a")
        .done(Guard::is_true("a"))
        .never("wire")
        .until(Guard::custom("c", |_| true));
    assert_eq!(
        never.to_json().unwrap_err().to_string(),
        "never(wire) holds a custom(..) guard, which is code and cannot be written as data: replace it with guard atoms"
    );
}

#[test]
fn a_bad_file_names_the_place() {
    let error =
        Flow::from_json(r#"{"steps": [{"id": "a", "done": {"is_ture": "x"}}]}"#).unwrap_err();
    assert_eq!(
        error.to_string(),
        "not a flow: at steps[0].done: unknown variant `is_ture`, expected one of `is_true`, `is_set`, `eq`, `captured`, `called_ok`, `done`, `resolved`, `all`, `any`, `not` at line 1 column 41"
    );
    let error = Flow::from_json(r#"{"steps": [], "stepz": []}"#).unwrap_err();
    assert_eq!(
        error.to_string(),
        "not a flow: at stepz: unknown field `stepz`, expected one of `steps`, `once`, `before`, `never`, `require`, `commit` at line 1 column 21"
    );
}

#[test]
fn the_seed_flow_as_mermaid() {
    assert_eq!(
        crate::debt_collection().to_mermaid(),
        r#"flowchart TD
    s0["verify<br/>allow: lookup_account<br/>done: is_true(identity_verified)"]
    s1["disclose<br/>done: is_true(disclosure_given)"]
    s2["negotiate<br/>allow: lookup_balance, payment_plans<br/>done: captured(ptp_amount, ptp_date)"]
    s3["take_payment<br/>allow: charge_card<br/>done: called_ok(charge_card)"]
    s4(["close"])
    s0 --> s1
    s1 --> s2
    s2 --> s3
    s2 --> s4
    constraints["once: charge_card<br/>never charge_card until is_true(ptp_confirmed)<br/>require: close"]
"#
    );
    let full = full().to_mermaid();
    assert!(full.contains("    s1 -.->|before| s2\n"), "{full}");
    assert!(full.contains("done: captured(plan, start_date)"), "{full}");
    assert!(full.contains("commit enroll until done(offer)"), "{full}");
    assert!(
        full.contains("never transfer_call until not(is_true(spam))"),
        "{full}"
    );
}
