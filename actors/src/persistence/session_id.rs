//! Which session ids are accepted: ones that are safe as a file name in any backend.

use std::fmt;

use super::error::PersistenceError;

/// The longest session id accepted, in bytes.
pub const MAX_SESSION_ID_LEN: usize = 128;

/// What is wrong with a session id.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum SessionIdProblem {
    /// It is empty.
    Empty,
    /// It is longer than [`MAX_SESSION_ID_LEN`].
    TooLong {
        /// Its length in bytes.
        len: usize,
    },
    /// It starts with a dot (hidden files, `.` and `..`).
    LeadingDot,
    /// It holds a character other than ASCII letters, digits, `-`, `_` and `.`.
    ForbiddenChar {
        /// The character.
        ch: char,
        /// Its byte offset.
        at: usize,
    },
}

impl fmt::Display for SessionIdProblem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SessionIdProblem::Empty => write!(f, "it is empty"),
            SessionIdProblem::TooLong { len } => {
                write!(
                    f,
                    "it is {len} bytes long, over the limit of {MAX_SESSION_ID_LEN}"
                )
            }
            SessionIdProblem::LeadingDot => write!(f, "it starts with a dot"),
            SessionIdProblem::ForbiddenChar { ch, at } => write!(
                f,
                "it holds {ch:?} at byte {at}; use only ASCII letters, digits, '-', '_' and '.'"
            ),
        }
    }
}

/// Checks that `id` can name a session: 1 to [`MAX_SESSION_ID_LEN`] ASCII letters, digits,
/// `-`, `_` or `.`, not starting with a dot. Such an id is a plain file name everywhere: it
/// cannot reach outside a directory (`/`, `\`, `..`), hide a file, or clash with the
/// temporary files `reel_persistence::FsPersistence` writes (which start with a dot).
///
/// ```
/// use reel_actors::persistence::{PersistenceError, SessionIdProblem, check_session_id};
///
/// assert!(check_session_id("user-42-session-7").is_ok());
/// let refused = check_session_id("../etc/passwd").unwrap_err();
/// assert!(matches!(
///     refused,
///     PersistenceError::InvalidSessionId { problem: SessionIdProblem::LeadingDot, .. }
/// ));
/// ```
pub fn check_session_id(id: &str) -> Result<(), PersistenceError> {
    let problem = if id.is_empty() {
        Some(SessionIdProblem::Empty)
    } else if id.len() > MAX_SESSION_ID_LEN {
        Some(SessionIdProblem::TooLong { len: id.len() })
    } else if id.starts_with('.') {
        Some(SessionIdProblem::LeadingDot)
    } else {
        id.char_indices()
            .find(|(_, ch)| !(ch.is_ascii_alphanumeric() || matches!(ch, '-' | '_' | '.')))
            .map(|(at, ch)| SessionIdProblem::ForbiddenChar { ch, at })
    };
    match problem {
        None => Ok(()),
        Some(problem) => Err(PersistenceError::InvalidSessionId {
            // Cut, so that an absurd id does not flood a log line.
            id: id.chars().take(MAX_SESSION_ID_LEN).collect(),
            problem,
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn problem(id: &str) -> Option<SessionIdProblem> {
        match check_session_id(id) {
            Ok(()) => None,
            Err(PersistenceError::InvalidSessionId { problem, .. }) => Some(problem),
            Err(other) => panic!("unexpected {other}"),
        }
    }

    #[test]
    fn only_plain_file_names_pass() {
        assert_eq!(problem("user-42_session.7"), None);
        assert_eq!(problem(&"a".repeat(128)), None);
        assert_eq!(problem(""), Some(SessionIdProblem::Empty));
        assert_eq!(
            problem(&"a".repeat(129)),
            Some(SessionIdProblem::TooLong { len: 129 })
        );
        assert_eq!(problem(".."), Some(SessionIdProblem::LeadingDot));
        assert_eq!(problem(".hidden"), Some(SessionIdProblem::LeadingDot));
        assert_eq!(
            problem("a/../../b"),
            Some(SessionIdProblem::ForbiddenChar { ch: '/', at: 1 })
        );
        assert_eq!(
            problem("a\\b"),
            Some(SessionIdProblem::ForbiddenChar { ch: '\\', at: 1 })
        );
        assert_eq!(
            problem("é"),
            Some(SessionIdProblem::ForbiddenChar { ch: 'é', at: 0 })
        );
        assert_eq!(
            problem("a\0b"),
            Some(SessionIdProblem::ForbiddenChar { ch: '\0', at: 1 })
        );
        assert_eq!(
            check_session_id("a b").unwrap_err().to_string(),
            "invalid session id \"a b\": it holds ' ' at byte 1; use only ASCII letters, \
             digits, '-', '_' and '.'"
        );
    }
}
