//! Differences between two JSON values, by place.

use std::fmt;

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// A frame's payload as JSON, or as a JSON string if it is not JSON: the value a diff of
/// recorded against actual frames compares.
pub fn payload_json(payload: &[u8]) -> Value {
    serde_json::from_slice(payload)
        .unwrap_or_else(|_| Value::String(String::from_utf8_lossy(payload).into_owned()))
}

/// One step of a [`Location`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Place {
    /// A member, by its key.
    Key(String),
    /// An element, by its index.
    Index(usize),
}

/// A concrete place in a JSON value: keys and indices, no wildcards. Displayed in the
/// path syntax of [the module](super) (`contents[1].role`), `$` for the whole value, so a
/// place a report names can be copied into a rule.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Location(pub Vec<Place>);

impl Location {
    /// The value at this place in `value`, if there is one.
    pub fn get<'v>(&self, value: &'v Value) -> Option<&'v Value> {
        self.0.iter().try_fold(value, |value, place| match place {
            Place::Key(key) => value.get(key),
            Place::Index(index) => value.get(*index),
        })
    }
}

impl fmt::Display for Location {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.0.is_empty() {
            return f.write_str("$");
        }
        for (i, place) in self.0.iter().enumerate() {
            match place {
                Place::Key(key) if i == 0 => f.write_str(key)?,
                Place::Key(key) => write!(f, ".{key}")?,
                Place::Index(index) => write!(f, "[{index}]")?,
            }
        }
        Ok(())
    }
}

/// One difference between two JSON values.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PathDiff {
    /// Where, as a [`Location`] displays it (`toolResponse.functionResponses[0].id`; `$`
    /// for the whole value).
    pub path: String,
    /// The expected value there (`None`: absent).
    pub expected: Option<Value>,
    /// The actual value there (`None`: absent).
    pub actual: Option<Value>,
}

/// Every difference between `expected` and `actual`, in document order: the members of
/// `expected` in its order (then members only `actual` has), arrays element by element.
/// Members are matched by key whatever their order; equal values give no difference.
///
/// ```
/// use reel_protocol::json::{PathDiff, json_diff};
/// use serde_json::json;
///
/// let diffs = json_diff(&json!({"a": [1, 2], "b": true}), &json!({"b": true, "a": [1, 3]}));
/// assert_eq!(diffs, [PathDiff { path: "a[1]".into(), expected: Some(json!(2)), actual: Some(json!(3)) }]);
/// ```
pub fn json_diff(expected: &Value, actual: &Value) -> Vec<PathDiff> {
    let mut diffs = Vec::new();
    let mut location = Location::default();
    walk(
        &mut location,
        Some(expected),
        Some(actual),
        &mut |location, e, a| {
            diffs.push(PathDiff {
                path: location.to_string(),
                expected: e.cloned(),
                actual: a.cloned(),
            });
            true
        },
    );
    diffs
}

/// Where the first difference [`json_diff`] would report is, without building the others;
/// `None` when the values are equal.
pub fn first_difference(expected: &Value, actual: &Value) -> Option<Location> {
    let mut location = Location::default();
    let mut first = None;
    walk(
        &mut location,
        Some(expected),
        Some(actual),
        &mut |location, _, _| {
            first = Some(location.clone());
            false
        },
    );
    first
}

/// Told of one difference (where, expected, actual); returns whether to go on.
type Report<'r> = dyn FnMut(&Location, Option<&Value>, Option<&Value>) -> bool + 'r;

