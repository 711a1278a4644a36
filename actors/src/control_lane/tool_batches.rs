//! Tool calls in flight, grouped by the `toolCall` frame that asked for them.
//!
//! Standard (blocking) calls of one frame are answered together, in call order, once every
//! one has finished or been cancelled: one `toolResponse` frame, whose bytes do not depend on
//! which tool finished first. Each call's state writes sit in its own delta view and are
//! committed in call order when the response goes out (rolled back if the call failed), so
//! the journal order does not depend on tool timing either. Background calls are answered
//! one by one as they finish.

use std::collections::BTreeMap;

use reel_protocol::FunctionCall;
use tokio_util::sync::CancellationToken;

use crate::state::DeltaState;
use crate::tools::{ToolExecutionMode, ToolOutcome};

/// Where one call is.
#[derive(Debug)]
pub enum CallStatus {
    /// Running; cancel it with the token.
    Running(CancellationToken),
    /// Finished, not yet answered.
    Done(ToolOutcome),
    /// Cancelled by the server: never answered.
    Cancelled,
    /// Answered (its response went out).
    Answered,
}

/// One call of a batch.
#[derive(Debug)]
pub struct CallSlot {
    /// The call as the model sent it.
    pub call: FunctionCall,
    /// How the tool runs.
    pub mode: ToolExecutionMode,
    /// Its state writes, committed when it is answered.
    pub delta: DeltaState,
    /// Where it is.
    pub status: CallStatus,
}

impl CallSlot {
    /// The call id ("" if the model sent none).
    pub fn id(&self) -> &str {
        self.call.id.as_deref().unwrap_or_default()
    }

    /// The tool name.
    pub fn name(&self) -> &str {
        self.call.name.as_deref().unwrap_or_default()
    }
}

/// The calls of one `toolCall` frame, in the order the model listed them.
#[derive(Debug, Default)]
pub struct ToolBatch {
    /// The calls.
    pub calls: Vec<CallSlot>,
}

impl ToolBatch {
    /// Whether every standard call has finished or been cancelled, and at least one
    /// finished call still waits to be answered.
    pub fn standard_calls_ready(&self) -> bool {
        let standard = || self.calls.iter().filter(|c| !c.mode.is_background());
        standard().all(|c| !matches!(c.status, CallStatus::Running(_)))
            && standard().any(|c| matches!(c.status, CallStatus::Done(_)))
    }

    /// Whether nothing is left to do.
    pub fn is_settled(&self) -> bool {
        self.calls
            .iter()
            .all(|c| matches!(c.status, CallStatus::Answered | CallStatus::Cancelled))
    }
}

/// Every batch in flight, by batch number.
#[derive(Debug, Default)]
pub struct ToolBatches {
    batches: BTreeMap<u64, ToolBatch>,
    next: u64,
}

impl ToolBatches {
    /// Adds a batch; returns its number.
    pub fn insert(&mut self, batch: ToolBatch) -> u64 {
        self.next += 1;
        self.batches.insert(self.next, batch);
        self.next
    }

    /// A batch by number.
    pub fn get_mut(&mut self, id: u64) -> Option<&mut ToolBatch> {
        self.batches.get_mut(&id)
    }

    /// A batch by number.
    pub fn get(&self, id: u64) -> Option<&ToolBatch> {
        self.batches.get(&id)
    }

    /// Call `index` of batch `id`.
    pub fn slot_mut(&mut self, id: u64, index: usize) -> Option<&mut CallSlot> {
        self.batches.get_mut(&id)?.calls.get_mut(index)
    }

    /// The numbers of the batches in flight, oldest first.
    pub fn ids(&self) -> impl Iterator<Item = u64> + '_ {
        self.batches.keys().copied()
    }

    /// Forgets a batch once it is settled.
    pub fn remove_if_settled(&mut self, id: u64) {
        if self.batches.get(&id).is_some_and(ToolBatch::is_settled) {
            self.batches.remove(&id);
        }
    }

    /// Every running call whose id is in `ids`, as (batch, index).
    pub fn running_with_ids(&self, ids: &[String]) -> Vec<(u64, usize)> {
        let mut found = Vec::new();
        for (batch_id, batch) in &self.batches {
            for (index, slot) in batch.calls.iter().enumerate() {
                if matches!(slot.status, CallStatus::Running(_))
                    && ids.iter().any(|id| id == slot.id())
                {
                    found.push((*batch_id, index));
                }
            }
        }
        found
    }

    /// Whether a call with this id is in flight (running, finished or answered).
    pub fn has_call(&self, id: &str) -> bool {
        self.batches
            .values()
            .any(|batch| batch.calls.iter().any(|slot| slot.id() == id))
    }

    /// Every running call, as (batch, index).
    pub fn running(&self) -> Vec<(u64, usize)> {
        let mut found = Vec::new();
        for (batch_id, batch) in &self.batches {
            for (index, slot) in batch.calls.iter().enumerate() {
                if matches!(slot.status, CallStatus::Running(_)) {
                    found.push((*batch_id, index));
                }
            }
        }
        found
    }
}
