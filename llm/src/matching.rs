//! Deciding whether a request is the one that was recorded: strict equality by default, or
//! loose matching by [`MatchRules`] kept as data (paths to ignore, normalizers to apply).

use std::fmt;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use reel_protocol::json::{JsonPath, first_difference};

use super::normalize::Normalizer;

/// How a request is compared with a recorded one.
///
/// The default is strict: the requests must be equal as JSON (member order aside). Rules
/// loosen that explicitly, and load from JSON:
///
/// ```
/// use reel_llm::{MatchRules, Normalizer};
/// use serde_json::json;
///
/// let rules: MatchRules = serde_json::from_value(json!({
///     "ignore": ["generationConfig.seed"],
///     "normalize": [{"kind": "uuids"}, {"kind": "isoDateTimes"}]
/// }))?;
/// assert_eq!(rules.normalize, [Normalizer::Uuids, Normalizer::IsoDateTimes]);
///
/// let recorded = json!({"model": "m", "contents": "at 2025-12-10T18:00:00Z", "generationConfig": {"seed": 1}});
/// let now = json!({"model": "m", "contents": "at 2026-01-02T09:30:00Z", "generationConfig": {"seed": 2}});
/// assert!(rules.compare(&recorded, &now).is_ok());
/// assert!(MatchRules::strict().compare(&recorded, &now).is_err());
/// # Ok::<_, serde_json::Error>(())
/// ```
///
/// Both requests are rewritten the same way before they are compared: first every `ignore`
/// path is removed (an object member is dropped, an array element becomes `null`), then
/// each normalizer runs, in the order listed.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MatchRules {
    /// Places whose values are not compared (`generationConfig.seed`,
    /// `contents[*].parts[*].thoughtSignature`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub ignore: Vec<JsonPath>,
    /// Rewrites applied to both requests, in this order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub normalize: Vec<Normalizer>,
}

impl MatchRules {
    /// Strict equality (the default).
    pub fn strict() -> Self {
        MatchRules::default()
    }

    /// These rules, also ignoring `path`.
    pub fn ignoring(mut self, path: JsonPath) -> Self {
        self.ignore.push(path);
        self
    }

    /// These rules, also applying `normalizer` (after the ones already listed).
    pub fn normalizing(mut self, normalizer: Normalizer) -> Self {
        self.normalize.push(normalizer);
        self
    }

    /// `request` as the comparison sees it: ignored places removed, normalizers applied.
    /// Two requests match when their normalized forms are equal.
    pub fn normalized(&self, request: &Value) -> Value {
        let mut value = request.clone();
        for path in &self.ignore {
            path.remove_from(&mut value);
        }
        for normalizer in &self.normalize {
            normalizer.apply(&mut value);
        }
        value
    }

    /// Compares `actual` with `recorded`: `Ok` when they match under these rules, else the
    /// first place (in the recorded request's order) where they differ, with both original
    /// values.
    pub fn compare(&self, recorded: &Value, actual: &Value) -> Result<(), Box<RequestMismatch>> {
        let (left, right) = (self.normalized(recorded), self.normalized(actual));
        let Some(location) = first_difference(&left, &right) else {
            return Ok(());
        };
        Err(Box::new(RequestMismatch {
            path: location.to_string(),
            recorded: location.get(recorded).cloned(),
            actual: location.get(actual).cloned(),
        }))
    }
}

/// Where a request differs from the recorded one.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub struct RequestMismatch {
    /// The JSON path of the first difference (`contents[0].parts[0].text`; `$` is the
    /// whole request).
    pub path: String,
    /// The recorded value there (`None`: the recorded request has nothing there).
    pub recorded: Option<Value>,
    /// The request's value there (`None`: the request has nothing there).
    pub actual: Option<Value>,
}

impl fmt::Display for RequestMismatch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "at `{}`: recorded {}, got {}",
            self.path,
            shown(self.recorded.as_ref()),
            shown(self.actual.as_ref())
        )
    }
}

