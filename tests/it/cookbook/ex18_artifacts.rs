//! 18_artifacts: a schema-checked JSON output (one answer rejected), a text output, and
//! the artifact store's versions.

#[allow(dead_code)] // the example's `main` is not called here
#[path = "../../../examples/cookbook/18_artifacts.rs"]
mod example;

use example::cookbook::{MODEL, Models};
use example::{INVOICES, NAME};
use reel::llm::{Cassette, CassetteMode};
use serde_json::json;

use super::support::{Script, bundled_cassette, check_printed, check_recorded, check_replayed};

/// In call order: the extractor, the summarizer, the extractor's bad answer (the total as
/// text), the extractor again.
fn script() -> Script {
    Script::new()
        .answer(
            MODEL,
            r#"{"number": 1041, "supplier": "Nordlys AS", "total": 360}"#,
        )
        .answer(
            MODEL,
            "Nordlys AS billed 360 EUR for three lamps (invoice 1041).",
        )
        .answer(
            MODEL,
            r#"{"number": 1042, "supplier": "Fjell Tools", "total": "190 EUR"}"#,
        )
        .answer(
            MODEL,
            r#"{"number": 1042, "supplier": "Fjell Tools", "total": 190}"#,
        )
}

#[tokio::test(start_paused = true)]
async fn the_bundled_cassette_is_the_script_recorded() {
    let script = script();
    let models = script.clone();
    check_recorded(NAME, |cassette| {
        example::run(Models::scripted(move |id| models.model(id), Some(cassette)))
    })
    .await;
    assert!(script.used_up());
    assert_eq!(
        script.asked(),
        [
            format!("{MODEL}: {}", INVOICES[0]),
            format!("{MODEL}: {}", INVOICES[0]),
            format!("{MODEL}: {}", INVOICES[1]),
            format!("{MODEL}: {}", INVOICES[1]),
        ]
    );
}

#[tokio::test]
async fn the_extractor_asks_for_json_with_its_schema() {
    let file = Cassette::open(bundled_cassette(NAME), CassetteMode::Replay)
        .unwrap()
        .snapshot()
        .await;
    let config = &file.interactions[0].request["generationConfig"];
    assert_eq!(config["responseMimeType"], json!("application/json"));
    assert_eq!(
        config["responseSchema"]["required"],
        json!(["number", "supplier", "total"])
    );
    // The summarizer's text output asks for no JSON.
    assert_eq!(
        file.interactions[1]
            .request
            .get("generationConfig")
            .and_then(|config| config.get("responseMimeType")),
        None
    );
}

#[tokio::test]
async fn it_replays_its_bundled_cassette_offline() {
    check_replayed(NAME, |cassette| example::run(Models::replaying(cassette))).await;
}

#[test]
fn cargo_run_prints_the_bundled_output() {
    check_printed(NAME);
}
