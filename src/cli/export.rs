//! `reel export`: a wire log — or a cassette of out-of-band model calls — as an agent trace
//! or as OpenTelemetry spans (OTLP/JSON, the GenAI conventions), on
//! standard output or into a file.
//!
//! A per-call tape (`{label}-001.json`) exports as its one call ([`super::llm_tape_file`]).
//! Both come from [`reel_replayer::export`]; the OTLP ids derive from the recording, so
//! exporting one file twice gives the same bytes. `--format wav` writes the call's audio
//! instead (user left, model right, on the session's time axis) into the `-o` file.

use std::path::Path;
use std::process::ExitCode;

use clap::{Args, ValueEnum};
use reel_recorder::cassette::{CassetteFile, DEFAULT_MAX_CASSETTE_BYTES};
use reel_replayer::export::{
    ExportError, ExportOptions, Exported, OtlpOptions, TraceExporter, WAV_RATE, WavError,
    WavExporter, WavSummary, export_cassette, to_otlp,
};

use super::input::WireInput;
use super::progress::Progress;
use super::{CliError, print_stdout};

/// Arguments of `reel export`.
#[derive(Debug, Args)]
pub struct ExportArgs {
    /// The wire log (`-`: standard input), or a cassette of out-of-band model calls
    /// (`X.cassette.json`: each call becomes a request and a response, or a `chat` span).
    log: String,
    /// What to write: an agent trace, or OpenTelemetry spans (OTLP/JSON,
    /// as an OTLP/HTTP collector takes them).
    #[arg(long, value_enum, default_value = "trace")]
    format: ExportFormat,
    /// Write into this file instead of standard output.
    #[arg(short, long, value_name = "OUT")]
    output: Option<String>,
    /// The trace's name (default: the file's name without `.wire.jsonl` / `.cassette.json`).
    #[arg(long, value_name = "NAME")]
    name: Option<String>,
    /// The agent's name (default: the model the session set up, or the cassette's calls
    /// asked).
    #[arg(long, value_name = "NAME")]
    agent: Option<String>,
    /// With `--format otlp`: also write tool arguments and results, which the GenAI
    /// conventions make opt-in (they may hold sensitive data).
    #[arg(long)]
    content: bool,
    /// A damaged log (a NUL-filled tail after a power loss, a corrupt line): read the
    /// entries before its first bad line instead of failing.
    #[arg(long)]
    salvage: bool,
    /// With `-o`: print what was written as one JSON document on standard output (the file,
    /// the format, its size; for a WAV, the audio's length and chunks).
    #[arg(long, requires = "output")]
    json: bool,
}

/// An export format.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum ExportFormat {
    /// An agent trace.
    Trace,
    /// OpenTelemetry spans, OTLP/JSON.
    Otlp,
    /// The call's audio: a stereo WAV, the user left and the model right, 24 kHz.
    Wav,
}

