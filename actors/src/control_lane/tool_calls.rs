//! The control lane's tool calls: dispatching a `toolCall` (or handing it to `on_tool_call`),
//! cancelling calls, taking finished calls back and answering them in call order, one
//! `toolResponse` frame per `toolCall` frame (decision 0004).

use std::sync::Arc;

use reel_protocol::{Args, FunctionCall, FunctionResponse};
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use super::tool_batches::{CallSlot, CallStatus, ToolBatch};
use crate::control_lane::{ControlData, ControlLaneState};
use crate::events::{Lane, LiveEvent};
use crate::extract::ExtractionPoint;
use tokio::sync::OwnedSemaphorePermit;

use crate::inbox::Inbox;
use crate::mailbox::{ControlItem, FailedItem};
use crate::tools::{
    BargeIn, PhaseToolFilter, ToolContext, ToolDispatcher, ToolError, ToolExecutionMode,
    ToolOutcome, acquire_limits, run_call_holding, running_ack,
};

impl ControlLaneState {
    pub(crate) async fn tool_call(&self, data: &mut ControlData, calls: &[FunctionCall]) {
        let frame = data.tool_input.frame_seq;
        // A governed session's flow decides on each call once, in call order, before
        // anything runs it — whoever runs it: `on_tool_call` or the dispatcher. (With
        // neither, the application answers the calls itself and the gate is not asked.)
        let verdicts: Vec<Option<String>> =
            if self.callbacks.on_tool_call.is_some() || self.dispatcher.is_some() {
                calls
                    .iter()
                    .map(|call| self.gate_call(data, frame, call))
                    .collect()
            } else {
                vec![None; calls.len()]
            };
        if let Some(on_tool_call) = &self.callbacks.on_tool_call {
            let admitted: Vec<FunctionCall> = calls
                .iter()
                .zip(&verdicts)
                .filter(|(_, refused)| refused.is_none())
                .map(|(call, _)| call.clone())
                .collect();
            let answered = if admitted.is_empty() {
                // Every call refused: nothing for the application to answer.
                Some(Some(Vec::new()))
            } else {
                self.within("on_tool_call", on_tool_call(admitted, self.state.clone()))
                    .await
            };
            match answered {
                Some(Some(responses)) => {
                    let responses = in_call_order(calls, refusals(calls, &verdicts), responses);
                    self.send_tool_responses(data, responses, true).await;
                    // The application dispatched the calls itself: they are done all the same.
                    self.extract(data, ExtractionPoint::AfterToolCall).await;
                    return;
                }
                Some(None) if self.dispatcher.is_none() => {
                    // Manual mode: the application answers the admitted calls; the lane
                    // answers the refused ones.
                    let refused = refusals(calls, &verdicts);
                    if !refused.is_empty() {
                        self.send_tool_responses(data, refused, true).await;
                    }
                    return;
                }
                Some(None) => {}
                None => {
                    // Timed out: every call still gets an answer, in one frame.
                    let failed = calls
                        .iter()
                        .zip(&verdicts)
                        .filter(|(_, refused)| refused.is_none())
                        .map(|(call, _)| {
                            let name = call.name.clone().unwrap_or_default();
                            ToolOutcome {
                                call_id: call.id.clone().unwrap_or_default(),
                                name: name.clone(),
                                args: Args::empty(),
                                result: Err(ToolError::RuntimeFailed {
                                    tool: name,
                                    message: "on_tool_call did not return in time".to_owned(),
                                }),
                                duration: std::time::Duration::ZERO,
                            }
                            .to_response(&ToolExecutionMode::Standard)
                        })
                        .collect();
                    let responses = in_call_order(calls, refusals(calls, &verdicts), failed);
                    self.send_tool_responses(data, responses, true).await;
                    return;
                }
            }
        }
        // Without a dispatcher the application answers calls itself (manual mode).
        let Some(dispatcher) = &self.dispatcher else {
            return;
        };
        let phase_filter = self.phase_filter(data);
        let mut batch = ToolBatch::default();
        let mut acks = Vec::new();
        let mut refused = false;
        for (call, verdict) in calls.iter().zip(verdicts) {
            let name = call.name.clone().unwrap_or_default();
            let mut mode = dispatcher.mode(&name);
            let cancel = CancellationToken::new();
            let delta = self.state.with_delta();
            self.peers.hub.publish(
                Lane::Control,
                LiveEvent::ToolStarted {
                    call_id: call.id.clone().unwrap_or_default(),
                    name: name.clone(),
                    args: call.args.clone().unwrap_or_else(Args::null),
                },
            );
            // A governed session's flow may refuse the call: it never starts, and is
            // answered with the batch's other standard calls.
            let status = match verdict {
                Some(reason) => {
                    refused = true;
                    mode = ToolExecutionMode::Standard;
                    CallStatus::Done(ToolOutcome {
                        call_id: call.id.clone().unwrap_or_default(),
                        name: name.clone(),
                        args: call.args.clone().unwrap_or_else(Args::null),
                        result: Err(ToolError::Refused { tool: name, reason }),
                        duration: std::time::Duration::ZERO,
                    })
                }
                None => CallStatus::Running(cancel),
            };
            if matches!(status, CallStatus::Running(_))
                && let Some(ack) = running_ack(call, &mode)
            {
                acks.push(ack);
            }
            batch.calls.push(CallSlot {
                call: call.clone(),
                mode,
                delta,
                status,
            });
        }
        let batch_id = data.batches.insert(batch);
        if let Some(batch) = data.batches.get_mut(batch_id) {
            let mut starts = Vec::new();
            for (index, slot) in batch.calls.iter().enumerate() {
                let CallStatus::Running(cancel) = &slot.status else {
                    continue;
                };
                let mut ctx = ToolContext::for_call(&slot.call, slot.delta.clone(), cancel.clone())
                    .with_llm_interceptor(Arc::clone(&self.interceptor));
                // A streaming tool in the background sends its results through the lane,
                // in order, as they come.
                if slot.mode.is_background()
                    && dispatcher
                        .get(slot.name())
                        .is_some_and(|tool| tool.streams())
                {
                    let control = Arc::clone(&self.peers.lanes.control.inbox);
                    ctx = ctx.with_partials(Arc::new(move |result| {
                        let _ = control.push(ControlItem::ToolPartial(Box::new((
                            batch_id, index, result,
                        ))));
                    }));
                }
                // A tool that consumes the user's input reads it from the call on.
                if let Some(capacity) = dispatcher
                    .get(slot.name())
                    .and_then(|tool| tool.input_capacity())
                {
                    let (feed, input) = self
                        .peers
                        .tool_input
                        .open(capacity, data.tool_input.frame_seq);
                    data.tool_input.start((batch_id, index), feed);
                    ctx = ctx.with_input(input);
                }
                starts.push((index, slot.call.clone(), ctx));
            }
            let limited = starts.iter().any(|(_, call, _)| {
                let name = call.name.as_deref().unwrap_or_default();
                dispatcher.limits(name).iter().any(Option::is_some)
            });
            let control = Arc::clone(&self.peers.lanes.control.inbox);
            if limited {
                // One starter per batch takes each call's permits in call order, then
                // starts the call's task: calls past a limit start in call order on any
                // runtime.
                let dispatcher = Arc::clone(dispatcher);
                tokio::spawn(async move {
                    for (index, call, ctx) in starts {
                        let name = call.name.clone().unwrap_or_default();
                        let permits = acquire_limits(&dispatcher, &name, &ctx.cancel).await;
                        let call = Call::new(batch_id, index, call, ctx, permits);
                        call.spawn(&dispatcher, &phase_filter, &control);
                    }
                });
            } else {
                // No call waits for a permit: each starts at once, from here, in call order
                // (a starter task would be one more hand-off for nothing).
                for (index, call, ctx) in starts {
                    let call = Call::new(batch_id, index, call, ctx, Ok(Vec::new()));
                    call.spawn(dispatcher, &phase_filter, &control);
                }
            }
        }
        self.send_tool_responses(data, acks, false).await;
        if refused {
            // A batch whose every standard call was refused is answered now.
            self.answer_ready(data).await;
        }
    }

