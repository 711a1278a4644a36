//! Loose-matching rules, as data: which fields of a client frame a replay does not compare.
//! The file format and the built-in rules are documented on [`MatchRules`].

use std::path::Path;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::error::RulesError;

/// What an ignore rule ignores.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Ignore {
    /// The value; the field must still be present on both sides, or absent on both.
    #[default]
    Value,
    /// The field, present or not.
    Field,
}

/// One rule: a path whose values (or fields) are not compared.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(from = "RuleRepr")]
pub struct IgnoreRule {
    /// Dotted path (see [`MatchRules`]).
    pub path: String,
    /// What is ignored there.
    pub ignore: Ignore,
    /// Why, for the reader of the rules file.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

impl IgnoreRule {
    /// A rule ignoring the value at `path` (its presence still counts).
    pub fn value(path: impl Into<String>) -> Self {
        IgnoreRule {
            path: path.into(),
            ignore: Ignore::Value,
            note: None,
        }
    }

    /// A rule ignoring the field at `path`, present or not.
    pub fn field(path: impl Into<String>) -> Self {
        IgnoreRule {
            path: path.into(),
            ignore: Ignore::Field,
            note: None,
        }
    }
}

/// A rule as written: a bare path, or the full object.
#[derive(Deserialize)]
#[serde(untagged)]
enum RuleRepr {
    Path(String),
    Full {
        path: String,
        #[serde(default)]
        ignore: Ignore,
        #[serde(default)]
        note: Option<String>,
    },
}

impl From<RuleRepr> for IgnoreRule {
    fn from(repr: RuleRepr) -> Self {
        match repr {
            RuleRepr::Path(path) => IgnoreRule::value(path),
            RuleRepr::Full { path, ignore, note } => IgnoreRule { path, ignore, note },
        }
    }
}

/// The rules of loose matching, as data: which fields of a client frame a replay does not
/// compare. Loadable from a JSON file ([`MatchRules::from_file`]):
///
/// ```json
/// {
///   "defaults": true,
///   "ignore": [
///     "toolResponse.functionResponses[*].response.fetchedAt",
///     {"path": "**.requestId", "ignore": "field", "note": "absent in older clients"}
///   ]
/// }
/// ```
///
/// - `defaults` (default `true`) keeps the built-in rules ([`MatchRules::DEFAULT_IGNORED`])
///   in front of the file's own.
/// - A rule is a path, or an object with `path`, `ignore` and an optional `note`.
///   `"ignore": "value"` (the default) ignores the field's value but not its presence: both
///   frames must have the field, or both lack it. `"ignore": "field"` ignores the field
///   altogether.
/// - Paths are dotted keys, matched against the canonical (lowerCamelCase) frame; a key
///   written in snake_case matches too. `key[*]` is every element of the array at `key`;
///   `*` is any one key or element; `**` is any number of levels, none included, so
///   `**.timestamp` is a `timestamp` at any depth.
///
/// The built-in rules ignore the bytes of binary data the client streams or attaches (audio,
/// video, images), never their presence or MIME type: a replay of a voice session then
/// matches whatever audio the client sends, as long as it sends audio where the recording
/// has audio. Everything else matters, ids included: a tool response must answer the
/// recorded call id, and a reconnect must present the recorded resumption handle.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MatchRules {
    /// Whether the built-in rules apply before these.
    #[serde(default = "yes")]
    pub defaults: bool,
    /// The rules, applied in order.
    #[serde(default)]
    pub ignore: Vec<IgnoreRule>,
}

fn yes() -> bool {
    true
}

impl Default for MatchRules {
    /// The built-in rules only.
    fn default() -> Self {
        MatchRules {
            defaults: true,
            ignore: Vec::new(),
        }
    }
}

impl MatchRules {
    /// The built-in rules: the value (not the presence) of every binary payload the client
    /// sends.
    pub const DEFAULT_IGNORED: [&'static str; 4] = [
        "realtimeInput.audio.data",
        "realtimeInput.video.data",
        "realtimeInput.mediaChunks[*].data",
        "clientContent.turns[*].parts[*].inlineData.data",
    ];

    /// Reads rules from a JSON file and checks every path.
    pub fn from_file(path: impl AsRef<Path>) -> Result<Self, RulesError> {
        let path = path.as_ref();
        let text = std::fs::read_to_string(path).map_err(|source| RulesError::Read {
            path: path.to_path_buf(),
            source,
        })?;
        let rules: MatchRules = serde_json::from_str(&text).map_err(|error| RulesError::Parse {
            path: path.to_path_buf(),
            line: error.line(),
            column: error.column(),
            message: without_position(&error),
        })?;
        rules.compile()?;
        Ok(rules)
    }

