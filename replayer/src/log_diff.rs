//! The first place two recordings part: frames aligned in order and compared by direction
//! and payload (as JSON, so key order and spacing do not count), with the frames before it
//! for context.
//!
//! Close markers are not aligned with frames (a reconnect is not a frame), but they are
//! compared too: the markers met before each aligned pair of frames must be the same in
//! both recordings (code, reason, who closed). Timestamps and sequence numbers are not
//! compared: two recordings of the same conversation are made at different times.
//!
//! Both logs are streamed; memory holds the context frames only.
//!
//! ```
//! use reel_recorder::wire_log::{Direction, WireEntry};
//! use reel_replayer::log_diff::{LogComparison, compare_logs};
//!
//! let log = |text: &'static str| {
//!     vec![Ok::<_, std::convert::Infallible>(WireEntry::frame(1, Direction::In, 0, text.as_bytes(), None, false))]
//! };
//! let same = compare_logs(log(r#"{"a":1,"b":2}"#), log(r#"{"b":2, "a":1}"#), 2).unwrap();
//! assert!(matches!(same, LogComparison::Same { frames: 1, .. }));
//! let different = compare_logs(log(r#"{"a":1}"#), log(r#"{"a":2}"#), 2).unwrap();
//! let LogComparison::Differs(first) = different else { panic!() };
//! assert_eq!(first.position, 1);
//! ```

use std::collections::VecDeque;

use reel_recorder::wire_log::{CloseMark, Direction, WireEntry};
use serde::Serialize;
use serde_json::Value;

use crate::divergence::{PathDiff, json_diff, payload_json};

/// Two recordings compared.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "result", rename_all = "snake_case")]
pub enum LogComparison {
    /// Same frames, same close markers.
    Same {
        /// Frames in each.
        frames: u64,
        /// Close markers in each.
        close_markers: u64,
    },
    /// They differ; the first difference.
    Differs(Box<FirstDifference>),
}

/// An entry of one side, for reports.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Side {
    /// Its sequence number.
    pub seq: u64,
    /// Its direction.
    pub dir: Direction,
    /// Its time, epoch ms.
    pub ts_ms: u64,
    /// The entry.
    #[serde(skip)]
    pub entry: WireEntry,
}

impl Side {
    fn of(entry: WireEntry) -> Self {
        Side {
            seq: entry.seq,
            dir: entry.dir,
            ts_ms: entry.ts_ms,
            entry,
        }
    }
}

/// What differs at the first difference.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Difference {
    /// The frames went opposite ways (their payloads' differences, if any, follow).
    Direction {
        /// Payload differences, JSON path by JSON path.
        diffs: Vec<PathDiff>,
    },
    /// Same direction, different payloads.
    Payload {
        /// JSON path by JSON path: `expected` is A's value, `actual` B's.
        diffs: Vec<PathDiff>,
    },
    /// A has no frame at this position: it ended before B.
    MissingInA,
    /// B has no frame at this position.
    MissingInB,
    /// The connection ends (close markers) before this position differ.
    CloseMarkers {
        /// A's markers there.
        a: Vec<CloseMark>,
        /// B's markers there.
        b: Vec<CloseMark>,
    },
}

/// The first difference and the aligned frames before it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FirstDifference {
    /// 1-based position of the frame (close markers not counted); for close markers, the
    /// frame they precede.
    pub position: u64,
    /// A's frame there, if it has one.
    pub a: Option<Side>,
    /// B's frame there, if it has one.
    pub b: Option<Side>,
    /// What differs.
    pub difference: Difference,
    /// The aligned (equal) frames just before, oldest first: A's and B's.
    pub context: Vec<(Side, Side)>,
}

/// One frame of a log and the close markers met before it.
struct Step {
    marks: Vec<CloseMark>,
    frame: Option<WireEntry>,
}

fn next_step<E>(entries: &mut impl Iterator<Item = Result<WireEntry, E>>) -> Result<Step, E> {
    let mut marks = Vec::new();
    for entry in entries.by_ref() {
        let entry = entry?;
        match entry.close {
            Some(mark) => marks.push(mark),
            None => {
                return Ok(Step {
                    marks,
                    frame: Some(entry),
                });
            }
        }
    }
    Ok(Step { marks, frame: None })
}

