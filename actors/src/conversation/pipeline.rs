//! The control lane's side of conversation control: the steps of the turn pipeline that
//! steer the conversation (the repair nudge and escalation, the navigation block, the
//! modifiers, the phase instruction, the enter prompt) and the delivery of their one
//! context frame. The order is the one listed in [`crate::control_lane`].

use serde_json::json;

use super::navigation::{self, NAVIGATION_CONTEXT_KEY};
use super::repair::{REPAIR_ESCALATION_KEY, REPAIR_UNFULFILLED_KEY, RepairAction, nudge_text};
use super::{ContextBatch, ContextDelivery, modifiers};
use crate::control_lane::{ControlData, ControlLaneState};
use crate::phases::{Phase, PhaseMachine};

impl ControlLaneState {
    /// The phase machine, when it steers the conversation (see
    /// [`PhaseMachine::converses`]); `None` otherwise, and then none of these steps sends
    /// or writes anything.
    fn conversing(&self) -> Option<&PhaseMachine> {
        self.phases.as_deref().filter(|phases| phases.converses())
    }

    /// The navigation block of `phase`, if it carries one.
    fn navigation_of(
        &self,
        data: &ControlData,
        phases: &PhaseMachine,
        phase: &Phase,
    ) -> Option<String> {
        phases
            .navigates(phase)
            .then(|| navigation::render(phase, data.conversation.previous.as_ref(), &self.state))
    }

    /// The system instruction of phase `name` as the steering mode has it: under
    /// `InstructionUpdate` the phase's instruction with its modifiers and navigation block
    /// after it (each after a blank line), under `Hybrid` with its navigation block only,
    /// under `ContextInjection` none (the session's own instruction stays). Without
    /// conversation control, the phase's instruction as it is.
    pub(crate) fn steered_instruction(&self, data: &ControlData, name: &str) -> Option<String> {
        let phases = self.phases.as_deref()?;
        let phase = phases.phase(name)?;
        let own = phase.instruction_for(&self.state);
        if !phases.converses() {
            return own;
        }
        let steering = data.conversation.steering;
        if !steering.updates_instruction() {
            return None;
        }
        let mut parts: Vec<String> = Vec::new();
        let mods = (!steering.modifiers_as_context())
            .then(|| modifiers::render_all(phases.modifiers_of(phase), &self.state))
            .flatten();
        let nav = self.navigation_of(data, phases, phase);
        match own {
            Some(own) => parts.push(own),
            None if mods.is_some() || nav.is_some() => {
                parts.extend(data.base_instruction.clone());
            }
            None => return None,
        }
        parts.extend(mods);
        parts.extend(nav);
        Some(parts.join("\n\n"))
    }

    /// Whether the current phase's instruction may change from turn to turn (modifiers or
    /// navigation baked into it): the instruction step then re-sends it when it changed.
    pub(crate) fn instruction_bakes_state(&self, data: &ControlData) -> bool {
        let (Some(phases), Some(current)) = (self.conversing(), data.active_phase.as_deref())
        else {
            return false;
        };
        let Some(phase) = phases.phase(current) else {
            return false;
        };
        let steering = data.conversation.steering;
        steering.updates_instruction()
            && (phases.navigates(phase)
                || (!steering.modifiers_as_context()
                    && phases.modifiers_of(phase).next().is_some()))
    }

