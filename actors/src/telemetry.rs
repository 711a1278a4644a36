//! Telemetry: counters, latencies and token usage of a session.
//!
//! The numbers live in [`TelemetryShared`] (atomics, and a small lock for latency samples),
//! so the router and transport count on their hot paths without a message, a restart of the
//! Telemetry actor loses nothing, and [`TelemetryShared::snapshot`] reads them at any time.
//! The actor itself takes the events that need work — token usage (and the `on_usage`
//! callback), turns, tool calls, interruptions — off the lanes. It runs only in a session
//! with an `on_usage` callback: without one, counting those events is a few atomic adds
//! ([`TelemetryShared::count`]), which the router does as it routes them, and the session
//! has no Telemetry actor (decision 0075: an idle actor costs ~6.7 KiB of a session's
//! memory).
//!
//! The debounced `session:` state keys are written by the control lane, not here: see
//! `docs/decisions/0004-single-writer-of-session-state.md`.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use ractor::ActorProcessingErr;
use reel_protocol::{SessionEvent, UsageMetadata};

use crate::callbacks::TelemetryCallbacks;
use crate::child::Child;
use crate::events::lock;
use crate::inbox::Failed;
use crate::lane_reports::{drained, report_failed};
use crate::mailbox::{
    Consumer, ConsumerMailbox, EventItem, FailedItem, Instance, LANE_CHUNK, NoMsg,
};
use crate::peers::Peers;

/// How many latency samples are kept per measure (the most recent ones).
const SAMPLES: usize = 4096;

/// Token counts as last reported by the server.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct TokenCounts {
    /// Prompt tokens.
    pub prompt: u64,
    /// Tokens served from cache.
    pub cached: u64,
    /// Response tokens.
    pub response: u64,
    /// Tool-use prompt tokens.
    pub tool_use_prompt: u64,
    /// Thinking tokens.
    pub thoughts: u64,
    /// All tokens.
    pub total: u64,
}

/// Summary of a latency measure, in milliseconds.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct LatencyStats {
    /// Samples taken.
    pub count: u64,
    /// The latest sample.
    pub last: u64,
    /// Median of the kept samples.
    pub p50: u64,
    /// 99th percentile of the kept samples.
    pub p99: u64,
    /// Largest kept sample.
    pub max: u64,
}

/// A point-in-time copy of a session's telemetry.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TelemetrySnapshot {
    /// Frames received.
    pub frames_in: u64,
    /// Frames sent.
    pub frames_out: u64,
    /// Bytes received.
    pub bytes_in: u64,
    /// Bytes sent.
    pub bytes_out: u64,
    /// Audio chunks received.
    pub audio_chunks_in: u64,
    /// Audio chunks sent.
    pub audio_chunks_out: u64,
    /// Model turns completed.
    pub turns: u64,
    /// Function calls requested by the model.
    pub tool_calls: u64,
    /// Function calls that ended in an error response.
    pub tool_errors: u64,
    /// Interruptions (barge-ins).
    pub interruptions: u64,
    /// Reconnects.
    pub reconnects: u64,
    /// Actor restarts.
    pub restarts: u64,
    /// Failed writes of the wire log (the session goes on; the recording has gaps).
    pub recording_errors: u64,
    /// Awaited callbacks that did not return within the callback timeout.
    pub callback_timeouts: u64,
    /// Events dropped for subscribers that did not keep up (each got a `Lagged` event).
    pub events_lagged: u64,
    /// Outbound audio chunks dropped, oldest first, while the connection was being
    /// re-established (stale audio is not sent late).
    pub audio_dropped: u64,
    /// Pieces of the user's input dropped because an input-streaming tool did not keep up
    /// (each call was told, `InputEvent::Missed`).
    pub tool_input_missed: u64,
    /// Token usage, as last reported.
    pub tokens: TokenCounts,
    /// From the end of a user turn to the model's first output.
    pub first_response_ms: LatencyStats,
    /// Tool call durations.
    pub tool_duration_ms: LatencyStats,
    /// The playback jitter buffer's depth, target, underruns and drops, if the session has
    /// one (`LiveSessionBuilder::jitter_buffer`).
    pub jitter: Option<crate::audio::JitterStats>,
}

#[derive(Debug, Default)]
struct Samples {
    count: u64,
    last: u64,
    kept: std::collections::VecDeque<u64>,
}

