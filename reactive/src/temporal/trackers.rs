//! The progress of temporal patterns: pure state machines over event time, kept in the
//! control lane's data so that a restart of the lane forgets none of it.

use std::collections::{BTreeMap, VecDeque};

/// A condition that must hold for a duration: when it started holding, and whether it has
/// fired since.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Sustained {
    since_ms: Option<u64>,
    fired: bool,
}

impl Sustained {
    /// Takes in whether the condition holds at `now_ms`; `true` when the pattern fires:
    /// the condition has held at every check from one at least `duration_ms` ago until now,
    /// and the pattern has not fired since it started holding. A check where it does not
    /// hold resets it.
    pub(crate) fn check(&mut self, holds: bool, now_ms: u64, duration_ms: u64) -> bool {
        if !holds {
            *self = Sustained::default();
            return false;
        }
        let since = *self.since_ms.get_or_insert(now_ms);
        if self.fired || now_ms.saturating_sub(since) < duration_ms {
            return false;
        }
        self.fired = true;
        true
    }
}

/// The times of the latest matching events, for a sliding window.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct RateWindow {
    times_ms: VecDeque<u64>,
}

impl RateWindow {
    /// Takes in a matching event at `now_ms`; `true` when it is the `count`th within
    /// `window_ms` (the first and the last at most `window_ms` apart). Firing empties the
    /// window: the next firing needs `count` new events.
    pub(crate) fn observe(&mut self, now_ms: u64, count: u32, window_ms: u64) -> bool {
        self.times_ms.push_back(now_ms);
        while self
            .times_ms
            .front()
            .is_some_and(|&t| now_ms.saturating_sub(t) > window_ms)
        {
            self.times_ms.pop_front();
        }
        if self.times_ms.len() < usize::try_from(count).unwrap_or(usize::MAX) {
            return false;
        }
        self.times_ms.clear();
        true
    }
}

/// How many turn completes in a row a condition held at.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct TurnStreak {
    turns: u32,
}

impl TurnStreak {
    /// Takes in whether the condition holds at this turn complete; `true` when it makes
    /// `n` in a row. The streak goes on counting (so it fires once per streak) until the
    /// condition does not hold, which resets it.
    pub(crate) fn observe(&mut self, holds: bool, n: u32) -> bool {
        if !holds {
            self.turns = 0;
            return false;
        }
        self.turns = self.turns.saturating_add(1);
        self.turns == n
    }
}

/// The progress of every temporal pattern of a session, by pattern name.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct TemporalData {
    pub(crate) sustained: BTreeMap<String, Sustained>,
    pub(crate) rates: BTreeMap<String, RateWindow>,
    pub(crate) streaks: BTreeMap<String, TurnStreak>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sustained_fires_once_after_the_duration_and_resets_when_false() {
        let mut s = Sustained::default();
        let fired: Vec<bool> = [
            (true, 100),  // starts holding
            (true, 1099), // 999 ms
            (true, 1100), // 1000 ms: fires
            (true, 5000), // already fired
            (false, 5001),
            (true, 6000), // starts again
            (true, 7000), // fires again
        ]
        .into_iter()
        .map(|(holds, now)| s.check(holds, now, 1000))
        .collect();
        assert_eq!(fired, [false, false, true, false, false, false, true]);
        let mut zero = Sustained::default();
        assert!(zero.check(true, 5, 0), "a zero duration fires at once");
    }

    #[test]
    fn rate_fires_on_the_nth_event_within_the_window_then_starts_over() {
        let mut w = RateWindow::default();
        let fired: Vec<bool> = [0, 400, 1000, 1100, 1500, 2100, 2200]
            .into_iter()
            .map(|now| w.observe(now, 3, 1000))
            .collect();
        // 0, 400, 1000 are 1000 apart: fires. Then 1100, 1500, 2100 are 1000 apart: fires.
        assert_eq!(fired, [false, false, true, false, false, true, false]);
        let mut spread = RateWindow::default();
        let fired: Vec<bool> = [0, 600, 1200, 1800, 2400]
            .into_iter()
            .map(|now| spread.observe(now, 3, 1000))
            .collect();
        assert_eq!(fired, [false; 5]);
    }

    #[test]
    fn turn_streak_fires_once_per_streak() {
        let mut s = TurnStreak::default();
        let fired: Vec<bool> = [true, false, true, true, true, false, true, true]
            .into_iter()
            .map(|holds| s.observe(holds, 2))
            .collect();
        assert_eq!(
            fired,
            [false, false, false, true, false, false, false, true]
        );
    }
}
