//! Each guard atom, true and false, and how it is written.

use reel_flow::{Guard, GuardContext};
use serde_json::{Value, json};

fn holds(guard: &Guard, state: Value) -> bool {
    let context = GuardContext {
        state: &state,
        done: &|step| step == "verify",
        called_ok: &|tool| tool == "lookup_account",
    };
    guard.holds(&context)
}

#[test]
fn is_true_wants_exactly_true() {
    let g = Guard::is_true("ok");
    assert!(holds(&g, json!({"ok": true})));
    assert!(!holds(&g, json!({"ok": "true"})));
    assert!(!holds(&g, json!({"ok": 1})));
    assert!(!holds(&g, json!({})));
}

#[test]
fn is_set_wants_present_and_not_null() {
    let g = Guard::is_set("k");
    assert!(holds(&g, json!({"k": false})));
    assert!(holds(&g, json!({"k": ""})));
    assert!(!holds(&g, json!({"k": null})));
    assert!(!holds(&g, json!({})));
}

#[test]
fn eq_compares_json_values() {
    let g = Guard::eq("tier", "gold");
    assert!(holds(&g, json!({"tier": "gold"})));
    assert!(!holds(&g, json!({"tier": "silver"})));
    assert!(holds(&Guard::eq("n", 3), json!({"n": 3})));
    assert!(!holds(&Guard::eq("n", 3), json!({"n": "3"})));
}

#[test]
fn captured_wants_every_key_filled() {
    let g = Guard::captured(["a", "b"]);
    assert!(holds(&g, json!({"a": 1, "b": "x"})));
    assert!(!holds(&g, json!({"a": 1, "b": ""})));
    assert!(!holds(&g, json!({"a": 1, "b": null})));
    assert!(!holds(&g, json!({"a": 1})));
}

#[test]
fn called_ok_done_and_resolved_read_the_marking_and_results() {
    assert!(holds(&Guard::called_ok("lookup_account"), json!({})));
    assert!(!holds(&Guard::called_ok("charge_card"), json!({})));
    assert!(holds(&Guard::done("verify"), json!({})));
    assert!(!holds(&Guard::done("close"), json!({})));
    assert!(holds(
        &Guard::resolved("check"),
        json!({"check:result": {"free": 2}})
    ));
    assert!(!holds(
        &Guard::resolved("check"),
        json!({"check:error": "timeout"})
    ));
}

#[test]
fn all_any_not_combine() {
    let state = json!({"a": true});
    assert!(holds(
        &Guard::all([Guard::is_true("a"), Guard::done("verify")]),
        state.clone()
    ));
    assert!(!holds(
        &Guard::all([Guard::is_true("a"), Guard::is_true("b")]),
        state.clone()
    ));
    assert!(holds(&Guard::all([]), state.clone()));
    assert!(holds(
        &Guard::any([Guard::is_true("b"), Guard::is_true("a")]),
        state.clone()
    ));
    assert!(!holds(&Guard::any([]), state.clone()));
    assert!(holds(&Guard::not(Guard::is_true("b")), state.clone()));
    assert!(!holds(&Guard::not(Guard::is_true("a")), state));
}

#[test]
fn custom_runs_its_code_on_the_state() {
    let g = Guard::custom("over_100", |state| {
        state
            .get("amount")
            .and_then(Value::as_f64)
            .is_some_and(|a| a > 100.0)
    });
    assert!(holds(&g, json!({"amount": 120})));
    assert!(!holds(&g, json!({"amount": 80})));
    assert_eq!(g.to_string(), "custom(over_100)");
}

#[test]
fn guards_print_as_the_verbs_write_them() {
    let g = Guard::all([
        Guard::done("verify"),
        Guard::not(Guard::is_set("app:blocked")),
        Guard::eq("tier", "gold"),
        Guard::captured(["a", "b"]),
    ]);
    assert_eq!(
        g.to_string(),
        "all(done(verify), not(is_set(app:blocked)), eq(tier, \"gold\"), captured(a, b))"
    );
}
