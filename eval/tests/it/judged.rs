//! The model-judged criteria: the judge's calls go on a cassette, so a second run of the
//! suite makes no model call and gives the same report, byte for byte.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use futures_util::future::BoxFuture;
use reel_eval::export::to_json;
use reel_eval::{CaseOutcome, E, EvalOptions, EvaluationReport, Judge, Suite, evaluate};
use reel_llm::{
    BaseLlm, Cassette, CassetteMode, LlmChunk, LlmError, LlmInterceptor, LlmRequest, LlmStream,
};

use super::{temp_dir, weather_log};

/// A judge standing in for the model: a fixed answer per criterion, every call counted.
struct CountingJudge {
    calls: Arc<AtomicUsize>,
}

impl BaseLlm for CountingJudge {
    fn model_id(&self) -> &str {
        "gemini-2.5-flash"
    }

    fn generate_stream(&self, request: LlmRequest) -> BoxFuture<'_, Result<LlmStream, LlmError>> {
        self.calls.fetch_add(1, Ordering::SeqCst);
        let question = request.last_user_text().unwrap_or_default();
        let answer = if question.starts_with("Criterion: semantic match") {
            r#"{"score": 0.9, "reason": "Same facts, other words."}"#
        } else if question.starts_with("Criterion: no hallucination") {
            r#"{"score": 1, "reason": "The temperature comes from get_weather."}"#
        } else if question.starts_with("Criterion: persona") {
            r#"{"score": 0.4, "reason": "Friendly, but not <formal> & \"curt\"."}"#
        } else {
            r#"{"score": 1.5, "reason": "out of range"}"#
        };
        Box::pin(async move {
            Ok(Box::pin(futures_util::stream::iter([Ok(LlmChunk::text(answer))])) as LlmStream)
        })
    }
}

fn suite(judge: Judge) -> Suite {
    E::suite("judged")
        .judge(judge)
        .case(
            E::case(
                "means the forecast",
                E::semantic_match("London: 14 degrees, overcast."),
            )
            .threshold(0.8)
            .only(["weather"]),
        )
        .case(E::case("no invented facts", E::hallucination()))
        .case(E::case("formal butler", E::persona("a formal English butler")).threshold(0.7))
        .case(E::case("judged safe", E::safety(["password"]).judged()))
}

async fn run(judge: Judge, dir: &std::path::Path) -> EvaluationReport {
    evaluate(&suite(judge), &[dir.to_path_buf()], EvalOptions::default())
        .await
        .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_second_run_answers_the_judge_from_the_cassette_with_zero_model_calls() {
    let dir = temp_dir("judged");
    let recordings = dir.join("recordings");
    std::fs::create_dir_all(&recordings).unwrap();
    std::fs::copy(weather_log(), recordings.join("weather.wire.jsonl")).unwrap();
    std::fs::copy(weather_log(), recordings.join("weather_again.wire.jsonl")).unwrap();
    let cassette_path = dir.join("judge.cassette.json");
    let calls = Arc::new(AtomicUsize::new(0));
    let live = || -> Arc<dyn BaseLlm> {
        Arc::new(CountingJudge {
            calls: Arc::clone(&calls),
        })
    };

    let recording = Cassette::open(&cassette_path, CassetteMode::Record).unwrap();
    let first = run(Judge::new(recording.wrap(live())), &recordings).await;
    // One semantic match (one recording), then hallucination, persona, safety on both.
    assert_eq!(calls.load(Ordering::SeqCst), 7);

    let replay = Cassette::open(&cassette_path, CassetteMode::Replay).unwrap();
    let second = run(Judge::new(replay.wrap(live())), &recordings).await;
    assert_eq!(
        calls.load(Ordering::SeqCst),
        7,
        "the second run called the model"
    );
    assert_eq!(to_json(&second), to_json(&first));
    assert!(replay.unused().await.is_empty());

    let weather = &first.recordings[0];
    assert_eq!(weather.name, "weather");
    let seen: Vec<(&str, CaseOutcome, Option<f64>, &str)> = weather
        .cases
        .iter()
        .map(|c| (c.case.as_str(), c.outcome, c.score, c.detail.as_str()))
        .collect();
    assert_eq!(
        seen,
        [
            (
                "means the forecast",
                CaseOutcome::Passed,
                Some(0.9),
                "judge: Same facts, other words."
            ),
            (
                "no invented facts",
                CaseOutcome::Passed,
                Some(1.0),
                "judge: The temperature comes from get_weather."
            ),
            (
                "formal butler",
                CaseOutcome::Failed,
                Some(0.4),
                "judge: Friendly, but not <formal> & \"curt\"."
            ),
            (
                "judged safe",
                CaseOutcome::Error,
                None,
                "the judge's answer \"{\\\"score\\\": 1.5, \\\"reason\\\": \\\"out of range\\\"}\" is not a score: `score` is outside [0, 1]"
            ),
        ]
    );
    assert_eq!(first.recordings[1].cases.len(), 3);
    assert!(!first.passed);
    assert_eq!(
        (
            first.summary.passed,
            first.summary.failed,
            first.summary.errors
        ),
        (3, 2, 2)
    );
}

#[tokio::test]
async fn a_judge_from_a_cassette_alone_never_calls_out_a_miss_is_an_error() {
    let dir = temp_dir("judge-miss");
    let cassette_path = dir.join("empty.cassette.json");
    drop(Cassette::open(&cassette_path, CassetteMode::Record).unwrap());
    let cassette = Cassette::open(&cassette_path, CassetteMode::Replay).unwrap();
    let suite = E::suite("offline")
        .judge(Judge::from_cassette(&cassette, "gemini-2.5-flash"))
        .case(E::case("no invented facts", E::hallucination()));
    let report = evaluate(&suite, &[weather_log()], EvalOptions::default())
        .await
        .unwrap();
    let case = &report.recordings[0].cases[0];
    assert_eq!(case.outcome, CaseOutcome::Error);
    assert!(
        case.detail.starts_with("the judge's call failed: "),
        "{}",
        case.detail
    );
    assert!(!report.passed);
}

#[test]
fn a_judged_case_without_a_judge_is_refused_before_anything_runs() {
    let suite = E::suite("no judge").case(E::case("means", E::semantic_match("x")));
    let error = suite.check().unwrap_err();
    assert_eq!(
        error.to_string(),
        "suite \"no judge\", case \"means\": `semantic_match` is model-judged and the suite has no judge"
    );
}
