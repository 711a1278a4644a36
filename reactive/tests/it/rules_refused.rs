//! Rules that cannot run are refused when they are checked, before any session starts,
//! with a text that names what to fix.

use std::time::Duration;

use reel_protocol::SessionEvent;
use reel_reactive::{ComputedRegistry, ReactiveConfig, ReactiveError, TemporalRegistry};

#[test]
fn computed_values_in_a_cycle_are_refused_with_the_cycle_named() {
    let cyclic = ReactiveConfig::new()
        .computed("fine", &["app:x"], |_| None)
        .computed("a", &["derived:b"], |_| None)
        .computed("b", &["derived:c", "derived:fine"], |_| None)
        .computed("c", &["derived:a"], |_| None);
    let error = cyclic.build().unwrap_err();
    assert_eq!(
        error,
        ReactiveError::Cycle {
            path: vec!["a".into(), "b".into(), "c".into(), "a".into()]
        }
    );
    assert_eq!(
        error.to_string(),
        "computed values depend on each other in a cycle: a -> b -> c -> a (each depends on \
         the next)"
    );
}

#[test]
fn names_used_twice_and_zero_counts_are_refused() {
    let twice = ReactiveConfig::new()
        .computed("total", &[], |_| None)
        .computed("total", &[], |_| None);
    assert_eq!(
        twice.build().unwrap_err().to_string(),
        "computed value `total` is registered twice; names must be unique"
    );
    let patterns = TemporalRegistry::new()
        .when_turns("stuck", |_| true, 2, |_, _| async {})
        .when_turns("stuck", |_| true, 3, |_, _| async {});
    assert_eq!(
        ReactiveConfig::new()
            .temporal(patterns)
            .build()
            .unwrap_err(),
        ReactiveError::DuplicateTemporal {
            name: "stuck".into()
        }
    );
    let never = TemporalRegistry::new().when_rate(
        "barge_ins",
        |e| matches!(e, SessionEvent::Interrupted),
        0,
        Duration::from_secs(30),
        |_, _| async {},
    );
    assert_eq!(
        ReactiveConfig::new().temporal(never).build().unwrap_err(),
        ReactiveError::ZeroCount {
            name: "barge_ins".into()
        }
    );
    // A registry on its own tells its order, or the same error.
    let chain = ComputedRegistry::new()
        .computed("with_tax", &["derived:total"], |_| None)
        .computed("total", &["app:price"], |_| None);
    assert_eq!(chain.order().unwrap(), ["total", "with_tax"]);
}
