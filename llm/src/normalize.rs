//! Normalizers: rewrite the parts of a request that change from run to run (ids, times,
//! numbers) into fixed placeholders, so two requests that differ only there compare equal.
//!
//! Each normalizer is a plain rule with a fixed meaning; there is no guessing. They rewrite
//! string values (never object keys) and, for [`Normalizer::Numbers`], number values.

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// One way of normalizing a request before comparing it, loadable from JSON:
///
/// ```json
/// [{"kind": "uuids"}, {"kind": "isoDateTimes"}, {"kind": "numbers"},
///  {"kind": "prefixedIds", "prefixes": ["call_", "req-"]}]
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "camelCase")]
#[non_exhaustive]
pub enum Normalizer {
    /// Every UUID in a string (`8-4-4-4-12` hex digits, either case) becomes `<uuid>`.
    Uuids,
    /// Every ISO 8601 date or time in a string becomes a placeholder:
    /// `2025-12-10T18:00:00.5Z` (a date, `T` or a space, `hh:mm`, optional seconds,
    /// fraction and `Z` or offset) becomes `<datetime>`, a lone `2025-12-10` becomes `<date>`,
    /// a lone `18:00:00` (seconds required) becomes `<time>`.
    IsoDateTimes,
    /// Every number value becomes the string `<number>`, and every run of digits in a
    /// string (with a fraction: `3.25`) becomes `<number>`; signs and letters around it stay.
    Numbers,
    /// Every id made of one of `prefixes` followed by letters, digits, `_` or `-` becomes the
    /// prefix followed by `<id>` (`call_8f3a` with prefix `call_` becomes `call_<id>`). A
    /// prefix counts only where it starts a word.
    PrefixedIds {
        /// The prefixes that start an id (`call_`, `req-`).
        prefixes: Vec<String>,
    },
}

impl Normalizer {
    /// Rewrites every string (and, for [`Normalizer::Numbers`], number) in `value`.
    pub(crate) fn apply(&self, value: &mut Value) {
        match value {
            Value::String(text) => {
                if let Some(rewritten) = self.rewrite(text) {
                    *text = rewritten;
                }
            }
            Value::Number(_) if *self == Normalizer::Numbers => {
                *value = Value::from("<number>");
            }
            Value::Array(items) => items.iter_mut().for_each(|item| self.apply(item)),
            Value::Object(map) => map.values_mut().for_each(|item| self.apply(item)),
            Value::Null | Value::Bool(_) | Value::Number(_) => {}
        }
    }

    /// `text` rewritten, or `None` when nothing in it matched.
    fn rewrite(&self, text: &str) -> Option<String> {
        match self {
            Normalizer::Uuids => replace_matches(text, |bytes, at| {
                (starts_word(bytes, at) && is_uuid(bytes, at)).then_some((at + 36, "<uuid>"))
            }),
            Normalizer::IsoDateTimes => replace_matches(text, |bytes, at| {
                if !starts_word(bytes, at) {
                    return None;
                }
                date_time(bytes, at).filter(|(end, _)| ends_word(bytes, *end))
            }),
            Normalizer::Numbers => replace_matches(text, |bytes, at| {
                let previous_is_digit = at > 0 && bytes[at - 1].is_ascii_digit();
                if previous_is_digit {
                    return None;
                }
                let mut end = digits(bytes, at)?;
                if bytes.get(end) == Some(&b'.')
                    && let Some(fraction_end) = digits(bytes, end + 1)
                {
                    end = fraction_end;
                }
                Some((end, "<number>"))
            }),
            Normalizer::PrefixedIds { prefixes } => {
                let mut changed: Option<String> = None;
                for prefix in prefixes.iter().filter(|prefix| !prefix.is_empty()) {
                    let current = changed.as_deref().unwrap_or(text);
                    if let Some(rewritten) = replace_ids(current, prefix) {
                        changed = Some(rewritten);
                    }
                }
                changed
            }
        }
    }
}

