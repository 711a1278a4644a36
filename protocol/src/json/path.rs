//! [`JsonPath`]: parsing the syntax of [the module](super), and finding what a path names.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::{Map, Value};

use super::casing::{camel_case, snake_case};

/// A path with wildcards, naming zero or more places in a JSON value (syntax: [the
/// module](super)).
///
/// ```
/// use reel_protocol::json::JsonPath;
/// use serde_json::json;
///
/// let path: JsonPath = "contents[*].parts[0].text".parse()?;
/// assert_eq!(path.to_string(), "contents[*].parts[0].text");
///
/// let mut request = json!({"contents": [{"parts": [{"text": "hi"}, {"text": "there"}]}]});
/// path.remove_from(&mut request);
/// assert_eq!(request, json!({"contents": [{"parts": [{}, {"text": "there"}]}]}));
///
/// assert!("contents..text".parse::<JsonPath>().is_err());
/// # Ok::<_, reel_protocol::json::PathError>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JsonPath {
    text: String,
    steps: Vec<Step>,
}

/// One step of a [`JsonPath`].
#[derive(Debug, Clone, PartialEq, Eq)]
enum Step {
    /// A member, in each spelling it matches (lowerCamelCase first; one if both are equal).
    Key(Vec<String>),
    /// One element.
    Index(usize),
    /// Every element.
    Each,
    /// Any one member or element.
    Any,
    /// Any number of levels, none included.
    Deep,
}

/// A text that is not a [`JsonPath`], with what is wrong with it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("`{path}` is not a JSON path: {problem}")]
pub struct PathError {
    /// The text as given.
    pub path: String,
    /// What is wrong with it.
    pub problem: PathProblem,
}

/// What is wrong with a [`JsonPath`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum PathProblem {
    /// The path is empty.
    #[error("it is empty")]
    Empty,
    /// A key between dots is empty (`a..b`, a leading or trailing dot).
    #[error("a key is empty")]
    EmptyKey,
    /// A bracket that does not hold an index or `*`, or is not closed.
    #[error("a bracket must hold an index or `*` and be closed")]
    BadBracket,
    /// A `*` inside a key (`data*`): wildcards stand for whole keys.
    #[error("`*` and `**` must stand for a whole key")]
    PartialWildcard,
    /// `**` as the last step: it must be followed by what to find at any depth.
    #[error("a path cannot end in `**`")]
    EndsInDeep,
}

/// What a path's last step found in one container, handed to the function given to
/// [`JsonPath::select_mut`].
#[derive(Debug)]
pub enum Selected<'a> {
    /// Members of `object`, by the keys as spelled there (only keys present).
    Members {
        /// The object holding them.
        object: &'a mut Map<String, Value>,
        /// Their keys, in the object's order.
        keys: Vec<String>,
    },
    /// Elements of `array` (only indices in range), in increasing order.
    Elements {
        /// The array holding them.
        array: &'a mut Vec<Value>,
        /// Their indices.
        indices: Vec<usize>,
    },
}

impl FromStr for JsonPath {
    type Err = PathError;

    fn from_str(text: &str) -> Result<Self, PathError> {
        let error = |problem| PathError {
            path: text.to_owned(),
            problem,
        };
        if text.is_empty() {
            return Err(error(PathProblem::Empty));
        }
        let mut steps = Vec::new();
        for (index, segment) in text.split('.').enumerate() {
            let (key, mut brackets) = segment
                .find('[')
                .map_or((segment, ""), |at| segment.split_at(at));
            if key.contains(']') {
                return Err(error(PathProblem::BadBracket));
            }
            // Only the first segment may be brackets alone (a top-level array).
            if key.is_empty() && (index > 0 || brackets.is_empty()) {
                return Err(error(PathProblem::EmptyKey));
            }
            match key {
                "" => {}
                "*" => steps.push(Step::Any),
                "**" => steps.push(Step::Deep),
                _ if key.contains('*') => return Err(error(PathProblem::PartialWildcard)),
                _ => steps.push(Step::Key(spellings(key))),
            }
            while !brackets.is_empty() {
                let (inside, after) = brackets
                    .strip_prefix('[')
                    .and_then(|rest| rest.split_once(']'))
                    .ok_or(error(PathProblem::BadBracket))?;
                steps.push(match inside {
                    "*" => Step::Each,
                    digits if digits.bytes().all(|b| b.is_ascii_digit()) => {
                        Step::Index(digits.parse().map_err(|_| error(PathProblem::BadBracket))?)
                    }
                    _ => return Err(error(PathProblem::BadBracket)),
                });
                brackets = after;
            }
        }
        if steps.last() == Some(&Step::Deep) {
            return Err(error(PathProblem::EndsInDeep));
        }
        Ok(JsonPath {
            text: text.to_owned(),
            steps,
        })
    }
}

