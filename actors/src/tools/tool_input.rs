//! The user's input as a running tool receives it ([`ToolInput`]), and what the session
//! keeps to hand it out ([`ToolInputs`]).
//!
//! The application's realtime input — audio, video frames, streamed text, activity
//! signals — goes out on the wire from the transport. When the session has a tool that
//! consumes it ([`InputStreamingTool`](super::InputStreamingTool)), the transport also
//! reports each piece to the router, stamped with its place on the wire (its sequence
//! number) and its time, and the router hands it to the control lane in order with the
//! model's frames. A replay's transport reports the recorded input frames the same way, so
//! a tool sees the same input in a replay as it did live.
//!
//! A call receives the input stamped after the frame of its `toolCall`, in order, until it
//! returns. "After" is by sequence number, not by arrival: live, the reader and the writer
//! report to the router from different tasks, so a piece of input stamped just after the
//! call can reach the lane just before it; the lane keeps the last few pieces so such a
//! piece still reaches the call. Redelivery after a restart of the lane is harmless: a call
//! takes each sequence number once.
//!
//! Each call's queue is bounded ([`InputStreamingTool::input_capacity`](super::InputStreamingTool::input_capacity)).
//! A live session cannot wait for a slow tool: input that finds the queue full is dropped
//! and the tool is told how much it missed ([`InputEvent::Missed`]). A replay waits for
//! running tools to make room before it reads on, so a tool that kept up live keeps up in
//! the replay, however much faster the replay runs.

use std::sync::Arc;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Duration;

use reel_protocol::UserInput;
use tokio::sync::Notify;
use tokio::sync::mpsc::{self, error::TrySendError};

use crate::events::lock;

/// How many pieces of input a call's queue holds unless its tool says otherwise: about
/// 10 s of 40 ms audio chunks.
pub const DEFAULT_INPUT_CAPACITY: usize = 256;

/// One piece of the user's input with its place in the session.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StampedInput {
    /// Its sequence number on the wire (shared with the model's frames).
    pub seq: u64,
    /// Its place among the inputs of its frame: 0, but for a recorded frame that carries
    /// several.
    pub part: u32,
    /// When it was sent, epoch milliseconds (the recorded time, in a replay).
    pub ts_ms: u64,
    /// How many of the application's audio chunks the session dropped unsent just before
    /// this piece: it holds at most
    /// [`HELD_AUDIO_CHUNKS`](crate::transport::HELD_AUDIO_CHUNKS) while it reconnects and
    /// drops the oldest beyond. A call this piece reaches is told of them first
    /// ([`InputEvent::Missed`]). 0 almost always.
    pub dropped_before: u64,
    /// The input.
    pub input: UserInput,
}

/// What a running input-streaming tool receives.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum InputEvent {
    /// The next piece of the user's input.
    Input(StampedInput),
    /// `count` pieces of input were dropped here: the tool's queue was full (the tool did
    /// not keep up with the live input), or the session dropped the user's audio it held
    /// while reconnecting beyond
    /// [`HELD_AUDIO_CHUNKS`](crate::transport::HELD_AUDIO_CHUNKS) (recorded, so a replay
    /// tells the tool the same).
    Missed {
        /// How many.
        count: u64,
    },
}

/// A running tool's end of its input queue.
///
/// [`recv`](ToolInput::recv) returns `None` once the session has stopped handing input to
/// the call (the session ended); a tool that returns or is cancelled simply drops it.
#[derive(Debug)]
pub struct ToolInput {
    receiver: Option<mpsc::Receiver<InputEvent>>,
    inputs: Option<Arc<ToolInputs>>,
}

impl ToolInput {
    /// An input that never receives anything: what a tool called outside a session (or
    /// without input) gets.
    pub fn closed() -> Self {
        ToolInput {
            receiver: None,
            inputs: None,
        }
    }

    /// The next piece of input, waiting for it; `None` when no more will come.
    pub async fn recv(&mut self) -> Option<InputEvent> {
        let event = self.receiver.as_mut()?.recv().await;
        self.made_room();
        event
    }

    /// The next piece of input if one waits, without waiting.
    pub fn try_recv(&mut self) -> Option<InputEvent> {
        let event = self.receiver.as_mut()?.try_recv().ok();
        if event.is_some() {
            self.made_room();
        }
        event
    }

    fn made_room(&self) {
        if let Some(inputs) = &self.inputs {
            inputs.room.notify_waiters();
        }
    }
}

/// A tool can read its input as a stream too (`StreamExt::next`, `filter_map`, …).
impl futures_util::Stream for ToolInput {
    type Item = InputEvent;

