//! How fast a replay feeds recorded frames.

/// How a replay paces the recorded inbound frames.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub enum Pacing {
    /// As fast as the tree consumes the frames: the tape runs at most a small window of
    /// frames ahead of what every lane has finished. The default.
    #[default]
    AsFastAsConsumed,
    /// As fast as consumed, and causal: the inbound frames that followed a recorded runtime
    /// frame (a tool response, an instruction update) wait until the runtime has produced
    /// that frame again. This is what makes a replay with tools exact, journal included.
    Causal,
    /// At the recorded timing, scaled: `speed` 2.0 replays twice as fast.
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
