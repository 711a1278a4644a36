//! JUnit XML for `reel replay` over many logs: one test case per session, what CI systems
//! (GitHub Actions, GitLab, Jenkins) show as a test report.
//!
//! A drifted session is a `<failure>` whose message is its first divergence; a log that
//! could not be replayed (not a wire log, no setup, unreadable) is an `<error>`.

use std::time::Duration;

use quick_junit::{NonSuccessKind, Report, SerializeError, TestCase, TestCaseStatus, TestSuite};

/// How one session ended, as the report shows it.
#[derive(Debug, Clone, PartialEq)]
pub enum CaseOutcome {
    /// Replayed clean.
    Passed,
    /// Drifted: what drifted, and the first divergence in full.
    Failed {
        /// One line: what drifted and where first.
        message: String,
        /// The first divergence, every line of it.
        details: String,
    },
    /// Could not be replayed: why.
    Error {
        /// The error.
        message: String,
    },
}

/// One test case.
#[derive(Debug, Clone, PartialEq)]
pub struct Case {
    /// The wire log's path (the test's name).
    pub name: String,
    /// Seconds the replay took.
    pub seconds: f64,
    /// How it ended.
    pub outcome: CaseOutcome,
}

/// The whole report: one `<testsuite>` named `suite` (`reel replay`; `reel replay (shard
/// 2/3)` for a shard) holding every case, in order.
/// Written by `quick-junit`, which escapes the five XML specials and drops characters XML
/// 1.0 cannot hold (control characters, ANSI colour codes).
///
/// # Errors
///
/// The XML writer failed (it writes into memory, so in practice it does not).
pub fn render(cases: &[Case], seconds: f64, suite: &str) -> Result<String, SerializeError> {
    let mut suite = TestSuite::new(suite);
    suite.set_time(duration(seconds));
    for case in cases {
        let status = match &case.outcome {
            CaseOutcome::Passed => TestCaseStatus::success(),
            CaseOutcome::Failed { message, details } => {
                let mut status = TestCaseStatus::non_success(NonSuccessKind::Failure);
                status
                    .set_message(message.as_str())
                    .set_type("drift")
                    .set_description(details.as_str());
                status
            }
            CaseOutcome::Error { message } => {
                let mut status = TestCaseStatus::non_success(NonSuccessKind::Error);
                status.set_message(message.as_str()).set_type("bad_input");
                status
            }
        };
        let mut test = TestCase::new(case.name.as_str(), status);
        test.set_classname("reel.replay")
            .set_time(duration(case.seconds));
        suite.add_test_case(test);
    }
    let mut report = Report::new("reel replay");
    report.set_time(duration(seconds)).add_test_suite(suite);
    report.to_string()
}

/// Seconds as a duration; a negative, infinite or NaN count (no clock gives one) is zero.
fn duration(seconds: f64) -> Duration {
    Duration::try_from_secs_f64(seconds).unwrap_or(Duration::ZERO)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_report_with_each_outcome_is_exact() {
        let cases = [
            Case {
                name: "a.wire.jsonl".into(),
                seconds: 0.0125,
                outcome: CaseOutcome::Passed,
            },
            Case {
                name: "b<&>.wire.jsonl".into(),
                seconds: 0.5,
                outcome: CaseOutcome::Failed {
                    message: "1 outbound divergence: frame 7: the replayed frame differs".into(),
                    details: "frame 7: the replayed frame differs\n  a: expected \"x\", actual 1"
                        .into(),
                },
            },
            Case {
                name: "c.wire.jsonl".into(),
                seconds: 0.001,
                outcome: CaseOutcome::Error {
                    // A control character XML cannot hold is dropped; a terminal colour code goes whole.
                    message: "c.wire.jsonl: empty wire log\u{1}, \u{1b}[31mred\u{1b}[0m".into(),
                },
            },
        ];
        assert_eq!(
            render(&cases, 1.25, "reel replay").unwrap(),
            r#"<?xml version="1.0" encoding="UTF-8"?>
<testsuites name="reel replay" tests="3" skipped="0" failures="1" errors="1" time="1.250">
    <testsuite name="reel replay" tests="3" skipped="0" errors="1" failures="1" time="1.250">
        <testcase name="a.wire.jsonl" classname="reel.replay" time="0.013"/>
        <testcase name="b&lt;&amp;&gt;.wire.jsonl" classname="reel.replay" time="0.500">
            <failure message="1 outbound divergence: frame 7: the replayed frame differs" type="drift">frame 7: the replayed frame differs
  a: expected &quot;x&quot;, actual 1</failure>
        </testcase>
        <testcase name="c.wire.jsonl" classname="reel.replay" time="0.001">
            <error message="c.wire.jsonl: empty wire log, red" type="bad_input"/>
        </testcase>
    </testsuite>
</testsuites>
"#
        );
    }
}
