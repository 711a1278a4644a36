//! What the router puts in the lanes' inboxes: [`EventItem`]s for the fast lane and
//! telemetry, [`ControlItem`]s for the control lane; and what a lane's successor learns of
//! the item its predecessor failed on ([`FailedItem`]).
//!
//! Each lane drains one inbox: the events the router routes to it, one item per event, in
//! routing order; for the control lane also the outcomes of finished tool calls and the
//! user's input for running tools; and, once the connection is over for good, `End`. See
//! [`crate::inbox`] for the ordering guarantee across restarts.

use reel_protocol::{SessionError, SessionEvent};

use super::{Mailbox, NoMsg};
use crate::child::Child;
use crate::inbox::{Bound, Inbox};
use crate::tools::{StampedInput, ToolOutcome};

/// How many items wait for a lane at most before the router waits (backpressure to the
/// reader, and from there to the socket): about 20 s of 40 ms audio chunks.
pub const LANE_CAPACITY: usize = 512;

/// The bound of every lane inbox: events are never dropped, the router waits for room.
pub const LANE_BOUND: Bound = Bound::wait(LANE_CAPACITY);

/// How many items a lane handles per wake before it lets its other messages in.
pub const LANE_CHUNK: usize = 64;

/// What an item of a lane the router feeds is made from: an event, or the end of the events.
/// The router routes through it, so it knows no lane's item type.
pub trait RoutedItem: Send + 'static {
    /// An event, at the session time of the frame it came from.
    fn event(ts_ms: u64, event: SessionEvent) -> Self;
    /// No more events.
    fn end() -> Self;
    /// Marks this item, the last its frame gave the lane, as the frame's last (nothing, for
    /// a lane that runs no per-frame step).
    fn end_frame(&mut self) {}
    /// What a successor learns of this item if handling it fails.
    fn failed(&self) -> FailedItem;
}

/// The mailbox of a lane the router feeds, whose items are `I`.
pub type LaneMailbox<I> = Mailbox<I, FailedItem, NoMsg>;

