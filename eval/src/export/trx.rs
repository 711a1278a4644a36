//! The report as TRX (Visual Studio's test results, what Azure DevOps reads).
//!
//! One `UnitTest` per case on each recording (`className` the recording, `name` the
//! case), one `UnitTestResult` with its outcome (`Passed`, `Failed`, `Error`) and, as
//! output, the score, the threshold and the detail; a recording that cannot be read is
//! one `read` test with outcome `Error`. Ids are GUIDs derived from the names, and the
//! file carries no times, so the same report gives the same bytes.

use std::fmt::Write as _;

use super::xml::{escape, escape_attr, guid};
use crate::report::{CaseOutcome, EvaluationReport};

/// The test type of unit tests, as TRX names it.
const UNIT_TEST_TYPE: &str = "13cdc9d9-ddb5-4fa4-a97d-d965ccfc6d4b";
/// The list every result belongs to, as `vstest` writes it.
const RESULTS_NOT_IN_A_LIST: &str = "8c84fa94-04c1-424b-9868-57a2d4851a1d";

/// One test of the run.
struct Test {
    class: String,
    name: String,
    outcome: &'static str,
    message: Option<String>,
    output: String,
    id: String,
    execution: String,
}

/// `report` as TRX, ending with a newline.
pub fn to_trx(report: &EvaluationReport) -> String {
    let mut tests = Vec::new();
    for recording in &report.recordings {
        let mut push = |name: &str, outcome, message: Option<String>, output: String| {
            let ids = [report.suite.as_str(), recording.path.as_str(), name];
            tests.push(Test {
                class: recording.name.clone(),
                name: name.to_owned(),
                outcome,
                message,
                output,
                id: guid(&ids),
                execution: guid(&[&ids[..], &["execution"]].concat()),
            });
        };
        if let Some(error) = &recording.error {
            push("read", "Error", Some(error.clone()), String::new());
        }
        for case in &recording.cases {
            let score = case
                .score
                .map_or_else(|| "no score".to_owned(), |s| format!("score {s}"));
            let output = format!("{score} (threshold {}): {}", case.threshold, case.detail);
            let (outcome, message) = match case.outcome {
                CaseOutcome::Passed => ("Passed", None),
                CaseOutcome::Failed => (
                    "Failed",
                    Some(format!("{score} below threshold {}", case.threshold)),
                ),
                CaseOutcome::Error => ("Error", Some(case.detail.clone())),
            };
            push(&case.case, outcome, message, output);
        }
    }
    let count = |outcome: &str| tests.iter().filter(|t| t.outcome == outcome).count();
    let (passed, failed, errors) = (count("Passed"), count("Failed"), count("Error"));
    let mut out = String::new();
    // Writing to a String cannot fail; the results of `writeln!` are ignored below.
    out.push_str("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    let _ = writeln!(
        out,
        "<TestRun id=\"{}\" name=\"{}\" xmlns=\"http://microsoft.com/schemas/VisualStudio/TeamTest/2010\">",
        guid(&[report.suite.as_str(), "run"]),
        escape_attr(&format!("reel eval {}", report.suite))
    );
    out.push_str("  <Results>\n");
    for test in &tests {
        let _ = writeln!(
            out,
            "    <UnitTestResult executionId=\"{}\" testId=\"{}\" testName=\"{}\" outcome=\"{}\" testType=\"{UNIT_TEST_TYPE}\" testListId=\"{RESULTS_NOT_IN_A_LIST}\">",
            test.execution,
            test.id,
            escape_attr(&format!("{}.{}", test.class, test.name)),
            test.outcome
        );
        out.push_str("      <Output>\n");
        if !test.output.is_empty() {
            let _ = writeln!(out, "        <StdOut>{}</StdOut>", escape(&test.output));
        }
        if let Some(message) = &test.message {
            let _ = writeln!(
                out,
                "        <ErrorInfo>\n          <Message>{}</Message>\n        </ErrorInfo>",
                escape(message)
            );
        }
        out.push_str("      </Output>\n    </UnitTestResult>\n");
    }
    out.push_str("  </Results>\n  <TestDefinitions>\n");
    for test in &tests {
        let _ = writeln!(
            out,
            "    <UnitTest name=\"{}\" storage=\"reel eval\" id=\"{}\">\n      <Execution id=\"{}\" />\n      <TestMethod codeBase=\"reel eval\" adapterTypeName=\"executor://reel/eval\" className=\"{}\" name=\"{}\" />\n    </UnitTest>",
            escape_attr(&format!("{}.{}", test.class, test.name)),
            test.id,
            test.execution,
            escape_attr(&test.class),
            escape_attr(&test.name)
        );
    }
    out.push_str("  </TestDefinitions>\n  <TestEntries>\n");
    for test in &tests {
        let _ = writeln!(
            out,
            "    <TestEntry testId=\"{}\" executionId=\"{}\" testListId=\"{RESULTS_NOT_IN_A_LIST}\" />",
            test.id, test.execution
        );
    }
    let _ = writeln!(
        out,
        "  </TestEntries>\n  <TestLists>\n    <TestList name=\"Results Not in a List\" id=\"{RESULTS_NOT_IN_A_LIST}\" />\n  </TestLists>"
    );
    let _ = writeln!(
        out,
        "  <ResultSummary outcome=\"{}\">\n    <Counters total=\"{}\" executed=\"{}\" passed=\"{passed}\" failed=\"{failed}\" error=\"{errors}\" />\n  </ResultSummary>\n</TestRun>",
        if failed == 0 && errors == 0 {
            "Completed"
        } else {
            "Failed"
        },
        tests.len(),
        tests.len()
    );
    out
}
