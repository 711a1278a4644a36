//! How fast a replay feeds recorded frames.

/// How a replay paces the recorded inbound frames.
///
/// Every pacing is causal: the inbound frames that followed a recorded runtime frame (a
/// tool response, an instruction update) wait until the runtime has produced that frame
/// again (or `ReplayOptions::produce_timeout` passed: it is then reported missing), and a
/// recorded close waits for the frames before it. That is what makes a replay CLEAN at any
/// speed, journal included (decision 0025).
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub enum Pacing {
    /// As fast as the tree consumes the frames: the tape runs at most a small window of
    /// frames ahead of what every lane has finished. The default.
    #[default]
    AsFastAsConsumed,
    /// The same as [`Pacing::AsFastAsConsumed`], which is causal too now; the name callers
    /// used for a causal replay before every pacing was.
    Causal,
    /// At the recorded timing, scaled: `speed` 2.0 replays twice as fast (a frame still
    /// waits for the runtime frames recorded before it).
    Recorded {
        /// Speed factor (> 0).
        speed: f64,
    },
}

impl Pacing {
    /// Whether the tape waits for the tree to consume what it was given.
    pub fn waits_for_consumption(&self) -> bool {
        matches!(self, Pacing::AsFastAsConsumed | Pacing::Causal)
    }
}