    fn poll_next(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Option<InputEvent>> {
        let Some(receiver) = self.receiver.as_mut() else {
            return std::task::Poll::Ready(None);
        };
        let polled = receiver.poll_recv(cx);
        if let std::task::Poll::Ready(Some(_)) = polled {
            self.made_room();
        }
        polled
    }
}

impl Drop for ToolInput {
    fn drop(&mut self) {
        // A replay waiting for this queue to drain goes on.
        self.receiver = None;
        self.made_room();
    }
}

/// The session's side of the input queues of running tools: whether input is forwarded
/// at all, and how full the queues are. One per session, in [`Peers`](crate::peers::Peers).
#[derive(Debug, Default)]
pub struct ToolInputs {
    /// Whether the session has a tool that consumes input: only then does the transport
    /// report the user's input to the router.
    forwarded: AtomicBool,
    /// The running calls' queues.
    queues: Mutex<Vec<mpsc::WeakSender<InputEvent>>>,
    /// Notified when a tool takes input from its queue or drops it.
    room: Notify,
    /// Pieces of input dropped because a queue was full, over the session.
    missed: AtomicU64,
}

impl ToolInputs {
    /// The transport reports the user's input from now on (set at spawn when a tool
    /// consumes input).
    pub fn forward(&self) {
        self.forwarded.store(true, Ordering::Release);
    }

    /// Whether the user's input is reported for tools.
    pub fn forwarded(&self) -> bool {
        self.forwarded.load(Ordering::Acquire)
    }

    /// Pieces of input dropped so far because a tool did not keep up.
    pub fn missed(&self) -> u64 {
        self.missed.load(Ordering::Relaxed)
    }

    /// Whether a call is reading input now.
    pub fn running(&self) -> bool {
        lock(&self.queues)
            .iter()
            .any(|queue| queue.upgrade().is_some_and(|sender| !sender.is_closed()))
    }

    /// Waits until every running tool's queue is at most half full (or gone), at most
    /// `limit`; `false` if the limit passed first. A replay calls it before reading on.
    pub async fn wait_for_room(&self, limit: Duration) -> bool {
        let deadline = tokio::time::Instant::now() + limit;
        loop {
            let notified = self.room.notified();
            tokio::pin!(notified);
            // Registered before the check: a tool taking input right after it wakes us.
            notified.as_mut().enable();
            if self.have_room() {
                return true;
            }
            if tokio::time::timeout_at(deadline, notified).await.is_err() {
                return self.have_room();
            }
        }
    }

    fn have_room(&self) -> bool {
        let mut queues = lock(&self.queues);
        queues.retain(|queue| queue.upgrade().is_some_and(|sender| !sender.is_closed()));
        queues.iter().all(|queue| {
            queue
                .upgrade()
                .is_none_or(|sender| sender.capacity() * 2 >= sender.max_capacity())
        })
    }

    /// A queue of `capacity` pieces for a call whose input starts after the frame `after`:
    /// the lane's end and the tool's.
    pub(crate) fn open(self: &Arc<Self>, capacity: usize, after: u64) -> (InputFeed, ToolInput) {
        let (sender, receiver) = mpsc::channel(capacity.max(1));
        let mut queues = lock(&self.queues);
        queues.retain(|queue| queue.upgrade().is_some_and(|sender| !sender.is_closed()));
        queues.push(sender.downgrade());
        drop(queues);
        let feed = InputFeed {
            sender,
            // After every part of the frame `after`.
            after: (after, u32::MAX),
            missed: 0,
            inputs: Arc::clone(self),
        };
        let input = ToolInput {
            receiver: Some(receiver),
            inputs: Some(Arc::clone(self)),
        };
        (feed, input)
    }
}

/// The lane's end of one call's input queue.
#[derive(Debug)]
pub(crate) struct InputFeed {
    sender: mpsc::Sender<InputEvent>,
    /// The place after which input is the call's: its `toolCall` frame's, then the last
    /// piece's handed over (sequence number, part).
    after: (u64, u32),
    /// Pieces dropped since the tool was last told.
    missed: u64,
    inputs: Arc<ToolInputs>,
}

impl InputFeed {
    /// Whether the tool dropped its end (it returned, or was cancelled).
    pub(crate) fn is_closed(&self) -> bool {
        self.sender.is_closed()
    }

    /// Hands `input` to the call, once, if it is the call's and the queue has room;
    /// otherwise counts it missed. Never waits.
    pub(crate) fn deliver(&mut self, input: &StampedInput) {
        let place = (input.seq, input.part);
        if place <= self.after {
            return;
        }
        self.after = place;
        // The session's own drop is told like the queue's: in order, before this piece.
        self.missed += input.dropped_before;
        if self.missed > 0 {
            let count = self.missed;
            match self.sender.try_send(InputEvent::Missed { count }) {
                Ok(()) => self.missed = 0,
                Err(TrySendError::Full(_)) => return self.miss(),
                Err(TrySendError::Closed(_)) => return,
            }
        }
        if let Err(TrySendError::Full(_)) = self.sender.try_send(InputEvent::Input(input.clone())) {
            self.miss();
        }
    }