/// Rewrites `text` where `matcher` matches: at each byte, `matcher(bytes, at)` returns the
/// end of a match and its replacement, or `None`. Matches start and end on ASCII bytes, so
/// every cut falls on a character boundary.
fn replace_matches(
    text: &str,
    matcher: impl Fn(&[u8], usize) -> Option<(usize, &'static str)>,
) -> Option<String> {
    let bytes = text.as_bytes();
    let mut out = String::new();
    let (mut at, mut copied) = (0, 0);
    while at < bytes.len() {
        match matcher(bytes, at) {
            Some((end, replacement)) if end > at => {
                out.push_str(&text[copied..at]);
                out.push_str(replacement);
                at = end;
                copied = end;
            }
            _ => at += 1,
        }
    }
    if copied == 0 {
        return None;
    }
    out.push_str(&text[copied..]);
    Some(out)
}

/// `text` with every `prefix` + id-characters rewritten to `prefix<id>`.
fn replace_ids(text: &str, prefix: &str) -> Option<String> {
    let mut out = String::new();
    let mut copied = 0;
    for (at, _) in text.match_indices(prefix) {
        if at < copied || !starts_word(text.as_bytes(), at) {
            continue;
        }
        let id_start = at + prefix.len();
        let id_len = text[id_start..]
            .bytes()
            .take_while(|b| b.is_ascii_alphanumeric() || *b == b'_' || *b == b'-')
            .count();
        if id_len == 0 {
            continue;
        }
        out.push_str(&text[copied..id_start]);
        out.push_str("<id>");
        copied = id_start + id_len;
    }
    if copied == 0 {
        return None;
    }
    out.push_str(&text[copied..]);
    Some(out)
}

fn is_word(byte: u8) -> bool {
    byte.is_ascii_alphanumeric() || byte == b'_'
}

/// Whether a word may start at `at` (the byte before is not a letter, digit or `_`).
fn starts_word(bytes: &[u8], at: usize) -> bool {
    at == 0 || !is_word(bytes[at - 1])
}

/// Whether a word may end at `end` (the byte there is not a letter, digit or `_`).
fn ends_word(bytes: &[u8], end: usize) -> bool {
    bytes.get(end).is_none_or(|b| !is_word(*b))
}

/// The end of a run of one or more ASCII digits starting at `at`.
fn digits(bytes: &[u8], at: usize) -> Option<usize> {
    let count = bytes
        .get(at..)?
        .iter()
        .take_while(|b| b.is_ascii_digit())
        .count();
    (count > 0).then_some(at + count)
}

/// Whether `bytes[at..]` starts with exactly `n` digits' worth of digits.
fn fixed_digits(bytes: &[u8], at: usize, n: usize) -> bool {
    bytes
        .get(at..at + n)
        .is_some_and(|run| run.iter().all(u8::is_ascii_digit))
}

fn is_uuid(bytes: &[u8], at: usize) -> bool {
    let Some(candidate) = bytes.get(at..at + 36) else {
        return false;
    };
    let shape_ok = candidate.iter().enumerate().all(|(i, b)| match i {
        8 | 13 | 18 | 23 => *b == b'-',
        _ => b.is_ascii_hexdigit(),
    });
    shape_ok && ends_word(bytes, at + 36) && bytes.get(at + 36) != Some(&b'-')
}

/// A date-time, date or time starting at `at`: its end and placeholder.
fn date_time(bytes: &[u8], at: usize) -> Option<(usize, &'static str)> {
    let is = |i: usize, c: u8| bytes.get(i) == Some(&c);
    let date = fixed_digits(bytes, at, 4)
        && is(at + 4, b'-')
        && fixed_digits(bytes, at + 5, 2)
        && is(at + 7, b'-')
        && fixed_digits(bytes, at + 8, 2);
    if date {
        let after_date = at + 10;
        let separated = matches!(bytes.get(after_date), Some(b'T' | b't' | b' '));
        if separated && let Some(end) = time(bytes, after_date + 1, false) {
            return Some((end, "<datetime>"));
        }
        return Some((after_date, "<date>"));
    }
    time(bytes, at, true).map(|end| (end, "<time>"))
}

/// `hh:mm[:ss[.fff]][Z|±hh[:]mm]` at `at` (seconds required when `needs_seconds`): its end.
fn time(bytes: &[u8], at: usize, needs_seconds: bool) -> Option<usize> {
    let is = |i: usize, c: u8| bytes.get(i) == Some(&c);
    if !(fixed_digits(bytes, at, 2) && is(at + 2, b':') && fixed_digits(bytes, at + 3, 2)) {
        return None;
    }
    let mut end = at + 5;
    if is(end, b':') && fixed_digits(bytes, end + 1, 2) {
        end += 3;
        if is(end, b'.')
            && let Some(fraction_end) = digits(bytes, end + 1)
        {
            end = fraction_end;
        }
    } else if needs_seconds {
        return None;
    }
    match bytes.get(end) {
        Some(b'Z' | b'z') => end += 1,
        Some(b'+' | b'-') if fixed_digits(bytes, end + 1, 2) => {
            if is(end + 3, b':') && fixed_digits(bytes, end + 4, 2) {
                end += 6;
            } else if fixed_digits(bytes, end + 3, 2) {
                end += 5;
            }
        }
        _ => {}
    }
    Some(end)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn rewrite(normalizer: &Normalizer, text: &str) -> String {
        normalizer.rewrite(text).unwrap_or_else(|| text.to_owned())
    }

    #[test]
    fn uuids_become_placeholders() {
        let uuids = Normalizer::Uuids;
        assert_eq!(
            rewrite(&uuids, "id 550e8400-E29B-41d4-a716-446655440000, ok"),
            "id <uuid>, ok"
        );
        assert_eq!(
            rewrite(&uuids, "x550e8400-e29b-41d4-a716-446655440000"),
            "x550e8400-e29b-41d4-a716-446655440000"
        );
        assert_eq!(
            rewrite(&uuids, "550e8400-e29b-41d4-a716-44665544000"),
            "550e8400-e29b-41d4-a716-44665544000"
        );
        assert_eq!(uuids.rewrite("no ids here"), None);
    }

    #[test]
    fn dates_and_times_become_placeholders() {
        let dates = Normalizer::IsoDateTimes;
        for (text, expected) in [
            ("Today is 2025-12-10.", "Today is <date>."),
            ("at 2025-12-10T18:00:00Z sharp", "at <datetime> sharp"),
            ("at 2025-12-10T18:00:00.123+05:30", "at <datetime>"),
            ("at 2025-12-10 18:00 local", "at <datetime> local"),
            ("2025-12-10t18:00:00-0800", "<datetime>"),
            ("it is 18:00:05 now", "it is <time> now"),
            ("it is 18:00 now", "it is 18:00 now"),
            ("v12025-12-10", "v12025-12-10"),
            ("2025-12-10x", "2025-12-10x"),
            ("héllo 2025-12-10 wörld", "héllo <date> wörld"),
        ] {
            assert_eq!(rewrite(&dates, text), expected, "{text}");
        }
    }

    #[test]
    fn numbers_become_placeholders_in_strings_and_values() {
        let numbers = Normalizer::Numbers;
        assert_eq!(
            rewrite(&numbers, "order 42 costs -3.25 in v2"),
            "order <number> costs -<number> in v<number>"
        );
        assert_eq!(rewrite(&numbers, "1.2.3"), "<number>.<number>");
        let mut value = json!({"temperature": 0.7, "n": [1, "2 apples"], "ok": true});
        numbers.apply(&mut value);
        assert_eq!(
            value,
            json!({"temperature": "<number>", "n": ["<number>", "<number> apples"], "ok": true})
        );
    }

    #[test]
    fn prefixed_ids_keep_their_prefix() {
        let ids = Normalizer::PrefixedIds {
            prefixes: vec!["call_".into(), "req-".into(), String::new()],
        };
        assert_eq!(
            rewrite(&ids, "call_8f3a-x and req-77, not recall_9 nor call_"),
            "call_<id> and req-<id>, not recall_9 nor call_"
        );
        assert_eq!(ids.rewrite("nothing"), None);
    }

    #[test]
    fn normalizers_load_from_json() {
        let loaded: Vec<Normalizer> = serde_json::from_value(json!([
            {"kind": "uuids"}, {"kind": "isoDateTimes"}, {"kind": "numbers"},
            {"kind": "prefixedIds", "prefixes": ["call_"]}
        ]))
        .unwrap();
        assert_eq!(
            loaded,
            [
                Normalizer::Uuids,
                Normalizer::IsoDateTimes,
                Normalizer::Numbers,
                Normalizer::PrefixedIds {
                    prefixes: vec!["call_".into()]
                }
            ]
        );
        assert!(serde_json::from_value::<Normalizer>(json!({"kind": "magic"})).is_err());
    }
}
