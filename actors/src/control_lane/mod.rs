//! The ControlLane: tool calls, turn completion, conversation phases, lifecycle callbacks,
//! and the session's own state keys.
//!
//! Slow work never sits in its mailbox: each tool call runs in its own task and posts its
//! outcome back as a message, so the lane keeps handling events while tools run. Blocking
//! callbacks are awaited in order (that is what blocking means); concurrent ones are spawned.
//!
//! The lane is the single writer of state derived from the event stream (the `session:`
//! keys, `turn:` clearing, the turn count, the active phase, the computed `derived:` values,
//! the extractors' results) and commits tool writes in call order, so a replay of the same
//! frames writes the same journal, entry by entry. It also calls the session's state
//! reactor (the `reel-reactive` crate's watchers, computed values and temporal patterns)
//! on event time; see [`crate::reactor`] for when.
//!
//! # The turn pipeline
//!
//! At turn complete, in this order (the seed's pipeline; its step numbers in brackets):
//!
//! 1. write the turn's `session:` keys (its usage included), then clear the `turn:` keys [1];
//! 2. finalize the transcript turn ([`crate::transcript`]) at the event's time [2];
//! 3. run the extractors due this turn ([`crate::extract`]: `EveryTurn`, `Interval(n)`),
//!    concurrently, wait for them, and commit their results in registration order [4] —
//!    before the transitions, so their guards see what was just extracted;
//! 4. the reactor recomputes its derived values (the computed values) [5];
//! 5. evaluate the phase transitions [7] (the first whose guard holds and whose target's
//!    entry guard allows it: exit hook, the new phase, its instruction as the steering mode
//!    has it, enter hook); after a transition, run the `OnPhaseChange` extractors [7c];
//! 6. conversation control ([`crate::conversation`]), only when the phases use it: repair
//!    [7e] (a nudge, or the escalation — its latches, its callback, its transition), the
//!    navigation block regenerated into `session:navigation_context` even when no
//!    transition fired [7b], then the boundary's context turns collected in one batch: the
//!    nudge, the modifiers [7f] (as context under `ContextInjection` and `Hybrid`, when they
//!    changed or on entry), the phase's instruction and navigation block [12] (as context
//!    under `ContextInjection`, on entry / when it changed), the enter prompt [13] (on
//!    entry);
//! 7. the reactor's commit point (watchers, then temporal patterns) [8, 9];
//! 8. the instruction step ([`Interceptors`]) [10–12]: `instruction_template` (its
//!    `Some(text)` replaces the whole instruction, the phase's too), else on a turn without
//!    a phase transition `instruction_amendment` (appended to the current phase's
//!    instruction after a blank line), else the phase's instruction when modifiers or
//!    navigation are baked into it; an update is sent only when the text differs from the
//!    instruction last sent;
//! 9. the batch of step 6 as ONE `clientContent` frame [14] — at once, or under deferred
//!    delivery queued for the application's next send unless it asks the model to answer
//!    (`turnComplete: true` on the same frame: an enter prompt, `prompt_on_enter`, a first
//!    nudge) [14b];
//! 10. `on_turn_boundary`, awaited (what it sends goes out before `on_turn_complete` runs)
//!     [15];
//! 11. `on_turn_complete` [16];
//! 12. `session:turn_count` + 1, last, so guards saw the current count [17];
//! 13. (as after every event) write the `session:` keys due, hand the event to the reactor
//!     (the rate patterns count it);
//! 14. hand a snapshot to the persistence writer, if the session persists
//!     ([`crate::persistence`]) [18];
//!
//! and only then publish the turn complete event. The seed's tool advisory (a context turn
//! listing a phase's tools) has no counterpart: reel enforces the phase's tool list
//! instead. Whenever tool responses were sent (a commit point), the `AfterToolCall`
//! extractors run, then the reactor recomputes its derived values and sees the tools'
//! writes (the computed values, then the watchers and the sustained patterns). A failure of
//! the lane mid-pipeline loses the batch not sent yet, never part of it: the batch is one
//! frame, handed over whole.
//!
//! A phase transition sends the new phase's instruction when it happens (step 5), before
//! the phase's enter hook runs — unless an `instruction_template` is set: then the
//! instruction step decides, and sends the template's text, or the phase's if the
//! template returns `None`. Entering the initial phase at the first connect sends that
//! phase's context (and steered instruction) as a transition into it would.
//!
//! After a reconnect, the new setup carries the session's starting instruction (the
//! transport builds every setup from the config): if the runtime has sent another since,
//! the lane sends it again as the first thing it does on the new connection's `connected`,
//! before `on_connected` (see `docs/decisions/0007-instruction-after-reconnect.md`).
//!
//! Every tool response frame (the dispatcher's, `on_tool_call`'s, running
//! acknowledgements, background results) passes `before_tool_response` just before it is
//! sent: one frame per `toolCall` frame still, in call order.

