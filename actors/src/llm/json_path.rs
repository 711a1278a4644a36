//! Paths into a request's JSON, as match rules name them and mismatches report them.
//!
//! A path is keys joined by dots, each optionally followed by indices in brackets:
//! `generationConfig.seed`, `contents[0].parts[*].text`, `metadata.*`. `*` as a key is every
//! key of an object; `[*]` is every element of an array. Keys holding `.`, `[` or `]` cannot
//! be named. A mismatch reports a concrete path in the same syntax (`contents[1].role`), and
//! `.` for the whole request.

use std::fmt;

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::Value;

/// A parsed path with wildcards, naming zero or more places in a JSON value.
///
/// ```
/// use reel_actors::llm::JsonPath;
///
/// let path: JsonPath = "contents[*].parts[0].text".parse()?;
/// assert_eq!(path.to_string(), "contents[*].parts[0].text");
/// assert!("contents..text".parse::<JsonPath>().is_err());
/// # Ok::<_, reel_actors::llm::JsonPathError>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JsonPath {
    text: String,
    steps: Vec<Step>,
}

/// One step of a [`JsonPath`].
#[derive(Debug, Clone, PartialEq, Eq)]
enum Step {
    Key(String),
    AnyKey,
    Index(usize),
    AnyIndex,
}

/// A text that is not a [`JsonPath`].
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("`{path}` is not a JSON path: {problem}")]
pub struct JsonPathError {
    /// The text as given.
    pub path: String,
    /// What is wrong with it.
    pub problem: JsonPathProblem,
}

/// What is wrong with a [`JsonPath`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum JsonPathProblem {
    /// The path is empty.
    #[error("it is empty")]
    Empty,
    /// A key between dots is empty (`a..b`, a leading or trailing dot).
    #[error("a key is empty")]
    EmptyKey,
    /// A bracket that does not hold a number or `*`, or is not closed.
    #[error("a bracket must hold an index or `*` and be closed")]
    BadIndex,
}

impl std::str::FromStr for JsonPath {
    type Err = JsonPathError;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        let error = |problem| JsonPathError {
            path: text.to_owned(),
            problem,
        };
        if text.is_empty() {
            return Err(error(JsonPathProblem::Empty));
        }
        let mut steps = Vec::new();
        let mut rest = text;
        let mut first = true;
        while !rest.is_empty() || first {
            if !first && !rest.starts_with('[') {
                // After a step: a dot and a key, or a bracket.
                rest = rest
                    .strip_prefix('.')
                    .ok_or(error(JsonPathProblem::EmptyKey))?;
            }
            if let Some(inner) = rest.strip_prefix('[') {
                let (index, after) = inner
                    .split_once(']')
                    .ok_or(error(JsonPathProblem::BadIndex))?;
                steps.push(match index {
                    "*" => Step::AnyIndex,
                    digits => Step::Index(
                        digits
                            .parse()
                            .map_err(|_| error(JsonPathProblem::BadIndex))?,
                    ),
                });
                rest = after;
            } else {
                let end = rest.find(['.', '[', ']']).unwrap_or(rest.len());
                let (key, after) = rest.split_at(end);
                if key.is_empty() {
                    return Err(error(JsonPathProblem::EmptyKey));
                }
                if after.starts_with(']') {
                    return Err(error(JsonPathProblem::BadIndex));
                }
                steps.push(match key {
                    "*" => Step::AnyKey,
                    key => Step::Key(key.to_owned()),
                });
                rest = after;
            }
            first = false;
        }
        Ok(JsonPath {
            text: text.to_owned(),
            steps,
        })
    }
}

impl JsonPath {
    /// Removes what the path names from `value`: a named object member is removed, a named
    /// array element becomes `null` (so the array keeps its length). Places the path does
    /// not reach are left alone.
    pub(crate) fn remove_from(&self, value: &mut Value) {
        remove(value, &self.steps);
    }
}

fn remove(value: &mut Value, steps: &[Step]) {
    let Some((step, rest)) = steps.split_first() else {
        return;
    };
    if rest.is_empty() {
        match (step, value) {
            (Step::Key(key), Value::Object(map)) => {
                map.shift_remove(key);
            }
            (Step::AnyKey, Value::Object(map)) => map.clear(),
            (Step::Index(i), Value::Array(items)) => {
                if let Some(item) = items.get_mut(*i) {
                    *item = Value::Null;
                }
            }
            (Step::AnyIndex, Value::Array(items)) => items.fill(Value::Null),
            _ => {}
        }
        return;
    }
    match (step, value) {
        (Step::Key(key), Value::Object(map)) => {
            if let Some(inner) = map.get_mut(key) {
                remove(inner, rest);
            }
        }
        (Step::AnyKey, Value::Object(map)) => {
            map.values_mut().for_each(|inner| remove(inner, rest));
        }
        (Step::Index(i), Value::Array(items)) => {
            if let Some(inner) = items.get_mut(*i) {
                remove(inner, rest);
            }
        }
        (Step::AnyIndex, Value::Array(items)) => {
            items.iter_mut().for_each(|inner| remove(inner, rest));
        }
        _ => {}
    }
}

