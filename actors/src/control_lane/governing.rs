//! The control lane's calls into the session's [`ToolGate`](crate::govern::ToolGate): the
//! state it has not seen yet, the calls to admit, the responses and cancellations, what it
//! publishes, and its turn-boundary steering and repair (see [`crate::govern`] for when).

use reel_protocol::{FunctionCall, FunctionResponse};
use serde_json::{Value, json};

use crate::control_lane::{ControlData, ControlLaneState};
use crate::conversation::repair::{
    REPAIR_ESCALATION_KEY, REPAIR_UNFULFILLED_KEY, RepairAction, nudge_text,
};
use crate::conversation::{ContextBatch, NeedsFulfillment, RepairConfig};
use crate::govern::GateVerdict;
use crate::state::State;

/// What the lane keeps of its work with the gate (in [`ControlData`], so across restarts).
#[derive(Debug, Clone)]
pub(crate) struct GateProgress {
    /// The sequence number of the last mutation handed to the gate.
    cursor: u64,
    /// The steering text last sent.
    last_steering: Option<String>,
    /// How long the gate's requirements have gone unmet.
    needs: NeedsFulfillment,
    /// Whether the first connection's steering went out (a reconnect does not send it
    /// again: the conversation goes on where it was).
    entered: bool,
}

impl GateProgress {
    /// The gate sees the mutations of `state` made from now on.
    pub(crate) fn new(state: &State) -> Self {
        GateProgress {
            cursor: state.mutation_cursor(),
            last_steering: None,
            needs: NeedsFulfillment::default(),
            entered: false,
        }
    }
}

impl ControlLaneState {
    /// Hands the gate the mutations committed since it last saw the journal.
    pub(crate) fn gate_sync(&self, data: &mut ControlData) {
        let Some(gate) = data.gate.as_mut() else {
            return;
        };
        let cursor = data.governing.cursor;
        let mutations = self.state.mutations_since(cursor);
        match mutations.first() {
            // The ring still reaches back: every mutation, in order.
            Some(first) if first.sequence <= cursor.saturating_add(1) => gate.observe(&mutations),
            Some(_) => {
                tracing::warn!("the journal's ring no longer reaches back: the gate resyncs");
                gate.resync(&self.state);
            }
            None => {}
        }
        if let Some(last) = mutations.last() {
            data.governing.cursor = last.sequence;
        }
    }

    /// Writes what the gate publishes (what changed since it was last asked).
    pub(crate) async fn gate_publish(&self, data: &mut ControlData) {
        let Some(gate) = data.gate.as_mut() else {
            return;
        };
        for (key, value) in gate.published() {
            self.set_state(&key, value).await;
        }
    }

    /// The gate's verdict on `call`, carried by frame `seq`: `None` to run it, the reason
    /// to refuse it otherwise. Without a gate every call runs.
    pub(crate) fn gate_call(
        &self,
        data: &mut ControlData,
        seq: u64,
        call: &FunctionCall,
    ) -> Option<String> {
        data.gate.as_ref()?;
        self.gate_sync(data);
        let gate = data.gate.as_mut()?;
        let id = call.id.as_deref().unwrap_or_default();
        let name = call.name.as_deref().unwrap_or_default();
        match gate.call(seq, id, name) {
            GateVerdict::Admit => None,
            GateVerdict::Deny { reason } => Some(reason),
        }
    }

    /// The responses going out, as they are on the wire (the lane publishes what they
    /// changed once they are sent).
    pub(crate) async fn gate_responses(
        &self,
        data: &mut ControlData,
        responses: &[FunctionResponse],
    ) {
        if data.gate.is_none() {
            return;
        }
        self.gate_sync(data);
        if let Some(gate) = data.gate.as_mut() {
            for response in responses {
                // A protocol value always serializes; `Null` would be judged as nothing.
                let json = serde_json::to_value(response).unwrap_or(Value::Null);
                gate.returned(&json);
            }
        }
    }

