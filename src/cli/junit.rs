//! JUnit XML for `reel replay` over many logs: one test case per session, what CI systems
//! (GitHub Actions, GitLab, Jenkins) show as a test report.
//!
//! A drifted session is a `<failure>` whose message is its first divergence; a log that
//! could not be replayed (not a wire log, no setup, unreadable) is an `<error>`.

use std::fmt::Write as _;

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

/// The whole report: one `<testsuite>` named `reel replay` holding every case, in order.
pub fn render(cases: &[Case], seconds: f64) -> String {
    let failures = cases
        .iter()
        .filter(|c| matches!(c.outcome, CaseOutcome::Failed { .. }))
        .count();
    let errors = cases
        .iter()
        .filter(|c| matches!(c.outcome, CaseOutcome::Error { .. }))
        .count();
    let mut xml = String::from("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    let _ = writeln!(
        xml,
        "<testsuites name=\"reel replay\" tests=\"{}\" failures=\"{failures}\" errors=\"{errors}\" time=\"{seconds:.3}\">",
        cases.len()
    );
    let _ = writeln!(
        xml,
        "  <testsuite name=\"reel replay\" tests=\"{}\" failures=\"{failures}\" errors=\"{errors}\" time=\"{seconds:.3}\">",
        cases.len()
    );
    for case in cases {
        let _ = write!(
            xml,
            "    <testcase classname=\"reel.replay\" name=\"{}\" time=\"{:.3}\"",
            escape(&case.name),
            case.seconds
        );
        match &case.outcome {
            CaseOutcome::Passed => xml.push_str("/>\n"),
            CaseOutcome::Failed { message, details } => {
                let _ = writeln!(
                    xml,
                    ">\n      <failure message=\"{}\" type=\"drift\">{}</failure>\n    </testcase>",
                    escape(message),
                    escape(details)
                );
            }
            CaseOutcome::Error { message } => {
                let _ = writeln!(
                    xml,
                    ">\n      <error message=\"{}\" type=\"bad_input\"/>\n    </testcase>",
                    escape(message)
                );
            }
        }
    }
    xml.push_str("  </testsuite>\n</testsuites>\n");
    xml
}

/// Text as XML character data or an attribute value: the five special characters
/// escaped, and characters XML 1.0 cannot hold (control characters other than tab, line
/// feed and carriage return) replaced by U+FFFD.
fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            '\t' | '\n' | '\r' => out.push(c),
            c if (c as u32) < 0x20 => out.push('\u{FFFD}'),
            c => out.push(c),
        }
    }
    out
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
                    message: "c.wire.jsonl: empty wire log\u{1}".into(),
                },
            },
        ];
        assert_eq!(
            render(&cases, 1.25),
            r#"<?xml version="1.0" encoding="UTF-8"?>
<testsuites name="reel replay" tests="3" failures="1" errors="1" time="1.250">
  <testsuite name="reel replay" tests="3" failures="1" errors="1" time="1.250">
    <testcase classname="reel.replay" name="a.wire.jsonl" time="0.013"/>
    <testcase classname="reel.replay" name="b&lt;&amp;&gt;.wire.jsonl" time="0.500">
      <failure message="1 outbound divergence: frame 7: the replayed frame differs" type="drift">frame 7: the replayed frame differs
  a: expected &quot;x&quot;, actual 1</failure>
    </testcase>
    <testcase classname="reel.replay" name="c.wire.jsonl" time="0.001">
      <error message="c.wire.jsonl: empty wire log�" type="bad_input"/>
    </testcase>
  </testsuite>
</testsuites>
"#
        );
    }
}
