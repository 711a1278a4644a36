//! `reel eval SUITE DIR`: the bundled weather session and the review-loop cassette scored
//! against a suite file, a model-judged case answered from the suite's judge cassette
//! (recorded here once, through a stand-in model, then replayed by the command offline);
//! each format golden, exit codes 1 (a case failed) and 2 (a recording cannot be read),
//! and the same report byte for byte on a second run.

use std::path::Path;
use std::process::Command;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use futures_util::future::BoxFuture;
use reel::eval::{EvalOptions, Judge, Suite, evaluate};
use reel::llm::{
    BaseLlm, Cassette, CassetteMode, LlmChunk, LlmError, LlmInterceptor, LlmRequest, LlmStream,
};

use crate::cli_support::TempDir;

const SUITE: &str = r#"{
  "name": "weather",
  "judge": {"cassette": "judge.cassette.json", "model": "gemini-2.5-flash"},
  "prices": {"currency": "USD", "models": {"gemini-live-2.5-flash-preview": {"promptPerMillion": 0.5, "completionPerMillion": 2}}},
  "cases": [
    {"name": "gives the temperature", "criterion": {"kind": "contains_match", "expected": ["14°C", "cloudy"]}, "recordings": ["weather"]},
    {"name": "looks the weather up", "criterion": {"kind": "trajectory", "calls": [{"name": "get_weather", "args": {"city": "London"}}], "args": "subset"}, "recordings": ["weather"]},
    {"name": "says goodbye", "criterion": {"kind": "response_match", "expected": "you're welcome have a lovely day", "normalized": true}, "recordings": ["weather"]},
    {"name": "no secrets", "criterion": {"kind": "safety", "forbidden": ["password", "api key"]}},
    {"name": "means the forecast", "criterion": {"kind": "semantic_match", "expected": "London is 14 degrees and overcast"}, "threshold": 0.8, "recordings": ["weather"]},
    {"name": "a poem about the sea", "criterion": {"kind": "contains_match", "expected": ["sea", "wave"], "ignoreCase": true}, "threshold": 0.5, "recordings": ["review_loop"]},
    {"name": "never names the keeper", "criterion": {"kind": "safety", "forbidden": ["keeper"]}, "recordings": ["review_loop"]}
  ]
}"#;

/// The judge while the cassette is recorded: one fixed answer, calls counted.
struct StandIn(Arc<AtomicUsize>);

impl BaseLlm for StandIn {
    fn model_id(&self) -> &str {
        "gemini-2.5-flash"
    }

    fn generate_stream(&self, _: LlmRequest) -> BoxFuture<'_, Result<LlmStream, LlmError>> {
        self.0.fetch_add(1, Ordering::SeqCst);
        let chunk = LlmChunk::text(r#"{"score": 0.9, "reason": "Same temperature & sky."}"#);
        Box::pin(async move { Ok(Box::pin(futures_util::stream::iter([Ok(chunk)])) as LlmStream) })
    }
}

/// Runs `reel` in `dir`: exit code, stdout, stderr.
fn reel_in(dir: &Path, args: &[&str]) -> (i32, String, String) {
    let output = Command::new(env!("CARGO_BIN_EXE_reel"))
        .args(args)
        .current_dir(dir)
        .env_remove("CLICOLOR_FORCE")
        .env_remove("GEMINI_API_KEY")
        .output()
        .unwrap();
    (
        output.status.code().unwrap(),
        String::from_utf8(output.stdout).unwrap(),
        String::from_utf8(output.stderr).unwrap(),
    )
}

fn assert_golden(name: &str, actual: &str) {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/golden/eval")
        .join(name);
    if std::env::var_os("REEL_BLESS").is_some() {
        std::fs::write(&path, actual).unwrap();
        return;
    }
    let expected = std::fs::read_to_string(&path).unwrap();
    assert_eq!(
        actual, expected,
        "{name} is stale: re-bless it if the change is intended"
    );
}