    /// The model cancelled the calls `ids`.
    pub(crate) async fn gate_cancelled(&self, data: &mut ControlData, ids: &[String]) {
        if data.gate.is_none() {
            return;
        }
        self.gate_sync(data);
        if let Some(gate) = data.gate.as_mut() {
            for id in ids {
                gate.cancelled(id);
            }
        }
        self.gate_publish(data).await;
    }

    /// Brings the gate up to date with the state and publishes what changed (after the
    /// events that change the state without a tool: a turn's end, a phase change).
    pub(crate) async fn gate_refresh(&self, data: &mut ControlData) {
        if data.gate.is_none() {
            return;
        }
        self.gate_sync(data);
        self.gate_publish(data).await;
    }

    /// The first connection is up: the gate's status is published and its steering for
    /// the first turn goes out as the steering mode delivers it (after the instruction, or
    /// as a context turn).
    pub(crate) async fn gate_enter(&self, data: &mut ControlData) {
        if data.gate.is_none() || data.governing.entered {
            return;
        }
        data.governing.entered = true;
        self.gate_refresh(data).await;
        let Some(text) = data.gate.as_ref().and_then(|gate| gate.steering()) else {
            return;
        };
        if data.conversation.steering.modifiers_as_context() {
            data.governing.last_steering = Some(text.clone());
            let mut batch = ContextBatch::default();
            batch.push(text);
            self.deliver_context(data, batch);
        } else {
            self.instruction_step(data, false);
        }
    }

    /// Conversation control's entry into the initial phase (first connect) takes the
    /// flow's first steering into its one context frame (last), or — under
    /// `InstructionUpdate` — its instruction carries it; [`Self::gate_enter`] then has
    /// nothing left to send.
    pub(crate) async fn gate_join_entry(&self, data: &mut ControlData, batch: &mut ContextBatch) {
        if data.gate.is_none() || data.governing.entered {
            return;
        }
        data.governing.entered = true;
        if data.conversation.steering.modifiers_as_context()
            && let Some(text) = data.gate.as_ref().and_then(|gate| gate.steering())
        {
            data.governing.last_steering = Some(text.clone());
            batch.push(text);
        }
    }

    /// The turn boundary's governance: the unmet requirements counted by the repair
    /// machinery (a nudge added to `batch`, or the escalation latched), then — when the
    /// steering mode sends per-turn context as context turns (`ContextInjection`,
    /// `Hybrid`) — the steering text, added when it changed since it was last sent. Under
    /// `InstructionUpdate` the instruction step bakes it into the system instruction.
    pub(crate) async fn gate_turn(&self, data: &mut ControlData, batch: &mut ContextBatch) {
        if data.gate.is_none() {
            return;
        }
        self.gate_refresh(data).await;
        let Some(gate) = data.gate.as_ref() else {
            return;
        };
        let unmet = gate.unmet();
        let steering = gate.steering();
        let default_repair = RepairConfig::default();
        let repair = self
            .phases
            .as_deref()
            .and_then(|phases| phases.repair())
            .unwrap_or(&default_repair);
        match data.governing.needs.turn(unmet, repair) {
            Some(RepairAction::Nudge { attempt, missing }) => {
                batch.push(nudge_text(&missing));
                if attempt == 1 {
                    batch.prompt();
                }
            }
            Some(RepairAction::Escalate { missing }) => {
                self.set_state(REPAIR_ESCALATION_KEY, json!(true)).await;
                self.set_state(REPAIR_UNFULFILLED_KEY, json!(missing)).await;
            }
            None => {}
        }
        // Under `InstructionUpdate` the text follows the instruction (the instruction
        // step); else it is a context turn, sent when it changed.
        if data.conversation.steering.modifiers_as_context()
            && let Some(text) = steering
            && data.governing.last_steering.as_ref() != Some(&text)
        {
            data.governing.last_steering = Some(text.clone());
            batch.push(text);
        }
    }
}
