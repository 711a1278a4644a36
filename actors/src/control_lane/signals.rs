//! The auto-tracked `session:` keys, kept from the event stream and written in debounced
//! batches.
//!
//! Debouncing follows *event time* (the session time of the frame each event came from),
//! not a wall timer: the keys are flushed when an event arrives 100 ms or more after the last
//! flush, on connect and on disconnect, and at every turn complete before the turn pipeline
//! runs (the turn's usage, which the decoder puts before the turn's end, included): the
//! extractors, transitions and the turn's callbacks see the turn's keys. The writes are therefore a
//! pure function of the frames and their times, so a replay writes the same keys with the
//! same values in the same order, time-derived keys (`session:elapsed_ms`,
//! `session:silence_ms`) included.

//!
//! The keys, and what writes them:
//!
//! | key | type | written on |
//! |---|---|---|
//! | `session:is_user_speaking` | bool | voice activity start / end |
//! | `session:is_model_speaking` | bool | the wire phase moving to or from `model_speaking` |
//! | `session:phase` | string | the wire phase changing |
//! | `session:interrupt_count` | integer | each interruption |
//! | `session:error_count`, `session:last_error` | integer, string | each error event |
//! | `session:go_away_received`, `session:go_away_time_left_ms` | bool, integer | `goAway` |
//! | `session:resumable` | bool | each resumption update |
//! | `session:prompt_token_count`, `session:response_token_count`, `session:cached_content_token_count`, `session:thoughts_token_count`, `session:total_token_count` | integer | each usage report (the counts it carries) |
//! | `session:last_input_transcription`, `session:last_output_transcription` | string | each final transcription |
//! | `session:session_type` | string | connect: `audio`; the application's first video frame: `audio_video` (the Live API limits the two kinds of session differently) |
//! | `session:disconnected` | bool | connect (`false`), disconnect (`true`) |
//! | `session:elapsed_ms`, `session:remaining_budget_ms`, `session:silence_ms` | integer | every flush, from event time |
//!
//! The control lane writes `session:turn_count` and `session:active_phase` itself.

use std::collections::BTreeMap;

use reel_protocol::{SessionEvent, SessionPhase};
use serde_json::{Value, json};

/// Flush interval in session time.
pub const DEBOUNCE_MS: u64 = 100;

/// The values of the `session:` keys and which changed since the last flush.
#[derive(Debug, Clone)]
pub struct SessionSignals {
    pending: BTreeMap<&'static str, Value>,
    written: BTreeMap<&'static str, Value>,
    started_ms: Option<u64>,
    last_activity_ms: Option<u64>,
    last_flush_ms: u64,
    budget_ms: u64,
    interrupt_count: u64,
    error_count: u64,
    video: bool,
}

impl SessionSignals {
    /// Signals for a session expected to last `budget_ms` (for `remaining_budget_ms`).
    pub fn new(budget_ms: u64) -> Self {
        SessionSignals {
            pending: BTreeMap::new(),
            written: BTreeMap::new(),
            started_ms: None,
            last_activity_ms: None,
            last_flush_ms: 0,
            budget_ms,
            interrupt_count: 0,
            error_count: 0,
            video: false,
        }
    }

    fn put(&mut self, key: &'static str, value: Value) {
        if self.written.get(key) != Some(&value) {
            self.pending.insert(key, value);
        } else {
            self.pending.remove(key);
        }
    }

    /// Takes in one event that happened at `ts_ms`.
    pub fn observe(&mut self, event: &SessionEvent, ts_ms: u64) {
        use SessionEvent as E;
        match event {
            E::Connected { .. } => {
                self.started_ms.get_or_insert(ts_ms);
                self.put("session:disconnected", json!(false));
                self.put("session:session_type", json!(self.session_type()));
            }
            E::VoiceActivityStart => {
                self.last_activity_ms = Some(ts_ms);
                self.put("session:is_user_speaking", json!(true));
            }
            E::VoiceActivityEnd => {
                self.last_activity_ms = Some(ts_ms);
                self.put("session:is_user_speaking", json!(false));
            }
            E::PhaseChanged { to, .. } => {
                self.put("session:phase", json!(to.as_str()));
                self.put(
                    "session:is_model_speaking",
                    json!(*to == SessionPhase::ModelSpeaking),
                );
            }
            E::Interrupted => {
                self.interrupt_count += 1;
                self.put("session:interrupt_count", json!(self.interrupt_count));
            }
            E::Error(error) => {
                self.error_count += 1;
                self.put("session:error_count", json!(self.error_count));
                self.put("session:last_error", json!(error.to_string()));
            }
            E::GoAway { time_left } => {
                self.put("session:go_away_received", json!(true));
                if let Some(left) = time_left {
                    let ms = u64::try_from(left.as_millis()).unwrap_or(u64::MAX);
                    self.put("session:go_away_time_left_ms", json!(ms));
                }
            }
            E::SessionResumeUpdate(info) => self.put("session:resumable", json!(info.resumable)),
            E::Usage(usage) => {
                let counts = [
                    ("session:prompt_token_count", usage.prompt_token_count),
                    ("session:response_token_count", usage.response_token_count),
                    (
                        "session:cached_content_token_count",
                        usage.cached_content_token_count,
                    ),
                    ("session:thoughts_token_count", usage.thoughts_token_count),
                    ("session:total_token_count", usage.total_token_count),
                ];
                for (key, count) in counts {
                    if let Some(count) = count {
                        self.put(key, json!(count));
                    }
                }
            }
            E::InputTranscription {
                text,
                is_final: true,
            } => {
                self.last_activity_ms = Some(ts_ms);
                self.put("session:last_input_transcription", json!(text));
            }
            E::OutputTranscription {
                text,
                is_final: true,
            } => {
                self.last_activity_ms = Some(ts_ms);
                self.put("session:last_output_transcription", json!(text));
            }
            E::TurnComplete { .. } | E::TextComplete(_) | E::ToolCall(_) => {
                self.last_activity_ms = Some(ts_ms);
            }
            E::Disconnected { .. } => self.put("session:disconnected", json!(true)),
            _ => {}
        }
    }