    /// Every rule that applies, built-in ones first when `defaults` is set.
    pub fn effective(&self) -> Vec<IgnoreRule> {
        let defaults = self
            .defaults
            .then(|| Self::DEFAULT_IGNORED.iter().map(|p| IgnoreRule::value(*p)))
            .into_iter()
            .flatten();
        defaults.chain(self.ignore.iter().cloned()).collect()
    }

    /// Checks and compiles the rules.
    pub(crate) fn compile(&self) -> Result<CompiledRules, RulesError> {
        let rules = self
            .effective()
            .into_iter()
            .map(|rule| {
                let steps = parse_path(&rule.path)?;
                Ok((steps, rule.ignore))
            })
            .collect::<Result<_, RulesError>>()?;
        Ok(CompiledRules { rules })
    }
}

/// serde_json's message without its " at line L column C" (reported separately).
fn without_position(error: &serde_json::Error) -> String {
    let text = error.to_string();
    match text.rfind(" at line ") {
        Some(at) => text[..at].to_owned(),
        None => text,
    }
}

/// The stand-in for an ignored value, on both sides of a comparison.
pub const IGNORED: &str = "<ignored>";

/// One step of a compiled path.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Step {
    /// An object key, lowerCamelCase.
    Key(String),
    /// Every element of an array.
    Each,
    /// Any one key or element.
    Any,
    /// Any number of levels, none included.
    Deep,
}

/// Rules ready to apply.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct CompiledRules {
    rules: Vec<(Vec<Step>, Ignore)>,
}

impl CompiledRules {
    /// Rewrites `value` so that what the rules ignore compares equal: ignored values become
    /// [`IGNORED`], ignored fields are removed.
    pub(crate) fn apply(&self, value: &mut Value) {
        for (steps, ignore) in &self.rules {
            mask(value, steps, *ignore);
        }
    }
}

fn parse_path(path: &str) -> Result<Vec<Step>, RulesError> {
    let invalid = |problem: &'static str| RulesError::InvalidPath {
        path: path.to_owned(),
        problem,
    };
    if path.trim().is_empty() {
        return Err(invalid("it is empty"));
    }
    let mut steps = Vec::new();
    for part in path.split('.') {
        let (key, each) = match part.strip_suffix("[*]") {
            Some(key) => (key, true),
            None => (part, false),
        };
        if key.contains(['[', ']']) {
            return Err(invalid("only `[*]` may follow a key (no indices)"));
        }
        match key {
            "" => return Err(invalid("a key is empty")),
            "*" => steps.push(Step::Any),
            "**" => steps.push(Step::Deep),
            _ if key.contains('*') => {
                return Err(invalid("`*` and `**` must stand for a whole key"));
            }
            _ => steps.push(Step::Key(camel(key))),
        }
        if each {
            steps.push(Step::Each);
        }
    }
    if steps.last() == Some(&Step::Deep) {
        return Err(invalid("a path cannot end in `**`"));
    }
    Ok(steps)
}

/// The lowerCamelCase spelling of a key (`inline_data` → `inlineData`).
fn camel(key: &str) -> String {
    let mut out = String::with_capacity(key.len());
    let mut upper = false;
    for c in key.chars() {
        if c == '_' && !out.is_empty() {
            upper = true;
        } else if upper {
            out.extend(c.to_uppercase());
            upper = false;
        } else {
            out.push(c);
        }
    }
    out
}

fn mask(value: &mut Value, steps: &[Step], ignore: Ignore) {
    let Some((step, rest)) = steps.split_first() else {
        return;
    };
    match step {
        Step::Deep => {
            mask(value, rest, ignore);
            match value {
                Value::Object(map) => map.values_mut().for_each(|v| mask(v, steps, ignore)),
                Value::Array(items) => items.iter_mut().for_each(|v| mask(v, steps, ignore)),
                _ => {}
            }
        }
        Step::Key(key) => {
            if let Value::Object(map) = value {
                let keys: Vec<String> = map.keys().filter(|k| camel(k) == *key).cloned().collect();
                for k in keys {
                    apply_at_key(map, &k, rest, ignore);
                }
            }
        }
        Step::Each => {
            if let Value::Array(items) = value {
                apply_to_items(items, rest, ignore);
            }
        }
        Step::Any => match value {
            Value::Object(map) => {
                let keys: Vec<String> = map.keys().cloned().collect();
                for k in keys {
                    apply_at_key(map, &k, rest, ignore);
                }
            }
            Value::Array(items) => apply_to_items(items, rest, ignore),
            _ => {}
        },
    }
}