mod data;
mod event;
mod extraction;
pub(crate) mod governing;
mod outbound;
mod persist;
mod reacting;
mod reports;
pub(crate) mod signals;
pub(crate) mod tool_batches;
mod tool_calls;
mod tool_input;
mod turn;

pub use data::ControlData;

use std::sync::Arc;
use std::time::Duration;

use ractor::ActorProcessingErr;
use reel_protocol::SessionEvent;

use crate::callback_guard::{CallbackGuard, TimedOut};
use crate::callbacks::{ControlCallbacks, Interceptors};
use crate::child::Child;
use crate::events::{Lane, LiveEvent};
use crate::extract::ExtractorSet;
use crate::inbox::Failed;
use crate::lane_reports::{drained, report_failed};
use crate::llm::LlmInterceptor;
use crate::mailbox::{
    Consumer, ConsumerMailbox, ControlItem, FailedItem, Instance, LANE_CHUNK, NoMsg,
};
use crate::peers::Peers;
use crate::persistence::SnapshotSaver;
use crate::phases::PhaseMachine;
use crate::state::State;
use crate::telemetry::TelemetryShared;
use crate::tools::ToolDispatcher;
use crate::transcript::TranscriptTurn;
use crate::writer::SessionWriter;

/// The state key holding the conversation phase.
pub const ACTIVE_PHASE_KEY: &str = "session:active_phase";
/// The state key holding the number of completed model turns.
pub const TURN_COUNT_KEY: &str = "session:turn_count";

/// What the control lane is given at start (and again at each restart).
#[derive(Clone)]
pub struct ControlLaneArgs {
    /// What survives restarts (held for the whole of each message's handling; only one
    /// instance runs at a time, so it is never contended).
    pub data: Arc<tokio::sync::Mutex<ControlData>>,
    /// The application's callbacks.
    pub callbacks: Arc<ControlCallbacks>,
    /// The application's hooks on what the runtime sends.
    pub interceptors: Arc<Interceptors>,
    /// The tools, if the runtime dispatches calls.
    pub dispatcher: Option<Arc<ToolDispatcher>>,
    /// The conversation phases, if any.
    pub phases: Option<Arc<PhaseMachine>>,
    /// The session state.
    pub state: State,
    /// Sends to the transport.
    pub writer: SessionWriter,
    /// Counters.
    pub telemetry: Arc<TelemetryShared>,
    /// How long an awaited callback or hook may take before the lane goes on without it.
    pub callback_timeout: Duration,
    /// The session's actors (the lane drains [`Peers::control`]; finished tool calls are
    /// pushed there too).
    pub peers: Arc<Peers>,
    /// The extractors, their models already intercepted.
    pub(crate) extractors: Arc<ExtractorSet>,
    /// What models handed out (to tools, to extractors) go through.
    pub(crate) interceptor: Arc<dyn LlmInterceptor>,
    /// Saves snapshots, if the session persists.
    pub(crate) saver: Option<SnapshotSaver>,
    /// Where the finished turns are shown to the application.
    pub(crate) transcript_view: Arc<tokio::sync::watch::Sender<Arc<[TranscriptTurn]>>>,
    /// The reports of callbacks that timed out, not handled yet (survive restarts).
    pub(crate) timed_out: TimedOut,
}

