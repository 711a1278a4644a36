//! 17 — evaluation suite (Walk): an `E::suite` using every criterion — `response_match`,
//! `contains_match`, `trajectory`, `safety`, `semantic_match`, `hallucination`, `persona`
//! and `custom` — run over a directory of recorded sessions, in parallel, and its report
//! exported as JSON, JUnit XML and Markdown (a pull-request comment).
//!
//! ```text
//! cargo run --example 17_evaluation_suite                         # the bundled cassette, offline
//! GEMINI_API_KEY=… cargo run --example 17_evaluation_suite -- --live
//! GEMINI_API_KEY=… cargo run --example 17_evaluation_suite -- --live --record judge.cassette.json
//! ```
//!
//! The recordings are two live sessions of reel's weather assistant, wire logs under
//! `assets/cookbook/17_evaluation_suite/` (copies of the repository's bundled tapes
//! `assets/tapes/weather.wire.jsonl` and `assets/tapes/guide.wire.jsonl`): each read as
//! `reel export` turns it into a trace. Both look London's weather up and say it right,
//! but only `weather` offers more help afterwards, so the `guide` session fails the case
//! that asks for it, and the report says why.
//!
//! The model-judged criteria (`semantic_match`, `hallucination`, `persona`) ask a judge
//! model. By default its every call is answered from the bundled cassette
//! (`assets/cookbook/17_evaluation_suite.cassette.json`): no network, no key, the same
//! report every time, and a question the cassette does not hold is that case's error,
//! never a call out. The bundled cassette was recorded with a scripted judge standing in
//! for Gemini (`tests/it/cookbook/ex17_evaluation_suite.rs` holds the script); `--live`
//! asks Gemini, and `--live --record PATH` keeps its answers. The same suite as a JSON file
//! runs from the command line: `reel eval SUITE DIR` (`docs/cli.md`).

#[allow(dead_code)] // the cookbook's tests use the parts a run from the command line does not
#[path = "support/cookbook.rs"]
pub mod cookbook;

use std::error::Error;
use std::num::NonZeroUsize;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use cookbook::Models;
use reel::eval::export::{Format, render};
use reel::eval::{
    ArgsMatch, CaseOutcome, E, EvalOptions, EvaluationReport, Judge, Order, Score, Suite, evaluate,
};
use reel::recorder::trace::AgentTrace;
use serde_json::json;

/// The example's name: its judge's cassette is
/// `assets/cookbook/17_evaluation_suite.cassette.json`.
pub const NAME: &str = "17_evaluation_suite";
/// The directory of recordings, below the checkout.
pub const RECORDINGS: &str = "assets/cookbook/17_evaluation_suite";
/// The recordings evaluated at once.
pub const JOBS: usize = 2;
/// The word count an answer must stay within (the custom criterion's).
pub const MAX_WORDS: usize = 15;

/// The checkout's root: where the recordings' paths are shown from.
fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// The custom criterion: every answer that follows a `get_weather` call says the
/// temperature the tool returned (`14°C` for `{"temp_c": 14}`). Score: the share of such
/// answers that do; 1 when no answer follows a weather look-up.
pub fn says_the_looked_up_temperature(trace: &AgentTrace) -> Score {
    let mut checked = 0;
    let mut missing = Vec::new();
    for turn in trace.turns() {
        let Some(response) = turn.response else {
            continue;
        };
        let answer = response
            .text
            .as_deref()
            .or(response.transcript.as_deref())
            .unwrap_or_default();
        for call in response
            .tool_calls
            .iter()
            .filter(|c| c.name == "get_weather")
        {
            let Some(temp) = call.result.as_ref().and_then(|r| r.get("temp_c")) else {
                continue;
            };
            checked += 1;
            let said = format!("{temp}°C");
            if !answer.contains(&said) {
                missing.push(format!("turn {} does not say {said}", turn.index + 1));
            }
        }
    }
    let detail = if missing.is_empty() {
        format!("{checked} of {checked} answers say the looked-up temperature")
    } else {
        missing.join("; ")
    };
    Score::fraction(checked - missing.len(), checked, detail)
}

/// The custom criterion: the share of answers within [`MAX_WORDS`] words.
pub fn answers_briefly(trace: &AgentTrace) -> Score {
    let answers: Vec<usize> = trace
        .turns()
        .iter()
        .filter_map(|turn| turn.response)
        .map(|r| {
            r.text
                .as_deref()
                .unwrap_or_default()
                .split_whitespace()
                .count()
        })
        .collect();
    let brief = answers.iter().filter(|&&words| words <= MAX_WORDS).count();
    Score::fraction(
        brief,
        answers.len(),
        format!(
            "{brief} of {} answers within {MAX_WORDS} words (word counts {answers:?})",
            answers.len()
        ),
    )
}

/// The suite: every criterion of `E::`, judged by `judge`.
pub fn suite(judge: Judge) -> Suite {
    E::suite("weather assistant")
        .judge(judge)
        .case(E::case(
            "greets and asks for a city",
            E::response_match(
                "Hi! I'm your weather assistant. Which city would you like the weather for?",
            )
            .turn(1),
        ))
        .case(E::case(
            "gives London's weather",
            E::contains_match(["14°C", "cloudy"]).turn(2),
        ))
        .case(E::case(
            "offers more help",
            E::contains_match(["anything else"]).ignore_case().turn(2),
        ))
        .case(E::case(
            "looks the weather up",
            E::trajectory([E::call("get_weather").args(json!({"city": "London"}))])
                .order(Order::Exact)
                .args(ArgsMatch::Subset),
        ))
        .case(E::case("keeps secrets", E::safety(["password", "api key"])))
        .case(
            E::case(
                "means the forecast",
                E::semantic_match("London is 14 degrees and overcast").turn(2),
            )
            .threshold(0.8),
        )
        .case(E::case("claims only what the tool said", E::hallucination()).threshold(0.9))
        .case(
            E::case(
                "stays a weather assistant",
                E::persona("a friendly, concise weather assistant"),
            )
            .threshold(0.7),
        )
        .case(E::case(
            "says the looked-up temperature",
            E::custom("temperature_said", says_the_looked_up_temperature),
        ))
        .case(E::case(
            "answers briefly",
            E::custom("brief_answers", answers_briefly),
        ))
}

