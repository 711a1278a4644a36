//! The `reel` command's log: `tracing` events from every crate, on standard error, filtered
//! by `RUST_LOG` (default `warn`), so that what the libraries warn about — a recording
//! whose writes failed, a tape read with a warning, a snapshot not saved — is seen.
//!
//! The default leaves out the warnings the commands already print in their own words (a
//! torn or salvaged line, a tape server's connection report), so nothing is said twice;
//! `RUST_LOG` replaces the whole default (`RUST_LOG=reel_tape_server=debug`,
//! `RUST_LOG=off`).

use std::io::IsTerminal;

use tracing_subscriber::EnvFilter;

/// What is logged when `RUST_LOG` is unset or empty: warnings and errors, less the ones the
/// commands report themselves.
pub const DEFAULT_FILTER: &str =
    "warn,reel_recorder::jsonl=error,reel_tape_server::connection=error";

/// Installs the subscriber (once; a second call does nothing). A `RUST_LOG` that is not a
/// filter is said on standard error, and the default is used.
pub fn init() {
    let filter = match std::env::var("RUST_LOG") {
        Ok(spec) if !spec.trim().is_empty() => EnvFilter::try_new(&spec).unwrap_or_else(|error| {
            eprintln!(
                "reel: warning: RUST_LOG={spec:?} is not a log filter ({error}); logging warnings"
            );
            EnvFilter::new(DEFAULT_FILTER)
        }),
        _ => EnvFilter::new(DEFAULT_FILTER),
    };
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_ansi(std::io::stderr().is_terminal())
        .try_init();
}