fn apply_at_key(map: &mut Map<String, Value>, key: &str, rest: &[Step], ignore: Ignore) {
    if !rest.is_empty() {
        if let Some(child) = map.get_mut(key) {
            mask(child, rest, ignore);
        }
        return;
    }
    match ignore {
        Ignore::Value => {
            if let Some(child) = map.get_mut(key) {
                *child = Value::String(IGNORED.to_owned());
            }
        }
        Ignore::Field => {
            map.shift_remove(key);
        }
    }
}

fn apply_to_items(items: &mut Vec<Value>, rest: &[Step], ignore: Ignore) {
    if !rest.is_empty() {
        items.iter_mut().for_each(|item| mask(item, rest, ignore));
        return;
    }
    match ignore {
        Ignore::Value => items
            .iter_mut()
            .for_each(|item| *item = Value::String(IGNORED.to_owned())),
        Ignore::Field => items.clear(),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn masked(rules: &MatchRules, mut value: Value) -> Value {
        rules.compile().unwrap().apply(&mut value);
        value
    }

    #[test]
    fn the_defaults_ignore_binary_bytes_but_not_their_presence() {
        let rules = MatchRules::default();
        assert_eq!(
            masked(
                &rules,
                json!({"realtimeInput": {"audio": {"mimeType": "audio/pcm;rate=16000", "data": "AAAA"}}})
            ),
            json!({"realtimeInput": {"audio": {"mimeType": "audio/pcm;rate=16000", "data": IGNORED}}})
        );
        assert_eq!(
            masked(
                &rules,
                json!({"realtimeInput": {"audio": {"mimeType": "audio/pcm"}}})
            ),
            json!({"realtimeInput": {"audio": {"mimeType": "audio/pcm"}}})
        );
        assert_eq!(
            masked(
                &rules,
                json!({"clientContent": {"turns": [{"parts": [{"text": "hi"}, {"inlineData": {"data": "AQ=="}}]}]}})
            ),
            json!({"clientContent": {"turns": [{"parts": [{"text": "hi"}, {"inlineData": {"data": IGNORED}}]}]}})
        );
        assert_eq!(
            masked(
                &rules,
                json!({"toolResponse": {"functionResponses": [{"id": "c1", "response": {}}]}})
            ),
            json!({"toolResponse": {"functionResponses": [{"id": "c1", "response": {}}]}})
        );
    }

    #[test]
    fn wildcards_deep_paths_and_snake_case_keys() {
        let rules: MatchRules = serde_json::from_str(
            r#"{"defaults": false, "ignore": ["**.fetched_at", {"path": "*.id", "ignore": "field"}]}"#,
        )
        .unwrap();
        assert_eq!(
            rules.ignore,
            vec![
                IgnoreRule::value("**.fetched_at"),
                IgnoreRule::field("*.id")
            ]
        );
        assert_eq!(
            masked(
                &rules,
                json!({"a": {"id": 1, "b": [{"fetchedAt": 5, "c": {"fetchedAt": 6}}]}, "id": 2})
            ),
            json!({"a": {"b": [{"fetchedAt": IGNORED, "c": {"fetchedAt": IGNORED}}]}, "id": 2})
        );
    }

    #[test]
    fn bad_paths_are_refused_with_the_reason() {
        for (path, problem) in [
            ("", "it is empty"),
            ("a..b", "a key is empty"),
            ("a[0]", "only `[*]` may follow a key (no indices)"),
            ("a*b", "`*` and `**` must stand for a whole key"),
            ("a.**", "a path cannot end in `**`"),
        ] {
            let rules = MatchRules {
                defaults: false,
                ignore: vec![IgnoreRule::value(path)],
            };
            assert_eq!(
                rules.compile().unwrap_err().to_string(),
                format!("match rule path `{path}` is invalid: {problem}")
            );
        }
    }

    #[test]
    fn rules_round_trip_as_json() {
        let rules = MatchRules {
            defaults: false,
            ignore: vec![IgnoreRule {
                path: "x.y".into(),
                ignore: Ignore::Field,
                note: Some("why".into()),
            }],
        };
        let text = serde_json::to_string(&rules).unwrap();
        assert_eq!(
            text,
            r#"{"defaults":false,"ignore":[{"path":"x.y","ignore":"field","note":"why"}]}"#
        );
        assert_eq!(serde_json::from_str::<MatchRules>(&text).unwrap(), rules);
        assert!(serde_json::from_str::<MatchRules>(r#"{"ignored": []}"#).is_err());
    }
}