    /// The application's first video frame went out: from now on the session is an
    /// audio-video one.
    pub fn video_sent(&mut self) {
        if !std::mem::replace(&mut self.video, true) {
            self.put("session:session_type", json!(self.session_type()));
        }
    }

    /// `audio` until the application sends video, then `audio_video`: the Live API's two
    /// kinds of session, which it limits differently.
    fn session_type(&self) -> &'static str {
        if self.video { "audio_video" } else { "audio" }
    }

    /// The writes due at `ts_ms`: everything changed, plus the time-derived keys, if the
    /// debounce interval has passed (or `force`). Marks them written.
    pub fn flush(&mut self, ts_ms: u64, force: bool) -> Vec<(String, Value)> {
        // Saturating: a recorded time near `u64::MAX` (a hostile or damaged log replayed)
        // must not overflow.
        if !force && ts_ms < self.last_flush_ms.saturating_add(DEBOUNCE_MS) {
            return Vec::new();
        }
        if let Some(started) = self.started_ms {
            let elapsed = ts_ms.saturating_sub(started);
            self.put("session:elapsed_ms", json!(elapsed));
            self.put(
                "session:remaining_budget_ms",
                json!(self.budget_ms.saturating_sub(elapsed)),
            );
            let quiet_since = self.last_activity_ms.unwrap_or(started);
            self.put(
                "session:silence_ms",
                json!(ts_ms.saturating_sub(quiet_since)),
            );
        }
        if self.pending.is_empty() {
            return Vec::new();
        }
        self.last_flush_ms = ts_ms;
        let pending = std::mem::take(&mut self.pending);
        pending
            .into_iter()
            .map(|(key, value)| {
                self.written.insert(key, value.clone());
                (key.to_owned(), value)
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flushes_follow_event_time_and_skip_unchanged_values() {
        let mut signals = SessionSignals::new(900_000);
        signals.observe(&SessionEvent::Connected { session_id: None }, 1_000);
        assert_eq!(
            signals.flush(1_000, true),
            vec![
                ("session:disconnected".to_owned(), json!(false)),
                ("session:elapsed_ms".to_owned(), json!(0)),
                ("session:remaining_budget_ms".to_owned(), json!(900_000)),
                ("session:session_type".to_owned(), json!("audio")),
                ("session:silence_ms".to_owned(), json!(0)),
            ]
        );
        signals.observe(&SessionEvent::VoiceActivityStart, 1_050);
        assert_eq!(
            signals.flush(1_050, false),
            vec![],
            "within the debounce interval"
        );
        assert_eq!(
            signals.flush(1_100, false),
            vec![
                ("session:elapsed_ms".to_owned(), json!(100)),
                ("session:is_user_speaking".to_owned(), json!(true)),
                ("session:remaining_budget_ms".to_owned(), json!(899_900)),
                ("session:silence_ms".to_owned(), json!(50)),
            ]
        );
        signals.observe(&SessionEvent::VoiceActivityStart, 1_300);
        let writes = signals.flush(1_300, false);
        assert!(
            !writes.iter().any(|(k, _)| k == "session:is_user_speaking"),
            "unchanged"
        );
    }

    #[test]
    fn the_session_type_is_audio_until_the_first_video_frame() {
        let mut signals = SessionSignals::new(900_000);
        let connected = SessionEvent::Connected { session_id: None };
        signals.observe(&connected, 1_000);
        let type_of = |writes: Vec<(String, Value)>| {
            writes
                .into_iter()
                .find(|(key, _)| key == "session:session_type")
                .map(|(_, value)| value)
        };
        assert_eq!(type_of(signals.flush(1_000, true)), Some(json!("audio")));
        signals.video_sent();
        assert_eq!(
            type_of(signals.flush(1_200, false)),
            Some(json!("audio_video"))
        );
        signals.video_sent();
        signals.observe(&connected, 2_000);
        assert_eq!(type_of(signals.flush(2_000, true)), None, "unchanged");
    }

    #[test]
    fn a_time_at_the_end_of_the_clock_does_not_overflow() {
        let mut signals = SessionSignals::new(900_000);
        signals.observe(&SessionEvent::Connected { session_id: None }, u64::MAX);
        assert_eq!(signals.flush(u64::MAX, true).len(), 5);
        signals.observe(&SessionEvent::VoiceActivityStart, u64::MAX);
        assert_eq!(
            signals.flush(u64::MAX, false),
            vec![("session:is_user_speaking".to_owned(), json!(true))]
        );
    }
}
