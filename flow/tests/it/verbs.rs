//! Each verb of the closed vocabulary, on the smallest flow that shows it.

use reel_flow::{Denial, Flow, Guard, Mode, Monitor, Verdict};
use serde_json::json;

fn monitor(flow: Flow) -> Monitor {
    Monitor::new(flow.compile().unwrap(), Mode::Govern)
}

#[test]
fn after_waits_for_the_dependency() {
    let mut m = monitor(
        Flow::new()
            .step("a")
            .done(Guard::is_true("a"))
            .step("b")
            .after("a")
            .done(Guard::is_true("b")),
    );
    assert_eq!(m.verdict("b"), Some(Verdict::Pending));
    m.set_state("b", json!(true));
    assert_eq!(
        m.verdict("b"),
        Some(Verdict::Pending),
        "b's guard holds, but a is not done"
    );
    m.set_state("a", json!(true));
    assert_eq!(m.done_steps(), ["a", "b"]);
}

#[test]
fn gate_adds_eligibility() {
    let mut m = monitor(
        Flow::new()
            .step("upsell")
            .gate(Guard::eq("tier", "gold"))
            .done(Guard::is_true("offered")),
    );
    assert_eq!(m.verdict("upsell"), Some(Verdict::Pending));
    m.set_state("tier", json!("gold"));
    assert_eq!(m.verdict("upsell"), Some(Verdict::Active));
}

#[test]
fn done_latches_when_the_state_changes_back() {
    let mut m = monitor(
        Flow::new()
            .step("a")
            .done(Guard::is_true("x"))
            .step("b")
            .after("a")
            .done(Guard::is_true("y")),
    );
    m.set_state("x", json!(true));
    assert_eq!(m.verdict("a"), Some(Verdict::Done));
    m.set_state("x", json!(false));
    m.set_state("x", json!(null));
    assert_eq!(m.verdict("a"), Some(Verdict::Done));
    assert_eq!(m.active(), ["b"]);
}

#[test]
fn posture_and_ground_apply_while_active() {
    let mut m = monitor(
        Flow::new()
            .step("negotiate")
            .posture("Negotiate an affordable payment.")
            .ground("Balance owed: {balance} ({currency}).")
            .ground("Identity verified: {identity_verified?yes:no}. Braces: {{kept}}.")
            .done(Guard::is_set("ptp_amount")),
    );
    assert_eq!(
        m.ground_lines(),
        [
            "Balance owed: unknown (unknown).",
            "Identity verified: no. Braces: {kept}."
        ]
    );
    m.set_state("balance", json!(412.5));
    m.set_state("currency", json!("EUR"));
    m.set_state("identity_verified", json!(true));
    assert_eq!(
        m.ground_lines(),
        [
            "Balance owed: 412.5 (EUR).",
            "Identity verified: yes. Braces: {kept}."
        ]
    );
    assert_eq!(m.postures()[0].text, "Negotiate an affordable payment.");
    m.set_state("ptp_amount", json!(100));
    assert_eq!(m.ground_lines(), Vec::<String>::new());
    assert_eq!(m.postures(), []);
}

#[test]
fn allow_gates_and_deny_refuses_while_active() {
    let mut m = monitor(
        Flow::new()
            .step("greet")
            .deny(["transfer_call"])
            .done(Guard::is_true("greeted"))
            .step("help")
            .after("greet")
            .allow(["search"])
            .done(Guard::is_true("helped")),
    );
    assert_eq!(
        m.admit("transfer_call"),
        Err(Denial::DeniedByStep {
            tool: "transfer_call".into(),
            step: "greet".into()
        })
    );
    assert_eq!(
        m.admit("search"),
        Err(Denial::NotAllowed {
            tool: "search".into(),
            active: vec!["greet".into()]
        })
    );
    assert_eq!(
        m.admit("get_time"),
        Ok(()),
        "a tool no step allows is not step-gated"
    );
    m.set_state("greeted", json!(true));
    assert_eq!(m.admit("transfer_call"), Ok(()));
    assert_eq!(m.admit("search"), Ok(()));
    m.set_state("helped", json!(true));
    assert_eq!(
        m.admit("search").unwrap_err().to_string(),
        "\"search\" is not allowed by any active step (no step is active)"
    );
}

#[test]
fn terminal_completes_on_eligibility_and_is_never_active() {
    let mut m = monitor(
        Flow::new()
            .step("a")
            .done(Guard::is_true("a"))
            .step("end")
            .after("a")
            .terminal(),
    );
    assert_eq!(m.verdict("end"), Some(Verdict::Pending));
    assert!(
        !m.is_complete(),
        "without require, a terminal step done completes the flow"
    );
    m.set_state("a", json!(true));
    assert_eq!(m.verdict("end"), Some(Verdict::Done));
    assert!(m.is_complete());
}

