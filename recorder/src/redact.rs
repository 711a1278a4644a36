//! Redaction: rewriting payload fields before an entry is recorded, while keeping the log
//! replayable.
//!
//! Rules are data, so they can live in a JSON file beside the session's configuration:
//!
//! ```json
//! [
//!   {"path": "serverContent.modelTurn.parts[*].inlineData.data", "action": "silence",
//!    "mime_type_prefix": "audio/"},
//!   {"path": "toolResponse.functionResponses[*].response.ssn", "action": {"replace": "***"}},
//!   {"path": "clientContent.turns", "action": "remove"}
//! ]
//! ```
//!
//! - A path is a [`JsonPath`], the syntax of [`reel_protocol::json`] that the tape server's
//!   match rules and the model matchers share: dotted keys, `[*]` for every element of an
//!   array, `[n]` for one, `*` for any one member, `**` for any depth. Each key matches its
//!   lowerCamelCase and its snake_case spelling (`inlineData` and `inline_data`), as the
//!   Live API accepts both.
//! - [`RedactAction::Silence`] replaces base64 data by as many zero bytes: audio keeps its
//!   length, so a replay yields the same events, with silent audio.
//! - A payload no rule changes is recorded as it was, byte for byte, without a copy. A
//!   changed payload is written back as compact JSON, its key order kept. A payload that is
//!   not JSON is left as it is.
//!
//! [`Redactor::audio`] is the preset that silences the audio in both directions;
//! [`RedactingRecorder`] applies a [`Redactor`] to every entry on its way to a recorder.

use std::borrow::Cow;

use bytes::Bytes;
use reel_protocol::Base64Data;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use reel_protocol::json::{JsonPath, Selected};

use crate::error::RuleError;
use crate::wire_log::{WireEntry, WireRecorder};

/// One rule: what to do to the values at a path.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RedactionRule {
    /// A [`JsonPath`], e.g. `serverContent.modelTurn.parts[*].inlineData.data`. Keys match
    /// in lowerCamelCase and snake_case alike.
    pub path: String,
    /// What to do to each value found.
    pub action: RedactAction,
    /// Applies the rule only where the object holding the path's last key has a `mimeType`
    /// (or `mime_type`) starting with this, e.g. `audio/`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mime_type_prefix: Option<String>,
}

impl RedactionRule {
    /// A rule doing `action` at `path`, whatever the MIME type.
    pub fn new(path: impl Into<String>, action: RedactAction) -> Self {
        RedactionRule {
            path: path.into(),
            action,
            mime_type_prefix: None,
        }
    }

    /// Restricts the rule to objects whose `mimeType` starts with `prefix`.
    pub fn when_mime_type_starts_with(mut self, prefix: impl Into<String>) -> Self {
        self.mime_type_prefix = Some(prefix.into());
        self
    }
}

/// What a rule does to a value. In JSON: `"silence"`, `{"replace": <value>}`, `"remove"`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RedactAction {
    /// Base64 data becomes the same number of zero bytes (standard base64, padded), so
    /// audio keeps its length and decodes as silence. A value that is not base64 text
    /// becomes `""`: redaction never leaves data it could not silence.
    Silence,
    /// The value is replaced by this one.
    Replace(Value),
    /// The key is removed (for a path ending in `[*]`: every element).
    Remove,
}

/// A validated set of rules, applied in order to each payload.
///
/// It serializes as, and deserializes from, a JSON array of [`RedactionRule`]s, checking
/// every path.
///
/// ```
/// use reel_recorder::redact::Redactor;
///
/// let redactor: Redactor = serde_json::from_str(
///     r#"[{"path": "toolResponse.functionResponses[*].response.ssn", "action": {"replace": "***"}}]"#,
/// )?;
/// let frame = br#"{"toolResponse":{"functionResponses":[{"id":"1","response":{"ssn":"078-05-1120"}}]}}"#;
/// assert_eq!(
///     redactor.redact(frame).as_ref(),
///     br#"{"toolResponse":{"functionResponses":[{"id":"1","response":{"ssn":"***"}}]}}"#
/// );
/// # Ok::<(), serde_json::Error>(())
/// ```
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(try_from = "Vec<RedactionRule>", into = "Vec<RedactionRule>")]
pub struct Redactor {
    rules: Vec<Compiled>,
}

