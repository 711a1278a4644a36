//! Turn-by-turn summaries of a session's events: what each model turn said and did.
//!
//! A session's events come from several lanes, and only each lane's own order is fixed (the
//! interleaving of lanes is up to the scheduler, in production as in replay). So a summary
//! cannot read the events in the order they arrived and call that the session's order:
//! the same replay would give different summaries. [`SummaryBuilder`] rebuilds one order
//! from the lanes' orders alone, so the summary depends on nothing else:
//!
//! - events the router sends to both lanes (final text, voice activity, final
//!   transcriptions, phase changes, interruptions) appear in the same order in both, and
//!   serve as anchors that pair the two lanes up;
//! - between two anchors, the fast lane's own events (text deltas, audio, partial
//!   transcripts) come before the control lane's own (turn complete, tool calls, usage),
//!   except the event that starts the model speaking: the phase change it causes
//!   immediately follows it, so it goes after the control lane's events of that stretch.
//!
//! Each event is counted once: an event that reached both lanes is one anchor. Phase
//! changes are anchors only, never counted; supervisor events (reconnects, restarts, the
//! end of the session) belong to no turn. Turns end at `turn_complete`; events after the
//! last one form a last turn that is not [`TurnSummary::complete`].
//!
//! Consecutive equal events without content (audio chunks, text deltas) are kept as one
//! run with a count, so a summary holds no audio and stays small whatever the session's
//! length.
//!
//! ```
//! use reel_actors::{EventEnvelope, Lane, LiveEvent};
//! use reel_protocol::SessionEvent;
//! use reel_replayer::summary::summarize;
//!
//! let event = |lane, seq, event| EventEnvelope { lane, seq, event: LiveEvent::Session(event) };
//! let events = [
//!     event(Lane::Control, 1, SessionEvent::TextComplete("Hi!".into())),
//!     event(Lane::Control, 2, SessionEvent::TurnComplete { reason: None, waiting_for_input: false }),
//!     event(Lane::Fast, 1, SessionEvent::TextDelta("Hi!".into())),
//!     event(Lane::Fast, 2, SessionEvent::TextComplete("Hi!".into())),
//! ];
//! let summary = summarize(&events);
//! assert_eq!(summary.turns[0].counts(), "text×1, text_complete×1, turn_complete×1");
//! assert_eq!(summary.turns[0].text.as_deref(), Some("Hi!"));
//! ```

use std::collections::HashMap;
use std::fmt;

use reel_actors::{EventEnvelope, Lane, LiveEvent};
use reel_protocol::{FunctionCall, SessionEvent, SessionPhase};
use serde::Serialize;
use serde_json::Value;

use crate::timeline::shorten;

/// Kinds the router sends to the fast lane only (transcriptions only when partial): they
/// are never anchors.
const FAST_ONLY_KINDS: [&str; 7] = [
    "text",
    "audio",
    "thought",
    "media",
    "input_transcription",
    "interim_input_transcription",
    "output_transcription",
];

/// Kinds that reach both lanes but are the fast lane's to count when unpaired.
const FAST_COUNTED_SHARED_KINDS: [&str; 3] = ["text_complete", "vad_start", "vad_end"];

/// Whether a kind is counted from the fast lane when an event of that kind is not paired
/// with its copy on the control lane (a lane lost one to a restart); the control lane's
/// copy counts for every other kind.
fn counted_from_fast(kind: &str) -> bool {
    FAST_ONLY_KINDS.contains(&kind) || FAST_COUNTED_SHARED_KINDS.contains(&kind)
}

/// Kinds that say how the connection is doing rather than what the model did.
const LIFECYCLE_KINDS: [&str; 7] = [
    "connected",
    "disconnected",
    "resume_update",
    "go_away",
    "usage",
    "error",
    "interaction_status",
];

/// How many events of one kind a turn had.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct KindCount {
    /// The event kind ([`LiveEvent::kind`]).
    pub kind: &'static str,
    /// How many.
    pub count: u64,
}

