//! Subcommands of `reel`, one file each.
//!
//! Exit codes, for every command: 0 success (for `replay`, the journal matched or none was
//! given; for `diff`, the logs are the same), 1 the command's check failed (journal drift,
//! a difference), 2 bad input (a missing, empty, binary or corrupt file, a log without a
//! setup, a journal of another session), with one line on stderr naming the file.

mod decode;
mod demo;
mod diff;
mod error;
mod eval;
mod export;
mod flow;
mod input;
mod junit;
mod llm_tape_file;
mod logging;
mod progress;
mod replay;
mod replay_farm;
mod replay_report;
mod schema;
mod serve;
mod show;
mod stop_signal;
mod studio;
pub(crate) mod terminal;
mod time;
mod trace;
mod trace_diff;

use std::io::Write;
use std::process::ExitCode;

use clap::{Parser, Subcommand};

pub use error::CliError;
pub use logging::init as init_logging;

/// reel: record, replay and inspect Gemini Live sessions.
#[derive(Debug, Parser)]
#[command(name = "reel", version, about)]
pub struct Cli {
    #[command(subcommand)]
    command: Command,
}

/// `--s3-endpoint`, for the commands that read `s3://` paths (`replay`, `show`, `studio`).
#[derive(Debug, Clone, clap::Args)]
pub(crate) struct S3Args {
    /// The endpoint of an S3-compatible server for `s3://` paths (default:
    /// `AWS_ENDPOINT_URL`, else AWS itself); credentials from the AWS environment variables.
    #[arg(long, value_name = "URL")]
    pub(crate) s3_endpoint: Option<String>,
}

impl S3Args {
    /// Makes `--s3-endpoint` the endpoint of this run's `s3://` reads ([`s3_endpoint`]).
    pub(crate) fn apply(&self) {
        // Set once: one command runs per process.
        let _ = S3_ENDPOINT.set(self.s3_endpoint.clone());
    }
}

/// `--s3-endpoint`, set once per run by the command that takes it.
static S3_ENDPOINT: std::sync::OnceLock<Option<String>> = std::sync::OnceLock::new();

/// The endpoint `s3://` paths are read from this run (`--s3-endpoint`), if one was given.
pub(crate) fn s3_endpoint() -> Option<&'static str> {
    S3_ENDPOINT.get().and_then(Option::as_deref)
}

// Parsed once per run and matched once: the size of the largest arguments costs nothing.
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Subcommand)]
enum Command {
    /// The main job: a weather assistant on the full actor tree talks to the bundled tape
    /// over loopback (or the real API with --live), is recorded, then replayed offline.
    Demo(demo::DemoArgs),
    /// Decode Live frames (one JSON frame per line) and print what each one means.
    Decode(decode::DecodeArgs),
    /// Replay a wire log offline through the real session tree; report it turn by turn and
    /// diff it against the recorded journal (exit 1 on drift).
    Replay(replay::ReplayArgs),
    /// Show a wire log as a timeline, one line per frame.
    Show(show::ShowArgs),
    /// The first divergence between two wire logs (or two agent traces, turn by turn), with
    /// context (exit 1 if they differ).
    Diff(diff::DiffArgs),
    /// Print the JSON Schemas of the recording formats: wire log, journal, tape, cassette, trace.
    Schema(schema::SchemaArgs),
    /// Serve tapes to any Live client (replay), record sessions through the real API
    /// (record), or both (auto); runs until Ctrl-C or SIGTERM.
    Serve(serve::ServeArgs),
    /// Export a wire log as an agent trace or as OpenTelemetry spans (OTLP/JSON).
    Export(export::ExportArgs),
    /// Score recordings against a suite of criteria (`reel eval SUITE DIR`): a report per
    /// case and recording as Markdown, JSON, JUnit XML or TRX; exit 1 when a case fails.
    Eval(eval::EvalArgs),
    /// Read agent traces: `reel trace show FILE`.
    Trace(trace::TraceArgs),
    /// Governed flows: score a recorded session against a flow (`reel flow check LOG
    /// FLOW.json`, exit 1 when the flow refuses a call), or print its graph.
    Flow(flow::FlowArgs),
    /// See inside recorded calls in a local web page: the list, a call's timeline, its
    /// audio; runs until Ctrl-C or SIGTERM.
    Studio(studio::StudioArgs),
}

/// Runs the parsed command line. Output cut short by a closed pipe (`reel show … | head`)
/// ends the command quietly.
pub fn run(cli: Cli) -> Result<ExitCode, CliError> {
    let result = match cli.command {
        Command::Demo(args) => demo::run(args),
        Command::Decode(args) => decode::run(args),
        Command::Replay(args) => replay::run(args),
        Command::Show(args) => show::run(args),
        Command::Diff(args) => diff::run(args),
        Command::Schema(args) => schema::run(args),
        Command::Serve(args) => serve::run(args),
        Command::Export(args) => export::run(args),
        Command::Eval(args) => eval::run(args),
        Command::Trace(args) => trace::run(args),
        Command::Flow(args) => flow::run(args),
        Command::Studio(args) => studio::run(args),
    };
    match result {
        Err(CliError::Output(error)) if error.kind() == std::io::ErrorKind::BrokenPipe => {
            Ok(ExitCode::SUCCESS)
        }
        other => other,
    }
}

/// Writes `text` to standard output.
fn print_stdout(text: &str) -> Result<(), CliError> {
    let mut out = std::io::stdout().lock();
    out.write_all(text.as_bytes())
        .and_then(|()| out.flush())
        .map_err(CliError::Output)
}

/// Writes a text report to standard output, its control characters shown as escapes
/// ([`terminal::visible`]): recorded text never drives the terminal. On a terminal (and
/// without `NO_COLOR`), the CLEAN and DRIFT verdicts are coloured ([`terminal::colour_on`]).
fn print_text(text: &str) -> Result<(), CliError> {
    let shown = terminal::visible(text);
    if terminal::colour_on() {
        print_stdout(&terminal::paint_verdicts(&shown))
    } else {
        print_stdout(&shown)
    }
}

/// `1 frame`, `2 frames`.
fn plural(count: u64, one: &str, many: &str) -> String {
    if count == 1 {
        format!("{count} {one}")
    } else {
        format!("{count} {many}")
    }
}