/// A rule with its path parsed.
#[derive(Debug, Clone, PartialEq)]
struct Compiled {
    rule: RedactionRule,
    path: JsonPath,
    /// The quoted spellings of the first key: a payload containing none of them cannot
    /// match, and is not parsed.
    first_keys: Vec<Vec<u8>>,
}

/// The paths of [`Redactor::audio`].
const AUDIO_RULES: [(&str, Option<&str>); 3] = [
    ("realtimeInput.audio.data", None),
    ("realtimeInput.mediaChunks[*].data", Some("audio/")),
    (
        "serverContent.modelTurn.parts[*].inlineData.data",
        Some("audio/"),
    ),
];

impl Redactor {
    /// Checks and keeps `rules`, to be applied in order.
    pub fn new(rules: impl IntoIterator<Item = RedactionRule>) -> Result<Self, RuleError> {
        let rules = rules
            .into_iter()
            .map(Compiled::new)
            .collect::<Result<_, _>>()?;
        Ok(Redactor { rules })
    }

    /// Silences the audio of both directions: the user's (`realtimeInput.audio.data`, and
    /// `realtimeInput.mediaChunks[*].data` with an `audio/` MIME type) and the model's
    /// (`serverContent.modelTurn.parts[*].inlineData.data` with an `audio/` MIME type). Video
    /// frames, text, transcripts and tool traffic are kept.
    pub fn audio() -> Self {
        let rules = AUDIO_RULES.iter().filter_map(|(path, prefix)| {
            let rule = RedactionRule::new(*path, RedactAction::Silence);
            let rule = match prefix {
                Some(prefix) => rule.when_mime_type_starts_with(*prefix),
                None => rule,
            };
            // The preset's paths are valid (a test checks them all compile).
            Compiled::new(rule).ok()
        });
        Redactor {
            rules: rules.collect(),
        }
    }

    /// The rules, in the order they apply.
    pub fn rules(&self) -> impl ExactSizeIterator<Item = &RedactionRule> {
        self.rules.iter().map(|compiled| &compiled.rule)
    }

    /// The payload with every rule applied: borrowed when nothing changed (or it is not
    /// JSON), a new compact JSON text otherwise.
    pub fn redact<'a>(&self, payload: &'a [u8]) -> Cow<'a, [u8]> {
        let candidates = self.rules.iter().filter(|rule| rule.may_match(payload));
        let mut candidates = candidates.peekable();
        if candidates.peek().is_none() {
            return Cow::Borrowed(payload);
        }
        let Ok(mut value) = serde_json::from_slice::<Value>(payload) else {
            return Cow::Borrowed(payload);
        };
        let mut changed = false;
        for rule in candidates {
            changed |= rule
                .path
                .select_mut(&mut value, &mut |selected| apply(selected, &rule.rule));
        }
        if !changed {
            return Cow::Borrowed(payload);
        }
        match serde_json::to_vec(&value) {
            Ok(bytes) => Cow::Owned(bytes),
            // A parsed value always serializes; were it ever not to, keep nothing rather
            // than the unredacted payload.
            Err(_) => Cow::Owned(Vec::new()),
        }
    }
}

impl TryFrom<Vec<RedactionRule>> for Redactor {
    type Error = RuleError;

    fn try_from(rules: Vec<RedactionRule>) -> Result<Self, RuleError> {
        Redactor::new(rules)
    }
}

impl From<Redactor> for Vec<RedactionRule> {
    fn from(redactor: Redactor) -> Self {
        redactor
            .rules
            .into_iter()
            .map(|compiled| compiled.rule)
            .collect()
    }
}

impl Compiled {
    fn new(rule: RedactionRule) -> Result<Self, RuleError> {
        let path: JsonPath = rule.path.parse()?;
        if rule.mime_type_prefix.is_some() && !path.ends_in_key() {
            return Err(RuleError::ConditionNeedsKey {
                path: rule.path.clone(),
            });
        }
        let first_keys = path
            .first_key_spellings()
            .unwrap_or_default()
            .iter()
            .map(|name| format!("\"{name}\"").into_bytes())
            .collect();
        Ok(Compiled {
            rule,
            path,
            first_keys,
        })
    }

    /// Whether the payload may hold the path: it names the first key (a cheap byte search
    /// that spares parsing most frames), or the path starts at a root array.
    fn may_match(&self, payload: &[u8]) -> bool {
        self.first_keys.is_empty()
            || self
                .first_keys
                .iter()
                .any(|key| payload.windows(key.len()).any(|window| window == key))
    }
}