/// A function call the model made.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ToolCallSummary {
    /// The function.
    pub name: String,
    /// Its arguments (`null` when none were given).
    pub args: Value,
    /// The call id.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
}

impl ToolCallSummary {
    fn of(call: &FunctionCall) -> Self {
        ToolCallSummary {
            name: call.name.clone().unwrap_or_else(|| "?".to_owned()),
            args: call.args.clone().map_or(Value::Null, Value::from),
            id: call.id.clone(),
        }
    }
}

/// `name(args)`, the arguments as compact JSON.
impl fmt::Display for ToolCallSummary {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.args {
            Value::Null => write!(f, "{}()", self.name),
            args => write!(f, "{}({args})", self.name),
        }
    }
}

/// How many characters of a turn's texts a summary keeps.
pub const SUMMARY_TEXT_CHARS: usize = 200;

/// `text`, cut to [`SUMMARY_TEXT_CHARS`].
fn kept(text: &str) -> String {
    shorten(text, SUMMARY_TEXT_CHARS)
}

/// One model turn.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TurnSummary {
    /// 1-based.
    pub number: usize,
    /// Whether the turn ended with `turn_complete` (only the last turn may not).
    pub complete: bool,
    /// Event kinds and their counts, in the order each kind first occurred.
    pub events: Vec<KindCount>,
    /// What the user typed (text the application sent) or said (final input
    /// transcriptions) in the turn: its first [`SUMMARY_TEXT_CHARS`] characters, a cut
    /// marked with `…` (a summary stays small whatever the session's length; the whole
    /// text is in the log, `reel show`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub user: Option<String>,
    /// The turn's answer text (its `text_complete`), or else its final output
    /// transcription: its first [`SUMMARY_TEXT_CHARS`] characters, as `user`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
    /// The function calls of the turn, in order.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub tool_calls: Vec<ToolCallSummary>,
}

impl TurnSummary {
    /// The counts as `text×1, turn_complete×1`.
    pub fn counts(&self) -> String {
        self.events
            .iter()
            .map(|c| format!("{}×{}", c.kind, c.count))
            .collect::<Vec<_>>()
            .join(", ")
    }

    /// Whether the turn holds only connection events (connected, disconnected, usage, …):
    /// what follows the last model turn of a session, typically.
    pub fn is_lifecycle_only(&self) -> bool {
        self.events
            .iter()
            .all(|c| LIFECYCLE_KINDS.contains(&c.kind))
    }
}

/// A session, turn by turn.
#[derive(Debug, Clone, PartialEq, Default, Serialize)]
pub struct SessionSummary {
    /// The turns, in order.
    pub turns: Vec<TurnSummary>,
}

/// Summarizes `events` (any interleaving of lanes; each lane in its order).
pub fn summarize<'a>(events: impl IntoIterator<Item = &'a EventEnvelope>) -> SessionSummary {
    let mut builder = SummaryBuilder::new();
    for event in events {
        builder.push(event);
    }
    builder.finish()
}

/// Builds a [`SessionSummary`] from events as they arrive (see the [module docs](self)).
#[derive(Debug, Default)]
pub struct SummaryBuilder {
    fast: Vec<Item>,
    control: Vec<Item>,
}

/// What identifies an event for pairing the lanes: its kind, and for transcriptions
/// whether it is the final one (only finals reach both lanes).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
struct Key {
    kind: &'static str,
    is_final: bool,
}

/// What a summary keeps of an event beyond its kind.
#[derive(Debug, Clone, PartialEq)]
enum Detail {
    None,
    User(String),
    AnswerText(String),
    FinalTranscript(String),
    Calls(Vec<ToolCallSummary>),
    PhaseTo(SessionPhase),
    /// `turn_complete`: never merged into a run, every one ends a turn.
    TurnEnd,
}

/// One event, or a run of equal events without detail.
#[derive(Debug, Clone, PartialEq)]
struct Item {
    key: Key,
    count: u64,
    detail: Detail,
}

