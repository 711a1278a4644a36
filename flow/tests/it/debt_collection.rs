//! The seed's debt-collection flow, driven step by step: what is admitted and refused at
//! each point, with the exact reasons.

use reel_flow::{Denial, FlowExplanation, Mode, Monitor, Verdict};
use serde_json::json;

use crate::debt_collection;

fn not_allowed(tool: &str, active: &[&str]) -> Result<(), Denial> {
    Err(Denial::NotAllowed {
        tool: tool.into(),
        active: active.iter().map(|s| s.to_string()).collect(),
    })
}

fn forbidden() -> Result<(), Denial> {
    Err(Denial::Never {
        tool: "charge_card".into(),
        until: "is_true(ptp_confirmed)".into(),
    })
}

#[test]
fn the_seed_flow_admits_tools_step_by_step() {
    let flow = debt_collection().compile_with_tools(&[
        "lookup_account",
        "lookup_balance",
        "payment_plans",
        "charge_card",
    ]);
    let mut monitor = Monitor::new(flow.unwrap(), Mode::Govern);

    // 1. The call opens: only identity verification.
    assert_eq!(monitor.active(), ["verify"]);
    assert_eq!(monitor.admit("lookup_account"), Ok(()));
    assert_eq!(
        monitor.admit("lookup_balance"),
        not_allowed("lookup_balance", &["verify"])
    );
    assert_eq!(monitor.admit("charge_card"), forbidden());
    assert_eq!(
        monitor.explain(),
        FlowExplanation {
            active: vec!["verify".into()],
            done: vec![],
            blocked_tools: [
                (
                    "charge_card",
                    "\"charge_card\" is forbidden until is_true(ptp_confirmed)"
                ),
                (
                    "lookup_balance",
                    "\"lookup_balance\" is not allowed by any active step (active: verify)"
                ),
                (
                    "payment_plans",
                    "\"payment_plans\" is not allowed by any active step (active: verify)"
                ),
            ]
            .into_iter()
            .map(|(t, r)| (t.to_string(), r.to_string()))
            .collect(),
            missing_requirements: vec!["close".into()],
            complete: false,
        }
    );
    assert_eq!(
        monitor
            .postures()
            .iter()
            .map(|p| p.text.as_str())
            .collect::<Vec<_>>(),
        ["Verify the caller's identity before anything else."]
    );

    // 2. Verified: the disclosure, and no tool at all.
    monitor.set_state("identity_verified", json!(true));
    assert_eq!(monitor.active(), ["disclose"]);
    assert_eq!(
        monitor.admit("lookup_account"),
        not_allowed("lookup_account", &["disclose"])
    );

    // 3. Disclosed: negotiation with its two tools.
    monitor.set_state("disclosure_given", json!(true));
    assert_eq!(monitor.active(), ["negotiate"]);
    assert_eq!(monitor.admit("lookup_balance"), Ok(()));
    assert_eq!(monitor.admit("payment_plans"), Ok(()));
    assert_eq!(monitor.admit("charge_card"), forbidden());

    // 4. A promise to pay captured: payment is active, close (terminal) latches done and
    //    the flow is complete; the card still waits for the confirmation.
    monitor.set_state("ptp_amount", json!(120));
    assert_eq!(
        monitor.active(),
        ["negotiate"],
        "one of two slots is not a capture"
    );
    monitor.set_state("ptp_date", json!("2026-12-01"));
    assert_eq!(monitor.active(), ["take_payment"]);
    assert_eq!(monitor.verdict("close"), Some(Verdict::Done));
    assert!(monitor.is_complete());
    assert_eq!(monitor.admit("charge_card"), forbidden());
    assert_eq!(
        monitor.admit("payment_plans"),
        not_allowed("payment_plans", &["take_payment"])
    );

    // 5. Confirmed: one charge; a second, while the first runs or after, is refused.
    monitor.set_state("ptp_confirmed", json!(true));
    assert_eq!(monitor.call(31, Some("c-1"), "charge_card"), Ok(()));
    let spent = Err(Denial::OnceSpent {
        tool: "charge_card".into(),
        seq: 31,
    });
    assert_eq!(monitor.admit("charge_card"), spent);
    monitor.returned("c-1", true);
    assert_eq!(monitor.verdict("take_payment"), Some(Verdict::Done));
    assert_eq!(monitor.call(40, Some("c-2"), "charge_card"), spent);
    assert_eq!(monitor.violations().len(), 1);
    assert_eq!(
        serde_json::to_value(&monitor.violations()[0]).unwrap(),
        json!({"seq": 40, "call_id": "c-2", "tool": "charge_card",
               "denial": {"kind": "once_spent", "tool": "charge_card", "seq": 31},
               "reason": "\"charge_card\" may run once and already ran (frame 31)"})
    );
    assert_eq!(
        monitor.verdicts(),
        ["verify", "disclose", "negotiate", "take_payment", "close"]
            .map(|s| (s.to_string(), Verdict::Done))
    );
    assert_eq!(
        monitor.published(),
        [
            (
                "flow:done",
                json!(["verify", "disclose", "negotiate", "take_payment", "close"])
            ),
            ("flow:active", json!([])),
        ]
    );
}

#[test]
fn a_failed_charge_does_not_spend_the_once() {
    let mut monitor = Monitor::new(debt_collection().compile().unwrap(), Mode::Govern);
    for key in ["identity_verified", "disclosure_given", "ptp_confirmed"] {
        monitor.set_state(key, json!(true));
    }
    monitor.set_state("ptp_amount", json!(50));
    monitor.set_state("ptp_date", json!("2026-12-01"));
    assert_eq!(monitor.call(7, Some("a"), "charge_card"), Ok(()));
    monitor.returned("a", false);
    assert_eq!(monitor.verdict("take_payment"), Some(Verdict::Active));
    assert_eq!(monitor.call(9, Some("b"), "charge_card"), Ok(()));
    monitor.returned("b", true);
    assert_eq!(monitor.verdict("take_payment"), Some(Verdict::Done));
    assert_eq!(monitor.violations(), []);
}