/// Applies `rule` to what its path selected; whether anything changed.
fn apply(selected: Selected<'_>, rule: &RedactionRule) -> bool {
    let mut changed = false;
    match selected {
        Selected::Members { object, keys } => {
            if !mime_type_matches(object, rule.mime_type_prefix.as_deref()) {
                return false;
            }
            for key in keys {
                changed |= match &rule.action {
                    RedactAction::Remove => object.shift_remove(&key).is_some(),
                    action => object.get_mut(&key).is_some_and(|found| act(found, action)),
                };
            }
        }
        Selected::Elements { array, indices } => match &rule.action {
            RedactAction::Remove => {
                changed = !indices.is_empty();
                for index in indices.into_iter().rev() {
                    array.remove(index);
                }
            }
            action => {
                for index in indices {
                    changed |= act(&mut array[index], action);
                }
            }
        },
    }
    changed
}

/// Whether the object's `mimeType` (or `mime_type`) starts with `prefix`; true without one.
fn mime_type_matches(object: &Map<String, Value>, prefix: Option<&str>) -> bool {
    let Some(prefix) = prefix else {
        return true;
    };
    ["mimeType", "mime_type"].iter().any(|key| {
        object
            .get(*key)
            .and_then(Value::as_str)
            .is_some_and(|mime| mime.starts_with(prefix))
    })
}

/// Replaces or silences one value (not [`RedactAction::Remove`]); whether it changed.
fn act(value: &mut Value, action: &RedactAction) -> bool {
    let new = match action {
        RedactAction::Silence => Value::String(silence(value)),
        RedactAction::Replace(replacement) => replacement.clone(),
        RedactAction::Remove => return false,
    };
    if *value == new {
        return false;
    }
    *value = new;
    true
}

/// The base64 text of as many zero bytes as `value` decodes to; `""` if it is not base64.
fn silence(value: &Value) -> String {
    let decoded_len = value
        .as_str()
        .and_then(|text| Base64Data::decode(text).ok())
        .map_or(0, |data| data.0.len());
    Base64Data(Bytes::from(vec![0u8; decoded_len])).encode()
}

/// Redacts every entry's payload on its way to `R`; close markers pass through as they are.
///
/// ```
/// use std::sync::Arc;
/// use reel_recorder::redact::{RedactingRecorder, Redactor};
/// use reel_recorder::wire_log::{Direction, MemoryWireRecorder, WireEntry, WireRecorder};
///
/// let memory = Arc::new(MemoryWireRecorder::new());
/// let recorder = RedactingRecorder::new(Arc::clone(&memory), Redactor::audio());
/// let frame = br#"{"realtimeInput":{"audio":{"mimeType":"audio/pcm;rate=16000","data":"AQID"}}}"#;
/// recorder.record(WireEntry::frame(1, Direction::Out, 0, &frame[..], None, false));
/// assert_eq!(
///     memory.entries()[0].payload.as_ref(),
///     br#"{"realtimeInput":{"audio":{"mimeType":"audio/pcm;rate=16000","data":"AAAA"}}}"#
/// );
/// ```
#[derive(Debug)]
pub struct RedactingRecorder<R: WireRecorder> {
    inner: R,
    redactor: Redactor,
}

impl<R: WireRecorder> RedactingRecorder<R> {
    /// Records into `inner`, redacting with `redactor`.
    pub fn new(inner: R, redactor: Redactor) -> Self {
        RedactingRecorder { inner, redactor }
    }

    /// The recorder entries go to.
    pub fn inner(&self) -> &R {
        &self.inner
    }

    /// The rules applied.
    pub fn redactor(&self) -> &Redactor {
        &self.redactor
    }
}

impl<R: WireRecorder> WireRecorder for RedactingRecorder<R> {
    fn record(&self, mut entry: WireEntry) {
        if !entry.is_close_marker()
            && let Cow::Owned(redacted) = self.redactor.redact(&entry.payload)
        {
            entry.payload = Bytes::from(redacted);
        }
        self.inner.record(entry);
    }

    fn flush(&self) {
        self.inner.flush();
    }

    fn error_count(&self) -> u64 {
        self.inner.error_count()
    }
}