/// Visits the differences under `location` in document order. Returns `false` once
/// `report` said to stop.
fn walk(
    location: &mut Location,
    expected: Option<&Value>,
    actual: Option<&Value>,
    report: &mut Report<'_>,
) -> bool {
    match (expected, actual) {
        (Some(Value::Object(e)), Some(Value::Object(a))) => {
            let only_actual = a.iter().filter(|(key, _)| !e.contains_key(*key));
            let members = e
                .iter()
                .map(|(key, value)| (key, Some(value), a.get(key)))
                .chain(only_actual.map(|(key, value)| (key, None, Some(value))));
            for (key, e, a) in members {
                location.0.push(Place::Key(key.clone()));
                let go_on = walk(location, e, a, report);
                location.0.pop();
                if !go_on {
                    return false;
                }
            }
            true
        }
        (Some(Value::Array(e)), Some(Value::Array(a))) => {
            for index in 0..e.len().max(a.len()) {
                location.0.push(Place::Index(index));
                let go_on = walk(location, e.get(index), a.get(index), report);
                location.0.pop();
                if !go_on {
                    return false;
                }
            }
            true
        }
        (e, a) if e == a => true,
        (e, a) => report(location, e, a),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn a_payload_is_its_json_or_its_text_as_a_string() {
        assert_eq!(payload_json(br#"{"a":[1]}"#), json!({"a": [1]}));
        assert_eq!(payload_json(b"not json"), json!("not json"));
        assert_eq!(payload_json(b"\xff{"), json!("\u{fffd}{"));
    }

    #[test]
    fn diffs_name_every_changed_place_in_document_order() {
        let expected = json!({"toolResponse": {"functionResponses": [
            {"id": "c1", "response": {"temp_c": 21, "sky": "clear"}}
        ]}});
        let actual = json!({"toolResponse": {"functionResponses": [
            {"id": "c1", "response": {"wind": 3, "temp_c": 25}}
        ]}});
        let at = |path: &str, e: Option<Value>, a: Option<Value>| PathDiff {
            path: path.into(),
            expected: e,
            actual: a,
        };
        assert_eq!(
            json_diff(&expected, &actual),
            [
                at(
                    "toolResponse.functionResponses[0].response.temp_c",
                    Some(json!(21)),
                    Some(json!(25))
                ),
                at(
                    "toolResponse.functionResponses[0].response.sky",
                    Some(json!("clear")),
                    None
                ),
                at(
                    "toolResponse.functionResponses[0].response.wind",
                    None,
                    Some(json!(3))
                ),
            ]
        );
        assert!(json_diff(&json!({"a": [1, {"b": 2}]}), &json!({"a": [1, {"b": 2}]})).is_empty());
        assert_eq!(
            json_diff(&json!([1]), &json!([1, 2])),
            [at("[1]", None, Some(json!(2)))]
        );
        assert_eq!(
            json_diff(&json!(1), &json!("1")),
            [at("$", Some(json!(1)), Some(json!("1")))]
        );
    }

    #[test]
    fn the_first_difference_is_the_first_diff() {
        for (e, a) in [
            (json!({"a": 1, "b": 2}), json!({"a": 1, "b": 3, "c": 4})),
            (json!({"a": 1}), json!({"c": 4, "a": 1})),
            (json!([1, 2]), json!([1])),
            (
                json!({"x": [{"y": 1}]}),
                json!({"x": [{"y": 1, "z": null}]}),
            ),
            (json!(null), json!(false)),
        ] {
            let location = first_difference(&e, &a).unwrap();
            assert_eq!(location.to_string(), json_diff(&e, &a)[0].path);
        }
        assert_eq!(
            first_difference(&json!({"a": [1]}), &json!({"a": [1]})),
            None
        );
    }

    #[test]
    fn a_location_finds_its_value() {
        let value = json!({"contents": [{"role": "user"}, {"role": "model"}]});
        let location = Location(vec![
            Place::Key("contents".into()),
            Place::Index(1),
            Place::Key("role".into()),
        ]);
        assert_eq!(location.to_string(), "contents[1].role");
        assert_eq!(location.get(&value), Some(&json!("model")));
        assert_eq!(Location::default().get(&value), Some(&value));
        assert_eq!(Location(vec![Place::Index(0)]).get(&value), None);
    }
}
