//! [`EvaluationReport`]: every recording's case results, and the totals.
//!
//! A report holds no clock reading and no machine's path beyond what was given, so the
//! same suite over the same recordings gives the same report, byte for byte.

use serde::Serialize;

use crate::cost::Cost;

/// How a case ended on one recording.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum CaseOutcome {
    /// The score reached the threshold.
    Passed,
    /// It did not.
    Failed,
    /// No score: the judge failed, a custom check panicked. Never a pass.
    Error,
}

impl CaseOutcome {
    /// `passed`, `failed` or `error`.
    pub fn as_str(self) -> &'static str {
        match self {
            CaseOutcome::Passed => "passed",
            CaseOutcome::Failed => "failed",
            CaseOutcome::Error => "error",
        }
    }
}

/// One case on one recording.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct CaseResult {
    /// The case's name.
    pub case: String,
    /// Its criterion's kind (`trajectory`, …; a custom criterion's own name).
    pub criterion: String,
    /// How it ended.
    pub outcome: CaseOutcome,
    /// The score in [0, 1] (rounded to 4 places), when there is one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub score: Option<f64>,
    /// The lowest passing score.
    pub threshold: f64,
    /// Why: what matched, what did not, the error.
    pub detail: String,
}

/// One recording's results, or why it could not be read.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct RecordingReport {
    /// Its name (the file name without its suffix).
    pub name: String,
    /// Its path, as found.
    pub path: String,
    /// Why it could not be read: then it has no case results, and counts as an error.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// The cases that apply to it, in suite order.
    pub cases: Vec<CaseResult>,
    /// What its model calls cost, when the suite has a price table.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cost: Option<Cost>,
}

/// The totals.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Summary {
    /// Recordings found.
    pub recordings: usize,
    /// Recordings that could not be read.
    pub unreadable: usize,
    /// Case results over all recordings.
    pub cases: usize,
    /// Passed.
    pub passed: usize,
    /// Failed.
    pub failed: usize,
    /// Errors.
    pub errors: usize,
    /// Passed over case results (0 when there are none), rounded to 4 places.
    pub pass_rate: f64,
    /// The recordings' costs added up, when priced.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cost: Option<Cost>,
}

/// A suite over recordings.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct EvaluationReport {
    /// The suite's name.
    pub suite: String,
    /// Every case passed on every recording, and every recording was read.
    pub passed: bool,
    /// The totals.
    pub summary: Summary,
    /// The recordings, in path order.
    pub recordings: Vec<RecordingReport>,
}

/// `x` rounded to 4 places.
pub fn round4(x: f64) -> f64 {
    (x * 10_000.0).round() / 10_000.0
}

impl EvaluationReport {
    /// The report of `suite` over `recordings`, its totals computed.
    pub fn new(suite: impl Into<String>, recordings: Vec<RecordingReport>) -> Self {
        let results = || recordings.iter().flat_map(|r| r.cases.iter());
        let count = |outcome| results().filter(|c| c.outcome == outcome).count();
        let cases = results().count();
        let passed = count(CaseOutcome::Passed);
        let failed = count(CaseOutcome::Failed);
        let errors = count(CaseOutcome::Error);
        let unreadable = recordings.iter().filter(|r| r.error.is_some()).count();
        let costs: Vec<&Cost> = recordings.iter().filter_map(|r| r.cost.as_ref()).collect();
        let cost = costs.first().map(|first| {
            let mut models: Vec<String> = costs
                .iter()
                .flat_map(|c| c.unpriced_models.iter().cloned())
                .collect();
            models.sort();
            models.dedup();
            Cost {
                amount: (costs.iter().map(|c| c.amount).sum::<f64>() * 1e9).round() / 1e9,
                currency: first.currency.clone(),
                priced_answers: costs.iter().map(|c| c.priced_answers).sum(),
                unpriced_answers: costs.iter().map(|c| c.unpriced_answers).sum(),
                unpriced_models: models,
            }
        });
        let pass_rate = if cases == 0 {
            0.0
        } else {
            round4(passed as f64 / cases as f64)
        };
        EvaluationReport {
            suite: suite.into(),
            passed: failed == 0 && errors == 0 && unreadable == 0,
            summary: Summary {
                recordings: recordings.len(),
                unreadable,
                cases,
                passed,
                failed,
                errors,
                pass_rate,
                cost,
            },
            recordings,
        }
    }

    /// Whether something could not be evaluated: an unreadable recording or a case error.
    pub fn has_errors(&self) -> bool {
        self.summary.unreadable > 0 || self.summary.errors > 0
    }
}