/// Declares the lanes the router feeds once, one row each, in the order they are pushed:
/// the field, its item type and its child. From the rows come [`Lanes`] (one value per lane,
/// by name), [`LaneMailboxes`] (their mailboxes), [`LaneItems`] (what the router has routed
/// to each and not pushed yet) and the loops over them. A new routed lane is one row here
/// and its rule in `router::destinations`.
macro_rules! routed_lanes {
    ($($(#[$doc:meta])* $lane:ident: $item:ty, $child:ident;)+) => {
        /// One of each lane's (the lanes the router feeds, by name rather than by position).
        #[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
        pub struct Lanes<T> {
            $($(#[$doc])* pub $lane: T,)+
        }

        impl<T> Lanes<T> {
            /// Each lane's value turned by `f`, lane by lane in push order.
            pub fn map<U>(self, mut f: impl FnMut(T) -> U) -> Lanes<U> {
                Lanes { $($lane: f(self.$lane),)+ }
            }

            /// Each lane's value, in push order.
            pub fn iter(&self) -> impl Iterator<Item = &T> {
                [$(&self.$lane),+].into_iter()
            }
        }

        /// The mailboxes of the lanes the router feeds.
        pub struct LaneMailboxes {
            $($(#[$doc])* pub $lane: LaneMailbox<$item>,)+
        }

        impl LaneMailboxes {
            /// Empty mailboxes, bounded by [`LANE_BOUND`], named after their children.
            pub fn new() -> Self {
                LaneMailboxes {
                    $($lane: Mailbox::new(
                        Child::$child.as_str(),
                        LANE_BOUND,
                        <$item as RoutedItem>::failed,
                    ),)+
                }
            }

            /// Pushes each lane what `items` holds for it, in order, under one lock and with
            /// at most one wake-up per lane; waits first until the lane has room for all of
            /// it (backpressure: a slow lane slows the router).
            pub async fn push(&self, items: &mut LaneItems) {
                $(push_waiting(&self.$lane, &mut items.$lane).await;)+
            }

            /// [`LaneMailboxes::push`] without waiting: pushes each lane its share if the
            /// lane has room for all of it now, and leaves the shares of the lanes that
            /// have not. Returns whether everything went.
            pub fn try_push(&self, items: &mut LaneItems) -> bool {
                let mut all = true;
                // A lane with nothing to push is not read at all: most frames have a share
                // for one lane, handled in place, and a mailbox read is a cache miss at
                // thousands of sessions.
                $(all &= items.$lane.is_empty() || push_if_room(&self.$lane, &mut items.$lane);)+
                all
            }

            /// Tells every lane the events are over (refused only by a lane stopped for good).
            pub fn push_end(&self) {
                $(let _ = self.$lane.push(<$item as RoutedItem>::end());)+
            }

            /// The number of the last item pushed to each lane.
            pub fn last_pushed(&self) -> Lanes<u64> {
                Lanes { $($lane: self.$lane.last_pushed(),)+ }
            }

            /// Waits until each lane has finished its items up to its mark.
            pub async fn wait_finished(&self, marks: Lanes<u64>) {
                $(self.$lane.wait_finished(marks.$lane).await;)+
            }
        }

        /// What the router has routed to each lane and not pushed yet.
        #[derive(Default)]
        pub struct LaneItems {
            $($(#[$doc])* pub $lane: Vec<$item>,)+
        }

        impl LaneItems {
            /// How many items wait for each lane.
            pub fn lens(&self) -> Lanes<usize> {
                Lanes { $($lane: self.$lane.len(),)+ }
            }

            /// Whether no item waits for any lane.
            pub fn is_empty(&self) -> bool {
                $(self.$lane.is_empty())&&+
            }

            /// Drops every waiting item, keeping the buffers' capacity.
            pub fn clear(&mut self) {
                $(self.$lane.clear();)+
            }

            /// Adds `event` to each lane `to` names: a copy to each but the last, which
            /// takes it.
            pub fn add(&mut self, to: Lanes<bool>, ts_ms: u64, event: SessionEvent) {
                // Moved into the last lane that wants it, never through an `Option`: this
                // runs for every event (measured: the `Option` version cost ~2 % of a text
                // frame's instructions through the tree).
                let last = [$(to.$lane),+].iter().rposition(|wants| *wants);
                let mut lane = 0;
                $(
                    if to.$lane {
                        if last == Some(lane) {
                            self.$lane.push(<$item as RoutedItem>::event(ts_ms, event));
                            return;
                        }
                        self.$lane.push(<$item as RoutedItem>::event(ts_ms, event.clone()));
                    }
                    lane += 1;
                )+
                let _ = lane;
            }

            /// Marks the last item of each lane that gained items since `since` (its lengths
            /// then) as its frame's last.
            pub fn end_frame(&mut self, since: Lanes<usize>) {
                $(if self.$lane.len() > since.$lane
                    && let Some(last) = self.$lane.last_mut()
                {
                    last.end_frame();
                })+
            }
        }
    };
}

routed_lanes! {
    /// The fast lane's.
    fast: EventItem, FastLane;
    /// The control lane's.
    control: ControlItem, ControlLane;
    /// Telemetry's.
    telemetry: EventItem, Telemetry;
}

impl Default for LaneMailboxes {
    fn default() -> Self {
        LaneMailboxes::new()
    }
}

impl std::fmt::Debug for LaneMailboxes {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LaneMailboxes")
            .field("last_pushed", &self.last_pushed())
            .finish_non_exhaustive()
    }
}

/// Pushes `pending` into `inbox` once it has room for all of it.
async fn push_waiting<T, L>(inbox: &Inbox<T, L>, pending: &mut Vec<T>) {
    if pending.is_empty() {
        return;
    }
    inbox.room_for(pending.len()).await;
    // Refused only once the lane stopped for good (the session is over).
    let _ = inbox.push_all(pending.drain(..));
}

/// Pushes `pending` into `inbox` if it has room for all of it now; returns whether
/// nothing is left. Its caller asks only with items ([`LaneMailboxes::try_push`] reads no
/// lane it has nothing for).
fn push_if_room<T, L>(inbox: &Inbox<T, L>, pending: &mut Vec<T>) -> bool {
    if !inbox.has_room_for(pending.len()) {
        return false;
    }
    // Refused only once the lane stopped for good (the session is over): nothing waits.
    let _ = inbox.push_all(pending.drain(..));
    true
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

impl RoutedItem for EventItem {
    fn event(ts_ms: u64, event: SessionEvent) -> Self {
        EventItem::Event { ts_ms, event }
    }

    fn end() -> Self {
        EventItem::End
    }

    fn failed(&self) -> FailedItem {
        FailedItem::of_event(self)
    }
}

impl RoutedItem for ControlItem {
    fn event(ts_ms: u64, event: SessionEvent) -> Self {
        ControlItem::Event {
            ts_ms,
            event,
            frame_end: false,
        }
    }

    fn end() -> Self {
        ControlItem::End
    }

    /// Only the control lane runs a per-frame step (the reactive rules'), after its frame's
    /// last event.
    fn end_frame(&mut self) {
        if let ControlItem::Event { frame_end, .. } = self {
            *frame_end = true;
        }
    }

    fn failed(&self) -> FailedItem {
        FailedItem::of_control(self)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shown(items: &LaneItems) -> Lanes<Vec<String>> {
        let event = |ts_ms: &u64, event: &SessionEvent| format!("{ts_ms} {}", event.kind());
        Lanes {
            fast: items
                .fast
                .iter()
                .map(|item| match item {
                    EventItem::Event { ts_ms, event: e } => event(ts_ms, e),
                    EventItem::End => "end".to_owned(),
                })
                .collect(),
            control: items
                .control
                .iter()
                .map(|item| match item {
                    ControlItem::Event {
                        ts_ms,
                        event: e,
                        frame_end,
                    } => format!("{}{}", event(ts_ms, e), if *frame_end { " |" } else { "" }),
                    other => format!("{other:?}"),
                })
                .collect(),
            telemetry: items
                .telemetry
                .iter()
                .map(|item| match item {
                    EventItem::Event { ts_ms, event: e } => event(ts_ms, e),
                    EventItem::End => "end".to_owned(),
                })
                .collect(),
        }
    }

    /// Each event reaches each lane it is routed to, and only the control lane marks its
    /// frame's last event (the one lane with a per-frame step).
    #[test]
    fn an_event_reaches_the_lanes_named_and_a_frame_end_marks_the_control_lane() {
        let mut items = LaneItems::default();
        let all = Lanes {
            fast: true,
            control: true,
            telemetry: true,
        };
        let control = Lanes {
            control: true,
            ..Lanes::default()
        };
        let fast = Lanes {
            fast: true,
            ..Lanes::default()
        };
        let start = items.lens();
        items.add(all, 7, SessionEvent::Interrupted);
        items.add(control, 7, SessionEvent::GenerationComplete);
        items.end_frame(start);
        let start = items.lens();
        items.add(fast, 9, SessionEvent::TextDelta("a".into()));
        items.end_frame(start);
        assert_eq!(
            items.lens(),
            Lanes {
                fast: 2,
                control: 2,
                telemetry: 1
            }
        );
        let lines = |s: &[&str]| s.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        assert_eq!(
            shown(&items),
            Lanes {
                fast: lines(&["7 interrupted", "9 text"]),
                control: lines(&["7 interrupted", "7 generation_complete |"]),
                telemetry: lines(&["7 interrupted"]),
            }
        );
    }

    #[test]
    fn map_and_iter_go_lane_by_lane_in_push_order() {
        let lanes = Lanes {
            fast: 1,
            control: 2,
            telemetry: 3,
        };
        assert_eq!(lanes.iter().copied().collect::<Vec<_>>(), vec![1, 2, 3]);
        assert_eq!(
            lanes.map(|n| n * 10),
            Lanes {
                fast: 10,
                control: 20,
                telemetry: 30
            }
        );
    }
}