#[test]
fn once_refuses_a_second_call_in_govern_and_records_it_in_observe() {
    let flow = Flow::new()
        .step("s")
        .done(Guard::is_true("x"))
        .once("send_sms");
    let mut governed = monitor(flow.clone());
    assert_eq!(governed.call(3, Some("a"), "send_sms"), Ok(()));
    governed.returned("a", true);
    let refused = Err(Denial::OnceSpent {
        tool: "send_sms".into(),
        seq: 3,
    });
    assert_eq!(governed.call(8, Some("b"), "send_sms"), refused);
    // Refused in govern mode: the call never ran, so nothing waits for its return.
    governed.returned("b", true);
    assert_eq!(governed.call(12, Some("c"), "send_sms"), refused);
    assert_eq!(
        governed
            .violations()
            .iter()
            .map(|v| v.seq)
            .collect::<Vec<_>>(),
        [8, 12]
    );

    let mut observed = Monitor::new(flow.compile().unwrap(), Mode::Observe);
    assert_eq!(observed.call(3, Some("a"), "send_sms"), Ok(()));
    assert_eq!(observed.call(4, Some("b"), "send_sms"), refused);
    observed.returned("a", true);
    observed.returned("b", true);
    assert_eq!(observed.violations().len(), 1);
}

#[test]
fn never_until_forbids_until_the_guard_holds() {
    let mut m = monitor(
        Flow::new()
            .step("verify")
            .done(Guard::is_true("verified"))
            .never("read_records")
            .until(Guard::done("verify")),
    );
    assert_eq!(
        m.admit("read_records").unwrap_err().to_string(),
        "\"read_records\" is forbidden until done(verify)"
    );
    m.set_state("verified", json!(true));
    assert_eq!(m.admit("read_records"), Ok(()));
}

#[test]
fn require_names_what_completion_needs_and_the_rest_is_skipped() {
    let mut m = monitor(
        Flow::new()
            .step("collect")
            .done(Guard::captured(["name"]))
            .step("survey")
            .gate(Guard::is_true("opted_in"))
            .done(Guard::is_true("surveyed"))
            .require(["collect"]),
    );
    assert_eq!(m.unmet_requirements(), ["collect"]);
    assert_eq!(m.verdict("survey"), Some(Verdict::Pending));
    m.set_state("name", json!("Ada"));
    assert_eq!(m.unmet_requirements(), Vec::<String>::new());
    assert!(m.is_complete());
    assert_eq!(m.verdict("survey"), Some(Verdict::Skipped));
}

#[test]
fn commit_is_once_plus_never_until_plus_confirmation() {
    let flow = Flow::new()
        .step("book")
        .allow(["confirm_booking"])
        .done(Guard::called_ok("confirm_booking"))
        .commit("confirm_booking", Guard::captured(["date", "party"]))
        .compile()
        .unwrap();
    assert_eq!(flow.confirmed_tools(), ["confirm_booking"]);
    let mut m = Monitor::new(flow, Mode::Govern);
    assert_eq!(
        m.admit("confirm_booking").unwrap_err().to_string(),
        "\"confirm_booking\" is forbidden until captured(date, party)"
    );
    m.set_state("date", json!("2026-12-24"));
    m.set_state("party", json!(4));
    assert_eq!(m.call(5, Some("k"), "confirm_booking"), Ok(()));
    m.returned("k", true);
    assert_eq!(m.verdict("book"), Some(Verdict::Done));
    m.set_state("date", json!("2026-12-25"));
    assert_eq!(
        m.admit("confirm_booking").unwrap_err().to_string(),
        "\"confirm_booking\" may run once and already ran (frame 5)"
    );
}

#[test]
fn once_stays_spent_by_a_call_whose_result_was_lost_and_is_released_by_one_that_failed() {
    use reel_flow::score::apply_response;
    let flow = || {
        Flow::new()
            .step("pay")
            .done(Guard::called_ok("charge_card"))
            .once("charge_card")
    };
    let answer = |id: &str, response: serde_json::Value| json!({"id": id, "name": "charge_card", "response": response});
    // A failed charge releases the `once`: the card may be tried again.
    let mut m = monitor(flow());
    m.call(3, Some("c1"), "charge_card").unwrap();
    apply_response(&mut m, &answer("c1", json!({"error": "declined"})));
    assert_eq!(m.admit("charge_card"), Ok(()));
    // A charge whose result the runtime lost (the control lane failed while handling it)
    // may have gone through: the `once` stays spent, and the step is not done.
    let mut m = monitor(flow());
    m.call(3, Some("c1"), "charge_card").unwrap();
    apply_response(
        &mut m,
        &answer(
            "c1",
            json!({"error": "tool `charge_card` could not be answered: the control lane failed while handling its result"}),
        ),
    );
    assert_eq!(
        m.admit("charge_card"),
        Err(Denial::OnceSpent {
            tool: "charge_card".to_owned(),
            seq: 3
        })
    );
    assert_eq!(m.verdict("pay"), Some(Verdict::Active));
}
