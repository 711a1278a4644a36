//! The turn pipeline and the conversation phases: what the control lane does at each
//! `turn_complete` (the steps are listed in the module documentation of
//! [`crate::control_lane`]), entering the initial phase, and evaluating transitions.

use std::sync::Arc;

use serde_json::json;

use super::{ACTIVE_PHASE_KEY, ControlData, ControlLaneState, TURN_COUNT_KEY};
use crate::events::{Lane, LiveEvent};
use crate::extract::ExtractionPoint;
use crate::reactor::CommitPoint;

impl ControlLaneState {
    pub(crate) async fn enter_initial_phase(&self, data: &mut ControlData) {
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
        self.initial_conversation(data).await;
    }

    /// The turn pipeline (at event time `ts_ms`): see the module documentation for the
    /// steps, and [`crate::reactor`] for where the reactor's come.
    pub(crate) async fn turn_complete(&self, data: &mut ControlData, ts_ms: u64) {
        // The turn's `session:` keys (its usage among them) first: the pipeline and the
        // turn's callbacks see the state complete.
        self.flush_signals(data, ts_ms, true).await;
        if let Err(error) = self.state.clear_prefix("turn:").await {
            self.report_state_write("clearing the turn: keys".to_owned(), &error);
        }
        let turn = data.pending.finish(data.turn_number(), ts_ms);
        data.transcript.push(turn);
        self.transcript_view
            .send_replace(Arc::from(data.transcript.turns()));
        self.extract(data, ExtractionPoint::TurnComplete).await;
        self.recompute(data).await;
        let transitioned = self.evaluate_phases(data).await;
        if transitioned {
            self.extract(data, ExtractionPoint::PhaseChange).await;
        }
        let (mut context, transitioned) = self.conversation_step(data, transitioned).await;
        // A governed flow's repair and steering join the boundary's one context frame.
        self.gate_turn(data, &mut context).await;
        self.react_to_commit(data, CommitPoint::TurnComplete, ts_ms)
            .await;
        self.instruction_step(data, transitioned);
        self.deliver_context(data, context);
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
    pub(crate) async fn evaluate_phases(&self, data: &mut ControlData) -> bool {
        let (Some(phases), Some(current)) = (&self.phases, data.active_phase.clone()) else {
            return false;
        };
        let Some(transition) = phases.evaluate(&current, &self.state) else {
            return false;
        };
        let target = transition.target.clone();
        let reason = transition.description.clone();
        self.move_to(data, current, target, reason).await;
        true
    }

    /// Moves the conversation from phase `current` to `target` (for `reason`): the old
    /// phase's exit hook, the new phase recorded, its instruction sent (as the steering
    /// mode has it), its enter hook, then the transition event.
    pub(crate) async fn move_to(
        &self,
        data: &mut ControlData,
        current: String,
        target: String,
        reason: String,
    ) {
        let Some(phases) = &self.phases else {
            return;
        };
        if let Some(hook) = phases.phase(&current).and_then(|p| p.exit_hook()) {
            self.within(
                "phase exit hook",
                hook(self.state.clone(), self.writer.clone()),
            )
            .await;
        }
        data.active_phase = Some(target.clone());
        self.set_state(ACTIVE_PHASE_KEY, json!(target)).await;
        data.conversation.moved(current.clone(), data.turn_count);
        if let Some(phase) = phases.phase(&target) {
            // With a template, the instruction step decides what the new phase says.
            if self.interceptors.instruction_template.is_none()
                && let Some(instruction) = self.steered_instruction(data, &target)
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
    }
}