fn digest(event: &LiveEvent) -> (Key, Detail) {
    let kind = event.kind();
    let key = |is_final| Key { kind, is_final };
    let LiveEvent::Session(event) = event else {
        return (key(false), Detail::None);
    };
    match event {
        SessionEvent::TextComplete(text) => (key(false), Detail::AnswerText(kept(text))),
        SessionEvent::OutputTranscription {
            text,
            is_final: true,
        } => (key(true), Detail::FinalTranscript(kept(text))),
        SessionEvent::InputTranscription {
            text,
            is_final: true,
        } => (key(true), Detail::User(kept(text))),
        SessionEvent::InputTranscription { .. } => (key(false), Detail::None),
        SessionEvent::UserText(text) => (key(false), Detail::User(kept(text))),
        SessionEvent::ToolCall(calls) => (
            key(false),
            Detail::Calls(calls.iter().map(ToolCallSummary::of).collect()),
        ),
        SessionEvent::PhaseChanged { to, .. } => (key(false), Detail::PhaseTo(*to)),
        SessionEvent::TurnComplete { .. } => (key(false), Detail::TurnEnd),
        _ => (key(false), Detail::None),
    }
}

impl SummaryBuilder {
    /// An empty builder.
    pub fn new() -> Self {
        SummaryBuilder::default()
    }

    /// Takes one event. Events of one lane must come in that lane's order.
    pub fn push(&mut self, envelope: &EventEnvelope) {
        let lane = match envelope.lane {
            Lane::Fast => &mut self.fast,
            Lane::Control => &mut self.control,
            Lane::Supervisor => return,
        };
        let (key, detail) = digest(&envelope.event);
        if detail == Detail::None
            && let Some(run) = run_of(lane, key)
        {
            run.count += 1;
            return;
        }
        lane.push(Item {
            key,
            count: 1,
            detail,
        });
    }

    /// The summary of every event taken.
    pub fn finish(self) -> SessionSummary {
        let fast_counts = totals(&self.fast);
        let control_counts = totals(&self.control);
        let mut shared = Vec::new();
        let mut unpaired = Vec::new();
        for (key, count) in &fast_counts {
            match control_counts.get(key) {
                Some(other) if other == count => shared.push(*key),
                Some(_) => unpaired.push(*key),
                None => {}
            }
        }
        // A kind on both lanes whose copies do not pair up is counted from one lane only.
        let keep = |lane: Lane| {
            let unpaired = unpaired.clone();
            move |key: &Key| {
                !unpaired.contains(key) || (counted_from_fast(key.kind) == (lane == Lane::Fast))
            }
        };
        let fast = segments(self.fast, &shared, keep(Lane::Fast));
        let control = segments(self.control, &shared, keep(Lane::Control));
        merge(fast, control)
    }
}

/// The run a new event of `key` (without detail) joins, if any: the last item, when it is
/// of that key; or, for a kind only the fast lane gets (text, audio, partial transcripts),
/// the item of that key among the trailing fast-only runs. Audio and transcription chunks
/// alternate for a whole answer; kept as two runs instead of one item per chunk, a lane's
/// items grow with its turns, not with its events. Nothing is reordered across an event
/// that may be an anchor or that carries detail, and within such a stretch each kind keeps
/// the place it first occurred, which is all a summary reports of it.
fn run_of(lane: &mut [Item], key: Key) -> Option<&mut Item> {
    let fast_only = |key: &Key| FAST_ONLY_KINDS.contains(&key.kind) && !key.is_final;
    let last = lane.len().checked_sub(1)?;
    if lane[last].key == key && lane[last].detail == Detail::None {
        return lane.get_mut(last);
    }
    if !fast_only(&key) {
        return None;
    }
    let start = lane
        .iter()
        .rposition(|item| !(fast_only(&item.key) && item.detail == Detail::None))
        .map_or(0, |i| i + 1);
    lane[start..].iter_mut().find(|item| item.key == key)
}

fn totals(items: &[Item]) -> HashMap<Key, u64> {
    let mut totals = HashMap::new();
    for item in items {
        *totals.entry(item.key).or_insert(0) += item.count;
    }
    totals
}