impl fmt::Display for JsonPath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

impl Serialize for JsonPath {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(&self.text)
    }
}

impl<'de> Deserialize<'de> for JsonPath {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let text = String::deserialize(deserializer)?;
        text.parse().map_err(serde::de::Error::custom)
    }
}

/// One step of a concrete place in a JSON value (no wildcards), as a mismatch names it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Place {
    Key(String),
    Index(usize),
}

/// `contents[0].parts[1].text`, or `.` for the whole value.
pub(crate) fn display_places(places: &[Place]) -> String {
    if places.is_empty() {
        return ".".to_owned();
    }
    let mut text = String::new();
    for place in places {
        match place {
            Place::Key(key) => {
                if !text.is_empty() {
                    text.push('.');
                }
                text.push_str(key);
            }
            Place::Index(i) => text.push_str(&format!("[{i}]")),
        }
    }
    text
}

/// The value at `places` in `value`, if there is one.
pub(crate) fn value_at<'v>(value: &'v Value, places: &[Place]) -> Option<&'v Value> {
    places.iter().try_fold(value, |value, place| match place {
        Place::Key(key) => value.get(key),
        Place::Index(i) => value.get(*i),
    })
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn path(text: &str) -> JsonPath {
        text.parse().unwrap()
    }

    #[test]
    fn paths_parse_into_steps() {
        assert_eq!(
            path("contents[*].parts[0].text").steps,
            [
                Step::Key("contents".into()),
                Step::AnyIndex,
                Step::Key("parts".into()),
                Step::Index(0),
                Step::Key("text".into()),
            ]
        );
        assert_eq!(path("a.*").steps, [Step::Key("a".into()), Step::AnyKey]);
        assert_eq!(path("[2]").steps, [Step::Index(2)]);
        assert_eq!(path("a[1][*]").steps.len(), 3);
    }

    #[test]
    fn malformed_paths_say_what_is_wrong() {
        for (text, problem) in [
            ("", JsonPathProblem::Empty),
            ("a..b", JsonPathProblem::EmptyKey),
            (".a", JsonPathProblem::EmptyKey),
            ("a.", JsonPathProblem::EmptyKey),
            ("a[x]", JsonPathProblem::BadIndex),
            ("a[1", JsonPathProblem::BadIndex),
            ("a]", JsonPathProblem::BadIndex),
            ("a[-1]", JsonPathProblem::BadIndex),
            ("a[0]b", JsonPathProblem::EmptyKey),
        ] {
            assert_eq!(
                text.parse::<JsonPath>(),
                Err(JsonPathError {
                    path: text.to_owned(),
                    problem
                }),
                "{text}"
            );
        }
    }

    #[test]
    fn removing_drops_members_and_nulls_elements() {
        let mut value = json!({
            "a": {"id": 1, "keep": 2},
            "list": [{"id": 3, "x": 1}, {"id": 4}],
            "other": 5
        });
        path("a.id").remove_from(&mut value);
        path("list[*].id").remove_from(&mut value);
        path("list[1]").remove_from(&mut value);
        path("missing.deeper").remove_from(&mut value);
        path("other[0]").remove_from(&mut value);
        assert_eq!(
            value,
            json!({"a": {"keep": 2}, "list": [{"x": 1}, null], "other": 5})
        );
    }

    #[test]
    fn places_display_and_find_values() {
        let places = [
            Place::Key("contents".into()),
            Place::Index(1),
            Place::Key("role".into()),
        ];
        assert_eq!(display_places(&places), "contents[1].role");
        assert_eq!(display_places(&[]), ".");
        assert_eq!(display_places(&[Place::Index(0)]), "[0]");
        let value = json!({"contents": [{}, {"role": "user"}]});
        assert_eq!(value_at(&value, &places), Some(&json!("user")));
        assert_eq!(
            value_at(&value, &places[..1]).map(|v| v.is_array()),
            Some(true)
        );
        assert_eq!(value_at(&value, &[Place::Key("nope".into())]), None);
    }
}
