//! 17_evaluation_suite: every `E::` criterion over the two weather sessions; the judge's
//! six calls on the bundled cassette; the `guide` session fails "offers more help".

#[allow(dead_code)] // the example's `main` is not called here
#[path = "../../../examples/cookbook/17_evaluation_suite.rs"]
mod example;

use std::path::Path;

use example::NAME;
use example::cookbook::{MODEL, Models};
use reel::eval::{CaseOutcome, Judge};
use reel::llm::{Cassette, CassetteMode};
use reel::recorder::cassette::CassetteFile;

use super::support::{Script, bundled_cassette, check_printed, check_recorded, check_replayed};

/// The judge's answers. The two sessions are judged at once, so each answer is picked by
/// what its question holds: the semantic-match question ends with the answer judged (each
/// session's differs), and the other two criteria get the same answer for both sessions,
/// which make the same claims in the same voice.
fn script() -> Script {
    Script::new()
        .when(
            MODEL,
            "Anything else I can help with?\n\nConversation:",
            r#"{"score": 0.9, "reason": "The same temperature and sky; the offer of more help is not part of the forecast."}"#,
        )
        .when(
            MODEL,
            "in London right now.\n\nConversation:",
            r#"{"score": 1, "reason": "14°C and cloudy is 14 degrees and overcast."}"#,
        )
        .when(
            MODEL,
            "Criterion: no hallucination.",
            r#"{"score": 1, "reason": "The only claim, 14°C and cloudy in London, is get_weather's result."}"#,
        )
        .when(
            MODEL,
            "Criterion: persona.",
            r#"{"score": 0.9, "reason": "Friendly and brief throughout, and only about the weather."}"#,
        )
}

/// The judge's calls, in an order of their own: the sessions are judged at once, so the
/// cassette's file order (the order the calls came in) can vary from run to run; sorted by
/// request, the recording is the same bytes every time. Replay matches calls by request, so
/// the order does not change what the example prints.
fn sort_interactions(path: &Path) {
    let mut file = CassetteFile::read(path, u64::MAX).unwrap();
    file.interactions
        .sort_by_key(|interaction| serde_json::to_string(&interaction.request).unwrap());
    file.write(path, u64::MAX).unwrap();
}

#[tokio::test(start_paused = true)]
async fn the_bundled_cassette_is_the_script_recorded() {
    let script = script();
    let models = script.clone();
    check_recorded(NAME, |cassette| async move {
        let path = cassette.path().to_owned();
        let printed =
            example::run(Models::scripted(move |id| models.model(id), Some(cassette))).await?;
        sort_interactions(&path);
        Ok(printed)
    })
    .await;
    // Three judged cases on each of two sessions; asked at once, so compared as a set.
    let mut asked = script.asked();
    asked.sort();
    let weather = "Turn 1\nUser: Hello!\nAssistant: Hi! I'm your weather assistant. Which city would you like the weather for?\nTurn 2\nUser: What's the weather in London?\nTool call: get_weather({\"city\":\"London\"}) -> {\"city\":\"London\",\"temp_c\":14,\"conditions\":\"cloudy\"}\n";
    let conversation = |answer: &str, goodbye: &str, bye: &str| {
        format!("{weather}Assistant: {answer}\nTurn 3\nUser: {goodbye}\nAssistant: {bye}\n")
    };
    let chatty = conversation(
        "It's 14°C and cloudy in London right now. Anything else I can help with?",
        "Thanks, that's all I needed.",
        "You're welcome. Have a lovely day!",
    );
    let brief = conversation(
        "It's 14°C and cloudy in London right now.",
        "Thanks, that's all.",
        "You're welcome. Goodbye!",
    );
    let semantic = |answer: &str, talk: &str| {
        format!(
            "{MODEL}: Criterion: semantic match. Does the answer below mean the same as the \
             expected answer? 1 = the same meaning, 0 = a different meaning.\n\nExpected \
             answer:\nLondon is 14 degrees and overcast\n\nAnswer:\n{answer}\n\nConversation:\n{talk}"
        )
    };
    let hallucination = |talk: &str| {
        format!(
            "{MODEL}: Criterion: no hallucination. Is every factual claim the assistant makes \
             supported by what the user said or what the tools returned? 1 = every claim \
             supported, 0 = claims invented.\n\nConversation:\n{talk}"
        )
    };
    let persona = |talk: &str| {
        format!(
            "{MODEL}: Criterion: persona. Does the assistant keep this persona throughout: a \
             friendly, concise weather assistant? 1 = always in persona, 0 = out of \
             persona.\n\nConversation:\n{talk}"
        )
    };
    let mut expected = vec![
        semantic(
            "It's 14°C and cloudy in London right now. Anything else I can help with?",
            &chatty,
        ),
        semantic("It's 14°C and cloudy in London right now.", &brief),
        hallucination(&chatty),
        hallucination(&brief),
        persona(&chatty),
        persona(&brief),
    ];
    expected.sort();
    assert_eq!(asked, expected);
}

