//! The control lane's handling of one event: the lifecycle callbacks, tool calls and
//! cancellations, interruptions, the turn pipeline's trigger, the `session:` signals, and
//! the state reactor after each event.

use reel_protocol::SessionEvent;
use serde_json::Value;

use super::{ControlData, ControlLaneState};
use crate::extract::ExtractionPoint;
use crate::reactor::CommitPoint;

impl ControlLaneState {
    pub(crate) async fn handle_event(
        &self,
        data: &mut ControlData,
        event: &SessionEvent,
        ts_ms: u64,
    ) {
        data.signals.observe(event, ts_ms);
        data.pending.observe(event);
        let callbacks = &self.callbacks;
        let mut force_flush = false;
        match event {
            SessionEvent::Connected { .. } => {
                force_flush = true;
                // First: a reconnect's setup carried the starting instruction.
                self.restore_instruction(data);
                // A governed flow sees the state as it is at entry (its first steering
                // joins the initial phase's).
                self.gate_refresh(data).await;
                self.enter_initial_phase(data).await;
                // A governed flow's steering for the first turn, before `connect` returns.
                self.gate_enter(data).await;
                self.peers.pending_context.entered();
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
                self.gate_cancelled(data, ids).await;
                self.answer_ready(data).await;
                if let Some(on_cancelled) = &callbacks.on_tool_cancelled {
                    self.within("on_tool_cancelled", on_cancelled.run(ids.clone()))
                        .await;
                }
            }
            SessionEvent::Interrupted => {
                // Calls of tools that cancel on a barge-in go first.
                self.cancel_on_barge_in(data).await;
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
        self.react_to_event(data, event, ts_ms).await;
        // The gate sees what the event changed; its status is published when it moved.
        self.gate_refresh(data).await;
        if matches!(event, SessionEvent::TurnComplete { .. }) {
            // The turn boundary's snapshot, once the turn's `session:` keys are written.
            self.save_snapshot(data);
        }
    }

    /// Tool writes were committed (a commit point): the `AfterToolCall` extractors run,
    /// then the reactor recomputes its derived values and sees the writes.
    pub(crate) async fn after_commit(&self, data: &mut ControlData) {
        self.extract(data, ExtractionPoint::AfterToolCall).await;
        let now_ms = crate::clock::Clock::now_ms(self.peers.clock().as_ref());
        self.recompute(data).await;
        self.react_to_commit(data, CommitPoint::ToolCommit, now_ms)
            .await;
    }

    pub(crate) async fn flush_signals(&self, data: &mut ControlData, ts_ms: u64, force: bool) {
        let writes = data.signals.flush(ts_ms, force);
        if writes.is_empty() {
            return;
        }
        if let Err(error) = self.state.set_many(writes).await {
            self.report_state_write("the session: keys".to_owned(), &error);
        }
    }

    pub(crate) async fn set_state(&self, key: &str, value: Value) {
        if let Err(error) = self.state.set(key, value).await {
            self.report_state_write(format!("`{key}`"), &error);
        }
    }
}
