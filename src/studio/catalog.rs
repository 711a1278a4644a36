//! The list of recordings in the studio's directory: one pass over each wire log for what
//! the list shows (model, start, duration, turns, tools, tokens); a log that cannot be read
//! is listed with its error and never breaks the list.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use reel_protocol::decode_server;
use reel_recorder::WireLogReader;
use reel_recorder::trace::Timestamp;
use reel_recorder::wire_log::Direction;
use reel_replayer::last_replay::LastReplay;
use reel_replayer::log_stats::LogStats;
use serde::Serialize;

/// The file name ending of the recordings the studio lists.
pub const LOG_SUFFIX: &str = ".wire.jsonl";

/// One line of the list.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(untagged)]
pub enum Listed {
    /// A recording that reads.
    Recording(RecordingInfo),
    /// A file that does not, with why.
    Broken {
        /// Its file name.
        name: String,
        /// What is wrong with it.
        error: String,
    },
}

/// What the list shows of a recording.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RecordingInfo {
    /// Its file name.
    pub name: String,
    /// The model its setup asked for.
    pub model: Option<String>,
    /// When it started, RFC 3339.
    pub started: Option<String>,
    /// First entry to last, in ms.
    pub duration_ms: u64,
    /// Frames, both ways.
    pub frames: u64,
    /// Model turns completed.
    pub turns: u64,
    /// The tools the model called, by name, sorted.
    pub tools: Vec<String>,
    /// Tokens the server reported (the largest `totalTokenCount` of each turn, summed).
    pub tokens: u64,
    /// Reconnects within the session.
    pub reconnects: u64,
    /// Whether a running session is streaming into it now (live attach).
    pub live: bool,
    /// What `reel replay --save-verdict` found when it last replayed this log (`X.replay.json`), unless
    /// the log changed since.
    pub last_replay: Option<LastReplay>,
}

/// Whether `name` is a recording's file name the studio serves: a `*.wire.jsonl` directly in
/// its directory (no path separator, no `..`).
pub fn is_recording_name(name: &str) -> bool {
    name.ends_with(LOG_SUFFIX)
        && !name.contains(['/', '\\'])
        && !name.starts_with('.')
        && name.len() > LOG_SUFFIX.len()
}

/// The file of recording `name`, if it is one of `dir`'s own: a recording's name (not a
/// path), a regular file, and not a link out of the directory. The list and every page of a
/// call apply this one rule.
pub fn own_recording(dir: &Path, name: &str) -> Option<PathBuf> {
    if !is_recording_name(name) {
        return None;
    }
    let file = dir.join(name).canonicalize().ok()?;
    let dir = dir.canonicalize().ok()?;
    (file.parent() == Some(dir.as_path()) && file.is_file()).then_some(file)
}

/// Every recording in `dir`, by file name: its own (see [`own_recording`]); a FIFO, a
/// device or a link out of the directory is left out.
pub fn list(dir: &Path) -> std::io::Result<Vec<Listed>> {
    let mut names: Vec<String> = std::fs::read_dir(dir)?
        .filter_map(Result::ok)
        .filter_map(|entry| entry.file_name().into_string().ok())
        .filter(|name| own_recording(dir, name).is_some())
        .collect();
    names.sort();
    Ok(names
        .into_iter()
        .map(|name| {
            let path: PathBuf = dir.join(&name);
            match summarize(&path, &name) {
                Ok(info) => Listed::Recording(info),
                Err(error) => Listed::Broken { name, error },
            }
        })
        .collect())
}

/// Reads the recording at `path` once.
pub fn summarize(path: &Path, name: &str) -> Result<RecordingInfo, String> {
    let reader = WireLogReader::open(path).map_err(|error| error.to_string())?;
    let mut stats = LogStats::new();
    let mut turns = 0;
    let mut tools = BTreeSet::new();
    let mut tokens = 0;
    let mut turn_tokens = 0;
    for entry in reader {
        let entry = entry.map_err(|error| error.to_string())?;
        stats.observe(&entry);
        if entry.dir != Direction::In || entry.close.is_some() {
            continue;
        }
        let Ok(message) = decode_server(&entry.payload) else {
            continue;
        };
        if let Some(usage) = &message.usage_metadata {
            let total = usage.total_token_count.map_or(0, |n| n.max(0) as u64);
            turn_tokens = turn_tokens.max(total);
        }
        if let Some(call) = &message.tool_call {
            for function in call.function_calls.iter().flatten() {
                if let Some(name) = &function.name {
                    tools.insert(name.clone());
                }
            }
        }
        if message
            .server_content
            .as_ref()
            .is_some_and(|content| content.turn_complete == Some(true))
        {
            turns += 1;
            tokens += std::mem::take(&mut turn_tokens);
        }
    }
    if stats.first_ts_ms.is_none() {
        return Err("no entries".to_owned());
    }
    Ok(RecordingInfo {
        name: name.to_owned(),
        model: stats.setup.as_ref().and_then(|setup| setup.model.clone()),
        started: stats
            .first_ts_ms
            .map(|ms| Timestamp::from_epoch_ms(ms).to_string()),
        duration_ms: stats.duration_ms(),
        frames: stats.frames,
        turns,
        tools: tools.into_iter().collect(),
        tokens: tokens + turn_tokens,
        reconnects: stats.reconnects,
        live: false,
        last_replay: LastReplay::read_beside(path),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_plain_log_names_in_the_directory_are_served() {
        assert!(is_recording_name("weather.wire.jsonl"));
        for name in [
            "../x.wire.jsonl",
            "a/b.wire.jsonl",
            "a\\b.wire.jsonl",
            ".wire.jsonl",
            ".hidden.wire.jsonl",
            "x.jsonl",
            "x.cassette.json",
        ] {
            assert!(!is_recording_name(name), "{name}");
        }
    }
}