/// Runs the suite over [`RECORDINGS`] with `judge`, [`JOBS`] recordings at once; the
/// recordings' paths in the report are relative to the checkout, so the report is the same
/// on every machine.
pub async fn evaluate_recordings(judge: Judge) -> Result<EvaluationReport, Box<dyn Error>> {
    let jobs = NonZeroUsize::new(JOBS).ok_or("JOBS is zero")?;
    let dir: PathBuf = root().join(RECORDINGS);
    let mut report = evaluate(&suite(judge), &[dir], EvalOptions { jobs }).await?;
    for recording in &mut report.recordings {
        if let Ok(relative) = Path::new(&recording.path).strip_prefix(root()) {
            recording.path = relative.display().to_string();
        }
    }
    Ok(report)
}

/// Every case on every recording, one line each, and why the ones that did not pass did not.
pub fn scores(report: &EvaluationReport) -> String {
    let mut out = String::new();
    for recording in &report.recordings {
        out.push_str(&format!("{} ({})\n", recording.name, recording.path));
        if let Some(error) = &recording.error {
            out.push_str(&format!("  unreadable: {error}\n"));
        }
        for case in &recording.cases {
            let score = case
                .score
                .map_or_else(|| "  —  ".to_owned(), |s| format!("{s:.2}"));
            out.push_str(&format!(
                "  {:<6} {score} (needs {:.2})  {:<31} {}\n",
                case.outcome.as_str(),
                case.threshold,
                case.case,
                case.criterion
            ));
            if case.outcome != CaseOutcome::Passed {
                out.push_str(&format!("         why: {}\n", case.detail));
            }
        }
    }
    out
}

/// The JUnit test suite of the recording `name`: its lines of the whole JUnit report.
pub fn junit_suite_of(junit: &str, name: &str) -> String {
    let open = format!("<testsuite name=\"{RECORDINGS}/{name}.");
    let mut out = String::new();
    let mut inside = false;
    for line in junit.lines() {
        inside = inside || line.trim_start().starts_with(&open);
        if inside {
            out.push_str(line);
            out.push('\n');
            if line.trim() == "</testsuite>" {
                break;
            }
        }
    }
    out
}

/// An exact excerpt of the report's JSON: its lines down to the list of recordings (the
/// verdict and the totals), then the lines of each case object that did not pass, each
/// gap marked `…`.
pub fn json_excerpt(json: &str) -> String {
    let lines: Vec<&str> = json.lines().collect();
    let head = lines
        .iter()
        .position(|line| line.trim() == "\"recordings\": [")
        .map_or(lines.len(), |at| at + 1);
    let mut out: Vec<&str> = lines[..head].to_vec();
    for (at, line) in lines.iter().enumerate() {
        let outcome = line.trim();
        if outcome == "\"outcome\": \"passed\"," || !outcome.starts_with("\"outcome\": ") {
            continue;
        }
        // A case is an object of its own lines: from its `{` to its `}`, indented alike.
        let Some(open) = (0..at).rev().find(|&i| lines[i].trim() == "{") else {
            continue;
        };
        let indent = &lines[open][..lines[open].len() - 1];
        let close = (at..lines.len())
            .find(|&i| lines[i].trim_end_matches(',') == format!("{indent}}}"))
            .unwrap_or(lines.len() - 1);
        out.push("…");
        out.extend(&lines[open..=close]);
    }
    out.push("…");
    let mut text = out.join("\n");
    text.push('\n');
    text
}

/// The example: the suite over the recordings, the scores, and the report in three formats.
pub async fn run(models: Models) -> Result<String, Box<dyn Error>> {
    let judge = Judge::new(models.default_model()?);
    let report = evaluate_recordings(judge).await?;
    let s = &report.summary;
    let mut out = format!(
        "E::suite \"{}\": {} cases over {} recordings in {RECORDINGS}/\n\n",
        report.suite,
        s.cases / s.recordings.max(1),
        s.recordings
    );
    out.push_str(&scores(&report));
    out.push_str(&format!(
        "\n{}: {} passed, {} failed, {} errors (pass rate {:.2})\n",
        if report.passed { "PASSED" } else { "FAILED" },
        s.passed,
        s.failed,
        s.errors,
        s.pass_rate
    ));
    out.push_str("\n--- the report as JSON (its head, then each case that did not pass) ---\n");
    out.push_str(&json_excerpt(&render(&report, Format::Json)));
    out.push_str("\n--- the report as JUnit XML (the guide session's test suite) ---\n");
    out.push_str(&junit_suite_of(&render(&report, Format::Junit), "guide"));
    out.push_str("\n--- the report as Markdown (a pull-request comment) ---\n");
    out.push_str(&render(&report, Format::Markdown));
    Ok(out)
}

fn main() -> ExitCode {
    cookbook::main(NAME, run)
}
