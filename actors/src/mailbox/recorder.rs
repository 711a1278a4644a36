//! The recorder's own message besides its doorbell.

/// The recorder's timer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RecorderTick {
    /// Time to flush.
    Flush,
}
