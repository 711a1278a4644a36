//! [`FieldError`]: one field of a frame that could not be read, while the rest of the frame
//! could.

use std::fmt;

/// A field of a frame that does not hold what the protocol puts there: a string where a
/// number goes, base64 text that is not base64, an array where an object goes.
///
/// Reading a frame with such a field keeps everything else it carries (see
/// [`decode_server_partial`](crate::decode_server_partial)); the field itself reads as
/// absent (inside an array of messages, the item holding it is left out) and is reported
/// with this error. It names the field by its JSON path, says what
/// the field holds when it is valid, and what was there instead, without quoting any
/// string from the frame (a transcript or a payload never reaches an error).
///
/// ```
/// use reel_protocol::{FieldError, Found};
///
/// let error = FieldError {
///     path: "serverContent.turnComplete".into(),
///     expected: "a boolean",
///     found: Found::String { chars: 3 },
/// };
/// assert_eq!(
///     error.to_string(),
///     "field `serverContent.turnComplete`: expected a boolean, found a string of 3 characters"
/// );
/// ```
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("field `{path}`: expected {expected}, found {found}")]
pub struct FieldError {
    /// JSON path of the field, with the keys as the frame spells them, e.g.
    /// `serverContent.modelTurn.parts[0].inlineData.data`.
    pub path: String,
    /// What the field holds when it is valid: `a boolean`, `base64 text`, `a JSON object
    /// (Blob)`, …
    pub expected: &'static str,
    /// What the frame had there.
    pub found: Found,
}

/// What a frame had where a field did not read: the JSON kind of the value, with its size
/// or, for a number or a boolean, the value itself. String contents are never kept.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Found {
    /// `null` (only reported inside arrays: a `null` field reads as absent).
    Null,
    /// A boolean, and which.
    Boolean(bool),
    /// A number, as the frame writes it.
    Number(String),
    /// A string of this many characters.
    String {
        /// Its length in characters.
        chars: usize,
    },
    /// An array of this many items.
    Array {
        /// Its length in items.
        len: usize,
    },
    /// An object with this many keys.
    Object {
        /// Its number of keys.
        keys: usize,
    },
    /// The field a second time, under another of its spellings (`turnComplete` and
    /// `turn_complete`): the first one is kept.
    Duplicate,
}

impl Found {
    /// What `value` is, as a [`Found`].
    pub fn of(value: &serde_json::Value) -> Found {
        use serde_json::Value;
        match value {
            Value::Null => Found::Null,
            Value::Bool(b) => Found::Boolean(*b),
            Value::Number(n) => Found::Number(n.to_string()),
            Value::String(s) => Found::String {
                chars: s.chars().count(),
            },
            Value::Array(items) => Found::Array { len: items.len() },
            Value::Object(map) => Found::Object { keys: map.len() },
        }
    }
}

impl fmt::Display for Found {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let plural = |n: &usize| if *n == 1 { "" } else { "s" };
        match self {
            Found::Null => f.write_str("null"),
            Found::Boolean(b) => write!(f, "a boolean ({b})"),
            Found::Number(n) => write!(f, "a number ({n})"),
            Found::String { chars } => write!(f, "a string of {chars} character{}", plural(chars)),
            Found::Array { len } => write!(f, "an array of {len} item{}", plural(len)),
            Found::Object { keys } => write!(f, "an object with {keys} key{}", plural(keys)),
            Found::Duplicate => f.write_str("the field a second time"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn found_says_the_kind_and_size_without_string_contents() {
        let cases = [
            (json!(null), "null"),
            (json!(true), "a boolean (true)"),
            (json!(1.5), "a number (1.5)"),
            (json!("secret"), "a string of 6 characters"),
            (json!("é"), "a string of 1 character"),
            (json!([1, 2]), "an array of 2 items"),
            (json!({"a": 1}), "an object with 1 key"),
        ];
        for (value, text) in cases {
            assert_eq!(Found::of(&value).to_string(), text, "{value}");
        }
        assert_eq!(Found::Duplicate.to_string(), "the field a second time");
    }
}