/// The control lane itself: what it was given, and the behaviour of the lane (tool calls,
/// the turn pipeline, what it sends, signals, extraction, persistence) as its methods,
/// spread over this module's files.
pub struct ControlLaneState {
    pub(crate) data: Arc<tokio::sync::Mutex<ControlData>>,
    pub(crate) callbacks: Arc<ControlCallbacks>,
    pub(crate) interceptors: Arc<Interceptors>,
    pub(crate) dispatcher: Option<Arc<ToolDispatcher>>,
    pub(crate) phases: Option<Arc<PhaseMachine>>,
    pub(crate) state: State,
    pub(crate) writer: SessionWriter,
    pub(crate) telemetry: Arc<TelemetryShared>,
    /// Awaits application code for at most the callback timeout; keeps the reports.
    pub(crate) guard: CallbackGuard,
    pub(crate) peers: Arc<Peers>,
    pub(crate) extractors: Arc<ExtractorSet>,
    pub(crate) interceptor: Arc<dyn LlmInterceptor>,
    pub(crate) saver: Option<SnapshotSaver>,
    pub(crate) transcript_view: Arc<tokio::sync::watch::Sender<Arc<[TranscriptTurn]>>>,
    /// The item a failed predecessor was handling, settled in `started`.
    failed: Option<Failed<FailedItem>>,
}

impl ControlLaneState {
    /// A lane instance from its arguments; `failed` is what its predecessor failed on.
    fn new(args: ControlLaneArgs, failed: Option<Failed<FailedItem>>) -> Self {
        let ControlLaneArgs {
            data,
            callbacks,
            interceptors,
            dispatcher,
            phases,
            state,
            writer,
            telemetry,
            callback_timeout,
            peers,
            extractors,
            interceptor,
            saver,
            transcript_view,
            timed_out,
        } = args;
        ControlLaneState {
            data,
            callbacks,
            interceptors,
            dispatcher,
            phases,
            state,
            writer,
            guard: CallbackGuard::new(callback_timeout, Arc::clone(&telemetry), timed_out),
            telemetry,
            peers,
            extractors,
            interceptor,
            saver,
            transcript_view,
            failed,
        }
    }
}

impl Consumer for ControlLaneState {
    type Item = ControlItem;
    type Label = FailedItem;
    type Msg = NoMsg;
    type Args = ControlLaneArgs;

    const CHILD: Child = Child::ControlLane;
    const CHUNK: usize = LANE_CHUNK;

    fn mailbox(args: &ControlLaneArgs) -> &ConsumerMailbox<Self> {
        &args.peers.lanes.control
    }

    async fn start(
        args: ControlLaneArgs,
        failed: Option<Failed<FailedItem>>,
        _myself: &Instance<NoMsg>,
    ) -> Result<Self, ActorProcessingErr> {
        Ok(ControlLaneState::new(args, failed))
    }

    async fn started(&mut self) -> Result<(), ActorProcessingErr> {
        let data = Arc::clone(&self.data);
        let mut data = data.lock().await;
        if let Some(failed) = self.failed.take() {
            self.settle_failed(&mut data, &failed).await;
            // Whatever it failed on, `connect` does not wait for it any longer.
            self.peers.pending_context.entered();
        }
        // What a failed predecessor's callbacks timed out on, after the item it failed on.
        self.report_timeouts(&mut data).await;
        Ok(())
    }

    /// Boxed: what handling an item awaits (callbacks, hooks, tool batches) makes a future
    /// of several KiB, which would otherwise sit inline in the actor's task for the
    /// session's whole life, idle or not. The lane's items are few per second (transcripts,
    /// turns, tool calls), so the box's allocation per item costs little.
    async fn handle(&mut self, item: ControlItem) -> Result<(), ActorProcessingErr> {
        Box::pin(self.handle_item(item)).await
    }
}

