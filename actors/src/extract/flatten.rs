//! Where an extraction's result goes in the state.

use serde_json::Value;

/// The prefix of the flattened fields of an extraction.
pub const DERIVED_PREFIX: &str = crate::state::prefix::DERIVED;

/// The state writes for extractor `name`'s result `value`, in order: the whole value under
/// `name`, then each field of an object that is not `null` under `derived:{field}`, in the
/// object's order. A `null` value writes nothing (nothing was extracted).
///
/// Fields that are `null` are skipped rather than written: `null` removes a key, and a
/// model that does not know a field this turn must not erase what an earlier turn found.
///
/// ```
/// use reel_actors::extract::state_writes;
/// use serde_json::json;
///
/// let writes = state_writes("Debtor", &json!({"mood": "calm", "owes": 120, "name": null}));
/// assert_eq!(
///     writes,
///     [
///         ("Debtor".to_owned(), json!({"mood": "calm", "owes": 120, "name": null})),
///         ("derived:mood".to_owned(), json!("calm")),
///         ("derived:owes".to_owned(), json!(120)),
///     ]
/// );
/// ```
pub fn state_writes(name: &str, value: &Value) -> Vec<(String, Value)> {
    if value.is_null() {
        return Vec::new();
    }
    let mut writes = vec![(name.to_owned(), value.clone())];
    if let Value::Object(fields) = value {
        writes.extend(
            fields
                .iter()
                .filter(|(_, v)| !v.is_null())
                .map(|(field, v)| (format!("{DERIVED_PREFIX}{field}"), v.clone())),
        );
    }
    writes
}
