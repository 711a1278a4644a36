//! The studio's call controls for a voice-agent developer: a colour legend, "no journal"
//! on the lanes a missing journal leaves empty, no play button on a text-only call, and
//! download links for the audio, the agent trace (what `reel export` writes, compared with
//! the real command's output) and the call as one HTML page — in headless Chromium.

use crate::chromium;

use std::path::{Path, PathBuf};
use std::process::Command;

use chromium::Browser;
use reel::studio::RunningStudio;
use reel_protocol::Base64Data;
use reel_recorder::wire_log::{Direction, WireEntry};
use serde_json::json;

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn fresh_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!(
        "reel-studio-controls-{name}-{}",
        std::process::id()
    ));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// A short voice call: the model answers with 100 ms of audio.
fn voice_call() -> Vec<WireEntry> {
    let t0 = 1_718_000_000_000;
    let pcm = Base64Data(vec![0u8; 4_800].into()).encode();
    [
        (0, Direction::Out, r#"{"setup":{"model":"m"}}"#.to_owned()),
        (10, Direction::In, r#"{"setupComplete":{}}"#.to_owned()),
        (
            50,
            Direction::In,
            format!(
                r#"{{"serverContent":{{"modelTurn":{{"parts":[{{"inlineData":{{"mimeType":"audio/pcm;rate=24000","data":"{pcm}"}}}}]}}}}}}"#
            ),
        ),
        (
            60,
            Direction::In,
            r#"{"serverContent":{"turnComplete":true}}"#.to_owned(),
        ),
    ]
    .into_iter()
    .enumerate()
    .map(|(i, (ts, dir, payload))| {
        WireEntry::frame(i as u64 + 1, dir, t0 + ts, payload.into_bytes(), None, false)
    })
    .collect()
}

/// The download links: label, address, file name.
const DOWNLOADS: &str = "[...document.querySelectorAll('#downloads a')].map((a) => [a.textContent, a.getAttribute('href'), a.download])";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn in_a_browser_a_call_has_a_legend_no_journal_notes_and_downloads_and_no_play_without_audio()
{
    if !chromium::available(
        "in_a_browser_a_call_has_a_legend_no_journal_notes_and_downloads_and_no_play_without_audio",
    ) {
        return;
    }
    let dir = fresh_dir("browser");
    let weather = dir.join("weather.wire.jsonl");
    std::fs::copy(root().join("assets/tapes/weather.wire.jsonl"), &weather).unwrap();
    let text: String = voice_call()
        .iter()
        .map(|entry| serde_json::to_string(entry).unwrap() + "\n")
        .collect();
    std::fs::write(dir.join("voice.wire.jsonl"), text).unwrap();
    // The voice call has a journal (empty: nothing changed); the weather call has none.
    std::fs::write(dir.join("voice.journal.jsonl"), "").unwrap();
    let studio = RunningStudio::start("127.0.0.1:0", &dir).await.unwrap();
    let profile = fresh_dir("chromium-profile");
    let mut browser = Browser::start(&profile).await;

    // A text-only call without a journal.
    browser
        .goto(&format!("{}#/call/weather.wire.jsonl", studio.url()))
        .await;
    browser
        .wait_for("window.studio.state.overview && window.studio.state.laneNotes")
        .await;
    assert_eq!(
        browser
            .eval("[document.querySelector('#play').hidden, document.querySelector('#no-audio').hidden, document.querySelector('#no-audio').textContent]")
            .await,
        json!([true, false, "text only: no audio"])
    );
    assert_eq!(
        browser.eval("window.studio.state.laneNotes").await,
        json!({"phases": "no journal", "state": "no journal"})
    );
    assert_eq!(
        browser
            .eval("[...document.querySelectorAll('#legend .key')].map((k) => k.textContent)")
            .await,
        json!([
            "audio frame",
            "tool call or response frame",
            "interrupted",
            "close or unreadable frame",
            "setup",
            "other frame",
            "tool call answered",
            "tool call never answered",
            "tool call cancelled",
            "state change",
            "context sent at a turn boundary",
            "context asking the model to answer",
            "navigation block",
            "flow step active",
            "flow step done",
            "tool call denied"
        ])
    );
    let base = "/api/recordings/weather.wire.jsonl";
    assert_eq!(
        browser.eval(DOWNLOADS).await,
        json!([
            [
                "⤓ trace",
                format!("{base}/trace.json"),
                "weather.trace.json"
            ],
            ["⤓ HTML", format!("{base}/page.html"), "weather.html"],
        ])
    );
    // The trace is what `reel export` writes.
    let trace = browser
        .eval("fetch(document.querySelectorAll('#downloads a')[0].href).then((r) => r.text())")
        .await;
    let export = Command::new(env!("CARGO_BIN_EXE_reel"))
        .arg("export")
        .arg(&weather)
        .output()
        .unwrap();
    assert!(export.status.success(), "{export:?}");
    assert_eq!(
        trace.as_str().unwrap(),
        String::from_utf8(export.stdout).unwrap()
    );
    // The page is `reel show --html`'s: the call embedded, the studio's page around it.
    let page = browser
        .eval("fetch(document.querySelectorAll('#downloads a')[1].href).then(async (r) => [r.headers.get('content-type'), await r.text()])")
        .await;
    assert_eq!(page[0], json!("text/html; charset=utf-8"));
    let html = page[1].as_str().unwrap();
    assert!(html.starts_with("<!doctype html>"), "{}", &html[..80]);
    assert!(
        html.contains("window.REEL_OFFLINE = {\"recording\": "),
        "no data"
    );
    browser
        .screenshot(&root().join("target/studio-screenshots/controls.png"))
        .await;

    // A voice call with a journal: a play button, a WAV, no notes.
    browser
        .eval("location.hash = '#/call/voice.wire.jsonl'")
        .await;
    // The lanes' notes are the timeline's: wait until it was drawn for this call (it is
    // drawn once the events are loaded, after the downloads are listed).
    browser
        .wait_for("window.studio.state.name === 'voice.wire.jsonl' && window.studio.state.overview && document.querySelectorAll('#downloads a').length === 3 && window.studio.state.drawnFor === 'voice.wire.jsonl'")
        .await;
    assert_eq!(
        browser
            .eval("[document.querySelector('#play').hidden, document.querySelector('#no-audio').hidden]")
            .await,
        json!([false, true])
    );
    assert_eq!(
        browser.eval("window.studio.state.laneNotes").await,
        json!({})
    );
    let base = "/api/recordings/voice.wire.jsonl";
    assert_eq!(
        browser.eval(DOWNLOADS).await,
        json!([
            ["⤓ WAV", format!("{base}/audio.wav"), "voice.wav"],
            ["⤓ trace", format!("{base}/trace.json"), "voice.trace.json"],
            ["⤓ HTML", format!("{base}/page.html"), "voice.html"],
        ])
    );
    assert_eq!(
        browser
            .eval("fetch(document.querySelectorAll('#downloads a')[0].href).then(async (r) => [r.status, r.headers.get('content-type')])")
            .await,
        json!([200, "audio/wav"])
    );
    studio.stop().await;
}
