//! Mistakes among watchers, computed values and temporal patterns are reported before
//! anything connects, with a text that says what to fix.

use std::time::Duration;

use reel_fluent::{BuildError, ConnectError, Live, LiveBuilder};
use reel_protocol::ApiEndpoint;
use reel_reactive::{ReactiveError, Watcher};

fn error_of(builder: LiveBuilder) -> BuildError {
    match builder.validate() {
        Ok(()) => panic!("the chain was accepted"),
        Err(error) => error,
    }
}

fn nothing() -> Option<serde_json::Value> {
    None
}

#[test]
fn a_watcher_on_a_computed_value_that_is_not_defined() {
    let builder = Live::builder()
        .computed("risk", &["app:failed_logins"], |_| nothing())
        .watch("derived:risk_score")
        .crossed_above(0.8)
        .then(|_, _, _| async {});
    let error = error_of(builder);
    assert!(
        matches!(&error, BuildError::WatchesUnknownComputed { key, defined, extracted }
            if key == "derived:risk_score" && defined == &["risk"] && extracted.is_empty()),
        "{error:?}"
    );
    assert_eq!(
        error.to_string(),
        "a watcher watches `derived:risk_score`, but no computed value `risk_score` is defined; \
         defined computed values: [\"risk\"]; add `.computed(\"risk_score\", ..)` or watch another key"
    );
}

#[test]
fn a_watcher_given_whole_is_checked_too() {
    let watcher = Watcher::on("derived:total").then(|_, _, _| async {});
    assert_eq!(
        error_of(Live::builder().watcher(watcher)).to_string(),
        "a watcher watches `derived:total`, but no computed value `total` is defined; \
         defined computed values: []; add `.computed(\"total\", ..)` or watch another key"
    );
}

#[test]
fn a_computed_value_depending_on_one_that_is_not_defined() {
    let builder = Live::builder()
        .computed("total", &["app:basket"], |_| nothing())
        .computed("with_tax", &["app:rate", "derived:subtotal"], |_| nothing());
    assert_eq!(
        error_of(builder).to_string(),
        "computed value `with_tax` depends on `derived:subtotal`, but no computed value \
         `subtotal` is defined; defined computed values: [\"total\", \"with_tax\"]; add \
         `.computed(\"subtotal\", ..)` or fix the dependency"
    );
}

#[test]
fn computed_values_in_a_cycle() {
    let builder = Live::builder()
        .computed("a", &["derived:c"], |_| nothing())
        .computed("b", &["derived:a"], |_| nothing())
        .computed("c", &["derived:b"], |_| nothing());
    let error = error_of(builder);
    assert!(
        matches!(&error, BuildError::Reactive(ReactiveError::Cycle { path })
            if path == &["a", "c", "b", "a"]),
        "{error:?}"
    );
    assert_eq!(
        error.to_string(),
        "invalid reactive rules: computed values depend on each other in a cycle: \
         a -> c -> b -> a (each depends on the next)"
    );
}

#[test]
fn names_used_twice_and_a_count_of_zero() {
    let computed = Live::builder()
        .computed("total", &[], |_| nothing())
        .computed("total", &[], |_| nothing());
    assert_eq!(
        error_of(computed).to_string(),
        "invalid reactive rules: computed value `total` is registered twice; names must be unique"
    );
    let temporal = Live::builder()
        .when_turns("stuck", |_| true, 3, |_, _| async {})
        .when_sustained("stuck", |_| true, Duration::from_secs(5), |_, _| async {});
    assert_eq!(
        error_of(temporal).to_string(),
        "invalid reactive rules: temporal pattern `stuck` is registered twice; names must be unique"
    );
    let zero = Live::builder().when_rate(
        "barge_ins",
        |_| true,
        0,
        Duration::from_secs(30),
        |_, _| async {},
    );
    assert_eq!(
        error_of(zero).to_string(),
        "invalid reactive rules: temporal pattern `barge_ins` has a count of 0; it needs at least 1"
    );
}

#[test]
fn a_threshold_that_can_never_be_crossed() {
    let nan = Live::builder()
        .watch("app:score")
        .crossed_above(f64::NAN)
        .then(|_, _, _| async {});
    assert_eq!(
        error_of(nan).to_string(),
        "the watcher on `app:score` has threshold NaN, which can never be crossed; give a finite number"
    );
    let infinite = Live::builder()
        .watch("app:balance")
        .crossed_below(f64::NEG_INFINITY)
        .then(|_, _, _| async {});
    assert_eq!(
        error_of(infinite).to_string(),
        "the watcher on `app:balance` has threshold -inf, which can never be crossed; give a finite number"
    );
}

#[test]
fn watchers_on_defined_values_and_plain_keys_are_fine() {
    let builder = Live::builder()
        .watch("derived:total")
        .crossed_above(100.0)
        .then(|_, _, _| async {})
        .watch("app:tier")
        .changed_to("gold")
        .then(|_, _, _| async {})
        .watch("session:active_phase")
        .then(|_, _, _| async {})
        // Declared after the watcher that reads it: the chain is checked as a whole.
        .computed("total", &["app:basket"], |_| nothing());
    assert!(builder.validate().is_ok());
}

#[tokio::test]
async fn an_invalid_rule_connects_nowhere() {
    let builder = Live::builder()
        .computed("a", &["derived:a"], |_| nothing())
        .record_wire(std::env::temp_dir().join("reel-fluent-never-written.wire.jsonl"));
    // Nothing listens here; an attempt to connect would fail differently.
    let endpoint = ApiEndpoint::google_ai("").with_base_url("ws://127.0.0.1:9");
    let error = builder.connect(endpoint).await.unwrap_err();
    assert!(
        matches!(
            error,
            ConnectError::Build(BuildError::Reactive(ReactiveError::Cycle { .. }))
        ),
        "{error:?}"
    );
    assert!(
        !std::env::temp_dir()
            .join("reel-fluent-never-written.wire.jsonl")
            .exists()
    );
}