    /// Answers with an error each call of a `toolCall` the lane failed on that is not in
    /// flight (its tool never started), so the model is not left waiting.
    pub(crate) async fn answer_failed_calls(
        &self,
        data: &mut ControlData,
        calls: &[(String, String)],
        why: &str,
    ) {
        let responses: Vec<_> = calls
            .iter()
            .filter(|(id, _)| !data.batches.has_call(id))
            .map(|(id, name)| {
                let outcome = ToolOutcome {
                    call_id: id.clone(),
                    name: name.clone(),
                    args: Args::empty(),
                    result: Err(ToolError::RuntimeFailed {
                        tool: name.clone(),
                        message: why.to_owned(),
                    }),
                    duration: std::time::Duration::ZERO,
                };
                outcome.to_response(&ToolExecutionMode::Standard)
            })
            .collect();
        self.send_tool_responses(data, responses, true).await;
    }

    /// A call whose result the lane failed on: answered with an error (its result is lost
    /// with the failed instance), with the rest of its batch.
    pub(crate) async fn fail_call(&self, data: &mut ControlData, batch: u64, index: usize) {
        let Some(slot) = data.batches.slot_mut(batch, index) else {
            return;
        };
        if matches!(slot.status, CallStatus::Running(_) | CallStatus::Done(_)) {
            slot.status = CallStatus::Done(ToolOutcome {
                call_id: slot.id().to_owned(),
                name: slot.name().to_owned(),
                args: slot.call.args.clone().unwrap_or_else(Args::null),
                result: Err(ToolError::RuntimeFailed {
                    tool: slot.name().to_owned(),
                    message: "the control lane failed while handling its result".to_owned(),
                }),
                duration: std::time::Duration::ZERO,
            });
        }
        if slot.mode.is_background() {
            let response = self.answer(slot).await;
            self.send_tool_responses(data, vec![response], true).await;
            data.batches.remove_if_settled(batch);
        } else {
            self.answer_ready(data).await;
        }
    }