/// A lane's events: anchors (one event each, paired with the other lane's copy) and runs of
/// the lane's own events.
enum Segment {
    Anchor(Item),
    Own(Item),
}

fn segments<'a>(
    items: Vec<Item>,
    shared: &'a [Key],
    keep: impl Fn(&Key) -> bool + 'a,
) -> impl Iterator<Item = Segment> + 'a {
    // Lazily: the lanes' items become segments as the merge takes them, never all at once.
    items.into_iter().flat_map(move |item| {
        let count = usize::try_from(item.count).unwrap_or(usize::MAX);
        let (anchor, own) = if shared.contains(&item.key) {
            (Some(Item { count: 1, ..item }), None)
        } else if keep(&item.key) {
            (None, Some(Segment::Own(item)))
        } else {
            (None, None)
        };
        anchor
            .into_iter()
            .flat_map(move |anchor| std::iter::repeat_n(anchor, count))
            .map(Segment::Anchor)
            .chain(own)
    })
}

/// Walks both lanes anchor by anchor, ordering each stretch between anchors as the module
/// docs say, and feeds the result to the turns.
fn merge(
    fast: impl Iterator<Item = Segment>,
    control: impl Iterator<Item = Segment>,
) -> SessionSummary {
    let mut fast = fast.peekable();
    let mut control = control.peekable();
    let mut turns = Turns::default();
    loop {
        let mut fast_own = Vec::new();
        while let Some(Segment::Own(_)) = fast.peek() {
            if let Some(Segment::Own(item)) = fast.next() {
                fast_own.push(item);
            }
        }
        let mut control_own = Vec::new();
        while let Some(Segment::Own(_)) = control.peek() {
            if let Some(Segment::Own(item)) = control.next() {
                control_own.push(item);
            }
        }
        let anchor = match (fast.next(), control.next()) {
            (Some(Segment::Anchor(item)), _) | (None, Some(Segment::Anchor(item))) => Some(item),
            _ => None,
        };
        if fast_own.is_empty() && control_own.is_empty() && anchor.is_none() {
            break;
        }
        let starts_speaking = anchor.as_ref().is_some_and(|a| {
            matches!(
                a.detail,
                Detail::PhaseTo(SessionPhase::ModelSpeaking | SessionPhase::UserSpeaking)
            )
        });
        let cause = if starts_speaking {
            split_last(&mut fast_own)
        } else {
            None
        };
        fast_own
            .into_iter()
            .chain(control_own)
            .chain(cause)
            .chain(anchor)
            .for_each(|item| turns.feed(item));
    }
    turns.finish()
}

/// Takes the last event off the end of `items` (splitting a run).
fn split_last(items: &mut Vec<Item>) -> Option<Item> {
    let last = items.last_mut()?;
    if last.count > 1 {
        last.count -= 1;
        return Some(Item {
            count: 1,
            ..last.clone()
        });
    }
    items.pop()
}

/// The turn being gathered and those already ended.
#[derive(Debug, Default)]
struct Turns {
    done: Vec<TurnSummary>,
    events: Vec<KindCount>,
    user: Vec<String>,
    answer: Vec<String>,
    transcript: Vec<String>,
    tool_calls: Vec<ToolCallSummary>,
    /// The last event fed ended a turn.
    just_ended: bool,
}

fn count_into(events: &mut Vec<KindCount>, kind: &'static str, count: u64) {
    match events.iter_mut().find(|c| c.kind == kind) {
        Some(counted) => counted.count += count,
        None => events.push(KindCount { kind, count }),
    }
}

impl Turns {
    fn feed(&mut self, item: Item) {
        if matches!(item.detail, Detail::PhaseTo(_)) {
            return;
        }
        let just_ended = std::mem::take(&mut self.just_ended);
        // Usage reported right after a turn complete (the server sends it on the same
        // frame) is the usage of that turn.
        if just_ended
            && item.key.kind == "usage"
            && let Some(ended) = self.done.last_mut()
        {
            count_into(&mut ended.events, item.key.kind, item.count);
            return;
        }
        count_into(&mut self.events, item.key.kind, item.count);
        match item.detail {
            Detail::User(text) => self.user.push(text),
            Detail::AnswerText(text) => self.answer.push(text),
            Detail::FinalTranscript(text) => self.transcript.push(text),
            Detail::Calls(calls) => self.tool_calls.extend(calls),
            Detail::TurnEnd => {
                self.end_turn(true);
                self.just_ended = true;
            }
            Detail::None | Detail::PhaseTo(_) => {}
        }
    }

