//! Loose-matching rules, as data: which fields of a client frame a replay does not compare.
//! The file format and the built-in rules are documented on [`MatchRules`].

use std::path::Path;

use reel_protocol::json::{JsonPath, Selected};
use serde::{Deserialize, Serialize};
use serde_json::Value;

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
/// - Paths are [`JsonPath`]s (the syntax of [`reel_protocol::json`], shared with redaction
///   rules and model matchers): dotted keys matching either spelling (lowerCamelCase or
///   snake_case), `key[*]` every element of the array at `key`, `key[2]` one element, `*`
///   any one key or element, `**` any number of levels, none included (`**.timestamp` is a
///   `timestamp` at any depth). An ignored element is removed with `"ignore": "field"`.
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
                let path: JsonPath = rule.path.parse()?;
                Ok((path, rule.ignore))
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

/// Rules ready to apply.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct CompiledRules {
    rules: Vec<(JsonPath, Ignore)>,
}

impl CompiledRules {
    /// Rewrites `value` so that what the rules ignore compares equal: ignored values become
    /// [`IGNORED`], ignored fields are removed.
    pub(crate) fn apply(&self, value: &mut Value) {
        for (path, ignore) in &self.rules {
            path.select_mut(value, &mut |selected| {
                mask(selected, *ignore);
                true
            });
        }
    }
}

/// Makes what a rule selected compare equal: an ignored value becomes [`IGNORED`], an
/// ignored field (or element) is removed.
fn mask(selected: Selected<'_>, ignore: Ignore) {
    match (selected, ignore) {
        (Selected::Members { object, keys }, Ignore::Value) => {
            for key in keys {
                object.insert(key, Value::String(IGNORED.to_owned()));
            }
        }
        (Selected::Members { object, keys }, Ignore::Field) => {
            for key in keys {
                object.shift_remove(&key);
            }
        }
        (Selected::Elements { array, indices }, Ignore::Value) => {
            for index in indices {
                array[index] = Value::String(IGNORED.to_owned());
            }
        }
        (Selected::Elements { array, indices }, Ignore::Field) => {
            for index in indices.into_iter().rev() {
                array.remove(index);
            }
        }
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
            ("a[x]", "a bracket must hold an index or `*` and be closed"),
            ("a*b", "`*` and `**` must stand for a whole key"),
            ("a.**", "a path cannot end in `**`"),
        ] {
            let rules = MatchRules {
                defaults: false,
                ignore: vec![IgnoreRule::value(path)],
            };
            assert_eq!(
                rules.compile().unwrap_err().to_string(),
                format!("match rule: `{path}` is not a JSON path: {problem}")
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
