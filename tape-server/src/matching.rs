//! How a client frame is compared with the recorded one.
//!
//! Both frames are read with [`reel_protocol::decode_client`] and written back with
//! [`reel_protocol::encode`]: the canonical form, lowerCamelCase, standard base64. So key
//! casing (the Python SDK's `client_content`, `mime_type`), key order, whitespace and the
//! base64 alphabet (the Python SDK writes URL-safe) never make two frames differ.
//! [`Matching::Strict`] then wants the canonical JSON equal; [`Matching::Loose`] first
//! applies its [`MatchRules`]. A difference is reported as JSON paths
//! ([`reel_protocol::json::json_diff`]).

use reel_protocol::{DecodeError, decode_client, encode};
use serde_json::Value;

use super::error::RulesError;
use super::rules::{CompiledRules, MatchRules};
use reel_protocol::json::{PathDiff, json_diff, payload_json};

/// How strictly client frames must match the tape.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum Matching {
    /// The canonical frames must be equal. The default.
    #[default]
    Strict,
    /// The canonical frames must be equal once the rules' fields are masked.
    Loose(MatchRules),
}

impl Matching {
    /// Loose matching with the built-in rules.
    pub fn loose() -> Self {
        Matching::Loose(MatchRules::default())
    }
}

/// A [`Matching`] ready to compare frames.
#[derive(Debug, Clone, Default)]
pub(crate) struct FrameMatcher {
    rules: Option<CompiledRules>,
}

impl FrameMatcher {
    /// Checks the matching's rules.
    pub(crate) fn new(matching: &Matching) -> Result<Self, RulesError> {
        let rules = match matching {
            Matching::Strict => None,
            Matching::Loose(rules) => Some(rules.compile()?),
        };
        Ok(FrameMatcher { rules })
    }

    /// The form a client frame is compared in: canonical, then masked by the rules.
    pub(crate) fn prepare(&self, payload: &[u8]) -> Result<Value, DecodeError> {
        let mut value = canonical(payload)?;
        self.mask(&mut value);
        Ok(value)
    }

    /// The compared form of a recorded frame, and whether reel read it as a Live client
    /// frame: one reel cannot read is compared as the JSON it holds (or as a string), and
    /// the flag is `false`.
    pub(crate) fn prepare_recorded(&self, payload: &[u8]) -> (Value, bool) {
        let (mut value, readable) = match canonical(payload) {
            Ok(value) => (value, true),
            Err(_) => (payload_json(payload), false),
        };
        self.mask(&mut value);
        (value, readable)
    }

    /// Masks what the rules ignore in `value` (a frame, or a REST call's request).
    pub(crate) fn mask(&self, value: &mut Value) {
        if let Some(rules) = &self.rules {
            rules.apply(value);
        }
    }

    /// The differences between a recorded frame and a client frame, both prepared.
    pub(crate) fn diff(expected: &Value, actual: &Value) -> Vec<PathDiff> {
        if expected == actual {
            Vec::new()
        } else {
            json_diff(expected, actual)
        }
    }
}

/// The canonical JSON of a client frame: decoded, re-encoded, parsed.
pub fn canonical(payload: &[u8]) -> Result<Value, DecodeError> {
    let message = decode_client(payload)?;
    // `encode` writes valid JSON; `Null` would only stand for a frame that cannot be encoded.
    Ok(serde_json::from_slice(&encode(&message)).unwrap_or(Value::Null))
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn casing_order_whitespace_and_base64_alphabet_do_not_matter() {
        let matcher = FrameMatcher::new(&Matching::Strict).unwrap();
        let camel =
            br#"{"realtimeInput":{"audio":{"mimeType":"audio/pcm;rate=16000","data":"+/8="}}}"#;
        let snake = br#"{"realtime_input": {"audio": {"data": "-_8=", "mime_type": "audio/pcm;rate=16000"}}}"#;
        assert_eq!(
            matcher.prepare(camel).unwrap(),
            matcher.prepare(snake).unwrap()
        );
        assert_eq!(
            matcher.prepare_recorded(camel).0,
            matcher.prepare(snake).unwrap()
        );
    }

    #[test]
    fn loose_matching_masks_audio_bytes() {
        let matcher = FrameMatcher::new(&Matching::loose()).unwrap();
        let a = br#"{"realtimeInput":{"audio":{"mimeType":"audio/pcm","data":"AAAA"}}}"#;
        let b = br#"{"realtimeInput":{"audio":{"mimeType":"audio/pcm","data":"AQID"}}}"#;
        let a = matcher.prepare(a).unwrap();
        assert_eq!(a, matcher.prepare(b).unwrap());
        let strict = FrameMatcher::new(&Matching::Strict).unwrap();
        let diffs = FrameMatcher::diff(
            &strict
                .prepare(br#"{"realtimeInput":{"audio":{"data":"AAAA"}}}"#)
                .unwrap(),
            &strict
                .prepare(br#"{"realtimeInput":{"audio":{"data":"AQID"}}}"#)
                .unwrap(),
        );
        assert_eq!(
            diffs,
            vec![PathDiff {
                path: "realtimeInput.audio.data".into(),
                expected: Some(json!("AAAA")),
                actual: Some(json!("AQID")),
            }]
        );
    }

    #[test]
    fn an_unreadable_recorded_frame_is_compared_as_it_is() {
        let matcher = FrameMatcher::default();
        assert_eq!(
            matcher.prepare_recorded(b"{\"x\":1}"),
            (json!({"x": 1}), false)
        );
        assert_eq!(matcher.prepare_recorded(b"nope"), (json!("nope"), false));
        assert!(matcher.prepare(b"nope").is_err());
    }
}
