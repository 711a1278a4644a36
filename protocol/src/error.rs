//! Errors of reading a frame: each says what was wrong and where.

/// A frame that could not be read.
///
/// Every variant names the problem precisely enough to act on without the frame at hand.
/// Beyond key names and a JSON path, an error quotes at most the offending scalar (as in
/// `invalid type: string "yes"`); it never carries base64 payloads such as audio.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DecodeError {
    /// The frame is bigger than the configured limit.
    #[error("frame of {size} bytes is over the {limit}-byte limit")]
    TooLarge {
        /// Size of the frame.
        size: usize,
        /// The limit in force.
        limit: usize,
    },
    /// The frame is empty.
    #[error("frame is empty")]
    Empty,
    /// The frame is not UTF-8 text.
    #[error("frame is not valid UTF-8: the first bad byte is at offset {offset}")]
    InvalidUtf8 {
        /// Byte offset of the first invalid byte.
        offset: usize,
    },
    /// The frame is not well-formed JSON.
    #[error("frame is not valid JSON at line {line}, column {column}: {message}")]
    InvalidJson {
        /// 1-based line.
        line: usize,
        /// 1-based column.
        column: usize,
        /// What the parser expected.
        message: String,
    },
    /// The frame is JSON but not an object.
    #[error("frame is a JSON {found}, not an object")]
    NotAnObject {
        /// What was found instead: `array`, `string`, …
        found: &'static str,
    },
    /// The frame holds no message this side of the protocol knows.
    #[error("frame has no known message key (found {found:?}; expected one of {expected:?})")]
    NoKnownKey {
        /// The keys that were there.
        found: Vec<String>,
        /// The keys that would have been understood.
        expected: &'static [&'static str],
    },
    /// A client frame carries more than one message.
    #[error("client frame carries {found:?}; a client frame carries exactly one message")]
    SeveralMessages {
        /// The message keys present.
        found: Vec<&'static str>,
    },
    /// A field has the wrong type or an invalid value.
    #[error("invalid field `{path}`: {message}")]
    InvalidField {
        /// JSON path of the field, e.g. `serverContent.modelTurn.parts[0].text`.
        path: String,
        /// What was wrong with it.
        message: String,
    },
}