    /// The user barged in: cancels the running calls of tools whose [`BargeIn`] policy is
    /// `Cancel` (as a `toolCallCancellation` would), then answers what that settled.
    pub(crate) async fn cancel_on_barge_in(&self, data: &mut ControlData) {
        let Some(dispatcher) = &self.dispatcher else {
            return;
        };
        let cancel: Vec<(u64, usize)> = data
            .batches
            .running()
            .into_iter()
            .filter(|(batch, index)| {
                data.batches
                    .get(*batch)
                    .and_then(|batch| batch.calls.get(*index))
                    .is_some_and(|slot| dispatcher.barge_in(slot.name()) == BargeIn::Cancel)
            })
            .collect();
        if cancel.is_empty() {
            return;
        }
        for (batch, index) in cancel {
            self.cancel_call(data, batch, index);
        }
        self.answer_ready(data).await;
    }

    pub(crate) fn phase_filter(&self, data: &ControlData) -> Option<(String, Vec<String>)> {
        let phases = self.phases.as_ref()?;
        let current = data.active_phase.as_ref()?;
        let tools = phases.phase(current)?.allowed_tools()?;
        Some((current.clone(), tools.to_vec()))
    }

    pub(crate) fn cancel_call(&self, data: &mut ControlData, batch: u64, index: usize) {
        let Some(slot) = data.batches.slot_mut(batch, index) else {
            return;
        };
        if let CallStatus::Running(cancel) = &slot.status {
            cancel.cancel();
            data.tool_input.stop((batch, index));
            slot.delta.rollback();
            slot.status = CallStatus::Cancelled;
            self.peers.hub.publish(
                Lane::Control,
                LiveEvent::ToolCancelled {
                    call_id: slot.id().to_owned(),
                    name: slot.name().to_owned(),
                },
            );
        }
    }

    /// A streaming tool's result: sent at once, `willContinue`, if its call still runs.
    pub(crate) async fn tool_partial(
        &self,
        data: &mut ControlData,
        batch: u64,
        index: usize,
        result: Value,
    ) {
        let Some(slot) = data.batches.slot_mut(batch, index) else {
            return;
        };
        if !matches!(slot.status, CallStatus::Running(_)) {
            return; // cancelled or finished meanwhile: the stream is over for the model
        }
        let ToolExecutionMode::Background { scheduling, .. } = &slot.mode else {
            return;
        };
        let response = reel_protocol::FunctionResponse {
            id: Some(slot.id().to_owned()),
            name: Some(slot.name().to_owned()),
            response: Some(result),
            scheduling: Some(scheduling.clone()),
            will_continue: Some(true),
            ..reel_protocol::FunctionResponse::default()
        };
        self.send_tool_responses(data, vec![response], true).await;
    }

    pub(crate) async fn tool_done(
        &self,
        data: &mut ControlData,
        batch: u64,
        index: usize,
        outcome: ToolOutcome,
    ) {
        let Some(slot) = data.batches.slot_mut(batch, index) else {
            return;
        };
        if !matches!(slot.status, CallStatus::Running(_)) {
            return; // cancelled meanwhile: its outcome is not wanted
        }
        self.telemetry.tool_finished(
            u64::try_from(outcome.duration.as_millis()).unwrap_or(u64::MAX),
            outcome.result.is_ok(),
        );
        let background = slot.mode.is_background();
        slot.status = CallStatus::Done(outcome);
        if background {
            let response = self.answer(slot).await;
            self.send_tool_responses(data, vec![response], true).await;
            data.batches.remove_if_settled(batch);
            self.after_commit(data).await;
        } else {
            self.answer_ready(data).await;
        }
    }

    /// Answers every batch whose standard calls are all finished or cancelled: commits their
    /// writes and sends their responses in call order, as one frame per batch; then, if it
    /// answered any, lets the reactive rules see the commits.
    pub(crate) async fn answer_ready(&self, data: &mut ControlData) {
        let ready: Vec<u64> = data
            .batches
            .ids()
            .filter(|id| {
                data.batches
                    .get(*id)
                    .is_some_and(ToolBatch::standard_calls_ready)
            })
            .collect();
        let mut answered = false;
        for id in ready {
            let mut responses = Vec::new();
            if let Some(batch) = data.batches.get_mut(id) {
                for slot in batch.calls.iter_mut().filter(|s| !s.mode.is_background()) {
                    if matches!(slot.status, CallStatus::Done(_)) {
                        responses.push(self.answer(slot).await);
                    }
                }
            }
            answered |= !responses.is_empty();
            self.send_tool_responses(data, responses, true).await;
            data.batches.remove_if_settled(id);
        }
        if answered {
            self.after_commit(data).await;
        }
    }