    fn miss(&mut self) {
        if self.missed == 0 {
            tracing::warn!("a tool's input queue is full: input is dropped until it catches up");
        }
        self.missed += 1;
        self.inputs.missed.fetch_add(1, Ordering::Relaxed);
    }
}

#[cfg(test)]
mod tests {
    use bytes::Bytes;

    use super::*;

    fn audio(seq: u64) -> StampedInput {
        StampedInput {
            seq,
            part: 0,
            ts_ms: 1_000 + seq,
            dropped_before: 0,
            input: UserInput::Audio(Bytes::from(vec![seq as u8; 2])),
        }
    }

    #[tokio::test]
    async fn a_call_takes_each_piece_after_its_frame_once_in_order() {
        let inputs = Arc::new(ToolInputs::default());
        let (mut feed, mut input) = inputs.open(8, 10);
        for seq in [9, 10, 11, 12, 12, 11, 14] {
            feed.deliver(&audio(seq));
        }
        drop(feed);
        let mut seen = Vec::new();
        while let Some(event) = input.recv().await {
            seen.push(event);
        }
        assert_eq!(seen, [11, 12, 14].map(|seq| InputEvent::Input(audio(seq))));
    }

    #[tokio::test]
    async fn a_full_queue_drops_and_the_tool_is_told_how_much_it_missed() {
        let inputs = Arc::new(ToolInputs::default());
        let (mut feed, mut input) = inputs.open(2, 0);
        for seq in 1..=5 {
            feed.deliver(&audio(seq));
        }
        assert_eq!(inputs.missed(), 3);
        assert_eq!(input.try_recv(), Some(InputEvent::Input(audio(1))));
        assert_eq!(input.try_recv(), Some(InputEvent::Input(audio(2))));
        assert_eq!(input.try_recv(), None);
        feed.deliver(&audio(6));
        feed.deliver(&audio(7));
        assert_eq!(input.try_recv(), Some(InputEvent::Missed { count: 3 }));
        assert_eq!(input.try_recv(), Some(InputEvent::Input(audio(6))));
        // 7 found the queue full again (the notice took a place).
        assert_eq!(input.try_recv(), None);
        feed.deliver(&audio(8));
        assert_eq!(input.try_recv(), Some(InputEvent::Missed { count: 1 }));
        assert_eq!(input.try_recv(), Some(InputEvent::Input(audio(8))));
        assert_eq!(inputs.missed(), 4);
    }

    #[tokio::test(start_paused = true)]
    async fn waiting_for_room_ends_when_the_tool_drains_its_queue_or_drops_it() {
        let inputs = Arc::new(ToolInputs::default());
        assert!(inputs.wait_for_room(Duration::ZERO).await);
        let (mut feed, mut input) = inputs.open(4, 0);
        for seq in 1..=3 {
            feed.deliver(&audio(seq));
        }
        // Three of four places taken: no room until the tool reads.
        assert!(!inputs.wait_for_room(Duration::from_secs(1)).await);
        let reader = tokio::spawn(async move {
            tokio::time::sleep(Duration::from_secs(5)).await;
            input.recv().await;
            input
        });
        let start = tokio::time::Instant::now();
        assert!(inputs.wait_for_room(Duration::from_secs(60)).await);
        assert_eq!(start.elapsed(), Duration::from_secs(5));
        let input = reader.await.unwrap();
        feed.deliver(&audio(4));
        feed.deliver(&audio(5));
        assert!(!inputs.wait_for_room(Duration::ZERO).await);
        drop(input);
        assert!(inputs.wait_for_room(Duration::ZERO).await);
    }

    #[tokio::test]
    async fn the_input_reads_as_a_stream() {
        use futures_util::StreamExt;

        let inputs = Arc::new(ToolInputs::default());
        let (mut feed, input) = inputs.open(8, 0);
        for seq in 1..=3 {
            feed.deliver(&audio(seq));
        }
        drop(feed);
        let seqs: Vec<u64> = input
            .filter_map(|event| async move {
                match event {
                    InputEvent::Input(piece) => Some(piece.seq),
                    InputEvent::Missed { .. } => None,
                }
            })
            .collect()
            .await;
        assert_eq!(seqs, [1, 2, 3]);
    }

    #[tokio::test]
    async fn a_closed_input_receives_nothing() {
        let mut input = ToolInput::closed();
        assert_eq!(input.recv().await, None);
        assert_eq!(input.try_recv(), None);
    }
}