impl ControlLaneState {
    async fn handle_item(&mut self, item: ControlItem) -> Result<(), ActorProcessingErr> {
        let lane = &*self;
        let data = Arc::clone(&lane.data);
        let mut data = data.lock().await;
        match item {
            ControlItem::Event {
                ts_ms,
                event,
                frame_end,
            } => {
                lane.state.lane_event_started();
                lane.event(&mut data, &event, ts_ms).await;
                if frame_end {
                    lane.react_to_batch(&mut data, ts_ms).await;
                }
                lane.state.lane_event_finished();
                lane.react_settled(&mut data, ts_ms).await;
            }
            ControlItem::ToolDone(done) => {
                let (batch, index, outcome) = *done;
                lane.tool_done(&mut data, batch, index, outcome).await;
            }
            ControlItem::ToolPartial(partial) => {
                let (batch, index, result) = *partial;
                lane.tool_partial(&mut data, batch, index, result).await;
            }
            ControlItem::Input(input) => data.tool_input.input(&input),
            ControlItem::FrameSeq(seq) => data.tool_input.frame(seq),
            ControlItem::InstructionSent(text) => lane.instruction_sent(&mut data, text),
            ControlItem::VideoSent => data.signals.video_sent(),
            ControlItem::End => lane.shutdown(&mut data).await,
        }
        lane.report_timeouts(&mut data).await;
        Ok(())
    }
}

impl ControlLaneState {
    /// Handles one event: publishes it (before, so what handling it causes follows it in
    /// the stream — except turn complete, published once the turn pipeline is done: phase
    /// moved, state written, callbacks run; then it is safe to start the next turn).
    async fn event(&self, data: &mut ControlData, event: &SessionEvent, ts_ms: u64) {
        // State written while handling the event is stamped with its time.
        self.peers.clock().advance_to(ts_ms);
        let after = matches!(event, SessionEvent::TurnComplete { .. });
        if !after {
            self.peers
                .hub
                .publish_with(Lane::Control, || LiveEvent::Session(event.clone()));
        }
        self.handle_event(data, event, ts_ms).await;
        if after {
            self.peers
                .hub
                .publish_with(Lane::Control, || LiveEvent::Session(event.clone()));
        }
    }

    /// No more events: cancels running tools, writes the last state, reports drained.
    async fn shutdown(&self, data: &mut ControlData) {
        for (batch, index) in data.batches.running() {
            self.cancel_call(data, batch, index);
        }
        data.tool_input.close();
        let now = crate::clock::Clock::now_ms(self.peers.clock().as_ref());
        self.flush_signals(data, now, true).await;
        self.save_final_snapshot(data).await;
        // On the session's disk: file writes never run on tokio's workers.
        let _ = self.state.flush_journal_on_disk().await;
        drained(&self.peers, Child::ControlLane);
    }

    /// Settles the item a failed predecessor was handling: every tool call it concerned
    /// still gets an answer (an error, unless its tool is still running and will answer),
    /// then it is reported; a failed end marker, a noted instruction or video frame is
    /// handled again.
    async fn settle_failed(&self, data: &mut ControlData, failed: &Failed<FailedItem>) {
        match &failed.label {
            FailedItem::Event { calls, .. } if !calls.is_empty() => {
                self.answer_failed_calls(
                    data,
                    calls,
                    "the control lane failed while handling the call",
                )
                .await;
            }
            FailedItem::ToolDone { batch, index } => {
                self.fail_call(data, *batch, *index).await;
            }
            FailedItem::End => {
                self.shutdown(data).await;
                return;
            }
            // Handed again: each call takes a piece of input once.
            FailedItem::Input(input) => data.tool_input.input(input),
            FailedItem::FrameSeq(seq) => data.tool_input.frame(*seq),
            // Noted again: noting them cannot fail, so the failure struck before.
            FailedItem::InstructionSent(text) => self.instruction_sent(data, text.clone()),
            FailedItem::VideoSent => data.signals.video_sent(),
            FailedItem::Event { .. } | FailedItem::ToolPartial { .. } => {}
        }
        report_failed(&self.peers, Child::ControlLane, failed);
    }
}