/// Compares two logs' entries (see the [module docs](self)), keeping `context` frames
/// before the first difference. A read error of either log stops the comparison.
pub fn compare_logs<E>(
    a: impl IntoIterator<Item = Result<WireEntry, E>>,
    b: impl IntoIterator<Item = Result<WireEntry, E>>,
    context: usize,
) -> Result<LogComparison, E> {
    let mut a = a.into_iter();
    let mut b = b.into_iter();
    let mut recent: VecDeque<(Side, Side)> = VecDeque::with_capacity(context + 1);
    let mut frames = 0u64;
    let mut close_markers = 0u64;
    loop {
        let step_a = next_step(&mut a)?;
        let step_b = next_step(&mut b)?;
        let position = frames + 1;
        let differs = |difference, a: Option<WireEntry>, b: Option<WireEntry>, recent| {
            Ok(LogComparison::Differs(Box::new(FirstDifference {
                position,
                a: a.map(Side::of),
                b: b.map(Side::of),
                difference,
                context: Vec::from(recent),
            })))
        };
        if step_a.marks != step_b.marks {
            let difference = Difference::CloseMarkers {
                a: step_a.marks,
                b: step_b.marks,
            };
            return differs(difference, step_a.frame, step_b.frame, recent);
        }
        close_markers += step_a.marks.len() as u64;
        let (frame_a, frame_b) = match (step_a.frame, step_b.frame) {
            (None, None) => {
                return Ok(LogComparison::Same {
                    frames,
                    close_markers,
                });
            }
            (None, Some(b)) => return differs(Difference::MissingInA, None, Some(b), recent),
            (Some(a), None) => return differs(Difference::MissingInB, Some(a), None, recent),
            (Some(a), Some(b)) => (a, b),
        };
        let json_a = payload_json(&frame_a.payload);
        let json_b = payload_json(&frame_b.payload);
        let diffs = if json_a == json_b {
            Vec::new()
        } else {
            json_diff(&json_a, &json_b)
        };
        if frame_a.dir != frame_b.dir {
            return differs(
                Difference::Direction { diffs },
                Some(frame_a),
                Some(frame_b),
                recent,
            );
        }
        if json_a != json_b {
            return differs(
                Difference::Payload { diffs },
                Some(frame_a),
                Some(frame_b),
                recent,
            );
        }
        frames += 1;
        if context > 0 {
            if recent.len() == context {
                recent.pop_front();
            }
            recent.push_back((Side::of(frame_a), Side::of(frame_b)));
        }
    }
}

/// A path's value for reports: compact JSON, or `(absent)`.
pub fn show_value(value: &Option<Value>) -> String {
    match value {
        Some(value) => value.to_string(),
        None => "(absent)".to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::convert::Infallible;

    fn frame(seq: u64, dir: Direction, json: &str) -> Result<WireEntry, Infallible> {
        Ok(WireEntry::frame(
            seq,
            dir,
            seq,
            json.as_bytes().to_vec(),
            None,
            false,
        ))
    }

    fn close(seq: u64, reason: &str) -> Result<WireEntry, Infallible> {
        let mark = CloseMark {
            code: Some(1000),
            reason: Some(reason.into()),
            client: true,
        };
        Ok(WireEntry::close_mark(seq, seq, None, mark))
    }

    #[test]
    fn the_first_payload_difference_comes_with_its_context() {
        let a = vec![
            frame(1, Direction::Out, r#"{"setup":{}}"#),
            frame(2, Direction::In, r#"{"setupComplete":{}}"#),
            frame(3, Direction::In, r#"{"x":1}"#),
            frame(4, Direction::In, r#"{"x":2}"#),
        ];
        let mut b = a.clone();
        b[3] = frame(4, Direction::In, r#"{"x":3}"#);
        let LogComparison::Differs(first) = compare_logs(a, b, 2).unwrap() else {
            panic!("expected a difference");
        };
        assert_eq!(first.position, 4);
        assert_eq!(
            first.difference,
            Difference::Payload {
                diffs: vec![PathDiff {
                    path: "x".into(),
                    expected: Some(serde_json::json!(2)),
                    actual: Some(serde_json::json!(3)),
                }]
            }
        );
        let context: Vec<(u64, u64)> = first.context.iter().map(|(a, b)| (a.seq, b.seq)).collect();
        assert_eq!(context, [(2, 2), (3, 3)]);
    }

    #[test]
    fn close_markers_and_lengths_are_compared() {
        let a = vec![
            frame(1, Direction::Out, "{}"),
            close(2, "go_away"),
            frame(3, Direction::Out, "{}"),
        ];
        let b = vec![
            frame(1, Direction::Out, "{}"),
            frame(2, Direction::Out, "{}"),
        ];
        let LogComparison::Differs(first) = compare_logs(a.clone(), b, 2).unwrap() else {
            panic!("expected a difference");
        };
        assert_eq!(first.position, 2);
        assert!(matches!(first.difference, Difference::CloseMarkers { .. }));
        let shorter = vec![frame(1, Direction::Out, "{}")];
        let LogComparison::Differs(first) = compare_logs(a.clone(), shorter, 2).unwrap() else {
            panic!("expected a difference");
        };
        assert!(matches!(first.difference, Difference::CloseMarkers { .. }));
        assert_eq!(
            compare_logs(a.clone(), a, 2).unwrap(),
            LogComparison::Same {
                frames: 2,
                close_markers: 1
            }
        );
    }
}
