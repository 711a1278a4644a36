//! The report as JUnit XML: what CI systems (GitHub Actions, GitLab, Jenkins) show as a
//! test report.
//!
//! `<testsuites name=SUITE>` holds one `<testsuite>` per recording (named by its path), one
//! `<testcase>` per case (its `classname` the recording's name). A failed case is a
//! `<failure>` whose message gives the score and the threshold and whose text is the
//! detail; a case error is an `<error>`; a recording that cannot be read is a test suite
//! holding one `<error>` case, `read`. A passed case's score and detail are its
//! `<system-out>`. No times: the same report gives the same bytes. Text is escaped by
//! [`escape`] (XML's specials as entities, characters XML cannot hold dropped).

use std::fmt::Write as _;

use super::xml::{escape, escape_attr};
use crate::report::{CaseOutcome, EvaluationReport};

/// One `<testcase>`: its name, class, and what it holds.
struct Case {
    name: String,
    class: String,
    body: Body,
}

enum Body {
    Passed {
        out: String,
    },
    Failed {
        message: String,
        kind: String,
        text: String,
    },
    Error {
        message: String,
        kind: String,
    },
}

/// `report` as JUnit XML, ending with a newline.
pub fn to_junit(report: &EvaluationReport) -> String {
    let mut suites: Vec<(String, Vec<Case>)> = Vec::new();
    for recording in &report.recordings {
        let mut cases = Vec::new();
        if let Some(error) = &recording.error {
            cases.push(Case {
                name: "read".to_owned(),
                class: recording.name.clone(),
                body: Body::Error {
                    message: error.clone(),
                    kind: "unreadable recording".to_owned(),
                },
            });
        }
        for result in &recording.cases {
            let score = result
                .score
                .map_or_else(|| "no score".to_owned(), |s| format!("score {s}"));
            let body = match result.outcome {
                CaseOutcome::Passed => Body::Passed {
                    out: format!(
                        "{score} (threshold {}): {}",
                        result.threshold, result.detail
                    ),
                },
                CaseOutcome::Failed => Body::Failed {
                    message: format!("{score} below threshold {}", result.threshold),
                    kind: result.criterion.clone(),
                    text: result.detail.clone(),
                },
                CaseOutcome::Error => Body::Error {
                    message: result.detail.clone(),
                    kind: result.criterion.clone(),
                },
            };
            cases.push(Case {
                name: result.case.clone(),
                class: recording.name.clone(),
                body,
            });
        }
        suites.push((recording.path.clone(), cases));
    }
    let count = |cases: &[Case], f: fn(&Body) -> bool| cases.iter().filter(|c| f(&c.body)).count();
    let failed = |b: &Body| matches!(b, Body::Failed { .. });
    let errored = |b: &Body| matches!(b, Body::Error { .. });
    let all: Vec<&Case> = suites.iter().flat_map(|(_, cases)| cases).collect();
    let mut out = String::from("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    // Writing to a String cannot fail; the results of `writeln!` are ignored below.
    let _ = writeln!(
        out,
        "<testsuites name=\"{}\" tests=\"{}\" failures=\"{}\" errors=\"{}\">",
        escape_attr(&report.suite),
        all.len(),
        all.iter().filter(|c| failed(&c.body)).count(),
        all.iter().filter(|c| errored(&c.body)).count()
    );
    for (name, cases) in &suites {
        let _ = writeln!(
            out,
            "    <testsuite name=\"{}\" tests=\"{}\" failures=\"{}\" errors=\"{}\">",
            escape_attr(name),
            cases.len(),
            count(cases, failed),
            count(cases, errored)
        );
        for case in cases {
            let _ = write!(
                out,
                "        <testcase name=\"{}\" classname=\"{}\">\n            ",
                escape_attr(&case.name),
                escape_attr(&case.class)
            );
            let _ = match &case.body {
                Body::Passed { out: text } => {
                    writeln!(out, "<system-out>{}</system-out>", escape(text))
                }
                Body::Failed {
                    message,
                    kind,
                    text,
                } => writeln!(
                    out,
                    "<failure message=\"{}\" type=\"{}\">{}</failure>",
                    escape_attr(message),
                    escape_attr(kind),
                    escape(text)
                ),
                Body::Error { message, kind } => writeln!(
                    out,
                    "<error message=\"{}\" type=\"{}\"/>",
                    escape_attr(message),
                    escape_attr(kind)
                ),
            };
            out.push_str("        </testcase>\n");
        }
        out.push_str("    </testsuite>\n");
    }
    out.push_str("</testsuites>\n");
    out
}
