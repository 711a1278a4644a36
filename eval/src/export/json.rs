//! The report as JSON.

use crate::report::EvaluationReport;

/// `report` as pretty JSON, ending with a newline.
pub fn to_json(report: &EvaluationReport) -> String {
    // Serializing the report cannot fail: its map keys are strings and its numbers finite
    // (scores are clamped, NaN made 0; costs are sums of finite products).
    let mut text = serde_json::to_string_pretty(report).unwrap_or_default();
    text.push('\n');
    text
}