/// A directory with the suite, its judge cassette (recorded) and `recordings/`.
fn project(name: &str) -> TempDir {
    let dir = TempDir::new(&format!("eval-{name}"));
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    std::fs::create_dir_all(dir.join("recordings")).unwrap();
    std::fs::copy(
        root.join("assets/tapes/weather.wire.jsonl"),
        dir.join("recordings/weather.wire.jsonl"),
    )
    .unwrap();
    std::fs::copy(
        root.join("assets/cookbook/13_review_loop.cassette.json"),
        dir.join("recordings/review_loop.cassette.json"),
    )
    .unwrap();
    std::fs::write(dir.join("weather.suite.json"), SUITE).unwrap();
    let calls = Arc::new(AtomicUsize::new(0));
    let runtime = tokio::runtime::Runtime::new().unwrap();
    runtime.block_on(async {
        let mut suite = Suite::from_json_file(dir.join("weather.suite.json")).unwrap();
        let cassette =
            Cassette::open(dir.join("judge.cassette.json"), CassetteMode::Record).unwrap();
        suite.set_judge(Judge::new(
            cassette.wrap(Arc::new(StandIn(Arc::clone(&calls)))),
        ));
        evaluate(&suite, &[dir.join("recordings")], EvalOptions::default())
            .await
            .unwrap();
    });
    assert_eq!(calls.load(Ordering::SeqCst), 1);
    dir
}

#[test]
fn every_format_is_golden_offline_and_a_failing_case_exits_1() {
    let dir = project("formats");
    let base = dir.join("");
    for (format, golden) in [
        ("markdown", "weather.md"),
        ("json", "weather.json"),
        ("junit", "weather.junit.xml"),
        ("trx", "weather.trx"),
    ] {
        let args = [
            "eval",
            "weather.suite.json",
            "recordings",
            "--format",
            format,
        ];
        let (code, out, err) = reel_in(&base, &args);
        assert_eq!((code, err.as_str()), (1, ""), "{format}");
        assert_golden(golden, &out);
        // A second run: the judge answers from its cassette, the report is the same bytes.
        assert_eq!(
            reel_in(&base, &args).1,
            out,
            "{format} differs on a second run"
        );
    }
}

#[test]
fn out_writes_the_file_and_an_unreadable_recording_exits_2() {
    let dir = project("out");
    let base = dir.join("");
    std::fs::write(
        dir.join("recordings/torn.trace.json"),
        "{\"version\": \"1.0\",",
    )
    .unwrap();
    let (code, out, err) = reel_in(
        &base,
        &[
            "eval",
            "weather.suite.json",
            "recordings",
            "--format",
            "json",
            "--out",
            "report.json",
        ],
    );
    assert_eq!(err, "");
    assert_eq!(
        out,
        "reel eval weather: 7 of 8 cases passed, 1 failed, 0 errors, 1 unreadable recordings; report in report.json\n"
    );
    assert_eq!(code, 2, "an unreadable recording is never a pass");
    let report: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("report.json")).unwrap()).unwrap();
    assert_eq!(
        report["recordings"][1]["path"],
        "recordings/torn.trace.json"
    );
    assert_eq!(
        report["recordings"][1]["error"],
        "`recordings/torn.trace.json` is not JSON: EOF while parsing a value at line 1, column 18"
    );
    assert_eq!(report["passed"], false);
}

#[test]
fn a_bad_suite_is_refused_with_its_path() {
    let dir = project("bad");
    std::fs::write(
        dir.join("bad.suite.json"),
        r#"{"name": "s", "cases": [{"name": "a", "criterion": {"kind": "trajectory", "calls": [{"name": 3}]}}]}"#,
    )
    .unwrap();
    let (code, out, err) = reel_in(&dir.join(""), &["eval", "bad.suite.json", "recordings"]);
    assert_eq!((code, out.as_str()), (2, ""));
    assert_eq!(
        err,
        "reel: bad.suite.json: not a suite: invalid type: integer `3`, expected a string (at `cases[0].criterion.calls[0].name`)\n"
    );
}