/// A value as a mismatch shows it: compact JSON, cut after 120 characters.
fn shown(value: Option<&Value>) -> String {
    const LIMIT: usize = 120;
    let Some(value) = value else {
        return "nothing".to_owned();
    };
    let text = value.to_string();
    match text.char_indices().nth(LIMIT) {
        Some((cut, _)) => format!("{}…", &text[..cut]),
        None => text,
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn mismatch(recorded: Value, actual: Value) -> RequestMismatch {
        *MatchRules::strict()
            .compare(&recorded, &actual)
            .unwrap_err()
    }

    #[test]
    fn strict_comparison_names_the_first_difference() {
        assert_eq!(
            MatchRules::strict().compare(&json!({"a": 1, "b": 2}), &json!({"b": 2, "a": 1})),
            Ok(())
        );
        let m = mismatch(
            json!({"model": "m", "contents": [{"role": "user", "parts": [{"text": "hi"}]}]}),
            json!({"model": "m", "contents": [{"role": "user", "parts": [{"text": "ho"}]}]}),
        );
        assert_eq!(
            m,
            RequestMismatch {
                path: "contents[0].parts[0].text".into(),
                recorded: Some(json!("hi")),
                actual: Some(json!("ho")),
            }
        );
        assert_eq!(
            m.to_string(),
            "at `contents[0].parts[0].text`: recorded \"hi\", got \"ho\""
        );
    }

    #[test]
    fn missing_extra_and_retyped_values_are_named() {
        let m = mismatch(json!({"a": 1, "b": 2}), json!({"a": 1}));
        assert_eq!(
            (m.path.as_str(), m.recorded, m.actual),
            ("b", Some(json!(2)), None)
        );
        let m = mismatch(json!({"a": 1}), json!({"a": 1, "z": [1]}));
        assert_eq!(m.to_string(), "at `z`: recorded nothing, got [1]");
        let m = mismatch(json!({"l": [1, 2]}), json!({"l": [1, 2, 3]}));
        assert_eq!(
            (m.path.as_str(), m.recorded, m.actual),
            ("l[2]", None, Some(json!(3)))
        );
        let m = mismatch(json!({"l": [1]}), json!({"l": {"0": 1}}));
        assert_eq!(m.path, "l");
        let m = mismatch(json!("x"), json!(1));
        assert_eq!(m.to_string(), "at `$`: recorded \"x\", got 1");
    }

    #[test]
    fn long_values_are_cut() {
        let long = "é".repeat(200);
        let m = mismatch(json!(long), json!("short"));
        let shown = m.to_string();
        assert!(
            shown.starts_with(&format!("at `$`: recorded \"{}…", "é".repeat(119))),
            "{shown}"
        );
        assert!(shown.ends_with(", got \"short\""));
    }

    #[test]
    fn rules_ignore_paths_then_normalize_and_report_original_values() {
        let rules = MatchRules::strict()
            .ignoring("metadata.requestId".parse().unwrap())
            .normalizing(Normalizer::Uuids);
        let recorded = json!({"metadata": {"requestId": 1}, "text": "id 550e8400-e29b-41d4-a716-446655440000 at 5"});
        let same = json!({"metadata": {"requestId": 2}, "text": "id 123e4567-e89b-12d3-a456-426614174000 at 5"});
        assert_eq!(rules.compare(&recorded, &same), Ok(()));
        let other = json!({"metadata": {}, "text": "id 123e4567-e89b-12d3-a456-426614174000 at 6"});
        assert_eq!(
            rules.compare(&recorded, &other),
            Err(Box::new(RequestMismatch {
                path: "text".into(),
                recorded: recorded.get("text").cloned(),
                actual: other.get("text").cloned(),
            }))
        );
        assert_eq!(
            rules.normalized(&other),
            json!({"metadata": {}, "text": "id <uuid> at 6"})
        );
    }

    #[test]
    fn rules_load_from_json_and_refuse_unknown_fields() {
        let rules: MatchRules = serde_json::from_value(json!({
            "ignore": ["a.b", "c[*]"],
            "normalize": [{"kind": "numbers"}]
        }))
        .unwrap();
        assert_eq!(rules.ignore.len(), 2);
        assert_eq!(
            serde_json::to_value(&rules).unwrap(),
            json!({"ignore": ["a.b", "c[*]"], "normalize": [{"kind": "numbers"}]})
        );
        assert_eq!(
            serde_json::to_value(MatchRules::strict()).unwrap(),
            json!({})
        );
        let error = serde_json::from_value::<MatchRules>(json!({"ignore": ["a..b"]})).unwrap_err();
        assert_eq!(
            error.to_string(),
            "`a..b` is not a JSON path: a key is empty"
        );
        assert!(serde_json::from_value::<MatchRules>(json!({"fuzzy": true})).is_err());
    }
}
