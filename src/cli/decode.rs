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
                            serde_json::json!({"line": line_no, "kind": event.kind(), "event": format!("{event:?}")})
                        );
                    } else {
                        println!("{line_no:>5}  {:<22} {}", event.kind(), summary(event));
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

/// One readable line about an event.
fn summary(event: &SessionEvent) -> String {
    match event {
        SessionEvent::AudioData(bytes) => format!("{} bytes", bytes.len()),
        SessionEvent::Media { mime_type, data } => format!("{mime_type}, {} bytes", data.len()),
        SessionEvent::TextDelta(text)
        | SessionEvent::TextComplete(text)
        | SessionEvent::Thought(text) => format!("{:?}", shorten(text, 80)),
        SessionEvent::InputTranscription { text, is_final }
        | SessionEvent::OutputTranscription { text, is_final } => {
            let tag = if *is_final { "final" } else { "partial" };
            format!("{tag} {:?}", shorten(text, 80))
        }
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
        other => shorten(&format!("{other:?}"), 100),
    }
}

fn shorten(text: &str, max: usize) -> String {
    match text.char_indices().nth(max) {
        Some((cut, _)) => format!("{}…", &text[..cut]),
        None => text.to_owned(),
    }
}
