//! `reel decode`: what a frame means, as reel reads it.

use std::io::Read;
use std::process::ExitCode;

use clap::Args;
use reel_protocol::{EventDecoder, SessionEvent, decode_client, decode_server, encode};

use super::CliError;

/// Arguments of `reel decode`.
#[derive(Debug, Args)]
pub struct DecodeArgs {
    /// File of frames, one JSON object per line (`-` for standard input).
    file: String,
    /// The frames are client frames (setup, clientContent, …) rather than server frames.
    #[arg(long)]
    client: bool,
    /// Print JSON lines instead of text.
    #[arg(long)]
    json: bool,
}

/// Decodes each line; prints the events of server frames (or the canonical form of client
/// frames). Exit 2 if any line is not a valid frame, after reporting every bad line.
pub fn run(args: DecodeArgs) -> Result<ExitCode, CliError> {
    let input = read_input(&args.file)?;
    let mut decoder = EventDecoder::new();
    let mut failures = 0usize;
    for (index, line) in input.split(|&b| b == b'\n').enumerate() {
        let line_no = index + 1;
        if line.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        if is_wire_entry(line) {
            return Err(CliError::DecodeWireLog {
                path: args.file.clone(),
                line: line_no,
            });
        }
        if args.client {
            match decode_client(line) {
                Ok(message) => {
                    let canonical = String::from_utf8_lossy(&encode(&message)).into_owned();
                    if args.json {
                        println!("{canonical}");
                    } else {
                        let kind = message.kind().map_or("?", |k| k.as_str());
                        println!("{line_no:>5}  {kind:<14} {}", shorten(&canonical, 100));
                    }
                }
                Err(error) => {
                    failures += 1;
                    eprintln!("{}:{line_no}: {error}", args.file);
                }
            }
            continue;
        }
        match decode_server(line) {
            Ok(message) => {
                let mut events = Vec::new();
                decoder.decode(message, &mut events);
                for event in &events {
                    if args.json {
                        println!(
                            "{}",
                            serde_json::json!({"line": line_no, "kind": event.kind(), "summary": summary(event)})
                        );
                    } else {
                        let line = format!("{line_no:>5}  {:<22} {}", event.kind(), summary(event));
                        println!("{}", line.trim_end());
                    }
                }
            }
            Err(error) => {
                failures += 1;
                eprintln!("{}:{line_no}: {error}", args.file);
            }
        }
    }
    Ok(if failures == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(2)
    })
}

/// Whether `line` is an entry of a wire log (`{"seq":…,"dir":…,"payload_b64":…}`), not a
/// bare frame: no Live message has these keys.
fn is_wire_entry(line: &[u8]) -> bool {
    serde_json::from_slice::<serde_json::Map<String, serde_json::Value>>(line).is_ok_and(|entry| {
        ["seq", "dir", "ts_ms"]
            .iter()
            .all(|key| entry.contains_key(*key))
    })
}

/// The bytes of the file, or of standard input for `-`. Lines are split as bytes, so a
/// line that is not UTF-8 is reported as such instead of failing the whole file.
fn read_input(path: &str) -> Result<Vec<u8>, CliError> {
    let error = |source| CliError::Read {
        path: path.to_owned(),
        source,
    };
    if path == "-" {
        let mut bytes = Vec::new();
        std::io::stdin()
            .lock()
            .read_to_end(&mut bytes)
            .map_err(error)?;
        return Ok(bytes);
    }
    std::fs::read(path).map_err(error)
}

/// One readable line about an event: what it says, never Rust's Debug form of it.
fn summary(event: &SessionEvent) -> String {
    match event {
        SessionEvent::Connected { session_id } => session_id
            .as_deref()
            .map_or_else(String::new, |id| format!("session {id}")),
        SessionEvent::AudioData(bytes) => format!("{} bytes", bytes.len()),
        SessionEvent::Media { mime_type, data } => format!("{mime_type}, {} bytes", data.len()),
        SessionEvent::TextDelta(text)
        | SessionEvent::TextComplete(text)
        | SessionEvent::UserText(text)
        | SessionEvent::InterimInputTranscription(text)
        | SessionEvent::Thought(text) => quote(text),
        SessionEvent::InputTranscription { text, is_final }
        | SessionEvent::OutputTranscription { text, is_final } => {
            let tag = if *is_final { "final" } else { "partial" };
            format!("{tag} {}", quote(text))
        }
        SessionEvent::File(file) => format!(
            "{} {}",
            file.mime_type.as_deref().unwrap_or("?"),
            file.file_uri.as_deref().unwrap_or("?")
        ),
        SessionEvent::ExecutableCode(code) => format!(
            "{}: {}",
            code.language.as_deref().unwrap_or("?"),
            shorten(code.code.as_deref().unwrap_or_default(), 80)
        ),
        SessionEvent::CodeExecutionResult(result) => format!(
            "{}: {}",
            result.outcome.as_deref().unwrap_or("?"),
            shorten(result.output.as_deref().unwrap_or_default(), 80)
        ),
        SessionEvent::ToolCall(calls) => calls
            .iter()
            .map(|c| {
                let args = c.args.as_ref().map(|a| a.to_string()).unwrap_or_default();
                format!(
                    "{}({args}) id={}",
                    c.name.as_deref().unwrap_or("?"),
                    c.id.as_deref().unwrap_or("?")
                )
            })
            .collect::<Vec<_>>()
            .join(", "),
        SessionEvent::ToolCallCancelled(ids) => format!("ids {}", ids.join(", ")),
        SessionEvent::TurnComplete {
            reason,
            waiting_for_input,
        } => {
            let mut parts = Vec::new();
            if let Some(reason) = reason {
                parts.push(format!("reason {reason}"));
            }
            if *waiting_for_input {
                parts.push("waiting for input".to_owned());
            }
            parts.join(", ")
        }
        SessionEvent::InteractionStatus(status) => status.to_string(),
        SessionEvent::GoAway { time_left } => time_left.map_or_else(String::new, |left| {
            format!("time left {:.3}s", left.as_secs_f64())
        }),
        SessionEvent::SessionResumeUpdate(info) => format!(
            "handle {}, {}",
            info.handle.as_deref().unwrap_or("none"),
            if info.resumable {
                "resumable"
            } else {
                "not resumable"
            }
        ),
        SessionEvent::Usage(usage) => usage.total_token_count.map_or_else(String::new, |total| {
            super::plural(total.unsigned_abs(), "token", "tokens")
        }),
        SessionEvent::Grounding(value) | SessionEvent::UrlContext(value) => {
            shorten(&value.to_string(), 100)
        }
        SessionEvent::Unrecognized { path, value } => shorten(&format!("{path}: {value}"), 100),
        SessionEvent::PhaseChanged { from, to } => format!("{from} → {to}"),
        SessionEvent::Disconnected { code, reason } => {
            let code = code.map_or_else(|| "no code".to_owned(), |c| format!("code {c}"));
            reason
                .as_deref()
                .map_or(code.clone(), |r| format!("{code} {}", quote(r)))
        }
        SessionEvent::Error(error) => error.to_string(),
        // Events without more to say than their kind (interrupted, generation complete,
        // voice activity) and any added later.
        _ => String::new(),
    }
}

/// `text`, shortened, in double quotes with quotes and control characters escaped.
fn quote(text: &str) -> String {
    serde_json::Value::from(shorten(text, 80)).to_string()
}

fn shorten(text: &str, max: usize) -> String {
    match text.char_indices().nth(max) {
        Some((cut, _)) => format!("{}…", &text[..cut]),
        None => text.to_owned(),
    }
}