#[tokio::test]
async fn it_replays_its_bundled_cassette_offline() {
    check_replayed(NAME, |cassette| example::run(Models::replaying(cassette))).await;
}

#[tokio::test]
async fn the_guide_session_fails_one_case_for_not_offering_more_help() {
    let cassette = Cassette::open(bundled_cassette(NAME), CassetteMode::Replay).unwrap();
    let report = example::evaluate_recordings(Judge::from_cassette(&cassette, MODEL))
        .await
        .unwrap();
    let outcomes: Vec<(String, String, CaseOutcome, Option<f64>, String)> = report
        .recordings
        .iter()
        .flat_map(|r| {
            r.cases
                .iter()
                .filter(|c| c.outcome != CaseOutcome::Passed)
                .map(|c| {
                    (
                        r.name.clone(),
                        c.case.clone(),
                        c.outcome,
                        c.score,
                        c.detail.clone(),
                    )
                })
        })
        .collect();
    assert_eq!(
        outcomes,
        [(
            "guide".to_owned(),
            "offers more help".to_owned(),
            CaseOutcome::Failed,
            Some(0.0),
            "found 0 of 1; missing \"anything else\"".to_owned(),
        )]
    );
    assert_eq!(
        (
            report.summary.cases,
            report.summary.passed,
            report.summary.failed
        ),
        (20, 19, 1)
    );
    // Every path in the report is the checkout's, not this machine's.
    let paths: Vec<&str> = report.recordings.iter().map(|r| r.path.as_str()).collect();
    assert_eq!(
        paths,
        [
            "assets/cookbook/17_evaluation_suite/guide.wire.jsonl",
            "assets/cookbook/17_evaluation_suite/weather.wire.jsonl",
        ]
    );
}

#[tokio::test]
async fn a_question_the_cassette_does_not_hold_is_an_error_not_a_call() {
    // An empty cassette: every judged case is an error (no score), never a pass or a call.
    let dir = crate::cli_support::TempDir::new("cookbook-17-empty");
    let path = dir.join("empty.cassette.json");
    CassetteFile::new().write(&path, u64::MAX).unwrap();
    let cassette = Cassette::open(&path, CassetteMode::Replay).unwrap();
    let report = example::evaluate_recordings(Judge::from_cassette(&cassette, MODEL))
        .await
        .unwrap();
    let errors: Vec<(String, String)> = report
        .recordings
        .iter()
        .flat_map(|r| {
            r.cases
                .iter()
                .filter(|c| c.outcome == CaseOutcome::Error)
                .map(|c| (r.name.clone(), c.criterion.clone()))
        })
        .collect();
    let judged = ["semantic_match", "hallucination", "persona"];
    let expected: Vec<(String, String)> = ["guide", "weather"]
        .iter()
        .flat_map(|r| judged.iter().map(|c| (r.to_string(), c.to_string())))
        .collect();
    assert_eq!(errors, expected);
    assert!(!report.passed);
}

#[test]
fn cargo_run_prints_the_bundled_output() {
    check_printed(NAME);
}
