//! Pairing what the runtime sends in a replay with what it sent in the recording.
//!
//! The tape reader queues each recorded runtime frame as it reaches it; the replay transport
//! takes the next one for each frame the runtime produces and compares them. A frame that
//! is byte-identical is a match; otherwise the difference is a [`Divergence`] with a
//! JSON-path diff. Frames the application sends are captured but not compared: a replay does
//! not re-send them.

use std::collections::VecDeque;
use std::sync::Mutex;

use bytes::Bytes;
use reel_actors::writer::Origin;
use reel_protocol::FrameKind;
use reel_recorder::wire_log::WireEntry;
use tokio::sync::Notify;

use crate::divergence::{Divergence, DivergenceKind, json_diff, payload_json};

/// A frame the replayed session sent.
#[derive(Debug, Clone, PartialEq)]
pub struct CapturedFrame {
    /// Text or binary.
    pub kind: FrameKind,
    /// Its bytes.
    pub bytes: Bytes,
    /// Who sent it.
    pub origin: Origin,
    /// The recorded frame it was compared with, if any.
    pub recorded_seq: Option<u64>,
    /// Whether it was byte-identical to that frame.
    pub identical: bool,
}

#[derive(Debug, Default)]
struct State {
    expected: VecDeque<WireEntry>,
    tape_done: bool,
    paired: u64,
    queued: u64,
    last_seq: u64,
    captured: Vec<CapturedFrame>,
    divergences: Vec<Divergence>,
    taken: Vec<u64>,
}

/// The pairing of recorded and replayed outbound frames, shared by the tape reader and the
/// replay transport.
#[derive(Debug, Default)]
pub struct OutboundMatcher {
    state: Mutex<State>,
    changed: Notify,
}

fn lock(mutex: &Mutex<State>) -> std::sync::MutexGuard<'_, State> {
    mutex
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

impl OutboundMatcher {
    /// The tape reader reached a recorded runtime frame.
    pub fn expect(&self, entry: WireEntry) {
        let mut state = lock(&self.state);
        state.last_seq = state.last_seq.max(entry.seq);
        state.queued += 1;
        state.expected.push_back(entry);
        drop(state);
        self.changed.notify_waiters();
    }

    /// The tape reader reached a recorded runtime frame that nothing the tape delivered can
    /// provoke (a tool response to a call the tape never made): it is reported missing at
    /// once, counted as queued and given up, instead of waited for.
    pub fn unprovoked(&self, entry: WireEntry) {
        let mut state = lock(&self.state);
        state.last_seq = state.last_seq.max(entry.seq);
        state.queued += 1;
        state.divergences.push(Divergence {
            seq: entry.seq,
            kind: DivergenceKind::Missing,
            expected: Some(payload_json(&entry.payload)),
            actual: None,
        });
        drop(state);
        self.changed.notify_waiters();
    }

    /// The tape has no more frames.
    pub fn tape_done(&self) {
        lock(&self.state).tape_done = true;
        self.changed.notify_waiters();
    }

    async fn wait(&self, ready: impl Fn(&State) -> bool) {
        loop {
            let notified = self.changed.notified();
            tokio::pin!(notified);
            notified.as_mut().enable();
            if ready(&lock(&self.state)) {
                return;
            }
            notified.await;
        }
    }

    /// The recorded frame the runtime's next frame should equal: waits until the tape
    /// reader has reached it, or the tape is done (`None`).
    pub async fn next_expected(&self) -> Option<WireEntry> {
        self.wait(|s| !s.expected.is_empty() || s.tape_done).await;
        let mut state = lock(&self.state);
        let entry = state.expected.pop_front();
        if entry.is_some() {
            state.paired += 1;
        }
        entry
    }

    /// Records a frame the runtime produced, compared with `expected` (taken with
    /// [`OutboundMatcher::next_expected`], or, for a connection's setup, read by the tape
    /// reader itself).
    pub fn produced(&self, kind: FrameKind, bytes: Bytes, expected: Option<WireEntry>) {
        let mut state = lock(&self.state);
        let (recorded_seq, identical) = match &expected {
            Some(entry) => {
                let identical = entry.payload == bytes;
                if !identical {
                    let expected_json = payload_json(&entry.payload);
                    let actual_json = payload_json(&bytes);
                    let diffs = json_diff(&expected_json, &actual_json);
                    // Bytes that differ only in layout (another client's spacing or key
                    // order, e.g. a recording an official SDK made through the proxy) say
                    // the same thing: `identical` reports the bytes, a divergence needs a
                    // difference in what the frame says.
                    let same_json = diffs.is_empty()
                        && serde_json::from_slice::<serde::de::IgnoredAny>(&bytes).is_ok()
                        && serde_json::from_slice::<serde::de::IgnoredAny>(&entry.payload).is_ok();
                    if !same_json {
                        state.divergences.push(Divergence {
                            seq: entry.seq,
                            kind: DivergenceKind::Differs { diffs },
                            expected: Some(expected_json),
                            actual: Some(actual_json),
                        });
                    }
                }
                (Some(entry.seq), identical)
            }
            None => {
                let seq = state.last_seq;
                state.divergences.push(Divergence {
                    seq,
                    kind: DivergenceKind::Unexpected,
                    expected: None,
                    actual: Some(payload_json(&bytes)),
                });
                (None, false)
            }
        };
        state.captured.push(CapturedFrame {
            kind,
            bytes,
            origin: Origin::Runtime,
            recorded_seq,
            identical,
        });
        drop(state);
        self.changed.notify_waiters();
    }

