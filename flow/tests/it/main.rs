//! reel-flow's integration tests, one binary: each file beside this one is a module.

mod debt_collection;
mod diagnostics;
mod files;
mod guards;
mod ordering;
mod scoring;
mod verbs;

/// The seed's debt-collection flow ("Governed Flows", "Define a flow"), verb for verb.
pub fn debt_collection() -> reel_flow::Flow {
    use reel_flow::{Flow, Guard};
    Flow::new()
        .step("verify")
        .posture("Verify the caller's identity before anything else.")
        .allow(["lookup_account"])
        .done(Guard::is_true("identity_verified"))
        .step("disclose")
        .after("verify")
        .posture("Give the required disclosure.")
        .done(Guard::is_true("disclosure_given"))
        .step("negotiate")
        .after("disclose")
        .posture("Negotiate an affordable payment.")
        .allow(["lookup_balance", "payment_plans"])
        .done(Guard::captured(["ptp_amount", "ptp_date"]))
        .step("take_payment")
        .after("negotiate")
        .allow(["charge_card"])
        .done(Guard::called_ok("charge_card"))
        .step("close")
        .after("negotiate")
        .terminal()
        .never("charge_card")
        .until(Guard::is_true("ptp_confirmed"))
        .once("charge_card")
        .require(["close"])
        .build()
        .unwrap()
}
