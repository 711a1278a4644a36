//! What the control lane sends on its own: tool responses (through
//! `before_tool_response`) and system instruction updates (phases, `instruction_template`,
//! `instruction_amendment`, and the current instruction again after a reconnect). See
//! [`crate::callbacks::Interceptors`] for the rules.

use reel_protocol::FunctionResponse;

use crate::control_lane::{ControlData, ControlLaneState};

impl ControlLaneState {
    /// Sends one frame of tool responses, after `before_tool_response` has had its say; a
    /// batch that is (or becomes) empty sends nothing. With `record`, what went out joins
    /// the turn in progress (running acknowledgements do not).
    pub(crate) async fn send_tool_responses(
        &self,
        data: &mut ControlData,
        responses: Vec<FunctionResponse>,
        record: bool,
    ) {
        if responses.is_empty() {
            return;
        }
        let responses = match &self.interceptors.before_tool_response {
            // Forced blocking: what it returns is what is sent.
            // Past its time limit the responses go out as they were.
            Some(before) => {
                match self
                    .within(
                        "before_tool_response",
                        before(responses.clone(), self.state.clone()),
                    )
                    .await
                {
                    Some(changed) => changed,
                    None => responses,
                }
            }
            None => responses,
        };
        if responses.is_empty() {
            return;
        }
        if record {
            data.pending.record_responses(&responses);
        }
        // The gate is told what goes out, as it goes out (before it is handed on).
        self.gate_responses(data, &responses).await;
        if self.writer.send_tool_response(responses).is_err() {
            tracing::warn!("the session ended before the tool responses could be sent");
        }
        self.gate_publish(data).await;
    }

    /// The turn pipeline's instruction step: the template's text, else (after a
    /// transition, with a template set) the new phase's instruction, else (on a turn
    /// without a transition) the amended phase instruction; sent if it differs from the
    /// instruction last sent.
    pub(crate) fn instruction_step(&self, data: &mut ControlData, transitioned: bool) {
        let hooks = &self.interceptors;
        let templated = hooks
            .instruction_template
            .as_ref()
            .and_then(|template| template(&self.state));
        let composed = match templated {
            Some(text) => Some(text),
            // The transition left the phase's instruction to this step.
            None if transitioned && hooks.instruction_template.is_some() => {
                self.phase_instruction(data)
            }
            None if transitioned => None,
            None => match &hooks.instruction_amendment {
                Some(amendment) => {
                    let base = self
                        .phase_instruction(data)
                        .or_else(|| data.base_instruction.clone());
                    amended(base, amendment(&self.state))
                }
                // Modifiers or navigation baked into the phase's instruction: re-sent when
                // the state changed them.
                None if self.instruction_bakes_state(data) => self.phase_instruction(data),
                None => None,
            },
        };
        // A governed flow's steering, under `InstructionUpdate`, follows the instruction
        // (`send_instruction_if_changed` appends it): the instruction is re-sent when the
        // active steps' text changed, and without it when no step has any.
        let composed = match &data.gate {
            Some(_) if !data.conversation.steering.modifiers_as_context() => composed
                .or_else(|| self.phase_instruction(data))
                .or_else(|| data.base_instruction.clone()),
            _ => composed,
        };
        if let Some(text) = composed {
            self.send_instruction_if_changed(data, text);
        }
    }

    /// The current phase's instruction for the current state, as the steering mode has it
    /// (see `steered_instruction`), if it has one.
    fn phase_instruction(&self, data: &ControlData) -> Option<String> {
        let current = data.active_phase.as_deref()?;
        self.steered_instruction(data, current)
    }

    /// Sends `text` as the system instruction unless it is the one last sent (a governed
    /// flow's steering after it, see [`Self::send_instruction`]).
    pub(crate) fn send_instruction_if_changed(&self, data: &mut ControlData, text: String) {
        let text = self.with_flow_steering(data, text);
        if data.last_instruction.as_deref() != Some(text.as_str()) {
            self.send_final_instruction(data, text);
        }
    }

    /// `text` with a governed flow's steering after it (after a blank line), under
    /// `SteeringMode::InstructionUpdate`: every instruction the runtime sends carries the
    /// active steps' postures and ground lines (decision 0055).
    fn with_flow_steering(&self, data: &ControlData, text: String) -> String {
        match &data.gate {
            Some(gate) if !data.conversation.steering.modifiers_as_context() => {
                match gate.steering() {
                    Some(steering) => format!("{text}\n\n{steering}"),
                    None => text,
                }
            }
            _ => text,
        }
    }