/// Reads the log entry by entry and writes the export.
pub fn run(args: ExportArgs) -> Result<ExitCode, CliError> {
    if args.format == ExportFormat::Wav {
        return export_wav(&args);
    }
    let options = ExportOptions {
        trace_name: args.name.clone().unwrap_or_else(|| trace_name(&args.log)),
        agent_name: args.agent.clone(),
    };
    let exported = if super::llm_tape_file::is_tape(&args.log) {
        super::llm_tape_file::export(&args.log, options)?
    } else if is_cassette(&args.log) {
        export_cassette_file(&args.log, options)?
    } else {
        let progress = Progress::start("exporting");
        let mut exporter = TraceExporter::new(options);
        for entry in WireInput::open(&args.log)?
            .salvaging(args.salvage)
            .counting(progress.counter())
        {
            exporter.push(&entry?);
        }
        progress.finish();
        exporter
            .finish()
            .map_err(|error| no_setup(&args.log, error))?
    };
    let text = match args.format {
        ExportFormat::Trace => exported.trace.to_json_pretty(),
        ExportFormat::Otlp => {
            let options = OtlpOptions {
                content: args.content,
            };
            let otlp = to_otlp(&exported.trace, &exported.ids, options);
            format!("{}\n", serde_json::to_string_pretty(&otlp)?)
        }
        // Handled before the trace is built.
        ExportFormat::Wav => String::new(),
    };
    match &args.output {
        None => print_stdout(&text)?,
        Some(path) => {
            std::fs::write(path, &text).map_err(|error| {
                CliError::Output(std::io::Error::new(
                    error.kind(),
                    format!("{path}: {error}"),
                ))
            })?;
            if args.json {
                let format = match args.format {
                    ExportFormat::Trace => "trace",
                    ExportFormat::Otlp => "otlp",
                    ExportFormat::Wav => "wav",
                };
                let report = serde_json::json!({
                    "output": path,
                    "format": format,
                    "bytes": text.len(),
                });
                print_stdout(&format!("{report}\n"))?;
            }
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// Writes the log's audio as a WAV file (`-o` is required: it is not text).
fn export_wav(args: &ExportArgs) -> Result<ExitCode, CliError> {
    let Some(output) = &args.output else {
        eprintln!("reel export: --format wav writes a file: give -o OUT.wav");
        return Ok(ExitCode::from(2));
    };
    if is_cassette(&args.log) {
        eprintln!(
            "reel export: {}: a cassette holds no audio; --format wav takes a wire log",
            args.log
        );
        return Ok(ExitCode::from(2));
    }
    let output_error = |error: std::io::Error| {
        CliError::Output(std::io::Error::new(
            error.kind(),
            format!("{output}: {error}"),
        ))
    };
    let file = std::fs::File::create(output).map_err(output_error)?;
    let rendered = render_wav(args, file);
    let is_file = std::fs::symlink_metadata(output).is_ok_and(|meta| meta.is_file());
    if rendered.is_err() && is_file {
        // A WAV cut short is no WAV (its header's sizes are unset): nothing is left behind.
        // Only a plain file is removed, never a device or a link such as `/dev/stdout`.
        let _ = std::fs::remove_file(output);
    }
    let summary = match rendered {
        Ok(summary) => summary,
        Err(Rendered::Input(error)) => return Err(error),
        Err(Rendered::Wav(WavError::Io(error))) => return Err(output_error(error)),
        Err(Rendered::Wav(source)) => {
            return Err(CliError::Wav {
                path: args.log.clone(),
                source,
            });
        }
    };
    let seconds = summary.frames as f64 / f64::from(WAV_RATE);
    if args.json {
        let bytes = std::fs::metadata(output).map_or(0, |meta| meta.len());
        let report = serde_json::json!({
            "output": output,
            "format": "wav",
            "bytes": bytes,
            "audio_seconds": (seconds * 1000.0).round() / 1000.0,
            "user_chunks": summary.chunks_in,
            "model_chunks": summary.chunks_out,
        });
        print_stdout(&format!("{report}\n"))?;
        return Ok(ExitCode::SUCCESS);
    }
    eprintln!(
        "reel export: {output}: {seconds:.3} s of audio ({}, {})",
        super::plural(summary.chunks_in, "user chunk", "user chunks"),
        super::plural(summary.chunks_out, "model chunk", "model chunks")
    );
    Ok(ExitCode::SUCCESS)
}

/// Why a WAV was not rendered: the log could not be read, or the WAV failed.
enum Rendered {
    Input(CliError),
    Wav(WavError),
}

/// Renders the log's audio into `file`, bounded as [`WavExporter`] bounds it.
fn render_wav(args: &ExportArgs, file: std::fs::File) -> Result<WavSummary, Rendered> {
    let mut exporter = WavExporter::new(std::io::BufWriter::new(file)).map_err(Rendered::Wav)?;
    let progress = Progress::start("exporting");
    for entry in WireInput::open(&args.log)
        .map_err(Rendered::Input)?
        .salvaging(args.salvage)
        .counting(progress.counter())
    {
        let entry = entry.map_err(Rendered::Input)?;
        exporter.push(&entry).map_err(Rendered::Wav)?;
    }
    progress.finish();
    exporter.finish().map_err(Rendered::Wav)
}

/// A cassette is one JSON document (`.json`); a wire log is JSON lines (`.jsonl`, or any
/// other name).
fn is_cassette(path: &str) -> bool {
    path.ends_with(".json")
}

/// The out-of-band calls recorded in the cassette at `path`.
fn export_cassette_file(path: &str, options: ExportOptions) -> Result<Exported, CliError> {
    // The ids derive from the file's bytes: read once, for both.
    let (cassette, bytes) = CassetteFile::read_with_bytes(path, DEFAULT_MAX_CASSETTE_BYTES)?;
    Ok(export_cassette(&cassette, &bytes, options))
}

/// `weather` for `tapes/weather.wire.jsonl` (or `tapes/weather.cassette.json`).
fn trace_name(log: &str) -> String {
    let file = Path::new(log)
        .file_name()
        .map_or_else(|| log.to_owned(), |f| f.to_string_lossy().into_owned());
    // `weather.wire.jsonl.gz` is `weather` too.
    let file = reel_recorder::compressed::without_compression_suffix(&file).to_owned();
    [".wire.jsonl", ".jsonl", ".cassette.json", ".json"]
        .iter()
        .find_map(|suffix| file.strip_suffix(suffix).filter(|stem| !stem.is_empty()))
        .map_or_else(|| file.clone(), str::to_owned)
}

fn no_setup(path: &str, error: ExportError) -> CliError {
    let path = path.to_owned();
    match error {
        ExportError::NoSetup { first_outbound_seq } => CliError::NoSetup {
            path,
            found: match first_outbound_seq {
                Some(seq) => format!("the first frame the client sent (seq {seq}) is not a setup"),
                None => "the client sent no frame".to_owned(),
            },
        },
        other => CliError::Read {
            path,
            source: std::io::Error::other(other.to_string()),
        },
    }
}
