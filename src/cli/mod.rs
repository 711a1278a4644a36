//! Subcommands of `reel`, one file each.

mod decode;

use std::process::ExitCode;

use clap::{Parser, Subcommand};

/// reel: record, replay and inspect Gemini Live sessions.
#[derive(Debug, Parser)]
#[command(name = "reel", version, about)]
pub struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Decode Live frames (one JSON frame per line) and print what each one means.
    Decode(decode::DecodeArgs),
}

/// An error that ends the command with exit code 2.
#[derive(Debug, thiserror::Error)]
pub enum CliError {
    /// A file could not be read.
    #[error("cannot read {path}: {source}")]
    Read {
        /// The file.
        path: String,
        /// Why.
        source: std::io::Error,
    },
}

/// Runs the parsed command line.
pub fn run(cli: Cli) -> Result<ExitCode, CliError> {
    match cli.command {
        Command::Decode(args) => decode::run(args),
    }
}
