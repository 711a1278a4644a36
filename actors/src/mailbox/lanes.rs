//! What the router puts in the lanes' inboxes: [`EventItem`]s for the fast lane and
//! telemetry, [`ControlItem`]s for the control lane; and what a lane's successor learns of
//! the item its predecessor failed on ([`FailedItem`]).
//!
//! Each lane drains one inbox: the events the router routes to it, one item per event, in
//! routing order; for the control lane also the outcomes of finished tool calls and the
//! user's input for running tools; and, once the connection is over for good, `End`. See
//! [`crate::inbox`] for the ordering guarantee across restarts.

use reel_protocol::{SessionError, SessionEvent};

use crate::inbox::Bound;
use crate::tools::{StampedInput, ToolOutcome};

/// How many items wait for a lane at most before the router waits (backpressure to the
/// reader, and from there to the socket): about 20 s of 40 ms audio chunks.
pub const LANE_CAPACITY: usize = 512;

/// The bound of every lane inbox: events are never dropped, the router waits for room.
pub const LANE_BOUND: Bound = Bound::wait(LANE_CAPACITY);

/// How many items a lane handles per wake before it lets its other messages in.
pub const LANE_CHUNK: usize = 64;

/// One of each lane's: the fast lane, the control lane, telemetry (the lanes the router
/// feeds, by name rather than by position).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Lanes<T> {
    /// The fast lane's.
    pub fast: T,
    /// The control lane's.
    pub control: T,
    /// Telemetry's.
    pub telemetry: T,
}

/// A finished tool call: its batch, its place in the batch, and what happened.
pub type FinishedCall = (u64, usize, ToolOutcome);

/// One item of the fast lane's or telemetry's inbox.
#[derive(Debug)]
pub enum EventItem {
    /// An event, at the session time of the frame it came from.
    Event {
        /// Session time of the frame.
        ts_ms: u64,
        /// The event.
        event: SessionEvent,
    },
    /// No more events: the lane finishes and reports drained.
    End,
}

/// One item of the control lane's inbox.
#[derive(Debug)]
pub enum ControlItem {
    /// An event, at the session time of the frame it came from.
    Event {
        /// Session time of the frame.
        ts_ms: u64,
        /// The event.
        event: SessionEvent,
        /// The last of its frame's events for this lane (the lane runs the reactive rules'
        /// per-frame step after it).
        frame_end: bool,
    },
    /// A tool call finished. Boxed: an outcome is large and rare next to events, and every
    /// item of the inbox is the size of its largest kind.
    ToolDone(Box<FinishedCall>),
    /// A streaming tool's result, to send while it runs: its batch, its place in the batch,
    /// the result.
    ToolPartial(Box<(u64, usize, serde_json::Value)>),
    /// The user's realtime input, for the running tools that consume it (only when the
    /// session has such tools).
    Input(Box<StampedInput>),
    /// The wire sequence number of the frame whose events follow: pushed before the events
    /// of a `toolCall` frame (when the session has tools that consume input), whose calls
    /// take the input stamped after it.
    FrameSeq(u64),
    /// A system instruction went out on the wire (sent by the control lane, a callback or
    /// the application), in the order of the wire: the control lane keeps the latest, to
    /// send it again after a reconnect (decision 0051).
    InstructionSent(String),
    /// The application's first video frame went out: the session is an audio-video one
    /// from now on (`session:session_type`).
    VideoSent,
    /// No more events: the lane finishes and reports drained.
    End,
}

/// What a lane's successor learns of the item its predecessor failed on. The fast lane and
/// telemetry only ever see `Event` and `End`.
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
    /// A system instruction that went out. Noting it cannot fail, so a failure on this
    /// item struck before it was noted: the successor notes it (else the lane would send
    /// an older instruction after the next reconnect).
    InstructionSent(String),
    /// The first video frame that went out (the successor notes it: noting it twice is
    /// noting it once).
    VideoSent,
    /// The end of the events.
    End,
}

impl FailedItem {
    /// Describes an event (runs on every take: cheap unless it is a tool call or an error).
    fn of_session_event(event: &SessionEvent) -> FailedItem {
        FailedItem::Event {
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
        }
    }

    /// Describes an item of the fast lane's or telemetry's inbox.
    pub fn of_event(item: &EventItem) -> FailedItem {
        match item {
            EventItem::Event { event, .. } => FailedItem::of_session_event(event),
            EventItem::End => FailedItem::End,
        }
    }

    /// Describes an item of the control lane's inbox.
    pub fn of_control(item: &ControlItem) -> FailedItem {
        match item {
            ControlItem::Event { event, .. } => FailedItem::of_session_event(event),
            ControlItem::ToolDone(done) => FailedItem::ToolDone {
                batch: done.0,
                index: done.1,
            },
            ControlItem::ToolPartial(partial) => FailedItem::ToolPartial {
                batch: partial.0,
                index: partial.1,
            },
            ControlItem::Input(input) => FailedItem::Input(input.clone()),
            ControlItem::FrameSeq(seq) => FailedItem::FrameSeq(*seq),
            ControlItem::InstructionSent(text) => FailedItem::InstructionSent(text.clone()),
            ControlItem::VideoSent => FailedItem::VideoSent,
            ControlItem::End => FailedItem::End,
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
            FailedItem::InstructionSent(_) => "instruction_sent",
            FailedItem::VideoSent => "video_sent",
            FailedItem::End => "end",
        }
    }
}
