//! The tape server's handling of what a client sends, driven without sockets: the fuzz
//! target `tape_server` (in `fuzz/`, with the `fuzzing` feature) calls [`client_session`],
//! and this crate's unit tests replay the target's checked-in seeds through it, so the
//! target cannot rot.
//!
//! It runs the code a replaying connection runs, in the same order: the request target
//! read as a Live path, the tape indexed into scripts, the first client frame prepared and
//! matched against every recorded opening, then each following frame prepared and matched
//! step by step, with the close reasons and reports a real connection would write. Only
//! the WebSocket I/O is left out.

use std::sync::Arc;

use bytes::Bytes;
use reel_recorder::jsonl::JsonlReader;
use reel_recorder::wire_log::WireEntry;

use super::client_socket::{MAX_CLOSE_REASON_BYTES, truncate_utf8};
use super::live_path::{LivePath, RequestHead, not_found_body};
use super::matching::{FrameMatcher, Matching};
use super::replay_session::{ended, match_step, mismatch_reason, sendable};
use super::report::{End, Outcome};
use super::tape_index::{Reply, Selection, TapeConn, TapeIndex, TapeLibrary};

/// The most tape entries and client frames one input is cut to, so that every input runs
/// in bounded time.
const MAX_ITEMS: usize = 64;

/// Runs one client session against one tape, as the server would, from fuzz input.
///
/// The input is text lines: the request target (`/ws/…?key=…`), then the tape as wire-log
/// lines, then a line `--`, then the client's frames, one per line. Whatever the input, it
/// returns the outcome a connection would report (`None` when the tape has no client frame
/// or the client sends nothing); a panic is a bug.
///
/// ```
/// # #[cfg(feature = "fuzzing")] {
/// let input = concat!(
///     "/ws/google.ai.generativelanguage.v1beta.GenerativeService.BidiGenerateContent\n",
///     r#"{"seq":1,"dir":"out","ts_ms":1,"payload_b64":"eyJzZXR1cCI6e319"}"#, "\n",
///     "--\n",
///     r#"{"setup":{}}"#,
/// );
/// let outcome = reel_tape_server::fuzzing::client_session(input.as_bytes());
/// assert!(outcome.is_some());
/// # }
/// ```
pub fn client_session(input: &[u8]) -> Option<Outcome> {
    let mut lines = input.split(|b| *b == b'\n');
    let target = String::from_utf8_lossy(lines.next().unwrap_or_default());
    read_target(&target);
    let mut tape = Vec::new();
    for line in lines.by_ref() {
        if line == b"--" {
            break;
        }
        tape.extend_from_slice(line);
        tape.push(b'\n');
    }
    let frames: Vec<Bytes> = lines.take(MAX_ITEMS).map(Bytes::copy_from_slice).collect();
    let entries: Vec<WireEntry> = JsonlReader::new(&tape[..], "fuzz.wire.jsonl")
        .take(MAX_ITEMS)
        .map_while(Result::ok)
        .collect();
    let mut last = None;
    for matching in [Matching::Strict, Matching::loose()] {
        last = replay(&matching, entries.clone(), &frames);
        if let Some(outcome) = &last {
            // What the server logs and reports for the connection.
            let _ = outcome.to_string();
        }
    }
    last
}

/// Reads a request target as the server's upgrade does.
fn read_target(target: &str) {
    let (path, query) = match target.split_once('?') {
        Some((path, query)) => (path, Some(query)),
        None => (target, None),
    };
    let head = RequestHead::from_target(path, query);
    if LivePath::parse(head.path()).is_none() {
        let _ = not_found_body(head.path());
    }
}

