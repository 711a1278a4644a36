//! `reel schema`: the JSON Schemas of reel's recording formats, generated from the types
//! that read and write them (see [`reel_recorder::schema`]).

use std::process::ExitCode;

use clap::{Args, ValueEnum};
use reel_recorder::schema::{
    cassette_schema, journal_entry_schema, llm_tape_schema, trace_schema, wire_entry_schema,
};
use serde_json::{Map, Value};

use super::{CliError, print_stdout};

/// Arguments of `reel schema`.
#[derive(Debug, Args)]
pub struct SchemaArgs {
    /// Which format: one line of a wire log, or of a journal; a per-call tape; a cassette;
    /// an agent trace. Without it, all of them, as `{"wire_entry": …, "journal_entry": …,
    /// "tape": …, "cassette": …, "trace": …}`.
    format: Option<Format>,
}

/// A recording format.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum Format {
    /// A wire-log line.
    Wire,
    /// A journal line.
    Journal,
    /// A per-call tape of one out-of-band model call (a whole file).
    Tape,
    /// A cassette of a session's out-of-band model calls (a whole file).
    Cassette,
    /// An agent trace (a whole file): `reel export LOG --format trace` writes one.
    Trace,
}

/// Prints the schema(s), pretty.
pub fn run(args: SchemaArgs) -> Result<ExitCode, CliError> {
    let schema = match args.format {
        Some(Format::Wire) => wire_entry_schema(),
        Some(Format::Journal) => journal_entry_schema(),
        Some(Format::Tape) => llm_tape_schema(),
        Some(Format::Cassette) => cassette_schema(),
        Some(Format::Trace) => trace_schema(),
        None => {
            let mut both = Map::new();
            both.insert("wire_entry".to_owned(), wire_entry_schema());
            both.insert("journal_entry".to_owned(), journal_entry_schema());
            both.insert("tape".to_owned(), llm_tape_schema());
            both.insert("cassette".to_owned(), cassette_schema());
            both.insert("trace".to_owned(), trace_schema());
            Value::Object(both)
        }
    };
    print_stdout(&format!("{}\n", serde_json::to_string_pretty(&schema)?))?;
    Ok(ExitCode::SUCCESS)
}
