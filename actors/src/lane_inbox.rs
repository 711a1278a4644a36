//! What the router puts in a lane's [`Inbox`], and what every lane does on its own behalf:
//! report the item a predecessor failed on, and tell the supervisor it drained.
//!
//! Each lane (fast, control, telemetry) drains one inbox of [`LaneItem`]s: the events the
//! router routes to it, one item per event, in routing order; for the control lane also
//! the outcomes of finished tool calls; and, once the connection is over for good,
//! [`LaneItem::End`]. See [`crate::inbox`] for the ordering guarantee across restarts.

use reel_protocol::{SessionError, SessionEvent};

use crate::child::Child;
use crate::control_lane::FinishedCall;
use crate::events::{Lane, LiveEvent};
use crate::inbox::{Bound, Failed, Inbox};
use crate::peers::Peers;
use crate::router::RouterMsg;
use crate::supervisor::SupervisorMsg;
use crate::tools::StampedInput;

/// How many items wait for a lane at most before the router waits (backpressure to the
/// reader, and from there to the socket): about 20 s of 40 ms audio chunks.
pub const LANE_CAPACITY: usize = 512;

/// The bound of every lane inbox: events are never dropped, the router waits for room.
pub const LANE_BOUND: Bound = Bound::wait(LANE_CAPACITY);

/// How many items a lane handles per wake before it lets its other messages in.
pub const LANE_CHUNK: usize = 64;

/// One item of a lane's inbox.
#[derive(Debug)]
pub enum LaneItem {
    /// An event, at the session time of the frame it came from.
    Event {
        /// Session time of the frame.
        ts_ms: u64,
        /// The event.
        event: SessionEvent,
        /// The last of its frame's events for this lane (the control lane runs the
        /// reactive rules' per-frame step after it).
        frame_end: bool,
    },
    /// A tool call finished (control lane only). Boxed: an outcome is large and rare next
    /// to events, and every item of the inbox is the size of its largest kind.
    ToolDone(Box<FinishedCall>),
    /// A streaming tool's result, to send while it runs (control lane only): its batch,
    /// its place in the batch, the result.
    ToolPartial(Box<(u64, usize, serde_json::Value)>),
    /// The user's realtime input, for the running tools that consume it (control lane
    /// only, and only when the session has such tools).
    Input(Box<StampedInput>),
    /// The wire sequence number of the frame whose events follow: pushed before the events
    /// of a `toolCall` frame (control lane only, when the session has tools that consume
    /// input), whose calls take the input stamped after it.
    FrameSeq(u64),
    /// No more events: the lane finishes and reports drained.
    End,
}

/// What a lane's successor learns of the item its predecessor failed on.
#[derive(Debug, Clone, PartialEq)]
pub enum FailedItem {
    /// An event.
    Event {
        /// Its kind (`text_delta`, `tool_call`, …).
        kind: &'static str,
        /// For a `tool_call`: each call's id and tool name, so every call still gets an
        /// answer.
        calls: Vec<(String, String)>,
        /// For an error event (often another failure's report): the error, so it still
        /// reaches the application even though handling it failed.
        error: Option<Box<SessionError>>,
    },
    /// A finished tool call whose result was being handled.
    ToolDone {
        /// The batch of the call.
        batch: u64,
        /// Its place in the batch.
        index: usize,
    },
    /// A streaming tool's result that was being sent (it is lost; the stream goes on).
    ToolPartial {
        /// The batch of the call.
        batch: u64,
        /// Its place in the batch.
        index: usize,
    },
    /// A piece of the user's input being handed to tools (the successor hands it again —
    /// each call takes it once — and reports the failure like any other).
    Input(Box<StampedInput>),
    /// The sequence number of a `toolCall` frame (the successor notes it again).
    FrameSeq(u64),
    /// The end of the events.
    End,
}

impl FailedItem {
    /// Describes `item` (runs on every take: cheap unless the item is a tool call).
    pub fn of(item: &LaneItem) -> FailedItem {
        match item {
            LaneItem::Event { event, .. } => FailedItem::Event {
                kind: event.kind(),
                calls: match event {
                    SessionEvent::ToolCall(calls) => calls
                        .iter()
                        .map(|call| {
                            (
                                call.id.clone().unwrap_or_default(),
                                call.name.clone().unwrap_or_default(),
                            )
                        })
                        .collect(),
                    _ => Vec::new(),
                },
                error: match event {
                    SessionEvent::Error(error) => Some(Box::new(error.clone())),
                    _ => None,
                },
            },
            LaneItem::ToolDone(done) => FailedItem::ToolDone {
                batch: done.0,
                index: done.1,
            },
            LaneItem::ToolPartial(partial) => FailedItem::ToolPartial {
                batch: partial.0,
                index: partial.1,
            },
            LaneItem::Input(input) => FailedItem::Input(input.clone()),
            LaneItem::FrameSeq(seq) => FailedItem::FrameSeq(*seq),
            LaneItem::End => FailedItem::End,
        }
    }

    /// The kind of item, for the report.
    pub fn kind(&self) -> &'static str {
        match self {
            FailedItem::Event { kind, .. } => kind,
            FailedItem::ToolDone { .. } => "tool_done",
            FailedItem::ToolPartial { .. } => "tool_partial",
            FailedItem::Input(_) => "tool_input",
            FailedItem::FrameSeq(_) => "frame_seq",
            FailedItem::End => "end",
        }
    }
}

/// A lane's inbox.
pub type LaneInbox = Inbox<LaneItem, FailedItem>;

/// The error event that reports the item `lane` failed on (`None` for the end marker,
/// which the successor handles again instead).
fn failure_report(lane: Child, failed: &Failed<FailedItem>) -> Option<SessionEvent> {
    if matches!(failed.label, FailedItem::End) {
        return None;
    }
    Some(SessionEvent::Error(SessionError::CallbackPanicked {
        lane: lane.as_str(),
        event: failed.label.kind(),
        message: "the lane failed while handling it and was restarted".to_owned(),
    }))
}

/// Tells the supervisor `lane` handled its last event.
pub(crate) fn drained(peers: &Peers, lane: Child) {
    peers.supervisor.cast(SupervisorMsg::Drained(lane));
}

/// A lane's successor reports the item its predecessor failed on (through the router, so
/// the report reaches the control lane in order) — or, if that was the end marker, finishes
/// what the predecessor could not: it reports drained.
pub(crate) fn report_failed(peers: &Peers, lane: Child, failed: &Failed<FailedItem>) {
    if let FailedItem::Event {
        error: Some(error), ..
    } = &failed.label
    {
        // The failed item was an error (often the report of an earlier failure): it still
        // reaches the application, published as it is, without being handled again.
        peers.hub.publish(
            Lane::Control,
            LiveEvent::Session(SessionEvent::Error((**error).clone())),
        );
    }
    match failure_report(lane, failed) {
        Some(report) => {
            let _ = peers.router.push(RouterMsg::Report(Box::new(report)));
        }
        None => drained(peers, lane),
    }
}