impl Samples {
    fn push(&mut self, value: u64) {
        self.count += 1;
        self.last = value;
        if self.kept.len() == SAMPLES {
            self.kept.pop_front();
        }
        self.kept.push_back(value);
    }

    fn stats(&self) -> LatencyStats {
        let mut sorted: Vec<u64> = self.kept.iter().copied().collect();
        sorted.sort_unstable();
        let at = |q: f64| -> u64 {
            if sorted.is_empty() {
                return 0;
            }
            let index = ((sorted.len() - 1) as f64 * q).round() as usize;
            sorted[index.min(sorted.len() - 1)]
        };
        LatencyStats {
            count: self.count,
            last: self.last,
            p50: at(0.5),
            p99: at(0.99),
            max: sorted.last().copied().unwrap_or(0),
        }
    }
}

/// The numbers, shared by everyone who counts.
///
/// `repr(C)`, aligned to a cache line: the wire's counters, which every frame bumps, are its
/// first fields, side by side, in one line wherever the allocator puts it (decision 0093;
/// unaligned, their 48 bytes straddled two lines three times in four).
#[derive(Debug, Default)]
#[repr(C, align(64))]
pub struct TelemetryShared {
    frames_in: AtomicU64,
    frames_out: AtomicU64,
    bytes_in: AtomicU64,
    bytes_out: AtomicU64,
    audio_chunks_in: AtomicU64,
    audio_chunks_out: AtomicU64,
    turns: AtomicU64,
    tool_calls: AtomicU64,
    tool_errors: AtomicU64,
    interruptions: AtomicU64,
    reconnects: AtomicU64,
    restarts: AtomicU64,
    recording_errors: AtomicU64,
    callback_timeouts: AtomicU64,
    audio_dropped: AtomicU64,
    tokens: Mutex<TokenCounts>,
    first_response: Mutex<Samples>,
    tool_duration: Mutex<Samples>,
}

fn bump(counter: &AtomicU64, by: u64) {
    counter.fetch_add(by, Ordering::Relaxed);
}

impl TelemetryShared {
    /// Reads the line the wire's counters are on (see
    /// [`crate::transport::wire_tap::WireTap::warm`]); the value means nothing.
    pub(crate) fn warm(&self) -> u64 {
        self.frames_in.load(Ordering::Relaxed)
    }

    /// A frame of `bytes` arrived.
    pub fn frame_in(&self, bytes: usize) {
        bump(&self.frames_in, 1);
        bump(&self.bytes_in, bytes as u64);
    }
    /// A frame of `bytes` was sent; `audio` if it carried input audio.
    pub fn frame_out(&self, bytes: usize, audio: bool) {
        bump(&self.frames_out, 1);
        bump(&self.bytes_out, bytes as u64);
        if audio {
            bump(&self.audio_chunks_out, 1);
        }
    }
    /// An audio chunk arrived.
    pub fn audio_chunk_in(&self) {
        bump(&self.audio_chunks_in, 1);
    }
    /// The model's first output came `ms` after the user's turn ended.
    pub fn first_response(&self, ms: u64) {
        lock(&self.first_response).push(ms);
    }
    /// A tool call took `ms`; `ok` if it succeeded.
    pub fn tool_finished(&self, ms: u64, ok: bool) {
        lock(&self.tool_duration).push(ms);
        if !ok {
            bump(&self.tool_errors, 1);
        }
    }
    /// The connection was re-established.
    pub fn reconnected(&self) {
        bump(&self.reconnects, 1);
    }
    /// An actor was restarted.
    pub fn restarted(&self) {
        bump(&self.restarts, 1);
    }
    /// An awaited callback did not return in time.
    pub fn callback_timed_out(&self) {
        bump(&self.callback_timeouts, 1);
    }
    /// `count` outbound audio chunks were dropped while reconnecting.
    pub fn audio_dropped(&self, count: u64) {
        bump(&self.audio_dropped, count);
    }
    /// The wire recorder has failed `count` writes so far.
    pub fn set_recording_errors(&self, count: u64) {
        self.recording_errors.store(count, Ordering::Relaxed);
    }

