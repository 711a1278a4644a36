//! `before(a, b)` ordering, latching and `once` across a sequence of calls.

use reel_flow::{Denial, Flow, Guard, Mode, Monitor, Verdict};
use serde_json::json;

#[test]
fn before_holds_a_step_until_the_other_is_done() {
    let flow = Flow::new()
        .step("consent")
        .done(Guard::is_true("consented"))
        .step("record")
        .allow(["start_recording"])
        .done(Guard::called_ok("start_recording"))
        .before("consent", "record")
        .compile()
        .unwrap();
    let mut m = Monitor::new(flow, Mode::Observe);
    assert_eq!(m.verdict("record"), Some(Verdict::Pending));
    assert_eq!(
        m.call(4, Some("r1"), "start_recording"),
        Err(Denial::Before {
            tool: "start_recording".into(),
            step: "record".into(),
            first: "consent".into()
        })
    );
    m.returned("r1", true);
    assert_eq!(
        m.verdict("record"),
        Some(Verdict::Pending),
        "a call out of order does not complete the step"
    );
    m.set_state("consented", json!(true));
    assert_eq!(
        m.verdict("record"),
        Some(Verdict::Done),
        "called_ok latched from the earlier call"
    );
    assert_eq!(
        m.violations()[0].reason,
        "\"start_recording\" is allowed by step \"record\", which must wait until step \"consent\" is done"
    );
}

#[test]
fn once_across_a_sequence_of_calls_and_returns() {
    let flow = Flow::new()
        .step("s")
        .done(Guard::is_true("never"))
        .once("refund")
        .compile()
        .unwrap();
    let mut m = Monitor::new(flow, Mode::Observe);
    let script = [
        (10, "a", false), // fails: not spent
        (11, "b", true),  // runs
        (12, "c", true),  // refused (b spent it)
        (13, "d", false), // refused
    ];
    let mut results = Vec::new();
    for (seq, id, ok) in script {
        results.push(m.call(seq, Some(id), "refund").is_ok());
        m.returned(id, ok);
    }
    assert_eq!(results, [true, true, false, false]);
    assert_eq!(
        m.violations()
            .iter()
            .map(|v| (v.seq, v.call_id.as_deref()))
            .collect::<Vec<_>>(),
        [(12, Some("c")), (13, Some("d"))]
    );
}

#[test]
fn a_done_step_stays_done_and_its_successor_stays_eligible() {
    let flow = Flow::new()
        .step("verify")
        .done(Guard::is_true("identity_verified"))
        .step("talk")
        .after("verify")
        .allow(["lookup_balance"])
        .done(Guard::is_true("finished"))
        .compile()
        .unwrap();
    let mut m = Monitor::new(flow, Mode::Govern);
    m.set_state("identity_verified", json!(true));
    m.set_state("identity_verified", json!(false));
    assert_eq!(m.verdict("verify"), Some(Verdict::Done));
    assert_eq!(m.admit("lookup_balance"), Ok(()));
}
