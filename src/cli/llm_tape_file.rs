//! Per-call tapes (`{label}-001.json`, one out-of-band model call each: `RecordingLlm`
//! writes them, `reel_recorder::llm_tape` reads them) in `reel show` and `reel export`.
//!
//! `reel show TAPE` prints the call: its label, model and recording time, the prompt, each
//! streamed chunk with its time since the call started, how it ended. `reel export TAPE`
//! writes it as an agent trace of one request and one response (or OTLP spans), as a
//! cassette of one call would be.
//!
//! ```text
//! tape smoke-001 · model gemini-2.5-flash · recorded 2025-12-10T18:00:00.000Z · sdk reel 0.1.0
//!   prompt    "Name one planet."
//!   chunk 1   +0.000s  "Mar"
//!   chunk 2   +0.012s  "s" · STOP
//!   answer    "Mars"
//! ```

use std::fmt::Write as _;
use std::path::Path;
use std::process::ExitCode;

use reel_llm::LlmRequest;
use reel_recorder::cassette::{CASSETTE_VERSION, CassetteFile, Interaction};
use reel_recorder::llm_tape::{LlmTape, TapeEnd, parse_tape};
use reel_recorder::trace::TraceEntry;
use reel_replayer::export::{ExportOptions, Exported, export_cassette};
use serde_json::{Value, json};

use super::{CliError, print_stdout, print_text};

/// Whether `path` is a per-call tape: a regular `.json` file (not a cassette) whose
/// document has the tape's `meta` and `stream`.
pub fn is_tape(path: &str) -> bool {
    if !path.ends_with(".json") || path.ends_with(".cassette.json") {
        return false;
    }
    if !Path::new(path).is_file() {
        return false;
    }
    std::fs::read(path)
        .ok()
        .and_then(|bytes| serde_json::from_slice::<Value>(&bytes).ok())
        .is_some_and(|doc| doc.get("meta").is_some() && doc.get("stream").is_some())
}

fn read(path: &str) -> Result<(LlmTape, Vec<u8>), CliError> {
    let bytes = std::fs::read(path).map_err(|source| CliError::Read {
        path: path.to_owned(),
        source,
    })?;
    let tape = parse_tape(&bytes, path)?;
    Ok((tape, bytes))
}

/// The prompt: the request's last user text, when it reads as a model request.
fn prompt(tape: &LlmTape) -> Option<String> {
    serde_json::from_value::<LlmRequest>(Value::Object(tape.request.clone()))
        .ok()?
        .last_user_text()
}

fn seconds(ns: u64) -> String {
    let ms = ns / 1_000_000;
    format!("{}.{:03}s", ms / 1000, ms % 1000)
}

fn end_text(end: &TapeEnd) -> String {
    match end {
        TapeEnd::Error { delay_ns, message } => {
            format!(
                "failed {} after the last chunk: {message}",
                seconds(*delay_ns)
            )
        }
        TapeEnd::Abandoned { reason } => format!("the recording stopped early: {reason}"),
    }
}

/// `reel show TAPE`.
pub fn show(path: &str, as_json: bool) -> Result<ExitCode, CliError> {
    let (tape, _) = read(path)?;
    let mut at = 0u64;
    let chunks: Vec<(u64, &reel_recorder::llm_tape::RecordedChunk)> = tape
        .stream
        .iter()
        .map(|chunk| {
            at += chunk.delay_ns;
            (at, chunk)
        })
        .collect();
    let answer: String = tape.stream.iter().map(|c| c.text.as_str()).collect();
    if as_json {
        let json = json!({
            "tape": path,
            "label": tape.meta.label,
            "model": tape.meta.model,
            "recordedAt": tape.meta.recorded_at.to_string(),
            "sdk": tape.meta.sdk,
            "prompt": prompt(&tape),
            "chunks": chunks.iter().map(|(at, c)| json!({
                "offsetMs": at / 1_000_000,
                "text": c.text,
                "finishReason": c.finish_reason,
            })).collect::<Vec<_>>(),
            "answer": answer,
            "end": tape.end.as_ref().map(end_text),
        });
        print_stdout(&format!("{}\n", serde_json::to_string_pretty(&json)?))?;
        return Ok(ExitCode::SUCCESS);
    }
    let mut out = format!(
        "tape {} · model {} · recorded {} · sdk {}\n",
        tape.meta.label, tape.meta.model, tape.meta.recorded_at, tape.meta.sdk
    );
    // Writing to a String cannot fail.
    if let Some(prompt) = prompt(&tape) {
        let _ = writeln!(out, "  {:<9} {prompt:?}", "prompt");
    }
    for (i, (at, chunk)) in chunks.iter().enumerate() {
        let mut line = format!(
            "  {:<9} +{}  {:?}",
            format!("chunk {}", i + 1),
            seconds(*at),
            chunk.text
        );
        if let Some(reason) = &chunk.finish_reason {
            line.push_str(&format!(" · {reason}"));
        }
        let _ = writeln!(out, "{line}");
    }
    let _ = writeln!(out, "  {:<9} {answer:?}", "answer");
    if let Some(end) = &tape.end {
        let _ = writeln!(out, "  {:<9} {}", "end", end_text(end));
    }
    print_text(&out)?;
    Ok(ExitCode::SUCCESS)
}

/// `reel export TAPE`: the call as a one-call cassette exports it, with how it ended.
pub fn export(path: &str, options: ExportOptions) -> Result<Exported, CliError> {
    let (tape, bytes) = read(path)?;
    let cassette = CassetteFile {
        version: CASSETTE_VERSION,
        interactions: vec![Interaction {
            request: tape.request.clone(),
            response: tape.stream.clone(),
            recorded_at: tape.meta.recorded_at,
            usage: None,
            duration_ns: None,
            failure: None,
        }],
    };
    let mut exported = export_cassette(&cassette, &bytes, options);
    if let Some(end) = &tape.end {
        for entry in &mut exported.trace.entries {
            if let TraceEntry::Response(response) = entry {
                match end {
                    TapeEnd::Error { .. } => response.error = Some(end_text(end)),
                    TapeEnd::Abandoned { .. } => response.incomplete = true,
                }
            }
        }
    }
    Ok(exported)
}
