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
//! frames writes the same journal, entry by entry. It also runs the reactive rules
//! (watchers, computed values, temporal patterns) on event time; see [`crate::reactive`]
//! for when.
//!
//! # The turn pipeline
//!
//! At turn complete, in this order (the seed's pipeline, as far as reel has its steps):
//!
//! 1. clear the `turn:` keys;
//! 2. finalize the transcript turn ([`crate::transcript`]) at the event's time;
//! 3. run the extractors due this turn ([`crate::extract`]: `EveryTurn`, `Interval(n)`),
//!    concurrently, wait for them, and commit their results in registration order;
//! 4. recompute the computed values;
//! 5. evaluate the phase transitions; after a transition, run the `OnPhaseChange`
//!    extractors;
//! 6. watchers, then temporal patterns;
//! 7. the instruction step ([`Interceptors`]): `instruction_template` (its `Some(text)`
//!    replaces the whole instruction, the phase's too), else on a turn without a phase
//!    transition `instruction_amendment` (appended to the current phase's instruction
//!    after a blank line); an update is sent only when the text differs from the
//!    instruction last sent;
//! 8. `on_turn_boundary`, awaited (what it sends goes out before `on_turn_complete` runs);
//! 9. `on_turn_complete`;
//! 10. `session:turn_count` + 1;
//! 11. (as after every event) write the `session:` keys due, count the event for the rate
//!     patterns;
//! 12. hand a snapshot to the persistence writer, if the session persists
//!     ([`crate::persistence`]);
//!
//! and only then publish the turn complete event. The seed's steps for navigation context,
//! tool advisory, repair, steering and the batched context frame have no counterpart in
//! reel yet. `AfterToolCall` extractors run whenever tool responses were sent, before the
//! watchers look at the tools' writes.
//!
//! A phase transition sends the new phase's instruction when it happens (step 5), before
//! the phase's enter hook runs — unless an `instruction_template` is set: then the
//! instruction step decides, and sends the template's text, or the phase's if the
//! template returns `None`.
//!
//! After a reconnect, the new setup carries the session's starting instruction (the
//! transport builds every setup from the config): if the runtime has sent another since,
//! the lane sends it again as the first thing it does on the new connection's `connected`,
//! before `on_connected` (see `docs/decisions/0007-instruction-after-reconnect.md`).
//!
//! Every tool response frame (the dispatcher's, `on_tool_call`'s, running
//! acknowledgements, background results) passes `before_tool_response` just before it is
//! sent: one frame per `toolCall` frame still, in call order.

mod extraction;
mod outbound;
mod persist;
pub(crate) mod signals;
pub(crate) mod tool_batches;
mod tool_calls;

use std::sync::Arc;
use std::time::Duration;

use ractor::{Actor, ActorProcessingErr, ActorRef};
use reel_protocol::SessionEvent;
use serde_json::{Value, json};

use self::signals::SessionSignals;
use self::tool_batches::ToolBatches;
use crate::callbacks::{ControlCallbacks, Interceptors};
use crate::child::Child;
use crate::events::{Lane, LiveEvent};
use crate::extract::{ExtractionPoint, ExtractorSet};
use crate::fast_lane::{drained, report_failed};
use crate::inbox::Failed;
use crate::lane_inbox::{FailedItem, LANE_CHUNK, LaneItem};
use crate::llm::LlmInterceptor;
use crate::peers::Peers;
use crate::persistence::{SessionSnapshot, SnapshotSaver};
use crate::phases::PhaseMachine;
use crate::reactive::{Reactive, ReactiveData, Scope};
use crate::state::State;
use crate::telemetry::TelemetryShared;
use crate::tools::{ToolDispatcher, ToolOutcome};
use crate::transcript::{PendingTurn, TranscriptBuffer, TranscriptTurn};
use crate::writer::SessionWriter;

/// The state key holding the conversation phase.
pub const ACTIVE_PHASE_KEY: &str = "session:active_phase";
/// The state key holding the number of completed model turns.
pub const TURN_COUNT_KEY: &str = "session:turn_count";