    /// Steps 7b–13 of the turn pipeline, after the transitions: repair (a nudge, or the
    /// escalation, which may move the conversation), the navigation block regenerated into
    /// `session:navigation_context`, then the context turns in the seed's order — the
    /// nudge, the modifiers (when they are context), the phase's instruction (under
    /// `ContextInjection`, on entry), the navigation block (under `ContextInjection`), the
    /// enter prompt (on entry). `transitioned` says whether a transition fired this turn;
    /// returns the batch and whether the conversation moved (a transition or the escalation).
    pub(crate) async fn conversation_step(
        &self,
        data: &mut ControlData,
        transitioned: bool,
    ) -> (ContextBatch, bool) {
        let mut batch = ContextBatch::default();
        let Some(phases) = self.conversing() else {
            return (batch, transitioned);
        };
        let Some(mut current) = data.active_phase.clone() else {
            return (batch, transitioned);
        };
        let mut moved = transitioned;
        // 7e: repair, for a phase entered before this turn.
        if !moved
            && let (Some(repair), Some(phase)) = (phases.repair(), phases.phase(&current))
            && !phase.needs_keys().is_empty()
        {
            let missing = navigation::still_needed(phase, &self.state);
            match data.conversation.needs.turn(missing, repair) {
                Some(RepairAction::Nudge { attempt, missing }) => {
                    batch.push(nudge_text(&missing));
                    if attempt == 1 {
                        batch.prompt();
                    }
                }
                Some(RepairAction::Escalate { missing }) => {
                    self.set_state(REPAIR_ESCALATION_KEY, json!(true)).await;
                    self.set_state(REPAIR_UNFULFILLED_KEY, json!(missing)).await;
                    if let Some(hook) = &repair.on_escalate {
                        self.within(
                            "repair on_escalate",
                            hook(self.state.clone(), self.writer.clone()),
                        )
                        .await;
                    }
                    if let Some(target) = repair.escalate_to.clone()
                        && target != current
                        && phases
                            .phase(&target)
                            .is_some_and(|p| p.may_enter(&self.state))
                    {
                        let reason = format!(
                            "repair: {} still needed after {} turns",
                            missing.join(", "),
                            repair.escalate_after
                        );
                        self.move_to(data, current.clone(), target.clone(), reason)
                            .await;
                        current = target;
                        moved = true;
                    }
                }
                None => {}
            }
        }
        let Some(phase) = phases.phase(&current) else {
            return (batch, moved);
        };
        // 7b: the navigation block, regenerated every turn.
        let nav = self.navigation_of(data, phases, phase);
        if let Some(nav) = &nav
            && self.state.get::<String>(NAVIGATION_CONTEXT_KEY).as_ref() != Some(nav)
        {
            self.set_state(NAVIGATION_CONTEXT_KEY, json!(nav)).await;
        }
        let steering = data.conversation.steering;
        // 7f: the modifiers as a context turn, when they changed (or on entry).
        if steering.modifiers_as_context()
            && let Some(text) = modifiers::render_all(phases.modifiers_of(phase), &self.state)
            && (moved || data.conversation.last_modifiers.as_ref() != Some(&text))
        {
            data.conversation.last_modifiers = Some(text.clone());
            batch.push(text);
        }
        if !steering.updates_instruction() {
            // 12: the phase's instruction as a context turn, on entry.
            if moved && let Some(instruction) = phase.instruction_for(&self.state) {
                batch.push(instruction);
            }
            if let Some(nav) = nav
                && (moved || data.conversation.last_navigation.as_ref() != Some(&nav))
            {
                data.conversation.last_navigation = Some(nav.clone());
                batch.push(nav);
            }
        }
        // 13: the enter prompt, on entry.
        if moved {
            self.enter_prompt(data, phases, phase, &mut batch);
        }
        (batch, moved)
    }

    /// The initial phase was entered (first connect): its context and instruction as a
    /// transition into it would send them.
    pub(crate) async fn initial_conversation(&self, data: &mut ControlData) {
        let Some(phases) = self.conversing() else {
            return;
        };
        let Some(current) = data.active_phase.clone() else {
            return;
        };
        if data.conversation.steering.updates_instruction()
            && let Some(text) = self.steered_instruction(data, &current)
        {
            self.send_instruction_if_changed(data, text);
        }
        let Some(phase) = phases.phase(&current) else {
            return;
        };
        let mut batch = ContextBatch::default();
        let steering = data.conversation.steering;
        let nav = self.navigation_of(data, phases, phase);
        if let Some(nav) = &nav {
            self.set_state(NAVIGATION_CONTEXT_KEY, json!(nav)).await;
        }
        if steering.modifiers_as_context()
            && let Some(text) = modifiers::render_all(phases.modifiers_of(phase), &self.state)
        {
            data.conversation.last_modifiers = Some(text.clone());
            batch.push(text);
        }
        if !steering.updates_instruction() {
            if let Some(instruction) = phase.instruction_for(&self.state) {
                batch.push(instruction);
            }
            if let Some(nav) = nav {
                data.conversation.last_navigation = Some(nav.clone());
                batch.push(nav);
            }
        }
        self.enter_prompt(data, phases, phase, &mut batch);
        self.gate_join_entry(data, &mut batch).await;
        self.deliver_context(data, batch);
    }

    /// Adds `phase`'s enter prompt, and the prompt flag when entering it prompts.
    fn enter_prompt(
        &self,
        data: &ControlData,
        phases: &PhaseMachine,
        phase: &Phase,
        batch: &mut ContextBatch,
    ) {
        if let Some(text) = phase
            .enter_prompt_text()
            .and_then(|prompt| prompt.render(&self.state, data.transcript.turns()))
        {
            batch.push(text);
        }
        if phases.prompts_on_enter(phase) {
            batch.prompt();
        }
    }

    /// Step 14: the boundary's one context frame — at once (`Immediate`, or whenever the
    /// model is asked to answer, with what was queued before it), else queued for the
    /// application's next send (`Deferred`). Nothing when the batch is empty.
    pub(crate) fn deliver_context(&self, data: &ControlData, batch: ContextBatch) {
        if batch.is_empty() {
            return;
        }
        let pending = &self.peers.pending_context;
        let prompt = batch.prompts();
        let (turns, _) = batch.into_parts();
        match data.conversation.delivery {
            ContextDelivery::Deferred if !prompt => pending.queue(turns),
            ContextDelivery::Immediate | ContextDelivery::Deferred => {
                if !pending.send_with(&self.peers.transport, turns, prompt) {
                    tracing::warn!("the session ended before the context could be sent");
                }
            }
        }
    }
}