/// One connection replaying `entries` to a client that sends `frames`.
fn replay(matching: &Matching, entries: Vec<WireEntry>, frames: &[Bytes]) -> Option<Outcome> {
    let matcher = FrameMatcher::new(matching).ok()?;
    let library = TapeLibrary::new().with_entries("fuzz", entries);
    let index = TapeIndex::build(&library, matcher).ok()?;
    let (first, rest) = frames.split_first()?;
    let opening = match index.matcher().prepare(first) {
        Ok(opening) => opening,
        Err(error) => {
            return Some(Outcome::InvalidFrame {
                frame: 1,
                error: error.to_string(),
            });
        }
    };
    let mut candidates = match index.select(&opening, None) {
        Selection::Matched(candidates) => candidates,
        Selection::NoMatch(closest) => return Some(Outcome::NoTape { closest }),
    };
    let mut step = 0;
    let mut number = 1u32;
    let mut frames = rest.iter();
    loop {
        let primary = candidates.first()?.clone();
        candidates.retain(|candidate| candidate.replies_match(&primary, step));
        if let Some(end) = send_replies(&primary, step) {
            return Some(replayed(&primary, number, end));
        }
        step += 1;
        let Some(frame) = frames.next() else {
            let end = End::ClientClosed {
                code: Some(1000),
                reason: None,
            };
            return Some(ended(&primary, number, end));
        };
        number += 1;
        let actual = match index.matcher().prepare(frame) {
            Ok(actual) => actual,
            Err(error) => {
                let reason = format!("reel: frame {number} is not a Live client frame");
                let _ = truncate_utf8(&reason, MAX_CLOSE_REASON_BYTES);
                return Some(Outcome::InvalidFrame {
                    frame: number,
                    error: error.to_string(),
                });
            }
        };
        match match_step(&candidates, step, number, actual) {
            Ok(survivors) => candidates = survivors,
            Err(mismatch) => {
                let _ = truncate_utf8(&mismatch_reason(&mismatch), MAX_CLOSE_REASON_BYTES);
                return Some(Outcome::Diverged(*mismatch));
            }
        }
    }
}

/// What sending `conn`'s replies after client frame `step` would end with, if it ends the
/// connection.
fn send_replies(conn: &TapeConn, step: usize) -> Option<End> {
    for reply in &conn.steps.get(step)?.replies {
        match reply {
            Reply::Frame { .. } => {}
            Reply::Close { mark, .. } if mark.client => return None,
            Reply::Close { mark, .. } => {
                if mark.code.is_some_and(sendable) {
                    let reason = mark.reason.as_deref().unwrap_or_default();
                    let _ = truncate_utf8(reason, MAX_CLOSE_REASON_BYTES);
                }
                return Some(End::ServerClosed {
                    code: mark.code,
                    reason: mark.reason.clone(),
                });
            }
        }
    }
    None
}

fn replayed(conn: &Arc<TapeConn>, frames: u32, end: End) -> Outcome {
    Outcome::Replayed {
        tape: conn.tape.to_string(),
        tape_conn: conn.conn,
        frames,
        end,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The checked-in seeds of the `tape_server` fuzz target.
    fn seeds() -> Vec<(String, Vec<u8>)> {
        let dir =
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../fuzz/seeds/tape_server");
        let mut seeds: Vec<(String, Vec<u8>)> = std::fs::read_dir(&dir)
            .unwrap()
            .map(|entry| {
                let path = entry.unwrap().path();
                let name = path.file_name().unwrap().to_string_lossy().into_owned();
                (name, std::fs::read(&path).unwrap())
            })
            .collect();
        seeds.sort();
        seeds
    }

    #[test]
    fn the_fuzz_seeds_replay_to_their_outcomes() {
        let outcomes: Vec<(String, String)> = seeds()
            .into_iter()
            .map(|(name, input)| {
                let outcome = client_session(&input).map(|o| format!("{o:?}"));
                (name, outcome.unwrap_or_else(|| "none".into()))
            })
            .collect();
        assert!(outcomes.len() >= 4, "{outcomes:?}");
        for (name, outcome) in &outcomes {
            let expected = name.split('-').next().unwrap_or_default();
            assert!(
                outcome.to_lowercase().starts_with(expected),
                "seed {name}: {outcome}"
            );
        }
    }
}
