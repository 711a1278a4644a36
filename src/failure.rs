//! [`Failure`]: what a program's `main` returns so that an error reaches the user as its
//! message, not as Rust's `Debug` text.

use std::error::Error;
use std::fmt;

/// Any error, boxed, whose `Debug` is its message and the chain of its causes: the return
/// type of a `main` that uses `?`.
///
/// `fn main() -> Result<(), Box<dyn Error>>` prints a failing `main`'s error with `Debug`,
/// which for reel's typed errors is `Error: Endpoint(MissingApiKey)`. With
/// `Result<(), reel::Failure>` the same program prints the message, which says what to
/// set:
///
/// ```text
/// Error: cannot connect: missing required environment variable: GEMINI_API_KEY (…)
/// ```
///
/// ```
/// fn main() -> Result<(), reel::Failure> {
///     let text = std::fs::read_to_string("Cargo.toml")?; // any error converts
///     assert!(!text.is_empty());
///     Ok(())
/// }
/// ```
pub struct Failure(Box<dyn Error + Send + Sync + 'static>);

impl Failure {
    /// The error inside.
    pub fn error(&self) -> &(dyn Error + Send + Sync + 'static) {
        &*self.0
    }

    /// A failure that is only a message.
    pub fn msg(message: impl Into<String>) -> Failure {
        Failure(message.into().into())
    }
}

impl<E: Error + Send + Sync + 'static> From<E> for Failure {
    fn from(error: E) -> Failure {
        Failure(Box::new(error))
    }
}

impl fmt::Display for Failure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(&self.0, f)
    }
}

/// The message, then each cause on a line of its own (skipping a cause whose text the
/// message already ends with, as `thiserror`'s `#[error("…: {0}")]` wrappers repeat it).
impl fmt::Debug for Failure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let message = self.0.to_string();
        write!(f, "{message}")?;
        let mut shown = message;
        let mut cause = self.0.source();
        while let Some(error) = cause {
            let text = error.to_string();
            if !shown.ends_with(&text) {
                write!(f, "\n  caused by: {text}")?;
            }
            shown = text;
            cause = error.source();
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, thiserror::Error)]
    enum Inner {
        #[error("missing required environment variable: GEMINI_API_KEY")]
        MissingKey,
    }

    #[derive(Debug, thiserror::Error)]
    enum Outer {
        #[error("cannot connect: {0}")]
        Endpoint(#[from] Inner),
        #[error("cannot read the tape")]
        Read(#[source] std::io::Error),
    }

    #[test]
    fn debug_is_the_message_and_causes_not_the_variant_names() {
        let failure = Failure::from(Outer::Endpoint(Inner::MissingKey));
        assert_eq!(
            format!("{failure:?}"),
            "cannot connect: missing required environment variable: GEMINI_API_KEY"
        );
        let failure = Failure::from(Outer::Read(std::io::Error::other("disk on fire")));
        assert_eq!(
            format!("{failure:?}"),
            "cannot read the tape\n  caused by: disk on fire"
        );
        assert_eq!(format!("{:?}", Failure::msg("plain")), "plain");
    }
}