/// `key` in lowerCamelCase, then in snake_case if that is another spelling.
fn spellings(key: &str) -> Vec<String> {
    let camel = camel_case(key).into_owned();
    let snake = snake_case(&camel).into_owned();
    if snake == camel {
        vec![camel]
    } else {
        vec![camel, snake]
    }
}

impl JsonPath {
    /// The path as written.
    pub fn as_str(&self) -> &str {
        &self.text
    }

    /// The spellings of the first key, when the path starts with one: a payload whose text
    /// contains none of them (quoted) holds nothing the path names, which a caller can check
    /// without parsing it.
    pub fn first_key_spellings(&self) -> Option<&[String]> {
        match self.steps.first() {
            Some(Step::Key(names)) => Some(names),
            _ => None,
        }
    }

    /// Whether the last step names members of an object by key (not elements, not a
    /// wildcard).
    pub fn ends_in_key(&self) -> bool {
        matches!(self.steps.last(), Some(Step::Key(_)))
    }

    /// Finds what the path names in `value` and hands it to `found`, one container at a
    /// time (in document order); returns whether any call returned `true` (the caller's
    /// "changed"). `found` may change or remove what it is handed.
    pub fn select_mut(
        &self,
        value: &mut Value,
        found: &mut dyn FnMut(Selected<'_>) -> bool,
    ) -> bool {
        select(value, &self.steps, found)
    }

    /// Removes what the path names: a member is dropped, an element becomes `null` (so an
    /// array keeps its length and the other elements their indices).
    pub fn remove_from(&self, value: &mut Value) {
        self.select_mut(value, &mut |selected| {
            match selected {
                Selected::Members { object, keys } => {
                    for key in keys {
                        object.shift_remove(&key);
                    }
                }
                Selected::Elements { array, indices } => {
                    for index in indices {
                        array[index] = Value::Null;
                    }
                }
            }
            true
        });
    }
}

fn select(value: &mut Value, steps: &[Step], found: &mut dyn FnMut(Selected<'_>) -> bool) -> bool {
    let Some((step, rest)) = steps.split_first() else {
        return false;
    };
    if let Step::Deep = step {
        // Here, then at every level below (`rest` is not empty: parsing refuses a last `**`).
        let mut changed = select(value, rest, found);
        match value {
            Value::Object(map) => {
                for child in map.values_mut() {
                    changed |= select(child, steps, found);
                }
            }
            Value::Array(items) => {
                for child in items {
                    changed |= select(child, steps, found);
                }
            }
            _ => {}
        }
        return changed;
    }
    if rest.is_empty() {
        return match (step, value) {
            (Step::Key(names), Value::Object(object)) => {
                let keys: Vec<String> = names
                    .iter()
                    .filter(|name| object.contains_key(name.as_str()))
                    .cloned()
                    .collect();
                !keys.is_empty() && found(Selected::Members { object, keys })
            }
            (Step::Any, Value::Object(object)) => {
                let keys: Vec<String> = object.keys().cloned().collect();
                !keys.is_empty() && found(Selected::Members { object, keys })
            }
            (Step::Index(index), Value::Array(array)) if *index < array.len() => {
                let indices = vec![*index];
                found(Selected::Elements { array, indices })
            }
            (Step::Each | Step::Any, Value::Array(array)) => {
                let indices: Vec<usize> = (0..array.len()).collect();
                !indices.is_empty() && found(Selected::Elements { array, indices })
            }
            _ => false,
        };
    }
    let mut changed = false;
    match (step, value) {
        (Step::Key(names), Value::Object(object)) => {
            for name in names {
                if let Some(child) = object.get_mut(name.as_str()) {
                    changed |= select(child, rest, found);
                }
            }
        }
        (Step::Any, Value::Object(object)) => {
            for child in object.values_mut() {
                changed |= select(child, rest, found);
            }
        }
        (Step::Index(index), Value::Array(array)) => {
            if let Some(child) = array.get_mut(*index) {
                changed |= select(child, rest, found);
            }
        }
        (Step::Each | Step::Any, Value::Array(array)) => {
            for child in array {
                changed |= select(child, rest, found);
            }
        }
        _ => {}
    }
    changed
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

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn problem(text: &str) -> PathProblem {
        text.parse::<JsonPath>().unwrap_err().problem
    }

    /// The places `path` names in `value`, written out.
    fn named(path: &str, value: &Value) -> Vec<String> {
        let mut value = value.clone();
        let mut out = Vec::new();
        let path: JsonPath = path.parse().unwrap();
        path.select_mut(&mut value, &mut |selected| {
            match selected {
                Selected::Members { keys, .. } => {
                    out.extend(keys.into_iter().map(|k| format!(".{k}")))
                }
                Selected::Elements { indices, .. } => {
                    out.extend(indices.into_iter().map(|i| format!("[{i}]")))
                }
            }
            false
        });
        out
    }

    #[test]
    fn bad_paths_say_what_is_wrong() {
        assert_eq!(problem(""), PathProblem::Empty);
        assert_eq!(problem("a..b"), PathProblem::EmptyKey);
        assert_eq!(problem(".a"), PathProblem::EmptyKey);
        assert_eq!(problem("a."), PathProblem::EmptyKey);
        assert_eq!(problem("a[x]"), PathProblem::BadBracket);
        assert_eq!(problem("a[1"), PathProblem::BadBracket);
        assert_eq!(problem("a]"), PathProblem::BadBracket);
        assert_eq!(problem("a[-1]"), PathProblem::BadBracket);
        assert_eq!(problem("a[*]b"), PathProblem::BadBracket);
        assert_eq!(problem("da*ta"), PathProblem::PartialWildcard);
        assert_eq!(problem("a.**"), PathProblem::EndsInDeep);
        assert_eq!(
            "a..b".parse::<JsonPath>().unwrap_err().to_string(),
            "`a..b` is not a JSON path: a key is empty"
        );
    }

    #[test]
    fn good_paths_keep_their_text() {
        for text in [
            "a",
            "a.b",
            "a[0]",
            "a[*].b",
            "[*].id",
            "grid[0][*]",
            "*.x",
            "**.requestId",
        ] {
            assert_eq!(text.parse::<JsonPath>().unwrap().to_string(), text);
        }
        let path: JsonPath = serde_json::from_value(json!("parts[*].text")).unwrap();
        assert_eq!(serde_json::to_value(&path).unwrap(), json!("parts[*].text"));
        assert!(serde_json::from_value::<JsonPath>(json!("a..b")).is_err());
    }

    #[test]
    fn every_step_names_what_the_table_says() {
        let value = json!({
            "serverContent": {"modelTurn": {"parts": [
                {"inline_data": {"data": "AAAA"}},
                {"text": "hi", "requestId": 1}
            ]}},
            "requestId": 2,
            "grid": [[1, 2], [3]]
        });
        assert_eq!(named("serverContent.modelTurn", &value), [".modelTurn"]);
        assert_eq!(named("serverContent.modelTurn.parts[1]", &value), ["[1]"]);
        assert_eq!(
            named("serverContent.modelTurn.parts[2]", &value),
            Vec::<String>::new()
        );
        assert_eq!(
            named("serverContent.modelTurn.parts[*]", &value),
            ["[0]", "[1]"]
        );
        // Either spelling in the path finds either spelling in the value.
        assert_eq!(
            named("server_content.model_turn.parts[*].inlineData.data", &value),
            [".data"]
        );
        assert_eq!(named("serverContent.*", &value), [".modelTurn"]);
        assert_eq!(named("grid.*", &value), ["[0]", "[1]"]);
        assert_eq!(named("grid[*][0]", &value), ["[0]", "[0]"]);
        assert_eq!(named("**.requestId", &value), [".requestId", ".requestId"]);
        assert_eq!(
            named("[*].id", &json!([{"id": 1}, {"x": 2}, {"id": 3}])),
            [".id", ".id"]
        );
        assert_eq!(named("a.b", &json!({"a": 1})), Vec::<String>::new());
    }

    #[test]
    fn remove_drops_members_and_nulls_elements() {
        let mut value = json!({"a": [1, 2, 3], "b": {"c": 1, "d": 2}});
        "a[1]".parse::<JsonPath>().unwrap().remove_from(&mut value);
        "b.c".parse::<JsonPath>().unwrap().remove_from(&mut value);
        assert_eq!(value, json!({"a": [1, null, 3], "b": {"d": 2}}));
        "b.*".parse::<JsonPath>().unwrap().remove_from(&mut value);
        assert_eq!(value, json!({"a": [1, null, 3], "b": {}}));
    }

    #[test]
    fn the_first_keys_spellings_prefilter_a_payload() {
        let path: JsonPath = "realtimeInput.audio.data".parse().unwrap();
        assert_eq!(
            path.first_key_spellings().unwrap(),
            ["realtimeInput", "realtime_input"]
        );
        assert!(path.ends_in_key());
        let path: JsonPath = "[*].data".parse().unwrap();
        assert_eq!(path.first_key_spellings(), None);
        assert!(!"parts[*]".parse::<JsonPath>().unwrap().ends_in_key());
    }
}