    /// A copy of every number now.
    pub fn snapshot(&self) -> TelemetrySnapshot {
        let load = |c: &AtomicU64| c.load(Ordering::Relaxed);
        TelemetrySnapshot {
            frames_in: load(&self.frames_in),
            frames_out: load(&self.frames_out),
            bytes_in: load(&self.bytes_in),
            bytes_out: load(&self.bytes_out),
            audio_chunks_in: load(&self.audio_chunks_in),
            audio_chunks_out: load(&self.audio_chunks_out),
            turns: load(&self.turns),
            tool_calls: load(&self.tool_calls),
            tool_errors: load(&self.tool_errors),
            interruptions: load(&self.interruptions),
            reconnects: load(&self.reconnects),
            restarts: load(&self.restarts),
            recording_errors: load(&self.recording_errors),
            callback_timeouts: load(&self.callback_timeouts),
            // Counted by the event hub; `LiveHandle::telemetry` fills it in.
            events_lagged: 0,
            audio_dropped: load(&self.audio_dropped),
            // Counted by the tools' input queues; `LiveHandle::telemetry` fills it in.
            tool_input_missed: 0,
            tokens: *lock(&self.tokens),
            first_response_ms: lock(&self.first_response).stats(),
            tool_duration_ms: lock(&self.tool_duration).stats(),
            // Kept by the jitter buffer itself; `LiveHandle::telemetry` fills it in.
            jitter: None,
        }
    }

    /// Counts what telemetry counts of `event` (token usage, turns, tool calls,
    /// interruptions; any other event is not counted here). The Telemetry actor calls it
    /// for each event routed to it; a session without one has the router call it instead.
    pub fn count(&self, event: &SessionEvent) {
        match event {
            SessionEvent::Usage(usage) => self.usage(usage),
            SessionEvent::TurnComplete { .. } => bump(&self.turns, 1),
            SessionEvent::Interrupted => bump(&self.interruptions, 1),
            SessionEvent::ToolCall(calls) => bump(&self.tool_calls, calls.len() as u64),
            _ => {}
        }
    }

    fn usage(&self, usage: &UsageMetadata) {
        let count = |v: Option<i64>| v.map(|v| v.max(0) as u64);
        let mut guard = lock(&self.tokens);
        let tokens: &mut TokenCounts = &mut guard;
        let fields = [
            (&mut tokens.prompt, count(usage.prompt_token_count)),
            (&mut tokens.cached, count(usage.cached_content_token_count)),
            (&mut tokens.response, count(usage.response_token_count)),
            (
                &mut tokens.tool_use_prompt,
                count(usage.tool_use_prompt_token_count),
            ),
            (&mut tokens.thoughts, count(usage.thoughts_token_count)),
            (&mut tokens.total, count(usage.total_token_count)),
        ];
        for (field, value) in fields {
            if let Some(value) = value {
                *field = value;
            }
        }
    }
}

/// What the Telemetry actor is given at start (and again at each restart).
#[derive(Clone)]
pub struct TelemetryArgs {
    /// The numbers.
    pub shared: Arc<TelemetryShared>,
    /// `on_usage`.
    pub callbacks: Arc<TelemetryCallbacks>,
    /// The session's actors (the actor drains the telemetry lane of their `lanes`).
    pub peers: Arc<Peers>,
}

/// Telemetry: what one instance of the actor holds.
pub struct Telemetry {
    args: TelemetryArgs,
}

impl Consumer for Telemetry {
    type Item = EventItem;
    type Label = FailedItem;
    type Msg = NoMsg;
    type Args = TelemetryArgs;

    const CHILD: Child = Child::Telemetry;
    const CHUNK: usize = LANE_CHUNK;

    fn mailbox(args: &TelemetryArgs) -> &ConsumerMailbox<Self> {
        &args.peers.lanes.telemetry
    }

    async fn start(
        args: TelemetryArgs,
        failed: Option<Failed<FailedItem>>,
        _myself: &Instance<NoMsg>,
    ) -> Result<Self, ActorProcessingErr> {
        if let Some(failed) = failed {
            report_failed(&args.peers, Child::Telemetry, &failed);
        }
        Ok(Telemetry { args })
    }

    async fn handle(&mut self, item: EventItem) -> Result<(), ActorProcessingErr> {
        let args = &self.args;
        match &item {
            EventItem::Event { event, .. } => {
                args.shared.count(event);
                if let (SessionEvent::Usage(usage), Some(on_usage)) =
                    (event, &args.callbacks.on_usage)
                {
                    on_usage(usage);
                }
            }
            EventItem::End => drained(&args.peers, Child::Telemetry),
        }
        Ok(())
    }
}
