//! The `reel` command line.
//!
//! Exit codes: 0 success, 1 the command's check failed (drift, a difference), 2 bad input
//! (a missing file, a malformed frame or log).
//!
//! Library warnings (a recording write that failed, say) go to standard error through
//! `tracing`, filtered by `RUST_LOG` (default `warn`).

#![cfg_attr(not(test), deny(clippy::unwrap_used, clippy::expect_used))]

mod cli;

use std::process::ExitCode;

use clap::Parser;

/// The command's allocator: jemalloc, whose per-thread caches take a block freed on another
/// thread without a lock. With glibc's malloc, `reel replay`'s tape thread (which parses each
/// entry) and the tree's thread (which frees it) contended on one arena's lock: tens of
/// thousands of futex waits a two-hour log, half of the command's CPU above `reel show`'s
/// (decision 0080). The library leaves the choice to the program that uses it.
#[cfg(not(target_env = "msvc"))]
#[global_allocator]
static ALLOCATOR: tikv_jemallocator::Jemalloc = tikv_jemallocator::Jemalloc;

fn main() -> ExitCode {
    let args = cli::Cli::parse();
    cli::init_logging();
    match cli::run(args) {
        Ok(code) => code,
        Err(error) => {
            // Error messages quote file names and recorded text: shown, never obeyed.
            eprintln!("reel: {}", cli::terminal::visible(&error.to_string()));
            ExitCode::from(2)
        }
    }
}
