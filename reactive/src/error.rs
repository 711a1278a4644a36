//! [`ReactiveError`]: why a set of reactive rules was refused before the session started.

/// Why a [`ReactiveConfig`](crate::ReactiveConfig) was refused. Found when it is built
/// (by [`ReactiveConfig::build`](crate::ReactiveConfig::build), before any session
/// starts), never by a panic.
///
/// ```
/// use reel_reactive::{ComputedRegistry, ReactiveError};
///
/// let computed = ComputedRegistry::new()
///     .computed("a", &["derived:b"], |_| None)
///     .computed("b", &["derived:a"], |_| None);
/// let error = computed.order().unwrap_err();
/// assert_eq!(error, ReactiveError::Cycle { path: vec!["a".into(), "b".into(), "a".into()] });
/// assert_eq!(
///     error.to_string(),
///     "computed values depend on each other in a cycle: a -> b -> a (each depends on the next)"
/// );
/// ```
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ReactiveError {
    /// Computed values depend on each other in a cycle. `path` names it, each value
    /// followed by one it depends on, back to the first: `["a", "b", "a"]` is "`a` depends
    /// on `derived:b`, which depends on `derived:a`".
    #[error(
        "computed values depend on each other in a cycle: {} (each depends on the next)",
        path.join(" -> ")
    )]
    Cycle {
        /// The computed values of the cycle, the first repeated at the end.
        path: Vec<String>,
    },
    /// Two computed values have the same name (and so would write the same key).
    #[error("computed value `{name}` is registered twice; names must be unique")]
    DuplicateComputed {
        /// The name.
        name: String,
    },
    /// Two temporal patterns have the same name (their progress is kept by name).
    #[error("temporal pattern `{name}` is registered twice; names must be unique")]
    DuplicateTemporal {
        /// The name.
        name: String,
    },
    /// A rate or turn pattern that would fire on zero occurrences.
    #[error("temporal pattern `{name}` has a count of 0; it needs at least 1")]
    ZeroCount {
        /// The pattern.
        name: String,
    },
}
