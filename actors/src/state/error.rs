//! [`StateError`]: why a write to the session state did not happen.

/// Why a write did not happen.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum StateError {
    /// The value could not be turned into JSON.
    #[error("value for `{key}` is not representable as JSON: {message}")]
    Serialize {
        /// The key written.
        key: String,
        /// The serializer's error.
        message: String,
    },
    /// A typed read-modify-write found a value of another shape at the key; nothing was
    /// written (the value is not replaced by the default).
    #[error("value at `{key}` is a JSON {found}, which does not read as `{expected}`")]
    WrongType {
        /// The state key.
        key: String,
        /// The kind of JSON value found: `string`, `number`, `object`, …
        found: &'static str,
        /// The Rust type expected.
        expected: &'static str,
    },
    /// The state store did not answer (stopped, or failed while applying this write).
    #[error("the state store is unavailable: {reason}")]
    StoreUnavailable {
        /// What became of the write: not applied (a `modify` closure panicked), or unknown
        /// (no answer in time).
        reason: String,
    },
}