    /// Commits (or rolls back) a finished call's writes, marks it answered, publishes
    /// `ToolFinished` and returns its response.
    pub(crate) async fn answer(&self, slot: &mut CallSlot) -> reel_protocol::FunctionResponse {
        let CallStatus::Done(outcome) = std::mem::replace(&mut slot.status, CallStatus::Answered)
        else {
            return reel_protocol::FunctionResponse::new(slot.id(), slot.name(), Value::Null);
        };
        let ok = outcome.result.is_ok();
        if outcome.settle(&slot.delta).await.is_err() {
            // A failed commit keeps its writes buffered: once more, for a store that failed
            // and is being restarted, then it is reported, never only logged.
            if let Err(error) = outcome.settle(&slot.delta).await {
                slot.delta.rollback();
                self.report_state_write(
                    format!("tool `{}` (call {})", slot.name(), slot.id()),
                    &error,
                );
            }
        }
        let response = outcome.to_response(&slot.mode);
        self.peers.hub.publish(
            Lane::Control,
            LiveEvent::ToolFinished {
                call_id: slot.id().to_owned(),
                name: slot.name().to_owned(),
                response: response.response.clone().unwrap_or(Value::Null),
                ok,
            },
        );
        response
    }
}

/// A call about to start: where its outcome goes (its batch and place), what it runs with,
/// and the permits it holds (or the error that stopped it from getting them).
struct Call {
    batch: u64,
    index: usize,
    call: FunctionCall,
    ctx: ToolContext,
    permits: Result<Vec<OwnedSemaphorePermit>, ToolError>,
}

impl Call {
    fn new(
        batch: u64,
        index: usize,
        call: FunctionCall,
        ctx: ToolContext,
        permits: Result<Vec<OwnedSemaphorePermit>, ToolError>,
    ) -> Self {
        Call {
            batch,
            index,
            call,
            ctx,
            permits,
        }
    }

    /// Runs the call on a task of its own, which pushes its outcome to the control lane.
    fn spawn(
        self,
        dispatcher: &Arc<ToolDispatcher>,
        filter: &Option<(String, Vec<String>)>,
        control: &Arc<Inbox<ControlItem, FailedItem>>,
    ) {
        let (dispatcher, filter, control) =
            (Arc::clone(dispatcher), filter.clone(), Arc::clone(control));
        tokio::spawn(async move {
            let allowed = filter.as_ref().map(|(phase, tools)| PhaseToolFilter {
                phase,
                allowed: tools,
            });
            let outcome =
                run_call_holding(&dispatcher, &self.call, self.ctx, allowed, self.permits).await;
            // Never dropped, never waits: the lane's inbox outlives a restart, and is
            // refused only once the session is over.
            let _ = control.push(ControlItem::ToolDone(Box::new((
                self.batch, self.index, outcome,
            ))));
        });
    }
}

/// The refusals of a governed session's flow, as responses: for each refused call,
/// `{"error": "tool `X` was refused by the flow: <reason>"}`.
fn refusals(calls: &[FunctionCall], verdicts: &[Option<String>]) -> Vec<FunctionResponse> {
    calls
        .iter()
        .zip(verdicts)
        .filter_map(|(call, refused)| {
            let reason = refused.clone()?;
            let name = call.name.clone().unwrap_or_default();
            Some(
                ToolOutcome {
                    call_id: call.id.clone().unwrap_or_default(),
                    name: name.clone(),
                    args: call.args.clone().unwrap_or_else(Args::null),
                    result: Err(ToolError::Refused { tool: name, reason }),
                    duration: std::time::Duration::ZERO,
                }
                .to_response(&ToolExecutionMode::Standard),
            )
        })
        .collect()
}

/// `ours` and `theirs` as one frame's responses, in the order of the calls they answer
/// (a response whose id no call has goes last, in the order given).
fn in_call_order(
    calls: &[FunctionCall],
    ours: Vec<FunctionResponse>,
    theirs: Vec<FunctionResponse>,
) -> Vec<FunctionResponse> {
    let mut all: Vec<FunctionResponse> = ours.into_iter().chain(theirs).collect();
    if all.len() > 1 {
        let place = |response: &FunctionResponse| {
            calls
                .iter()
                .position(|call| call.id.is_some() && call.id == response.id)
                .unwrap_or(usize::MAX)
        };
        all.sort_by_key(place);
    }
    all
}
