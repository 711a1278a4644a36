//! [`Predicate`]: when a watcher fires, judged on a key's value before and after a cycle.

use serde_json::Value;

/// What a change of a watched key must look like for its watcher to fire. It is judged on
/// the key's value before the cycle's first change (`old`) and after its last (`new`);
/// `null` is absence (the state never holds `null`).
///
/// ```
/// use reel_actors::reactive::Predicate;
/// use serde_json::{Value, json};
///
/// assert!(Predicate::CrossedAbove(10.0).matches(&json!(9), &json!(10)));
/// assert!(!Predicate::CrossedAbove(10.0).matches(&Value::Null, &json!(12))); // not numeric
/// assert!(Predicate::BecameTrue.matches(&Value::Null, &json!(true)));
/// assert!(Predicate::BecameFalse.matches(&json!(true), &Value::Null)); // removed
/// assert!(!Predicate::Changed.matches(&json!("a"), &json!("a"))); // a round trip
/// ```
#[derive(Debug, Clone, PartialEq)]
pub enum Predicate {
    /// The value differs (the default). A key changed and changed back within one cycle
    /// has not changed.
    Changed,
    /// The value became this one (and was not it before). `ChangedTo(Value::Null)` fires
    /// when the key is removed. Equality is JSON equality: `1` and `1.0` differ.
    ChangedTo(Value),
    /// Both values are numbers and `old < threshold <= new`.
    CrossedAbove(f64),
    /// Both values are numbers and `old >= threshold > new`.
    CrossedBelow(f64),
    /// The value is `true` and was not (absent, `false`, or anything else) before.
    BecameTrue,
    /// The value was `true` and is not any more (`false`, removed, or anything else).
    BecameFalse,
}

impl Predicate {
    /// Whether a change from `old` to `new` satisfies the predicate.
    pub fn matches(&self, old: &Value, new: &Value) -> bool {
        const TRUE: Value = Value::Bool(true);
        match self {
            Predicate::Changed => old != new,
            Predicate::ChangedTo(target) => new == target && old != target,
            Predicate::CrossedAbove(threshold) => {
                numbers(old, new).is_some_and(|(old, new)| old < *threshold && *threshold <= new)
            }
            Predicate::CrossedBelow(threshold) => {
                numbers(old, new).is_some_and(|(old, new)| old >= *threshold && *threshold > new)
            }
            Predicate::BecameTrue => *new == TRUE && *old != TRUE,
            Predicate::BecameFalse => *old == TRUE && *new != TRUE,
        }
    }
}

fn numbers(old: &Value, new: &Value) -> Option<(f64, f64)> {
    Some((old.as_f64()?, new.as_f64()?))
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    const NULL: Value = Value::Null;

    #[test]
    fn crossed_above_is_old_below_and_new_at_or_above() {
        let p = Predicate::CrossedAbove(10.0);
        assert!(p.matches(&json!(9.5), &json!(10)));
        assert!(p.matches(&json!(-3), &json!(40)));
        assert!(!p.matches(&json!(10), &json!(11)), "was not below");
        assert!(!p.matches(&json!(5), &json!(9.99)), "did not reach it");
        assert!(!p.matches(&NULL, &json!(11)), "absent is not a number");
        assert!(
            !p.matches(&json!("5"), &json!(11)),
            "a string is not a number"
        );
    }

    #[test]
    fn crossed_below_is_old_at_or_above_and_new_below() {
        let p = Predicate::CrossedBelow(10.0);
        assert!(p.matches(&json!(10), &json!(9)));
        assert!(p.matches(&json!(15), &json!(-1)));
        assert!(!p.matches(&json!(9), &json!(8)), "was already below");
        assert!(!p.matches(&json!(12), &json!(10)), "10 is not below 10");
        assert!(!p.matches(&json!(12), &NULL), "removal is not a number");
    }

    #[test]
    fn became_true_and_false() {
        assert!(Predicate::BecameTrue.matches(&NULL, &json!(true)));
        assert!(Predicate::BecameTrue.matches(&json!(false), &json!(true)));
        assert!(Predicate::BecameTrue.matches(&json!("yes"), &json!(true)));
        assert!(!Predicate::BecameTrue.matches(&json!(true), &json!(true)));
        assert!(!Predicate::BecameTrue.matches(&NULL, &json!(1)));
        assert!(Predicate::BecameFalse.matches(&json!(true), &json!(false)));
        assert!(Predicate::BecameFalse.matches(&json!(true), &NULL));
        assert!(Predicate::BecameFalse.matches(&json!(true), &json!(0)));
        assert!(
            !Predicate::BecameFalse.matches(&NULL, &json!(false)),
            "was not true"
        );
        assert!(!Predicate::BecameFalse.matches(&json!(false), &NULL));
    }

    #[test]
    fn changed_and_changed_to() {
        assert!(Predicate::Changed.matches(&NULL, &json!(1)));
        assert!(Predicate::Changed.matches(&json!(1), &NULL));
        assert!(!Predicate::Changed.matches(&json!({"a": 1}), &json!({"a": 1})));
        let gold = Predicate::ChangedTo(json!("gold"));
        assert!(gold.matches(&json!("silver"), &json!("gold")));
        assert!(gold.matches(&NULL, &json!("gold")));
        assert!(!gold.matches(&json!("gold"), &json!("gold")));
        assert!(!gold.matches(&json!("gold"), &json!("silver")));
        assert!(
            Predicate::ChangedTo(NULL).matches(&json!(3), &NULL),
            "removal"
        );
    }
}
