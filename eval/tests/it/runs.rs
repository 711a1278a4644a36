//! Runs over directories: wire logs, traces and cassettes found recursively and evaluated in
//! parallel; an unreadable recording is an error in the report, never a pass.

use std::collections::BTreeMap;

use reel_eval::{CaseOutcome, E, EvalError, EvalOptions, ModelPrice, PriceTable, Score, evaluate};

use super::{root, temp_dir, weather_log};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_kind_of_recording_is_read_and_a_broken_one_is_an_error() {
    let dir = temp_dir("runs");
    let sub = dir.join("text");
    std::fs::create_dir_all(&sub).unwrap();
    std::fs::copy(weather_log(), dir.join("weather.wire.jsonl")).unwrap();
    // The session's own out-of-band calls: part of `weather`, not a recording.
    std::fs::copy(
        root().join("assets/cookbook/13_review_loop.cassette.json"),
        dir.join("weather.cassette.json"),
    )
    .unwrap();
    std::fs::copy(
        root().join("tests/golden/weather.trace.json"),
        sub.join("exported.trace.json"),
    )
    .unwrap();
    std::fs::copy(
        root().join("assets/cookbook/13_review_loop.cassette.json"),
        sub.join("review_loop.cassette.json"),
    )
    .unwrap();
    std::fs::write(dir.join("torn.wire.jsonl"), "{\"seq\":1,\n").unwrap();
    std::fs::write(dir.join("notes.txt"), "not a recording").unwrap();

    let prices = PriceTable {
        currency: "USD".to_owned(),
        models: BTreeMap::from([(
            "gemini-live-2.5-flash-preview".to_owned(),
            ModelPrice {
                prompt_per_million: 1.0,
                completion_per_million: 10.0,
            },
        )]),
    };
    let suite = E::suite("mixed")
        .prices(prices)
        .case(E::case(
            "has an answer",
            E::custom("answers", |trace| {
                Score::pass_fail(
                    !trace.turns().is_empty(),
                    format!("{} turns", trace.turns().len()),
                )
            }),
        ))
        .case(E::case("weather", E::contains_match(["14°C"])).only(["weather", "exported"]));
    let report = evaluate(&suite, std::slice::from_ref(&dir), EvalOptions::default())
        .await
        .unwrap();

    let seen: Vec<(String, Option<&str>, Vec<CaseOutcome>)> = report
        .recordings
        .iter()
        .map(|r| {
            (
                r.path
                    .strip_prefix(&dir.display().to_string())
                    .unwrap()
                    .to_owned(),
                r.error.as_deref(),
                r.cases.iter().map(|c| c.outcome).collect(),
            )
        })
        .collect();
    let torn = format!(
        "`{}` line 1 is not a valid entry (EOF while parsing a value, at column 9); the file is corrupt",
        dir.join("torn.wire.jsonl").display()
    );
    assert_eq!(
        seen,
        [
            (
                "/text/exported.trace.json".to_owned(),
                None,
                vec![CaseOutcome::Passed, CaseOutcome::Passed]
            ),
            (
                "/text/review_loop.cassette.json".to_owned(),
                None,
                vec![CaseOutcome::Passed]
            ),
            ("/torn.wire.jsonl".to_owned(), Some(torn.as_str()), vec![]),
            (
                "/weather.wire.jsonl".to_owned(),
                None,
                vec![CaseOutcome::Passed, CaseOutcome::Passed]
            ),
        ]
    );
    assert!(!report.passed, "an unreadable recording is never a pass");
    assert_eq!(
        (
            report.summary.recordings,
            report.summary.unreadable,
            report.summary.passed
        ),
        (4, 1, 5)
    );
    // Tokens × prices: 329 prompt, 45 completion on each weather recording; the
    // cassette's model has no price.
    let weather = report.recordings[3].cost.as_ref().unwrap();
    assert_eq!(weather.amount, 0.000779);
    assert_eq!(weather.to_text(), "0.000779 USD");
    let cassette = report.recordings[1].cost.as_ref().unwrap();
    assert_eq!(
        cassette.to_text(),
        "0.000000 USD (at least: 4 answers unpriced, no price for gemini-2.5-flash)"
    );
    assert_eq!(report.summary.cost.as_ref().unwrap().amount, 0.001558);
}

#[tokio::test]
async fn inputs_without_recordings_are_refused() {
    let dir = temp_dir("empty");
    let suite = E::suite("s").case(E::case("c", E::contains_match(["x"])));
    let error = evaluate(&suite, std::slice::from_ref(&dir), EvalOptions::default())
        .await
        .unwrap_err();
    assert!(matches!(error, EvalError::NoRecordings { .. }), "{error}");
}

#[tokio::test]
async fn a_compressed_wire_log_is_found_and_read_as_the_plain_one() {
    use std::io::Write;
    let dir = temp_dir("compressed");
    let mut encoder = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    encoder
        .write_all(&std::fs::read(weather_log()).unwrap())
        .unwrap();
    std::fs::write(dir.join("weather.wire.jsonl.gz"), encoder.finish().unwrap()).unwrap();
    let suite = E::suite("s").case(E::case("temperature", E::contains_match(["14°C"])));
    let report = evaluate(&suite, std::slice::from_ref(&dir), EvalOptions::default())
        .await
        .unwrap();
    assert_eq!(report.recordings.len(), 1);
    assert_eq!(report.recordings[0].name, "weather");
    assert_eq!(report.recordings[0].cases[0].outcome, CaseOutcome::Passed);
}
