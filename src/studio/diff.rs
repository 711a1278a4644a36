//! Two recordings side by side (or a recording and its replay): compared frame by frame
//! (`reel diff`'s comparison), each shown by turn, the turn where they first part marked.

use std::path::Path;

use reel_recorder::WireLogReader;
use reel_replayer::log_diff::{LogComparison, compare_logs};
use serde::Serialize;

use super::call::{Overview, overview};

/// How many equal frames before the first difference are kept, as `reel diff` shows them.
const CONTEXT: usize = 3;

/// Two recordings compared.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct DiffView {
    /// The first recording's overview.
    pub a: Overview,
    /// The second's.
    pub b: Overview,
    /// The comparison: `same`, or where they first differ and how.
    pub comparison: LogComparison,
    /// Where the first difference falls in each: the time (ms since each recording's first
    /// entry) and the turn (from 1; `None` after the last turn), for A then B.
    pub divergence: Option<[Place; 2]>,
}

/// Where the first difference falls in one recording.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Place {
    /// Its sequence number there, if that recording has a frame at that position.
    pub seq: Option<u64>,
    /// When, since the recording's first entry.
    pub t_ms: Option<u64>,
    /// The turn it falls in.
    pub turn: Option<u64>,
}

fn reader(path: &Path) -> Result<WireLogReader, String> {
    WireLogReader::open(path).map_err(|error| error.to_string())
}

/// Compares the recordings at `a` and `b` (file names `a_name`, `b_name`).
pub fn diff(a: &Path, a_name: &str, b: &Path, b_name: &str) -> Result<DiffView, String> {
    let a_overview = overview(a, a_name)?;
    let b_overview = overview(b, b_name)?;
    let comparison = compare_logs(reader(a)?, reader(b)?, CONTEXT).map_err(|e| e.to_string())?;
    let divergence = match &comparison {
        LogComparison::Same { .. } => None,
        LogComparison::Differs(first) => {
            let place =
                |side: Option<&reel_replayer::log_diff::Side>, path: &Path, view: &Overview| {
                    let t0 = first_ts(path);
                    let t_ms = side.map(|s| s.ts_ms.saturating_sub(t0));
                    Place {
                        seq: side.map(|s| s.seq),
                        t_ms,
                        turn: t_ms.and_then(|t| {
                            view.turns
                                .iter()
                                .find(|turn| t <= turn.end_ms)
                                .map(|turn| turn.n)
                        }),
                    }
                };
            Some([
                place(first.a.as_ref(), a, &a_overview),
                place(first.b.as_ref(), b, &b_overview),
            ])
        }
    };
    Ok(DiffView {
        a: a_overview,
        b: b_overview,
        comparison,
        divergence,
    })
}

/// The recording's first entry's time (0 if it has none).
fn first_ts(path: &Path) -> u64 {
    WireLogReader::open(path)
        .ok()
        .and_then(|mut reader| reader.next())
        .and_then(Result::ok)
        .map_or(0, |entry| entry.ts_ms)
}
