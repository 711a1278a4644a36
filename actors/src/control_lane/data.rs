//! [`ControlData`]: what the control lane keeps across its restarts.

use std::collections::VecDeque;
use std::time::Duration;

use super::outbound::Resend;
use super::signals::SessionSignals;
use super::tool_batches::ToolBatches;
use super::tool_input::ToolInputData;
use crate::conversation::ConversationData;
use crate::persistence::SessionSnapshot;
use crate::reactor::{ChangeCursor, StateReactor};
use crate::state::State;
use crate::transcript::{PendingTurn, TranscriptBuffer};

/// What survives a restart of the control lane.
#[derive(Debug)]
pub struct ControlData {
    pub(crate) batches: ToolBatches,
    pub(crate) signals: SessionSignals,
    pub(crate) active_phase: Option<String>,
    pub(crate) turn_count: u64,
    /// The session's reactor (watchers, computed values, …), if it has one: held here so a
    /// restarted lane calls the same one, with the progress it kept.
    pub(crate) reactor: Option<Box<dyn StateReactor>>,
    /// Where the last commit point left the journal.
    pub(crate) changes: ChangeCursor,
    /// The session's tool gate (a governed flow), if it has one: held here so a restarted
    /// lane asks the same one, with what it counted.
    pub(crate) gate: Option<Box<dyn crate::govern::ToolGate>>,
    /// The governance seam's own progress: what the gate has seen of the journal, its
    /// last steering text, its unmet turns.
    pub(crate) governing: crate::control_lane::governing::GateProgress,
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
    /// The system instruction last on the wire, whoever sent it (the runtime or the
    /// application), as the router reports them in the wire's order; `None` until one
    /// goes out after the setup.
    pub(crate) wire_instruction: Option<String>,
    /// The instructions this lane sent that have not been reported on the wire yet, oldest
    /// first, each marked when it is a reconnect's re-send.
    pub(crate) instructions_in_flight: VecDeque<(String, Resend)>,
    /// The session's own instruction (the config's, before any phase's): what an
    /// amendment is appended to in a phase that has no instruction.
    pub(crate) base_instruction: Option<String>,
    /// The user's input for the running tools that consume it.
    pub(crate) tool_input: ToolInputData,
    /// Conversation control: steering, delivery, repair counts, the previous phase.
    pub(crate) conversation: ConversationData,
}

impl ControlData {
    /// Fresh data for a session expected to last `budget` (for `session:remaining_budget_ms`),
    /// whose reactor sees the changes made to `state` from now on.
    pub fn new(budget: Duration, state: &State) -> Self {
        ControlData {
            batches: ToolBatches::default(),
            signals: SessionSignals::new(u64::try_from(budget.as_millis()).unwrap_or(u64::MAX)),
            active_phase: None,
            turn_count: 0,
            reactor: None,
            changes: ChangeCursor::new(state),
            gate: None,
            governing: crate::control_lane::governing::GateProgress::new(state),
            transcript: TranscriptBuffer::new(),
            pending: PendingTurn::default(),
            resume_handle: None,
            resumed: None,
            last_instruction: None,
            setup_instruction: None,
            wire_instruction: None,
            instructions_in_flight: VecDeque::new(),
            base_instruction: None,
            tool_input: ToolInputData::default(),
            conversation: ConversationData::default(),
        }
    }

    /// The number of the turn in progress (1-based).
    pub(crate) fn turn_number(&self) -> u32 {
        u32::try_from(self.turn_count.saturating_add(1)).unwrap_or(u32::MAX)
    }

    /// Steers the conversation with `steering` and delivers its context with `delivery`.
    pub fn converse(
        &mut self,
        steering: crate::conversation::SteeringMode,
        delivery: crate::conversation::ContextDelivery,
    ) {
        self.conversation = ConversationData::new(steering, delivery);
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
