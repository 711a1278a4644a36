//! What is wrong with a JSON recording, said without the recorded values: the parser's
//! message with its string literals blanked, and where the fault is — the line and column
//! of text that is not JSON, or the JSON path of a value of the wrong shape.
//!
//! The JSON Lines reader ([`crate::jsonl`]), the trace reader ([`crate::trace`]) and the
//! tape and cassette reader ([`crate::llm_tape`]) all say it this way; each wraps a
//! [`JsonFault`] in its own error type.

use serde::de::DeserializeOwned;
use serde_json::error::Category;

/// A parser error, told without recorded values.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum JsonFault {
    /// Not JSON: a syntax error, text after the document, or a document cut short.
    Syntax {
        /// 1-based line.
        line: usize,
        /// 1-based column.
        column: usize,
        /// What the parser expected.
        message: String,
    },
    /// JSON of the wrong shape: a missing field, a wrong type, a value out of range.
    Invalid {
        /// The JSON path of the faulty value (`stream[1].delayNs`; `.` is the whole
        /// document); a missing field is named by its own path.
        at: String,
        /// What is wrong with it.
        message: String,
    },
}

impl JsonFault {
    /// `error`, met at the JSON path `at`.
    pub(crate) fn new(error: &serde_json::Error, at: String) -> JsonFault {
        let message = parser_message(error);
        match error.classify() {
            Category::Data => JsonFault::Invalid {
                at: field_path(at, &message),
                message,
            },
            Category::Syntax | Category::Eof | Category::Io => JsonFault::Syntax {
                line: error.line(),
                column: error.column(),
                message,
            },
        }
    }
}

/// Parses `bytes` as one JSON document and nothing after it; on failure, the JSON path
/// where it failed (`.` for text after the document) and the parser's error.
pub(crate) fn parse_at_path<T: DeserializeOwned>(
    bytes: &[u8],
) -> Result<T, (String, serde_json::Error)> {
    let mut deserializer = serde_json::Deserializer::from_slice(bytes);
    let document = serde_path_to_error::deserialize(&mut deserializer)
        .map_err(|error| (error.path().to_string(), error.into_inner()))?;
    // Anything after the document is not JSON either.
    deserializer
        .end()
        .map_err(|error| (".".to_owned(), error))?;
    Ok(document)
}

/// The parser's complaint without its position (the callers say it their own way), string
/// literals blanked.
pub(crate) fn parser_message(error: &serde_json::Error) -> String {
    // serde_json's Display appends " at line L column C".
    let text = error.to_string();
    blank_string_literals(
        text.rsplit_once(" at line ")
            .map_or(text.as_str(), |(head, _)| head),
    )
}

/// `text` with the inside of every `"…"` replaced by `…`, so that no recorded value (a
/// prompt, an answer, a key) reaches an error message or a log line. serde writes a string
/// value escaped, so a `\"` inside one is part of it, not its end; a literal left open
/// runs to the end of `text`.
fn blank_string_literals(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars();
    while let Some(c) = chars.next() {
        out.push(c);
        if c != '"' {
            continue;
        }
        // Skip the literal's content, up to its closing quote (if any).
        out.push('…');
        while let Some(inside) = chars.next() {
            match inside {
                '\\' => {
                    chars.next();
                }
                '"' => {
                    out.push('"');
                    break;
                }
                _ => {}
            }
        }
    }
    out
}

/// serde reports a missing field at the object that lacks it; point at the field itself.
fn field_path(at: String, message: &str) -> String {
    let missing = message
        .strip_prefix("missing field `")
        .and_then(|rest| rest.strip_suffix('`'));
    match missing {
        Some(field) if at == "." => field.to_owned(),
        Some(field) => format!("{at}.{field}"),
        None => at,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn string_literals_are_blanked() {
        assert_eq!(
            blank_string_literals(r#"invalid type: string "sk-secret", expected u64"#),
            r#"invalid type: string "…", expected u64"#
        );
        assert_eq!(blank_string_literals(r#"a "" b"#), r#"a "…" b"#);
    }

    #[test]
    fn an_escaped_quote_does_not_end_a_literal() {
        assert_eq!(
            blank_string_literals(r#"invalid type: string "say \"sk-1\" now", expected u64"#),
            r#"invalid type: string "…", expected u64"#
        );
        assert_eq!(
            blank_string_literals(r#"string "a\\", then "b""#),
            r#"string "…", then "…""#
        );
        assert_eq!(blank_string_literals(r#"open "sk-1"#), r#"open "…"#);
    }

    #[test]
    fn a_missing_field_is_named_by_its_own_path() {
        assert_eq!(field_path(".".into(), "missing field `stream`"), "stream");
        assert_eq!(
            field_path("meta".into(), "missing field `label`"),
            "meta.label"
        );
        assert_eq!(
            field_path("stream[1].delayNs".into(), "invalid type"),
            "stream[1].delayNs"
        );
    }

    #[test]
    fn faults_say_where_without_the_values() {
        #[derive(Debug, serde::Deserialize)]
        struct Doc {
            #[allow(dead_code)] // read only to fail
            n: u64,
        }
        let fault = |text: &str| {
            let (at, error) = parse_at_path::<Doc>(text.as_bytes()).unwrap_err();
            JsonFault::new(&error, at)
        };
        assert_eq!(
            fault(r#"{"n": "sk-secret"}"#),
            JsonFault::Invalid {
                at: "n".into(),
                message: r#"invalid type: string "…", expected u64"#.into()
            }
        );
        assert_eq!(
            fault(r#"{"n": "say \"sk-1\" now"}"#),
            JsonFault::Invalid {
                at: "n".into(),
                message: r#"invalid type: string "…", expected u64"#.into()
            }
        );
        assert_eq!(
            fault("{}"),
            JsonFault::Invalid {
                at: "n".into(),
                message: "missing field `n`".into()
            }
        );
        assert_eq!(
            fault(r#"{"n": 1} x"#),
            JsonFault::Syntax {
                line: 1,
                column: 10,
                message: "trailing characters".into()
            }
        );
    }
}
