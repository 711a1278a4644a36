//! What is evaluated: recordings found below the inputs, each read as an [`AgentTrace`].
//!
//! - `*.wire.jsonl`: a live session's wire log, turned into a trace as `reel export` turns
//!   it (one request and one answer per model turn, tool calls with their results);
//! - `*.trace.json`: an agent trace (a text agent's run, a trace exported earlier);
//! - `*.cassette.json`: a cassette of model calls, each call a request and an answer; a
//!   cassette beside a wire log of the same name (`X.cassette.json` beside
//!   `X.wire.jsonl`) is that session's out-of-band calls, not a recording of its own,
//!   and is skipped.
//!
//! Wire logs and traces may be gzip or Zstandard compressed (`weather.wire.jsonl.gz`,
//! `run.trace.json.zst`); a compressed cassette is not read. Directories are searched
//! recursively; recordings are evaluated in path order.

use std::io::BufReader;
use std::path::{Path, PathBuf};

use reel_recorder::RecordError;
use reel_recorder::cassette::{CassetteFile, DEFAULT_MAX_CASSETTE_BYTES};
use reel_recorder::compressed::{self, without_compression_suffix};
use reel_recorder::jsonl::JsonlReader;
use reel_recorder::llm_tape::DocumentError;
use reel_recorder::trace::{AgentTrace, TraceError, parse_trace};
use reel_recorder::wire_read::WireLogReader;
use reel_replayer::export::{ExportError, ExportOptions, TraceExporter, export_cassette};

use crate::error::EvalError;

/// The file names recordings end with.
pub const SUFFIXES: [&str; 3] = [".wire.jsonl", ".trace.json", ".cassette.json"];

/// A recording found: its name and its path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RecordingPath {
    /// The file name without its suffix (`weather` for `calls/weather.wire.jsonl`).
    pub name: String,
    /// The path: the input as given, joined with the path found below it.
    pub path: PathBuf,
}

/// A recording that cannot be read.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum RecordingError {
    /// The wire log cannot be read.
    #[error("{0}")]
    Wire(#[from] RecordError),
    /// The wire log starts no session.
    #[error("`{}`: {source}", path.display())]
    NoSetup {
        /// The file.
        path: PathBuf,
        /// Why.
        source: ExportError,
    },
    /// The trace cannot be read.
    #[error("{0}")]
    Trace(#[from] TraceError),
    /// The cassette cannot be read.
    #[error("`{}`: {source}", path.display())]
    Cassette {
        /// The file.
        path: PathBuf,
        /// Why.
        source: DocumentError,
    },
}

/// The name of a recording file, or `None` when the file is not one.
pub fn recording_name(path: &Path) -> Option<String> {
    let file = without_compression_suffix(path.file_name()?.to_str()?);
    if file.ends_with(".cassette.json") && file.len() < path.file_name()?.len() {
        // A cassette is read from its file as it is: a compressed one is not a recording.
        return None;
    }
    SUFFIXES
        .iter()
        .find_map(|suffix| file.strip_suffix(suffix))
        .filter(|stem| !stem.is_empty())
        .map(str::to_owned)
}

/// Every recording named by `inputs` (files as they are, directories searched), in path
/// order, leaving out `skip` (the judge's cassette) and sessions' own cassettes.
pub fn find_recordings(
    inputs: &[PathBuf],
    skip: &[PathBuf],
) -> Result<Vec<RecordingPath>, EvalError> {
    let mut found = Vec::new();
    for input in inputs {
        let meta = std::fs::metadata(input).map_err(|source| EvalError::List {
            path: input.clone(),
            source,
        })?;
        if meta.is_dir() {
            walk(input, &mut found)?;
        } else {
            found.push(input.clone());
        }
    }
    let skip: Vec<PathBuf> = skip.iter().filter_map(|p| p.canonicalize().ok()).collect();
    let mut recordings: Vec<RecordingPath> = found
        .iter()
        .filter(|path| {
            path.canonicalize()
                .map_or(true, |real| !skip.contains(&real))
        })
        .filter(|path| !is_session_cassette(path))
        .filter_map(|path| {
            Some(RecordingPath {
                name: recording_name(path)?,
                path: path.clone(),
            })
        })
        .collect();
    recordings.sort_by(|a, b| a.path.cmp(&b.path));
    recordings.dedup();
    if recordings.is_empty() {
        return Err(EvalError::NoRecordings {
            paths: inputs.iter().map(|p| p.display().to_string()).collect(),
        });
    }
    Ok(recordings)
}

fn walk(dir: &Path, found: &mut Vec<PathBuf>) -> Result<(), EvalError> {
    let list = |source| EvalError::List {
        path: dir.to_path_buf(),
        source,
    };
    let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)
        .map_err(list)?
        .map(|entry| entry.map(|e| e.path()))
        .collect::<Result<_, _>>()
        .map_err(list)?;
    entries.sort();
    for path in entries {
        if path.is_dir() {
            walk(&path, found)?;
        } else if recording_name(&path).is_some() {
            found.push(path);
        }
    }
    Ok(())
}

/// `X.cassette.json` with `X.wire.jsonl` beside it.
fn is_session_cassette(path: &Path) -> bool {
    let Some(file) = path.file_name().and_then(|f| f.to_str()) else {
        return false;
    };
    file.strip_suffix(".cassette.json")
        .is_some_and(|stem| path.with_file_name(format!("{stem}.wire.jsonl")).is_file())
}

/// Reads the recording at `path` as a trace named `name`.
pub fn read_recording(name: &str, path: &Path) -> Result<AgentTrace, RecordingError> {
    let file = without_compression_suffix(
        path.file_name()
            .and_then(|f| f.to_str())
            .unwrap_or_default(),
    );
    let options = ExportOptions::named(name);
    let io = |source| RecordError::Io {
        path: path.to_path_buf(),
        source,
    };
    if file.ends_with(".trace.json") {
        let text = compressed::read_to_string(path).map_err(|source| TraceError::Io {
            path: path.to_path_buf(),
            source,
        })?;
        return Ok(parse_trace(&text, path)?);
    }
    if file.ends_with(".cassette.json") {
        let (cassette, bytes) = CassetteFile::read_with_bytes(path, DEFAULT_MAX_CASSETTE_BYTES)
            .map_err(|source| RecordingError::Cassette {
                path: path.to_path_buf(),
                source,
            })?;
        return Ok(export_cassette(&cassette, &bytes, options).trace);
    }
    let mut exporter = TraceExporter::new(options);
    let lines = BufReader::new(compressed::open(path).map_err(io)?);
    for entry in WireLogReader::new(JsonlReader::new(lines, path)) {
        exporter.push(&entry?);
    }
    exporter
        .finish()
        .map(|exported| exported.trace)
        .map_err(|source| RecordingError::NoSetup {
            path: path.to_path_buf(),
            source,
        })
}
