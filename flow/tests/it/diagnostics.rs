//! What `build`, `compile` and `compile_with_tools` refuse, with the exact text.

use reel_flow::{Flow, FlowError, Guard};

fn built(flow: Flow) -> String {
    flow.build().unwrap_err().to_string()
}

fn compiled(flow: Flow) -> String {
    flow.compile().unwrap_err().to_string()
}

fn ok(step: &str) -> Guard {
    Guard::is_true(step)
}

#[test]
fn build_checks_referential_integrity() {
    assert_eq!(
        built(Flow::new().posture("hi").step("a").done(ok("a"))),
        "`posture(..)` was used before any step(..): declare the step first"
    );
    assert_eq!(
        built(Flow::new().once("x")),
        "the flow has no step: declare at least one with step(..)"
    );
    assert_eq!(
        built(Flow::new().step("a").done(ok("a")).step("a").done(ok("b"))),
        "step \"a\" is declared twice: give each step its own name"
    );
    assert_eq!(
        built(Flow::new().step("a").after("verfy").done(ok("a"))),
        "step \"a\" comes after \"verfy\", which is not a step of the flow: declare it or fix the name"
    );
    assert_eq!(
        built(Flow::new().step("a")),
        "step \"a\" has no done(..) guard: it could never complete; add .done(Guard::..) or mark it .terminal()"
    );
    assert_eq!(
        built(Flow::new().step("a").gate(Guard::done("b")).done(ok("a"))),
        "step \"a\" (gate) names step \"b\", which is not a step of the flow: declare it or fix the name"
    );
    assert_eq!(
        built(Flow::new().step("a").done(ok("a")).require(["close"])),
        "require names step \"close\", which is not a step of the flow: declare it or fix the name"
    );
    assert_eq!(
        built(Flow::new().step("a").done(ok("a")).before("a", "z")),
        "before(\"a\", \"z\") names step \"z\", which is not a step of the flow: declare it or fix the name"
    );
    assert_eq!(
        built(Flow::new().step("a").ground("Owed: {balance").done(ok("a"))),
        "step \"a\": ground template \"Owed: {balance\" has a { that is never closed (write {{ for a brace)"
    );
    assert_eq!(
        built(
            Flow::new()
                .step("a")
                .ground("Verified: {v?yes}")
                .done(ok("a"))
        ),
        "step \"a\": ground template \"Verified: {v?yes}\" has {v?yes} without the `:` between its two texts ({key?yes:no})"
    );
}

#[test]
fn build_checks_acyclicity() {
    let flow = Flow::new()
        .step("a")
        .after("c")
        .done(ok("a"))
        .step("b")
        .after("a")
        .done(ok("b"))
        .step("c")
        .after("b")
        .done(ok("c"));
    assert_eq!(
        flow.clone().build().unwrap_err(),
        FlowError::Cycle {
            path: vec!["a".into(), "c".into(), "b".into(), "a".into()]
        }
    );
    assert_eq!(
        built(flow),
        "the steps wait for each other in a cycle: a → c → b → a; remove one after(..) edge"
    );
}

#[test]
fn compile_finds_never_until_on_a_missing_step() {
    let flow = Flow::new()
        .step("verify")
        .done(ok("v"))
        .never("charge_card")
        .until(Guard::done("verifyy"));
    assert!(
        flow.clone().build().is_ok(),
        "build leaves never…until to compile"
    );
    assert_eq!(
        compiled(flow),
        "never(\"charge_card\").until(..) waits for done(\"verifyy\"), which is not a step of the flow: the tool would be forbidden forever; declare the step or fix the name"
    );
}

#[test]
fn compile_finds_before_cycles() {
    let flow = Flow::new()
        .step("a")
        .done(ok("a"))
        .step("b")
        .after("a")
        .done(ok("b"))
        .before("b", "a");
    assert!(flow.clone().build().is_ok());
    assert_eq!(
        compiled(flow),
        "before(..) closes an ordering cycle: a → b → a; every step on it deadlocks; remove one of the edges"
    );
}

#[test]
fn compile_finds_unreachable_steps() {
    let waits_for_itself = Flow::new()
        .step("a")
        .done(ok("a"))
        .step("b")
        .after("a")
        .done(ok("b"))
        .step("c")
        .gate(Guard::all([Guard::is_true("x"), Guard::done("d")]))
        .done(ok("c"))
        .step("d")
        .after("c")
        .done(ok("d"))
        .step("e")
        .after("d")
        .done(ok("e"));
    assert_eq!(
        waits_for_itself.compile().unwrap_err(),
        FlowError::Unreachable {
            step: "c".into(),
            reason: "its gate waits for done(d), which can only happen after the step itself; gate it on an earlier step".into()
        }
    );
    let after_an_unreachable_one = Flow::new()
        .step("receipt")
        .after("pay")
        .done(ok("sent"))
        .step("pay")
        .gate(Guard::called_ok("charge_card"))
        .allow(["charge_card"])
        .done(ok("paid"));
    assert_eq!(
        compiled(after_an_unreachable_one),
        "step \"receipt\" is unreachable: it waits for step \"pay\", which is unreachable"
    );
    let tool_only_later = Flow::new()
        .step("pay")
        .gate(Guard::called_ok("charge_card"))
        .allow(["charge_card"])
        .done(ok("paid"));
    assert_eq!(
        compiled(tool_only_later),
        "step \"pay\" is unreachable: its gate waits for called_ok(charge_card), but only the step itself or steps after it allow \"charge_card\"; allow the tool in an earlier step"
    );
}

#[test]
fn compile_finds_unguarded_commit_tools() {
    let flow = Flow::new()
        .step("pay")
        .allow(["charge_card"])
        .done(Guard::called_ok("charge_card"))
        .commit("charge_card", Guard::not(Guard::is_true("app:blocked")));
    assert_eq!(
        compiled(flow),
        "commit tool \"charge_card\" is effectively unguarded: its until guard not(is_true(app:blocked)) holds before anything has happened; guard it on a fact the conversation must establish"
    );
}

#[test]
fn compile_with_tools_finds_unknown_tools() {
    let flow = crate::debt_collection();
    assert_eq!(
        flow.compile_with_tools(&[
            "lookup_account",
            "lookup_balance",
            "payment_plan",
            "charge_card"
        ])
        .unwrap_err()
        .to_string(),
        "step \"negotiate\" (allow) names tool \"payment_plans\", which is not among the session's tools (charge_card, lookup_account, lookup_balance, payment_plan): fix the name or register the tool"
    );
    let once_typo = Flow::new().step("a").done(ok("a")).once("chrage_card");
    assert_eq!(
        once_typo
            .compile_with_tools(&["charge_card"])
            .unwrap_err()
            .to_string(),
        "once names tool \"chrage_card\", which is not among the session's tools (charge_card): fix the name or register the tool"
    );
}
