//! The studio's per-turn latencies (time to first audio, to first text, time in tools) and
//! the tool panel's result and duration, from the overview's JSON to the page in headless
//! Chromium.

use crate::chromium;
use crate::studio_calls;

use std::path::{Path, PathBuf};

use chromium::Browser;
use reel::studio::RunningStudio;
use reel::studio::call::overview;
use reel_recorder::wire_log::{Direction, WireEntry};
use serde_json::{Value, json};

/// Turn 1: the user asks at 100 ms, the model calls a tool at 300 ms, the app answers 250 ms
/// later, the model's text comes at 700 ms and its audio at 760 ms. Turn 2: the user asks at
/// 1000 ms, the model calls a tool it then cancels 40 ms later, and says nothing.
fn call_with_tools() -> Vec<WireEntry> {
    let t0 = 1_718_000_000_000;
    let pcm = reel_protocol::Base64Data(vec![0u8; 480].into()).encode();
    let audio = format!(
        r#"{{"serverContent":{{"modelTurn":{{"parts":[{{"inlineData":{{"mimeType":"audio/pcm;rate=24000","data":"{pcm}"}}}}]}}}}}}"#
    );
    let frames: Vec<(u64, Direction, String)> = vec![
        (0, Direction::Out, r#"{"setup":{"model":"m"}}"#.into()),
        (20, Direction::In, r#"{"setupComplete":{}}"#.into()),
        (
            100,
            Direction::Out,
            r#"{"clientContent":{"turns":[{"role":"user","parts":[{"text":"Book it."}]}],"turnComplete":true}}"#.into(),
        ),
        (
            300,
            Direction::In,
            r#"{"toolCall":{"functionCalls":[{"id":"c1","name":"book_table","args":{"people":2}}]}}"#.into(),
        ),
        (
            550,
            Direction::Out,
            r#"{"toolResponse":{"functionResponses":[{"id":"c1","name":"book_table","response":{"booked":true,"ref":"R-7"}}]}}"#.into(),
        ),
        (
            700,
            Direction::In,
            r#"{"serverContent":{"outputTranscription":{"text":"Booked."}}}"#.into(),
        ),
        (760, Direction::In, audio),
        (
            800,
            Direction::In,
            r#"{"serverContent":{"turnComplete":true}}"#.into(),
        ),
        (
            1_000,
            Direction::Out,
            r#"{"clientContent":{"turns":[{"role":"user","parts":[{"text":"Cancel."}]}],"turnComplete":true}}"#.into(),
        ),
        (
            1_100,
            Direction::In,
            r#"{"toolCall":{"functionCalls":[{"id":"c2","name":"cancel_booking","args":{}}]}}"#.into(),
        ),
        (
            1_140,
            Direction::In,
            r#"{"toolCallCancellation":{"ids":["c2"]}}"#.into(),
        ),
        (
            1_200,
            Direction::In,
            r#"{"serverContent":{"turnComplete":true}}"#.into(),
        ),
    ];
    studio_calls::entries(t0, frames)
}

fn write_call(dir: &Path) -> PathBuf {
    studio_calls::write_log(dir, "tools.wire.jsonl", &call_with_tools())
}

#[test]
fn each_turn_has_its_times_to_first_audio_and_text_and_its_tool_time() {
    let dir = studio_calls::fresh_dir("latencies", "overview");
    let path = write_call(&dir);
    let overview = serde_json::to_value(overview(&path, "tools.wire.jsonl").unwrap()).unwrap();
    assert_eq!(
        overview["turns"],
        json!([
            {"n": 1, "start_ms": 0, "end_ms": 800, "first_audio_ms": 660, "first_text_ms": 600, "tool_ms": 250},
            {"n": 2, "start_ms": 800, "end_ms": 1200, "first_audio_ms": null, "first_text_ms": null, "tool_ms": 40},
        ])
    );
    assert_eq!(
        overview["tools"],
        json!([
            {"id": "c1", "name": "book_table", "args": {"people": 2}, "start_ms": 300, "end_ms": 550, "duration_ms": 250, "result": {"booked": true, "ref": "R-7"}, "cancelled": false, "call_seq": 4},
            {"id": "c2", "name": "cancel_booking", "args": {}, "start_ms": 1100, "end_ms": 1140, "duration_ms": 40, "result": null, "cancelled": true, "call_seq": 10},
        ])
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn in_a_browser_the_latencies_show_per_turn_and_the_tool_panel_shows_its_result() {
    if !chromium::available(
        "in_a_browser_the_latencies_show_per_turn_and_the_tool_panel_shows_its_result",
    ) {
        return;
    }
    let dir = studio_calls::fresh_dir("latencies", "browser");
    write_call(&dir);
    let studio = RunningStudio::start("127.0.0.1:0", &dir).await.unwrap();
    let profile = studio_calls::fresh_dir("latencies", "chromium-profile");
    let mut browser = Browser::start(&profile).await;

    browser
        .goto(&format!("{}#/call/tools.wire.jsonl", studio.url()))
        .await;
    browser
        .wait_for("document.querySelectorAll('#latencies tbody tr').length === 2")
        .await;
    let rows = browser
        .eval("[...document.querySelectorAll('#latencies tr')].map((r) => [...r.cells].map((c) => c.textContent))")
        .await;
    assert_eq!(
        rows,
        json!([
            ["turn", "first audio", "first text", "tools"],
            ["1", "660 ms", "600 ms", "250 ms"],
            ["2", "—", "—", "40 ms"],
        ])
    );

    // The tool bar opens to its arguments, its result and its duration.
    browser
        .wait_for("window.studio.state.items.some((i) => i.type === 'tool')")
        .await;
    let point = browser.wait_for("window.studio.toolBarPoint(0)").await;
    browser
        .click(point["x"].as_f64().unwrap(), point["y"].as_f64().unwrap())
        .await;
    let result = browser
        .wait_for("document.querySelector('#detail-result')?.textContent")
        .await;
    assert_eq!(
        serde_json::from_str::<Value>(result.as_str().unwrap()).unwrap(),
        json!({"booked": true, "ref": "R-7"})
    );
    let texts = browser
        .eval("[...document.querySelectorAll('#detail h3, #detail p')].map((e) => e.textContent)")
        .await;
    assert_eq!(
        texts,
        json!([
            "tool book_table · id c1 · 250 ms",
            "called at 0.300 s, answered at 0.550 s (as recorded on the wire)",
        ])
    );
    browser
        .screenshot(
            &Path::new(env!("CARGO_MANIFEST_DIR")).join("target/studio-screenshots/latencies.png"),
        )
        .await;
    studio.stop().await;
}
