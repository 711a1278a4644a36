//! [`Predicate`]: when a watcher fires, judged on a key's value before and after a cycle.

use serde_json::Value;

/// What a change of a watched key must look like for its watcher to fire. It is judged on
/// the key's value before the cycle's first change (`old`) and after its last (`new`);
/// `null` is absence (the state never holds `null`).
///
/// # Crossings and absence
///
/// A threshold splits the numbers into two sides: at or above it, and below it. A
/// crossing is a value that *arrives* on a side it was not on before:
///
/// - **absent → present**: an absent key is on neither side, so its first value crosses
///   into the side it lands on. With a threshold of 3, absent → 5 is a
///   [`CrossedAbove`](Predicate::CrossedAbove) and absent → 1 a
///   [`CrossedBelow`](Predicate::CrossedBelow); absent → 3 is `CrossedAbove` (at the
///   threshold is above it). This is what makes a watcher on an extracted field fire on
///   the first extraction.
/// - **present → absent**: a removed key arrives on no side: no crossing fires. When it
///   comes back, its first value is a crossing again (as from absent).
/// - **present → present**: both must be numbers; from below to at-or-above is
///   `CrossedAbove`, from at-or-above to below is `CrossedBelow`. A value that stays on
///   its side crosses nothing.
/// - A value that is present but not a number (a string, a bool, an object) is on no
///   side and never crosses, from or to: `"5"` → 11 is not a crossing.
///
/// ```
/// use reel_reactive::Predicate;
/// use serde_json::{Value, json};
///
/// assert!(Predicate::CrossedAbove(10.0).matches(&json!(9), &json!(10)));
/// assert!(Predicate::CrossedAbove(3.0).matches(&Value::Null, &json!(5))); // first value
/// assert!(!Predicate::CrossedAbove(3.0).matches(&Value::Null, &json!(1)));
/// assert!(Predicate::CrossedBelow(3.0).matches(&Value::Null, &json!(1)));
/// assert!(!Predicate::CrossedBelow(3.0).matches(&json!(5), &Value::Null)); // removed
/// assert!(!Predicate::CrossedAbove(10.0).matches(&json!("5"), &json!(12))); // not numeric
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
    /// `new` is a number at or above the threshold, and `old` was a number below it or
    /// absent (see [crossings and absence](Predicate#crossings-and-absence)).
    CrossedAbove(f64),
    /// `new` is a number below the threshold, and `old` was a number at or above it or
    /// absent (see [crossings and absence](Predicate#crossings-and-absence)).
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
                side(new, *threshold) == Some(Side::Above)
                    && side(old, *threshold) != Some(Side::Above)
                    && !off_the_number_line(old)
            }
            Predicate::CrossedBelow(threshold) => {
                side(new, *threshold) == Some(Side::Below)
                    && side(old, *threshold) != Some(Side::Below)
                    && !off_the_number_line(old)
            }
            Predicate::BecameTrue => *new == TRUE && *old != TRUE,
            Predicate::BecameFalse => *old == TRUE && *new != TRUE,
        }
    }
}

/// A side of a threshold.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Side {
    /// At or above it.
    Above,
    /// Below it.
    Below,
}

/// The side of `threshold` a value is on; `None` for no side: absent, or not a number.
fn side(value: &Value, threshold: f64) -> Option<Side> {
    let number = value.as_f64()?;
    Some(if number >= threshold {
        Side::Above
    } else {
        Side::Below
    })
}

/// A value present but not a number: nothing crosses from it.
fn off_the_number_line(value: &Value) -> bool {
    !value.is_null() && !value.is_number()
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
        assert!(
            !p.matches(&json!("5"), &json!(11)),
            "a string is not a number"
        );
        assert!(!p.matches(&json!(5), &json!("11")), "to a string");
        assert!(!p.matches(&json!(5), &json!(true)), "to a bool");
    }

    /// Issue 29: a key absent before is on neither side, so its first value crosses into
    /// the side it lands on; a removal crosses nothing.
    #[test]
    fn absent_to_present_crosses_into_the_side_it_lands_on_and_removal_crosses_nothing() {
        let above = Predicate::CrossedAbove(3.0);
        let below = Predicate::CrossedBelow(3.0);
        let cases = [
            // (old, new, crossed_above, crossed_below)
            (NULL, json!(5), true, false),
            (NULL, json!(3), true, false),
            (NULL, json!(1), false, true),
            (NULL, json!(-2.5), false, true),
            (json!(5), NULL, false, false),
            (json!(1), NULL, false, false),
            (NULL, json!("5"), false, false),
            (NULL, NULL, false, false),
        ];
        let judged: Vec<_> = cases
            .iter()
            .map(|(old, new, _, _)| {
                (
                    old.clone(),
                    new.clone(),
                    above.matches(old, new),
                    below.matches(old, new),
                )
            })
            .collect();
        assert_eq!(judged, cases);
    }

    #[test]
    fn crossed_below_is_old_at_or_above_and_new_below() {
        let p = Predicate::CrossedBelow(10.0);
        assert!(p.matches(&json!(10), &json!(9)));
        assert!(p.matches(&json!(15), &json!(-1)));
        assert!(!p.matches(&json!(9), &json!(8)), "was already below");
        assert!(!p.matches(&json!(12), &json!(10)), "10 is not below 10");
        assert!(!p.matches(&json!(12), &NULL), "removal crosses nothing");
        assert!(
            !p.matches(&json!("12"), &json!(9)),
            "a string is not a number"
        );
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