    /// Records a frame the application sent (not compared).
    pub fn captured_app_frame(&self, kind: FrameKind, bytes: Bytes) {
        lock(&self.state).captured.push(CapturedFrame {
            kind,
            bytes,
            origin: Origin::App,
            recorded_seq: None,
            identical: false,
        });
    }

    /// Waits until every recorded runtime frame queued so far has been paired (the runtime
    /// produced it). Returns `false` if `within` passed first; the frames still waiting are
    /// then reported missing and dropped.
    pub async fn wait_all_paired(&self, within: std::time::Duration) -> bool {
        let all_paired = |s: &State| s.paired + s.missing() >= s.queued;
        if tokio::time::timeout(within, self.wait(all_paired))
            .await
            .is_ok()
        {
            return true;
        }
        let mut state = lock(&self.state);
        while let Some(entry) = state.expected.pop_front() {
            state.divergences.push(Divergence {
                seq: entry.seq,
                kind: DivergenceKind::Missing,
                expected: Some(payload_json(&entry.payload)),
                actual: None,
            });
        }
        false
    }

    /// Reports every recorded runtime frame never produced (at the end of a replay).
    pub fn report_missing(&self) {
        let mut state = lock(&self.state);
        while let Some(entry) = state.expected.pop_front() {
            state.divergences.push(Divergence {
                seq: entry.seq,
                kind: DivergenceKind::Missing,
                expected: Some(payload_json(&entry.payload)),
                actual: None,
            });
        }
    }

    /// A recorded runtime frame was taken from the recording rather than expected (a
    /// replay without application code; see `ReplayOptions::without_application`).
    pub fn taken_from_recording(&self, seq: u64) {
        let mut state = lock(&self.state);
        state.last_seq = state.last_seq.max(seq);
        state.taken.push(seq);
    }

    /// The sequence numbers of the recorded frames taken from the recording, in order.
    pub fn taken(&self) -> Vec<u64> {
        lock(&self.state).taken.clone()
    }

    /// Every frame the replay sent, in order.
    pub fn captured(&self) -> Vec<CapturedFrame> {
        lock(&self.state).captured.clone()
    }

    /// Every divergence found so far, in order.
    pub fn divergences(&self) -> Vec<Divergence> {
        lock(&self.state).divergences.clone()
    }
}

impl State {
    /// Recorded frames given up on (reported missing).
    fn missing(&self) -> u64 {
        self.divergences
            .iter()
            .filter(|d| d.kind == DivergenceKind::Missing)
            .count() as u64
    }
}

#[cfg(test)]
mod tests {
    use reel_recorder::wire_log::Direction;

    use super::*;

    fn produce(recorded: &[u8], sent: &[u8]) -> (Vec<Divergence>, bool) {
        let matcher = OutboundMatcher::default();
        let entry = WireEntry::frame(
            4,
            Direction::Out,
            0,
            Bytes::copy_from_slice(recorded),
            None,
            false,
        );
        matcher.produced(FrameKind::Text, Bytes::copy_from_slice(sent), Some(entry));
        (matcher.divergences(), matcher.captured()[0].identical)
    }

    #[test]
    fn the_same_json_laid_out_differently_is_not_a_divergence() {
        let (divergences, identical) = produce(br#"{"a":1,"b":[2]}"#, br#"{ "b": [2], "a": 1 }"#);
        assert_eq!(divergences, vec![]);
        assert!(!identical, "the bytes differ");
    }

    #[test]
    fn different_json_is_a_divergence_with_its_path() {
        let (divergences, _) = produce(br#"{"a":1}"#, br#"{"a":2}"#);
        assert_eq!(
            divergences[0].kind,
            DivergenceKind::Differs {
                diffs: vec![crate::divergence::PathDiff {
                    path: "a".into(),
                    expected: Some(serde_json::json!(1)),
                    actual: Some(serde_json::json!(2)),
                }]
            }
        );
    }

    #[test]
    fn differing_bytes_that_are_not_json_are_a_divergence() {
        // Both read as the same lossy text; only the bytes can tell them apart.
        let (divergences, _) = produce(&[0xff, 0xfe], &[0xfe, 0xff]);
        assert_eq!(divergences.len(), 1);
        assert_eq!(divergences[0].seq, 4);
    }
}
