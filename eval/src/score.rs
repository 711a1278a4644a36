//! [`Score`]: what a criterion gives for one recording.

/// A score in [0, 1] and a line saying why.
#[derive(Debug, Clone, PartialEq)]
pub struct Score {
    /// 0 (nothing met) to 1 (all met).
    pub value: f64,
    /// Why: what matched, what did not.
    pub detail: String,
}

impl Score {
    /// A score of `value` (kept within [0, 1]; a NaN is 0) saying `detail`.
    pub fn new(value: f64, detail: impl Into<String>) -> Self {
        let value = if value.is_nan() {
            0.0
        } else {
            value.clamp(0.0, 1.0)
        };
        Score {
            value,
            detail: detail.into(),
        }
    }

    /// 1 when `passed`, else 0.
    pub fn pass_fail(passed: bool, detail: impl Into<String>) -> Self {
        Score::new(if passed { 1.0 } else { 0.0 }, detail)
    }

    /// `part` of `whole` (1 when `whole` is 0).
    pub fn fraction(part: usize, whole: usize, detail: impl Into<String>) -> Self {
        let value = if whole == 0 {
            1.0
        } else {
            part as f64 / whole as f64
        };
        Score::new(value, detail)
    }
}