/// Messages to the control lane.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ControlMsg {
    /// Events or finished tool calls wait in the lane's inbox ([`Peers::control`]).
    Wake,
}

/// What survives a restart of the control lane.
#[derive(Debug)]
pub struct ControlData {
    pub(crate) batches: ToolBatches,
    pub(crate) signals: SessionSignals,
    pub(crate) active_phase: Option<String>,
    pub(crate) turn_count: u64,
    pub(crate) reactive: ReactiveData,
    /// The finished turns.
    pub(crate) transcript: TranscriptBuffer,
    /// The turn in progress.
    pub(crate) pending: PendingTurn,
    /// The latest resumption handle among the events handled (or the restored one).
    pub(crate) resume_handle: Option<String>,
    /// The snapshot the session was restored from, until it is announced (first connect).
    pub(crate) resumed: Option<SessionSnapshot>,
    /// The system instruction last sent by the runtime (the setup's, then updates).
    pub(crate) last_instruction: Option<String>,
    /// The system instruction every setup carries, the first and each reconnect's: the
    /// transport builds them all from the session's config.
    pub(crate) setup_instruction: Option<String>,
    /// The session's own instruction (the config's, before any phase's): what an
    /// amendment is appended to in a phase that has no instruction.
    pub(crate) base_instruction: Option<String>,
}

impl ControlData {
    /// Fresh data for a session expected to last `budget` (for `session:remaining_budget_ms`),
    /// whose watchers see the changes made to `state` from now on.
    pub fn new(budget: Duration, state: &State) -> Self {
        ControlData {
            batches: ToolBatches::default(),
            signals: SessionSignals::new(u64::try_from(budget.as_millis()).unwrap_or(u64::MAX)),
            active_phase: None,
            turn_count: 0,
            reactive: ReactiveData::new(state),
            transcript: TranscriptBuffer::new(),
            pending: PendingTurn::default(),
            resume_handle: None,
            resumed: None,
            last_instruction: None,
            setup_instruction: None,
            base_instruction: None,
        }
    }

    /// The number of the turn in progress (1-based).
    pub(crate) fn turn_number(&self) -> u32 {
        u32::try_from(self.turn_count.saturating_add(1)).unwrap_or(u32::MAX)
    }

    /// Goes on from `snapshot` (whose state is already restored): its phase, turn count
    /// and resumption handle; it is announced when the session is live.
    pub fn resume_from(&mut self, snapshot: SessionSnapshot) {
        self.active_phase = Some(snapshot.phase.clone()).filter(|phase| !phase.is_empty());
        self.turn_count = u64::from(snapshot.turn_count);
        self.resume_handle = snapshot.resume_handle.clone();
        self.resumed = Some(snapshot);
    }
}

/// A finished tool call: its batch, its place in the batch, and what happened.
pub type FinishedCall = (u64, usize, ToolOutcome);

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
    /// Watchers, computed values and temporal patterns.
    pub reactive: Arc<Reactive>,
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
}

/// The control lane's state.
pub struct ControlLaneState {
    args: ControlLaneArgs,
    /// The item a failed predecessor was handling, settled in `post_start`.
    failed: Option<Failed<FailedItem>>,
}

/// The ControlLane actor.
pub struct ControlLane;

impl Actor for ControlLane {
    type Msg = ControlMsg;
    type State = ControlLaneState;
    type Arguments = ControlLaneArgs;

    async fn pre_start(
        &self,
        _myself: ActorRef<ControlMsg>,
        args: ControlLaneArgs,
    ) -> Result<ControlLaneState, ActorProcessingErr> {
        let failed = args.peers.control.recover();
        Ok(ControlLaneState { args, failed })
    }

    async fn post_start(
        &self,
        myself: ActorRef<ControlMsg>,
        state: &mut ControlLaneState,
    ) -> Result<(), ActorProcessingErr> {
        if let Some(failed) = state.failed.take() {
            let args = state.args.clone();
            let mut data = args.data.lock().await;
            args.settle_failed(&mut data, &failed).await;
        }
        // Whatever waited while no instance was in place.
        let _ = myself.cast(ControlMsg::Wake);
        Ok(())
    }

