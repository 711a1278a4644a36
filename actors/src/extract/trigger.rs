//! When extractors run: [`ExtractionTrigger`] (an extractor's choice) and
//! [`ExtractionPoint`] (where the control lane is).

/// When an extractor runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ExtractionTrigger {
    /// At every turn complete.
    #[default]
    EveryTurn,
    /// At the turn complete of every `n`th turn (turns `n`, `2n`, …; `0` counts as `1`).
    Interval(u32),
    /// After tool responses were sent and their state writes committed.
    AfterToolCall,
    /// After a phase transition at turn complete.
    OnPhaseChange,
}

/// Where in the session the control lane runs extractors.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ExtractionPoint {
    /// Turn complete, once the transcript turn is finalized.
    TurnComplete,
    /// Tool responses were sent.
    AfterToolCall,
    /// A phase transition happened at turn complete.
    PhaseChange,
}

impl ExtractionTrigger {
    /// Whether an extractor with this trigger runs at `point`, in turn `turn_number`
    /// (1-based: the turn being completed).
    ///
    /// ```
    /// use reel_actors::extract::{ExtractionPoint, ExtractionTrigger};
    ///
    /// let every_other = ExtractionTrigger::Interval(2);
    /// let turns: Vec<u32> = (1..=5)
    ///     .filter(|&turn| every_other.fires_at(ExtractionPoint::TurnComplete, turn))
    ///     .collect();
    /// assert_eq!(turns, [2, 4]);
    /// assert!(!every_other.fires_at(ExtractionPoint::AfterToolCall, 2));
    /// ```
    pub fn fires_at(self, point: ExtractionPoint, turn_number: u32) -> bool {
        match (self, point) {
            (ExtractionTrigger::EveryTurn, ExtractionPoint::TurnComplete) => true,
            (ExtractionTrigger::Interval(n), ExtractionPoint::TurnComplete) => {
                turn_number.is_multiple_of(n.max(1))
            }
            (ExtractionTrigger::AfterToolCall, ExtractionPoint::AfterToolCall) => true,
            (ExtractionTrigger::OnPhaseChange, ExtractionPoint::PhaseChange) => true,
            _ => false,
        }
    }
}