    /// A connection is live. Its setup carried the session's starting instruction (the
    /// transport builds every setup from the config); if another went out since — the
    /// runtime's (a phase's, the template's, an amended one) or the application's
    /// (`LiveHandle::update_instruction`), whichever was last on the wire — the new
    /// connection gets that one again, so the model does not run on a stale instruction
    /// after a reconnect (decisions 0007 and 0051). On the first connection the two are the
    /// same, and nothing is sent. Nor is anything when an instruction of this lane's own is
    /// still on its way: it goes out on this connection, after its setup, and is the latest.
    pub(crate) fn restore_instruction(&self, data: &mut ControlData) {
        if !data.instructions_in_flight.is_empty() {
            return;
        }
        let latest = data
            .wire_instruction
            .as_ref()
            .or(data.setup_instruction.as_ref());
        if latest != data.setup_instruction.as_ref()
            && let Some(latest) = latest.cloned()
        {
            self.resend_instruction(data, latest);
        }
    }

    /// `text` went out on the wire as the system instruction (the router reports every
    /// one, in the wire's order). If it is the oldest of this lane's own still on its way,
    /// that one has gone out. If it is someone else's (the application's, a callback's) and
    /// a reconnect's re-send of this lane is still to go out after it, the re-send would
    /// bury it under an older instruction — it was held while the connection was down and
    /// went out with the setup — so it is sent again after the re-send.
    pub(crate) fn instruction_sent(&self, data: &mut ControlData, text: String) {
        let own = data
            .instructions_in_flight
            .front()
            .is_some_and(|(sent, _)| *sent == text);
        if own {
            data.instructions_in_flight.pop_front();
        } else if data
            .instructions_in_flight
            .iter()
            .any(|(_, kind)| *kind == Resend::AfterReconnect)
        {
            self.resend_instruction(data, text.clone());
        }
        data.wire_instruction = Some(text);
    }

    /// Sends `text` as the system instruction and remembers it.
    pub(crate) fn send_instruction(&self, data: &mut ControlData, text: String) {
        let text = self.with_flow_steering(data, text);
        self.send_final_instruction(data, text);
    }

    /// Sends `text` as it is and notes it as the runtime's last instruction.
    fn send_final_instruction(&self, data: &mut ControlData, text: String) {
        self.send_instruction_as(data, text.clone(), Resend::No);
        data.last_instruction = Some(text);
    }

    /// Sends `text`, the latest instruction on the wire, again after a reconnect. What the
    /// runtime itself last decided (`last_instruction`) does not change.
    fn resend_instruction(&self, data: &mut ControlData, text: String) {
        self.send_instruction_as(data, text, Resend::AfterReconnect);
    }

    fn send_instruction_as(&self, data: &mut ControlData, text: String, kind: Resend) {
        if self.writer.update_instruction(text.clone()).is_err() {
            tracing::warn!("the session ended before the instruction update could be sent");
            return;
        }
        data.instructions_in_flight.push_back((text, kind));
    }
}

/// Whether an instruction the control lane sends is a reconnect's re-send of the latest.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Resend {
    /// A new instruction (a phase's, the template's, an amended one).
    No,
    /// The latest instruction on the wire, sent again after a reconnect.
    AfterReconnect,
}

/// `base` and `amendment` separated by a blank line (either alone if the other is
/// missing); `None` if both are.
fn amended(base: Option<String>, amendment: Option<String>) -> Option<String> {
    match (base, amendment) {
        (Some(base), Some(amendment)) => Some(format!("{base}\n\n{amendment}")),
        (base, amendment) => base.or(amendment),
    }
}

#[cfg(test)]
mod tests {
    use super::amended;

    #[test]
    fn an_amendment_follows_its_base_after_a_blank_line() {
        let s = |text: &str| Some(text.to_owned());
        assert_eq!(
            amended(s("Be brief."), s("The user is Ada.")).as_deref(),
            Some("Be brief.\n\nThe user is Ada.")
        );
        assert_eq!(
            amended(None, s("The user is Ada.")).as_deref(),
            Some("The user is Ada.")
        );
        assert_eq!(amended(s("Be brief."), None).as_deref(), Some("Be brief."));
        assert_eq!(amended(None, None), None);
    }
}
