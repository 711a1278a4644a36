//! The studio for a voice-agent developer: a call's transcript beside its timeline (who
//! said what, when; a click seeks there) and its setup summarised at the top (model, voice,
//! instruction, tools), from the overview's JSON to the page in headless Chromium.

use crate::chromium;
use crate::studio_calls;

use std::path::{Path, PathBuf};

use chromium::Browser;
use reel::studio::RunningStudio;
use reel::studio::call::overview;
use reel_recorder::wire_log::{Direction, WireEntry};
use serde_json::json;

/// A voice call with transcriptions both ways, then a typed question answered in text.
fn transcribed_call() -> Vec<WireEntry> {
    let t0 = 1_718_000_000_000;
    let frames: [(u64, Direction, &str); 12] = [
        (
            0,
            Direction::Out,
            r#"{"setup":{"model":"models/gemini-live-2.5-flash-native-audio","generationConfig":{"responseModalities":["AUDIO"],"speechConfig":{"voiceConfig":{"prebuiltVoiceConfig":{"voiceName":"Kore"}}}},"systemInstruction":{"parts":[{"text":"You book tables."}]},"tools":[{"functionDeclarations":[{"name":"book_table"},{"name":"cancel_booking"}]},{"googleSearch":{}}]}}"#,
        ),
        (40, Direction::In, r#"{"setupComplete":{}}"#),
        (
            300,
            Direction::In,
            r#"{"serverContent":{"inputTranscription":{"text":"A table "}}}"#,
        ),
        (
            420,
            Direction::In,
            r#"{"serverContent":{"inputTranscription":{"text":"for two, please."}}}"#,
        ),
        (
            700,
            Direction::In,
            r#"{"serverContent":{"outputTranscription":{"text":"Which "}}}"#,
        ),
        (
            760,
            Direction::In,
            r#"{"serverContent":{"outputTranscription":{"text":"evening?"}}}"#,
        ),
        (
            900,
            Direction::In,
            r#"{"serverContent":{"turnComplete":true}}"#,
        ),
        (
            1_500,
            Direction::Out,
            r#"{"clientContent":{"turns":[{"role":"user","parts":[{"text":"Friday <b>8pm</b>"}]}],"turnComplete":true}}"#,
        ),
        (
            1_800,
            Direction::In,
            r#"{"serverContent":{"modelTurn":{"parts":[{"text":"Thinking…","thought":true},{"text":"Booked for "}]}}}"#,
        ),
        (
            1_850,
            Direction::In,
            r#"{"serverContent":{"modelTurn":{"parts":[{"text":"Friday."}]}}}"#,
        ),
        (
            1_900,
            Direction::In,
            r#"{"serverContent":{"turnComplete":true}}"#,
        ),
        (
            2_000,
            Direction::In,
            r#"{"serverContent":{"outputTranscription":{"text":""}}}"#,
        ),
    ];
    studio_calls::entries(t0, Vec::from(frames))
}

fn write_call(dir: &Path) -> PathBuf {
    studio_calls::write_log(dir, "booking.wire.jsonl", &transcribed_call())
}

#[test]
fn the_overview_holds_who_said_what_and_when_and_the_setup_in_a_few_fields() {
    let dir = studio_calls::fresh_dir("transcript", "overview");
    let path = write_call(&dir);
    let overview = serde_json::to_value(overview(&path, "booking.wire.jsonl").unwrap()).unwrap();
    assert_eq!(
        overview["transcript"],
        json!([
            {"who": "user", "t_ms": 300, "seq": 3, "source": "transcription", "text": "A table for two, please."},
            {"who": "model", "t_ms": 700, "seq": 5, "source": "transcription", "text": "Which evening?"},
            {"who": "user", "t_ms": 1500, "seq": 8, "source": "text", "text": "Friday <b>8pm</b>"},
            {"who": "model", "t_ms": 1800, "seq": 9, "source": "text", "text": "Booked for Friday."},
        ])
    );
    assert_eq!(
        overview["setup"],
        json!({
            "model": "models/gemini-live-2.5-flash-native-audio",
            "voice": "Kore",
            "instruction": "You book tables.",
            "tools": ["book_table", "cancel_booking", "googleSearch"],
            "modalities": ["AUDIO"],
        })
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn in_a_browser_the_transcript_sits_beside_the_timeline_and_a_click_seeks_to_its_frame() {
    if !chromium::available(
        "in_a_browser_the_transcript_sits_beside_the_timeline_and_a_click_seeks_to_its_frame",
    ) {
        return;
    }
    let dir = studio_calls::fresh_dir("transcript", "browser");
    write_call(&dir);
    let studio = RunningStudio::start("127.0.0.1:0", &dir).await.unwrap();
    let profile = studio_calls::fresh_dir("transcript", "chromium-profile");
    let mut browser = Browser::start(&profile).await;

    browser
        .goto(&format!("{}#/call/booking.wire.jsonl", studio.url()))
        .await;
    browser
        .wait_for("document.querySelectorAll('#transcript-lines .line').length === 4")
        .await;
    let lines = browser
        .eval("[...document.querySelectorAll('#transcript-lines .line')].map((l) => [...l.children].map((c) => c.textContent))")
        .await;
    assert_eq!(
        lines,
        json!([
            ["0.300 s", "user", "A table for two, please."],
            ["0.700 s", "model", "Which evening?"],
            ["1.500 s", "user", "Friday <b>8pm</b>"],
            ["1.800 s", "model", "Booked for Friday."],
        ])
    );
    // Recorded text stays text: the user's `<b>` is not markup.
    assert_eq!(
        browser
            .eval("document.querySelectorAll('#transcript b').length")
            .await,
        json!(0)
    );
    // Beside the timeline, not below it.
    let beside = browser
        .eval("(() => { const t = document.querySelector('#timeline').getBoundingClientRect(); const p = document.querySelector('#transcript').getBoundingClientRect(); return p.left >= t.right && p.top < t.bottom; })()")
        .await;
    assert_eq!(beside, json!(true));

    // The setup at the top.
    let setup = browser
        .eval("[...document.querySelectorAll('#call-setup dd')].map((d) => [d.dataset.field, d.textContent])")
        .await;
    assert_eq!(
        setup,
        json!([
            ["model", "models/gemini-live-2.5-flash-native-audio"],
            ["voice", "Kore"],
            ["modalities", "AUDIO"],
            ["instruction", "You book tables."],
            ["tools", "book_table, cancel_booking, googleSearch"],
        ])
    );

    // A click on the third line seeks there: the cursor, the clock, the line marked, and
    // its frame in full.
    browser
        .eval("document.querySelectorAll('#transcript-lines .line')[2].click()")
        .await;
    let heading = browser
        .wait_for("document.querySelector('#detail h3')?.textContent.startsWith('frame 8') && document.querySelector('#detail h3').textContent")
        .await;
    assert_eq!(
        heading,
        json!("frame 8 · client → server · 1.500 s · clientContent")
    );
    assert_eq!(
        browser
            .eval("[window.studio.state.cursorMs, document.querySelector('#clock').textContent, document.querySelector('#transcript-lines .current').dataset.index]")
            .await,
        json!([1500, "1.500 s", "2"])
    );
    browser
        .screenshot(
            &Path::new(env!("CARGO_MANIFEST_DIR")).join("target/studio-screenshots/transcript.png"),
        )
        .await;
    studio.stop().await;
}
