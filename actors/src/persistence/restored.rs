//! [`RestoredSnapshot`]: the snapshot a starting session restores, and the session time it
//! restores it at.

use super::SessionSnapshot;

/// What a session restores when it starts from a saved snapshot: the snapshot, and the
/// session time its state is written at (the time every journal entry of the restore
/// carries).
///
/// Live, that time is the session clock's reading when the session starts — before it
/// connects, so it is not in the wire log. A recording keeps it beside the wire log (with
/// the snapshot, in the resume file), and a replay restores at the same time again
/// ([`LiveSessionBuilder::restored_at`](crate::LiveSessionBuilder::restored_at)): the
/// restore's journal entries then come out equal however long the recorded connect took.
#[derive(Debug, Clone, PartialEq)]
pub struct RestoredSnapshot {
    /// The snapshot restored.
    pub snapshot: SessionSnapshot,
    /// The session time the restored state is stamped with, in epoch milliseconds.
    pub restored_at_ms: u64,
}
