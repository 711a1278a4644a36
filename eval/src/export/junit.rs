//! The report as JUnit XML: what CI systems (GitHub Actions, GitLab, Jenkins) show as a
//! test report.
//!
//! `<testsuites name=SUITE>` holds one `<testsuite>` per recording (named by its path), one
//! `<testcase>` per case (its `classname` the recording's name). A failed case is a
//! `<failure>` whose message gives the score and the threshold and whose text is the
//! detail; a case error is an `<error>`; a recording that cannot be read is a test suite
//! holding one `<error>` case, `read`. Written by `quick-junit` (the writer `reel replay
//! --junit` uses), which escapes XML's specials and drops the characters XML cannot hold.

use quick_junit::{NonSuccessKind, Report, TestCase, TestCaseStatus, TestSuite};

use crate::report::{CaseOutcome, EvaluationReport};

/// `report` as JUnit XML, ending with a newline.
pub fn to_junit(report: &EvaluationReport) -> String {
    let mut junit = Report::new(report.suite.as_str());
    for recording in &report.recordings {
        let mut suite = TestSuite::new(recording.path.as_str());
        if let Some(error) = &recording.error {
            let mut status = TestCaseStatus::non_success(NonSuccessKind::Error);
            status
                .set_message(error.as_str())
                .set_type("unreadable recording");
            let mut case = TestCase::new("read", status);
            case.set_classname(recording.name.as_str());
            suite.add_test_case(case);
        }
        for result in &recording.cases {
            let score = result
                .score
                .map_or_else(|| "no score".to_owned(), |s| format!("score {s}"));
            let status = match result.outcome {
                CaseOutcome::Passed => TestCaseStatus::success(),
                CaseOutcome::Failed => {
                    let mut status = TestCaseStatus::non_success(NonSuccessKind::Failure);
                    status
                        .set_message(format!("{score} below threshold {}", result.threshold))
                        .set_type(result.criterion.as_str())
                        .set_description(result.detail.as_str());
                    status
                }
                CaseOutcome::Error => {
                    let mut status = TestCaseStatus::non_success(NonSuccessKind::Error);
                    status
                        .set_message(result.detail.as_str())
                        .set_type(result.criterion.as_str());
                    status
                }
            };
            let mut case = TestCase::new(result.case.as_str(), status);
            case.set_classname(recording.name.as_str());
            if result.outcome == CaseOutcome::Passed {
                case.set_system_out(format!(
                    "{score} (threshold {}): {}",
                    result.threshold, result.detail
                ));
            }
            suite.add_test_case(case);
        }
        junit.add_test_suite(suite);
    }
    // Serializing into memory does not fail: quick-junit's writer errors come from the
    // writer, and a Vec<u8> never refuses bytes.
    let mut text = junit.to_string().unwrap_or_default();
    if !text.ends_with('\n') {
        text.push('\n');
    }
    text
}
