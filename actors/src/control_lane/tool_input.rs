//! The control lane's share of the user's input for tools: the running calls' queues, the
//! last `toolCall` frame, and the last few pieces of input (see
//! [`crate::tools::tool_input`] for why they are kept).

use std::collections::VecDeque;

use crate::tools::StampedInput;
use crate::tools::tool_input::InputFeed;

/// How many recent pieces of input the lane keeps for calls that start after them but
/// were stamped before them. The reader and the writer race by a frame or two at most;
/// 64 is far more than that.
const RECENT_INPUTS: usize = 64;

/// What the control lane keeps of the input for tools (part of
/// [`ControlData`](super::ControlData): it survives restarts).
#[derive(Debug, Default)]
pub(crate) struct ToolInputData {
    /// The sequence number of the last `toolCall` frame: its calls' input starts after it.
    pub(crate) frame_seq: u64,
    /// The latest pieces of input, oldest first, those of the last `toolCall` frame on.
    recent: VecDeque<StampedInput>,
    /// The queues of the calls that may still read, by batch and place in the batch.
    feeds: Vec<((u64, usize), InputFeed)>,
}

impl ToolInputData {
    /// The events of the `toolCall` frame `seq` follow.
    pub(crate) fn frame(&mut self, seq: u64) {
        self.frame_seq = self.frame_seq.max(seq);
        // Only calls of this frame or later ones can take input from now on.
        self.recent.retain(|input| input.seq > seq);
    }

    /// Hands `input` to every running call it belongs to (a call takes each piece once:
    /// handing it again after a restart changes nothing).
    pub(crate) fn input(&mut self, input: &StampedInput) {
        if self
            .recent
            .back()
            .is_none_or(|last| (last.seq, last.part) < (input.seq, input.part))
        {
            if self.recent.len() == RECENT_INPUTS {
                self.recent.pop_front();
            }
            self.recent.push_back(input.clone());
        }
        self.feeds.retain(|(_, feed)| !feed.is_closed());
        for (_, feed) in &mut self.feeds {
            feed.deliver(input);
        }
    }

    /// The call `call` (batch, place) of the last `toolCall` frame starts reading from
    /// `feed`: it is handed the recent input stamped after that frame first.
    pub(crate) fn start(&mut self, call: (u64, usize), mut feed: InputFeed) {
        for input in &self.recent {
            feed.deliver(input);
        }
        self.feeds.push((call, feed));
    }

    /// The call was cancelled: it takes no more input from here on (in event order, so a
    /// replay hands it exactly what it had live; the tool sees the end of its input if it
    /// reads before its task is stopped).
    pub(crate) fn stop(&mut self, call: (u64, usize)) {
        self.feeds.retain(|(of, _)| *of != call);
    }

    /// The session is over: the calls' queues close (a call reading sees the end).
    pub(crate) fn close(&mut self) {
        self.feeds.clear();
        self.recent.clear();
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use bytes::Bytes;
    use reel_protocol::UserInput;

    use super::*;
    use crate::tools::{InputEvent, ToolInput, ToolInputs};

    fn audio(seq: u64) -> StampedInput {
        StampedInput {
            seq,
            part: 0,
            ts_ms: seq * 40,
            dropped_before: 0,
            input: UserInput::Audio(Bytes::from(vec![1; 4])),
        }
    }

    fn drain(input: &mut ToolInput) -> Vec<u64> {
        let mut seqs = Vec::new();
        while let Some(InputEvent::Input(piece)) = input.try_recv() {
            seqs.push(piece.seq);
        }
        seqs
    }

    /// Live, input stamped after a `toolCall` frame can reach the lane before it: the call
    /// still takes it, and nothing stamped before its frame.
    #[test]
    fn a_call_takes_the_input_stamped_after_its_frame_whatever_the_arrival_order() {
        let inputs = Arc::new(ToolInputs::default());
        let mut data = ToolInputData::default();
        data.frame(3);
        for seq in [4, 5, 7, 8] {
            data.input(&audio(seq));
        }
        // The toolCall frame 6 arrives after input 7 and 8.
        data.frame(6);
        let (feed, mut first) = inputs.open(16, data.frame_seq);
        data.start((1, 0), feed);
        // Input 9 arrives, then the same input again (a restarted lane hands it again).
        data.input(&audio(9));
        data.input(&audio(9));
        assert_eq!(drain(&mut first), [7, 8, 9]);

        // A second call, from a later frame, after the first one returned.
        data.frame(10);
        drop(first);
        let (feed, mut second) = inputs.open(16, data.frame_seq);
        data.start((2, 0), feed);
        let (feed, mut third) = inputs.open(16, data.frame_seq);
        data.start((2, 1), feed);
        data.input(&audio(11));
        // The third call is cancelled: nothing more for it.
        data.stop((2, 1));
        data.input(&audio(12));
        assert_eq!(drain(&mut second), [11, 12]);
        assert_eq!(drain(&mut third), [11]);
        assert_eq!(third.try_recv(), None);
        assert_eq!(data.feeds.len(), 1);

        data.close();
        assert!(second.try_recv().is_none());
    }

    #[test]
    fn the_lane_keeps_only_the_latest_input() {
        let mut data = ToolInputData::default();
        for seq in 1..=200 {
            data.input(&audio(seq));
        }
        assert_eq!(data.recent.len(), RECENT_INPUTS);
        assert_eq!(data.recent.front().map(|input| input.seq), Some(137));
        data.frame(190);
        assert_eq!(data.recent.len(), 10);
    }
}