    fn end_turn(&mut self, complete: bool) {
        let text = [&self.answer, &self.transcript]
            .into_iter()
            .find(|texts| !texts.is_empty())
            .map(|texts| kept(&texts.join(" ")));
        let user = (!self.user.is_empty()).then(|| kept(&self.user.join(" ")));
        self.done.push(TurnSummary {
            number: self.done.len() + 1,
            complete,
            events: std::mem::take(&mut self.events),
            user,
            text,
            tool_calls: std::mem::take(&mut self.tool_calls),
        });
        self.user.clear();
        self.answer.clear();
        self.transcript.clear();
    }

    fn finish(mut self) -> SessionSummary {
        if !self.events.is_empty() {
            self.end_turn(false);
        }
        SessionSummary { turns: self.done }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn session(lane: Lane, seq: u64, event: SessionEvent) -> EventEnvelope {
        EventEnvelope {
            lane,
            seq,
            event: LiveEvent::Session(event),
        }
    }

    fn phase(from: SessionPhase, to: SessionPhase) -> SessionEvent {
        SessionEvent::PhaseChanged { from, to }
    }

    fn turn_complete() -> SessionEvent {
        SessionEvent::TurnComplete {
            reason: None,
            waiting_for_input: false,
        }
    }

    /// Two lanes as the router fills them, for an audio-only turn followed by a turn that
    /// starts while the phase is already `Active` (after a turn with a tool call only).
    fn lanes() -> (Vec<SessionEvent>, Vec<SessionEvent>) {
        use SessionPhase::*;
        let audio = || SessionEvent::AudioData(bytes::Bytes::from_static(b"\0\0"));
        let call = SessionEvent::ToolCall(vec![FunctionCall {
            id: Some("c1".into()),
            name: Some("lookup".into()),
            args: Some(serde_json::json!({"q": 1}).into()),
            ..FunctionCall::default()
        }]);
        let fast = vec![
            phase(Disconnected, Active),
            audio(),
            phase(Active, ModelSpeaking),
            audio(),
            audio(),
            phase(ModelSpeaking, Active),
            phase(Active, ToolCallPending),
            phase(ToolCallPending, Active),
            SessionEvent::TextDelta("Done.".into()),
            phase(Active, ModelSpeaking),
            SessionEvent::TextComplete("Done.".into()),
            phase(ModelSpeaking, Active),
        ];
        let control = vec![
            SessionEvent::Connected { session_id: None },
            phase(Disconnected, Active),
            phase(Active, ModelSpeaking),
            turn_complete(),
            phase(ModelSpeaking, Active),
            call,
            phase(Active, ToolCallPending),
            phase(ToolCallPending, Active),
            turn_complete(),
            phase(Active, ModelSpeaking),
            SessionEvent::TextComplete("Done.".into()),
            turn_complete(),
            phase(ModelSpeaking, Active),
            SessionEvent::Disconnected {
                code: Some(1000),
                reason: None,
            },
        ];
        (fast, control)
    }

    fn expected() -> SessionSummary {
        let count = |kind, count| KindCount { kind, count };
        SessionSummary {
            turns: vec![
                TurnSummary {
                    user: None,
                    number: 1,
                    complete: true,
                    events: vec![
                        count("connected", 1),
                        count("audio", 3),
                        count("turn_complete", 1),
                    ],
                    text: None,
                    tool_calls: vec![],
                },
                TurnSummary {
                    user: None,
                    number: 2,
                    complete: true,
                    events: vec![count("tool_call", 1), count("turn_complete", 1)],
                    text: None,
                    tool_calls: vec![ToolCallSummary {
                        name: "lookup".into(),
                        args: serde_json::json!({"q": 1}),
                        id: Some("c1".into()),
                    }],
                },
                TurnSummary {
                    user: None,
                    number: 3,
                    complete: true,
                    events: vec![
                        count("text", 1),
                        count("text_complete", 1),
                        count("turn_complete", 1),
                    ],
                    text: Some("Done.".into()),
                    tool_calls: vec![],
                },
                TurnSummary {
                    user: None,
                    number: 4,
                    complete: false,
                    events: vec![count("disconnected", 1)],
                    text: None,
                    tool_calls: vec![],
                },
            ],
        }
    }

    #[test]
    fn every_interleaving_of_the_lanes_gives_the_same_summary() {
        let (fast, control) = lanes();
        let envelopes = |lane, events: &[SessionEvent]| -> Vec<EventEnvelope> {
            events
                .iter()
                .enumerate()
                .map(|(i, e)| session(lane, i as u64 + 1, e.clone()))
                .collect()
        };
        let fast = envelopes(Lane::Fast, &fast);
        let control = envelopes(Lane::Control, &control);
        // Fast lane first, control lane first, and alternating.
        let fast_first: Vec<_> = fast.iter().chain(&control).collect();
        let control_first: Vec<_> = control.iter().chain(&fast).collect();
        let mut alternating = Vec::new();
        for i in 0..fast.len().max(control.len()) {
            alternating.extend(fast.get(i));
            alternating.extend(control.get(i));
        }
        for order in [fast_first, control_first, alternating] {
            assert_eq!(summarize(order), expected());
        }
        assert!(expected().turns[3].is_lifecycle_only());
        assert!(!expected().turns[0].is_lifecycle_only());
        assert_eq!(
            expected().turns[0].counts(),
            "connected×1, audio×3, turn_complete×1"
        );
        assert_eq!(
            expected().turns[1].tool_calls[0].to_string(),
            r#"lookup({"q":1})"#
        );
    }

    #[test]
    fn supervisor_events_belong_to_no_turn() {
        let events = [
            EventEnvelope {
                lane: Lane::Supervisor,
                seq: 1,
                event: LiveEvent::SessionEnded {
                    reason: "done".into(),
                },
            },
            session(Lane::Control, 1, turn_complete()),
        ];
        let summary = summarize(&events);
        assert_eq!(summary.turns.len(), 1);
        assert_eq!(summary.turns[0].counts(), "turn_complete×1");
    }

    #[test]
    fn alternating_chunks_stay_two_runs_and_never_cross_an_anchor() {
        let audio = || SessionEvent::AudioData(bytes::Bytes::from_static(b"\0\0"));
        let chunk = |text: &str| SessionEvent::OutputTranscription {
            text: text.into(),
            is_final: false,
        };
        let mut fast = Vec::new();
        for _ in 0..1_000 {
            fast.push(audio());
            fast.push(chunk("a"));
        }
        fast.push(SessionEvent::VoiceActivityStart);
        fast.push(chunk("b"));
        fast.push(audio());
        let control = vec![SessionEvent::VoiceActivityStart, turn_complete()];
        let mut builder = SummaryBuilder::new();
        for (seq, event) in fast.into_iter().enumerate() {
            builder.push(&session(Lane::Fast, seq as u64 + 1, event));
        }
        for (seq, event) in control.into_iter().enumerate() {
            builder.push(&session(Lane::Control, seq as u64 + 1, event));
        }
        let kinds: Vec<(&str, u64)> = builder.fast.iter().map(|i| (i.key.kind, i.count)).collect();
        assert_eq!(
            kinds,
            [
                ("audio", 1_000),
                ("output_transcription", 1_000),
                ("vad_start", 1),
                ("output_transcription", 1),
                ("audio", 1),
            ]
        );
        let summary = builder.finish();
        assert_eq!(summary.turns.len(), 1);
        assert_eq!(
            summary.turns[0].counts(),
            "audio×1001, output_transcription×1001, vad_start×1, turn_complete×1"
        );
    }
}
