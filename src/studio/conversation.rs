//! Conversation control on the phases lane: the context the runtime sent at each turn
//! boundary (its one `clientContent` frame, marked `"source":"runtime"` on the wire log),
//! and the navigation block at each turn where it changed (`session:navigation_context` in
//! the journal). Decision 0050 says what is sent when.
//!
//! Everything here is read back from the recording, nothing from the application: a context
//! frame belongs to the last turn boundary before it on the wire (`turnComplete`, or
//! `setupComplete` for the first phase's context), and it was deferred when it did not ask
//! for an answer and the next entry is the application's frame (the rule the replay's tape
//! reader uses to put the flush back). The wire does not say when a deferred batch was
//! queued other than by that boundary: batches of several boundaries that waited for one
//! application send went out as one frame and show at the last of them.

use reel_protocol::{ClientMessage, ServerMessage};
use reel_recorder::wire_log::{Source, WireEntry};
use serde::Serialize;
use serde_json::Value;

use super::call::StateChange;

/// The journal key of the navigation block.
const NAVIGATION_KEY: &str = "session:navigation_context";

/// One context turn of a runtime context frame.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ContextTurn {
    /// `model` or `user`, as sent (empty when the turn had none).
    pub role: String,
    /// Its text parts, joined by newlines.
    pub text: String,
}

/// The context the runtime sent at one turn boundary: one `clientContent` frame.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ContextMark {
    /// The frame's sequence number: where it went out.
    pub seq: u64,
    /// When it went out.
    pub t_ms: u64,
    /// The turn boundary it belongs to: the sequence number of the `turnComplete` before it
    /// (or of the `setupComplete` for the context of the first phase; of the frame itself
    /// when there is neither). Under deferred delivery this is where it was queued.
    pub boundary_seq: u64,
    /// When that boundary was.
    pub boundary_ms: u64,
    /// The model turns complete at that boundary (0: the start of the call).
    pub turn: u64,
    /// Its context turns, in order.
    pub turns: Vec<ContextTurn>,
    /// Whether it asked the model to answer (`turnComplete: true`).
    pub prompt: bool,
    /// Under deferred delivery, the application frame it went out with (the one right after
    /// it on the wire); `None` when it was sent at once.
    pub flushed_with: Option<u64>,
}

/// The navigation block as the journal holds it, at a turn where it changed.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct NavigationMark {
    /// When it was written.
    pub t_ms: u64,
    /// The model turns complete by then (0: the start of the call).
    pub turn: u64,
    /// The block.
    pub text: String,
}

/// Collects [`ContextMark`]s while the call's entries are read, in order.
#[derive(Debug, Default)]
pub(crate) struct ContextTracker {
    marks: Vec<ContextMark>,
    /// The last boundary: its sequence number, time and the turns complete then.
    boundary: Option<(u64, u64, u64)>,
    /// Whether the last entry was a context frame still waiting to learn what follows it.
    open: bool,
}

impl ContextTracker {
    /// Any entry, before it is looked at otherwise: an application frame right after a
    /// context frame that did not prompt is what flushed it (deferred delivery).
    pub(crate) fn next_entry(&mut self, entry: &WireEntry) {
        if std::mem::take(&mut self.open)
            && entry.source == Some(Source::App)
            && let Some(mark) = self.marks.last_mut()
            && !mark.prompt
        {
            mark.flushed_with = Some(entry.seq);
        }
    }

    /// A server message: `setupComplete` and `turnComplete` are turn boundaries; `turns`
    /// is how many model turns ended before this message (a `turnComplete` ends one more).
    pub(crate) fn server(
        &mut self,
        message: &ServerMessage,
        entry: &WireEntry,
        t: u64,
        turns: u64,
    ) {
        let complete = message
            .server_content
            .as_ref()
            .is_some_and(|content| content.turn_complete == Some(true));
        if message.setup_complete.is_some() || complete {
            self.boundary = Some((entry.seq, t, turns + u64::from(complete)));
        }
    }

    /// A client message: the runtime's `clientContent` is a boundary's context.
    pub(crate) fn client(&mut self, message: &ClientMessage, entry: &WireEntry, t: u64) {
        if entry.source != Some(Source::Runtime) {
            return;
        }
        let Some(content) = &message.client_content else {
            return;
        };
        let turns = content
            .turns
            .iter()
            .flatten()
            .map(|turn| ContextTurn {
                role: turn.role.clone().unwrap_or_default(),
                text: turn
                    .parts
                    .iter()
                    .flatten()
                    .filter_map(|part| part.text.as_deref())
                    .collect::<Vec<_>>()
                    .join("\n"),
            })
            .collect();
        let (boundary_seq, boundary_ms, turn) = self.boundary.unwrap_or((entry.seq, t, 0));
        self.marks.push(ContextMark {
            seq: entry.seq,
            t_ms: t,
            boundary_seq,
            boundary_ms,
            turn,
            turns,
            prompt: content.turn_complete == Some(true),
            flushed_with: None,
        });
        self.open = true;
    }

    /// The marks, in wire order.
    pub(crate) fn finish(self) -> Vec<ContextMark> {
        self.marks
    }
}

/// The navigation block at each write that changed it, with the turns complete by then
/// (`turn_ends`: each model turn's `turnComplete` time, in order).
pub(crate) fn navigation_marks(state: &[StateChange], turn_ends: &[u64]) -> Vec<NavigationMark> {
    let mut marks: Vec<NavigationMark> = Vec::new();
    for change in state.iter().filter(|c| c.key == NAVIGATION_KEY) {
        let Value::String(text) = &change.new else {
            continue;
        };
        if marks.last().is_some_and(|last| &last.text == text) {
            continue;
        }
        marks.push(NavigationMark {
            t_ms: change.t_ms,
            turn: turn_ends.iter().filter(|end| **end <= change.t_ms).count() as u64,
            text: text.clone(),
        });
    }
    marks
}