    async fn handle(
        &self,
        myself: ActorRef<ControlMsg>,
        ControlMsg::Wake: ControlMsg,
        state: &mut ControlLaneState,
    ) -> Result<(), ActorProcessingErr> {
        let args = state.args.clone();
        let inbox = Arc::clone(&args.peers.control);
        let mut data = args.data.lock().await;
        for _ in 0..LANE_CHUNK {
            let Some(taken) = inbox.take() else {
                return Ok(());
            };
            match taken.item {
                LaneItem::Event {
                    ts_ms,
                    event,
                    frame_end,
                } => {
                    args.event(&mut data, &event, ts_ms).await;
                    if frame_end {
                        args.reactive
                            .after_batch(&mut data.reactive, &args.scope(ts_ms))
                            .await;
                    }
                }
                LaneItem::ToolDone((batch, index, outcome)) => {
                    args.tool_done(&mut data, batch, index, outcome).await;
                }
                LaneItem::End => args.shutdown(&mut data).await,
            }
            inbox.done(taken.seq);
        }
        let _ = myself.cast(ControlMsg::Wake);
        Ok(())
    }
}

impl ControlLaneArgs {
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
        let now = crate::clock::Clock::now_ms(self.peers.clock().as_ref());
        self.flush_signals(data, now, true).await;
        self.save_final_snapshot(data).await;
        // On the blocking pool: file writes never run on tokio's workers.
        let state = self.state.clone();
        let _ = tokio::task::spawn_blocking(move || state.flush_journal()).await;
        drained(&self.peers, Child::ControlLane);
    }

    /// Settles the item a failed predecessor was handling: every tool call it concerned
    /// still gets an answer (an error, unless its tool is still running and will answer),
    /// then it is reported; a failed end marker is handled again.
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
            FailedItem::Event { .. } => {}
        }
        report_failed(&self.peers, Child::ControlLane, failed);
    }

    async fn handle_event(&self, data: &mut ControlData, event: &SessionEvent, ts_ms: u64) {
        data.signals.observe(event, ts_ms);
        data.pending.observe(event);
        let callbacks = &self.callbacks;
        let mut force_flush = false;
        match event {
            SessionEvent::Connected { .. } => {
                force_flush = true;
                // First: a reconnect's setup carried the starting instruction.
                self.restore_instruction(data);
                self.enter_initial_phase(data).await;
                self.announce_resume(data).await;
                if let Some(on_connected) = &callbacks.on_connected {
                    self.within("on_connected", on_connected.run(self.writer.clone()))
                        .await;
                }
            }
            SessionEvent::ToolCall(calls) => self.tool_call(data, calls).await,
            SessionEvent::ToolCallCancelled(ids) => {
                for (batch, index) in data.batches.running_with_ids(ids) {
                    self.cancel_call(data, batch, index);
                }
                self.answer_ready(data).await;
                if let Some(on_cancelled) = &callbacks.on_tool_cancelled {
                    self.within("on_tool_cancelled", on_cancelled.run(ids.clone()))
                        .await;
                }
            }
            SessionEvent::Interrupted => {
                if let Some(on_interrupted) = &callbacks.on_interrupted {
                    // Forced blocking: the interruption must be handled before audio resumes.
                    self.within("on_interrupted", on_interrupted.run_blocking(()))
                        .await;
                }
            }
            SessionEvent::TurnComplete { .. } => {
                force_flush = true;
                self.turn_complete(data, ts_ms).await;
            }
            SessionEvent::SessionResumeUpdate(info) => {
                if let Some(handle) = &info.handle {
                    data.resume_handle = Some(handle.clone());
                }
            }
            SessionEvent::GenerationComplete => {
                if let Some(on_generation_complete) = &callbacks.on_generation_complete {
                    self.within("on_generation_complete", on_generation_complete.run(()))
                        .await;
                }
            }
            SessionEvent::GoAway { time_left } => {
                if let Some(on_go_away) = &callbacks.on_go_away {
                    self.within("on_go_away", on_go_away.run(time_left.unwrap_or_default()))
                        .await;
                }
            }
            SessionEvent::Disconnected { code, reason } => {
                force_flush = true;
                if let Some(on_disconnected) = &callbacks.on_disconnected {
                    let clean = matches!(code, Some(1000) | Some(1001));
                    let reason = if clean {
                        None
                    } else {
                        Some(reason.clone().unwrap_or_else(|| match code {
                            Some(code) => format!("closed with code {code}"),
                            None => "connection lost".to_owned(),
                        }))
                    };
                    self.within("on_disconnected", on_disconnected.run(reason))
                        .await;
                }
            }
            SessionEvent::Error(error) => {
                if let Some(on_error) = &callbacks.on_error {
                    self.within("on_error", on_error.run(error.to_string()))
                        .await;
                }
            }
            _ => {}
        }
        self.flush_signals(data, ts_ms, force_flush).await;
        self.reactive
            .after_event(&mut data.reactive, event, &self.scope(ts_ms))
            .await;
        if matches!(event, SessionEvent::TurnComplete { .. }) {
            // The turn boundary's snapshot, once the turn's `session:` keys are written.
            self.save_snapshot(data);
        }
    }

    /// What the reactive rules run with, at event time `now_ms`.
    fn scope(&self, now_ms: u64) -> Scope<'_> {
        Scope {
            state: &self.state,
            writer: &self.writer,
            now_ms,
        }
    }

    /// Tool writes were committed: the `AfterToolCall` extractors run, then the watchers and
    /// sustained patterns look at the writes.
    pub(crate) async fn after_commit(&self, data: &mut ControlData) {
        self.extract(data, ExtractionPoint::AfterToolCall).await;
        let now_ms = crate::clock::Clock::now_ms(self.peers.clock().as_ref());
        self.reactive
            .after_commit(&mut data.reactive, &self.scope(now_ms))
            .await;
    }

    async fn flush_signals(&self, data: &mut ControlData, ts_ms: u64, force: bool) {
        let writes = data.signals.flush(ts_ms, force);
        if writes.is_empty() {
            return;
        }
        if let Err(error) = self.state.set_many(writes).await {
            self.report_state_write("the session: keys".to_owned(), &error);
        }
    }

    async fn set_state(&self, key: &str, value: Value) {
        if let Err(error) = self.state.set(key, value).await {
            self.report_state_write(format!("`{key}`"), &error);
        }
    }

    /// Awaits `callback` (an application callback or hook named `name`) for at most the
    /// session's callback timeout. Past it the callback is dropped, a
    /// [`reel_protocol::SessionError::CallbackTimeout`] is reported (except for `on_error`
    /// itself, which is only logged: its report would call it again) and `None` is
    /// returned: the lane goes on, so a hung callback cannot hang the session.
    pub(crate) async fn within<T>(
        &self,
        name: &'static str,
        callback: impl std::future::Future<Output = T>,
    ) -> Option<T> {
        match tokio::time::timeout(self.callback_timeout, callback).await {
            Ok(value) => Some(value),
            Err(_) => {
                let after = self.callback_timeout;
                tracing::warn!(callback = name, ?after, "a callback did not return in time");
                self.telemetry.callback_timed_out();
                if name != "on_error" {
                    let report =
                        SessionEvent::Error(reel_protocol::SessionError::CallbackTimeout {
                            callback: name,
                            after,
                        });
                    let _ = self
                        .peers
                        .router
                        .push(crate::router::RouterMsg::Report(Box::new(report)));
                }
                None
            }
        }
    }

    /// Reports state writes of the runtime's that were not applied: logged, and an error
    /// event routed to this lane in order (so `on_error` and every subscriber see it).
    pub(crate) fn report_state_write(&self, what: String, error: &crate::state::StateError) {
        tracing::warn!(%error, %what, "state writes were not applied");
        let report = SessionEvent::Error(reel_protocol::SessionError::StateWrite {
            what,
            message: error.to_string(),
        });
        let _ = self
            .peers
            .router
            .push(crate::router::RouterMsg::Report(Box::new(report)));
    }

    async fn enter_initial_phase(&self, data: &mut ControlData) {
        let Some(phases) = &self.phases else {
            return;
        };
        if data.active_phase.is_some() {
            return; // a reconnect: the conversation goes on where it was
        }
        let initial = phases.initial().to_owned();
        data.active_phase = Some(initial.clone());
        self.set_state(ACTIVE_PHASE_KEY, json!(initial)).await;
        if let Some(hook) = phases.phase(&initial).and_then(|p| p.enter_hook()) {
            self.within(
                "phase enter hook",
                hook(self.state.clone(), self.writer.clone()),
            )
            .await;
        }
    }

    /// The turn pipeline (at event time `ts_ms`): see the module documentation for the
    /// steps, and [`crate::reactive`] for why the reactive ones come in this order.
    async fn turn_complete(&self, data: &mut ControlData, ts_ms: u64) {
        if let Err(error) = self.state.clear_prefix("turn:").await {
            self.report_state_write("clearing the turn: keys".to_owned(), &error);
        }
        let turn = data.pending.finish(data.turn_number(), ts_ms);
        data.transcript.push(turn);
        self.transcript_view
            .send_replace(Arc::from(data.transcript.turns()));
        self.extract(data, ExtractionPoint::TurnComplete).await;
        self.reactive.recompute(&self.state).await;
        let transitioned = self.evaluate_phases(data).await;
        if transitioned {
            self.extract(data, ExtractionPoint::PhaseChange).await;
        }
        self.reactive
            .at_turn_complete(&mut data.reactive, &self.scope(ts_ms))
            .await;
        self.instruction_step(data, transitioned);
        if let Some(on_turn_boundary) = &self.interceptors.on_turn_boundary {
            // Forced blocking: what it sends goes out before `on_turn_complete` runs.
            self.within(
                "on_turn_boundary",
                on_turn_boundary(self.state.clone(), self.writer.clone()),
            )
            .await;
        }
        if let Some(on_turn_complete) = &self.callbacks.on_turn_complete {
            self.within("on_turn_complete", on_turn_complete.run(()))
                .await;
        }
        data.turn_count += 1;
        self.set_state(TURN_COUNT_KEY, json!(data.turn_count)).await;
    }

    /// Evaluates the transitions out of the current phase; returns whether one fired.
    async fn evaluate_phases(&self, data: &mut ControlData) -> bool {
        let (Some(phases), Some(current)) = (&self.phases, data.active_phase.clone()) else {
            return false;
        };
        let Some(transition) = phases.evaluate(&current, &self.state) else {
            return false;
        };
        let target = transition.target.clone();
        let reason = transition.description.clone();
        if let Some(hook) = phases.phase(&current).and_then(|p| p.exit_hook()) {
            self.within(
                "phase exit hook",
                hook(self.state.clone(), self.writer.clone()),
            )
            .await;
        }
        data.active_phase = Some(target.clone());
        self.set_state(ACTIVE_PHASE_KEY, json!(target)).await;
        if let Some(phase) = phases.phase(&target) {
            // With a template, the instruction step decides what the new phase says.
            if self.interceptors.instruction_template.is_none()
                && let Some(instruction) = phase.instruction_for(&self.state)
            {
                self.send_instruction(data, instruction);
            }
            if let Some(hook) = phase.enter_hook() {
                self.within(
                    "phase enter hook",
                    hook(self.state.clone(), self.writer.clone()),
                )
                .await;
            }
        }
        self.peers.hub.publish(
            Lane::Control,
            LiveEvent::PhaseTransition {
                from: current,
                to: target,
                reason,
            },
        );
        true
    }
}
