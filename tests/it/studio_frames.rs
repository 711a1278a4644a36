//! The studio's frame list: the frames in view with their direction, type and size,
//! filtered by direction and type, frames at the same millisecond each a row that opens to
//! the frame in full — in headless Chromium on the bundled weather tape.

use crate::chromium;

use std::path::{Path, PathBuf};

use chromium::Browser;
use reel::studio::RunningStudio;
use serde_json::json;

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn fresh_dir(name: &str) -> PathBuf {
    let dir =
        std::env::temp_dir().join(format!("reel-studio-frames-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// The list's rows as their cells' texts (the summary left out: it is `reel show`'s).
const ROWS: &str = "[...document.querySelectorAll('#frame-rows tr')].map((r) => [...r.cells].slice(0, 5).map((c) => c.textContent))";

/// Picks `value` in the `<select>` `id`, as a user would.
fn choose(id: &str, value: &str) -> String {
    format!(
        "(() => {{ const s = document.querySelector('#{id}'); s.value = '{value}'; s.dispatchEvent(new Event('change')); return s.value; }})()"
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn in_a_browser_the_frame_list_filters_by_direction_and_type_and_opens_each_frame() {
    if !chromium::available(
        "in_a_browser_the_frame_list_filters_by_direction_and_type_and_opens_each_frame",
    ) {
        return;
    }
    let dir = fresh_dir("browser");
    std::fs::copy(
        root().join("assets/tapes/weather.wire.jsonl"),
        dir.join("weather.wire.jsonl"),
    )
    .unwrap();
    let studio = RunningStudio::start("127.0.0.1:0", &dir).await.unwrap();
    let profile = fresh_dir("chromium-profile");
    let mut browser = Browser::start(&profile).await;

    browser
        .goto(&format!("{}#/call/weather.wire.jsonl", studio.url()))
        .await;
    browser
        .wait_for("document.querySelectorAll('#frame-rows tr').length > 0")
        .await;
    assert_eq!(
        browser
            .eval("document.querySelector('#frame-count').textContent")
            .await,
        json!("showing 23 of 23 in view")
    );

    // Only what the client sent.
    assert_eq!(
        browser.eval(&choose("frame-dir", "out")).await,
        json!("out")
    );
    assert_eq!(
        browser.eval(ROWS).await,
        json!([
            ["1", "0.000 s", "↑ out", "setup", "627 B"],
            ["4", "0.180 s", "↑ out", "clientContent", "93 B"],
            ["9", "0.360 s", "↑ out", "clientContent", "116 B"],
            ["11", "0.540 s", "↑ out", "toolResponse", "138 B"],
            ["16", "0.720 s", "↑ out", "contextUpdate", "156 B"],
            ["17", "0.720 s", "↑ out", "clientContent", "115 B"],
            ["22", "0.900 s", "↑ out", "contextUpdate", "83 B"],
        ])
    );
    assert_eq!(
        browser
            .eval("document.querySelector('#frame-count').textContent")
            .await,
        json!("showing 7 of 23 in view")
    );
    browser.eval(&choose("frame-dir", "")).await;

    // The model's text frames, two at 360 ms and two at 720 ms, each a row of its own.
    assert_eq!(
        browser
            .eval(&choose("frame-kind", "serverContent.text"))
            .await,
        json!("serverContent.text")
    );
    assert_eq!(
        browser.eval(ROWS).await,
        json!([
            ["5", "0.360 s", "↓ in", "serverContent.text", "101 B"],
            ["6", "0.360 s", "↓ in", "serverContent.text", "113 B"],
            ["12", "0.720 s", "↓ in", "serverContent.text", "112 B"],
            ["13", "0.720 s", "↓ in", "serverContent.text", "101 B"],
            ["18", "0.900 s", "↓ in", "serverContent.text", "104 B"],
        ])
    );

    // A click on the second opens frame 6 in full, the cursor at its time.
    browser
        .eval("document.querySelectorAll('#frame-rows tr')[1].click()")
        .await;
    let heading = browser
        .wait_for("document.querySelector('#detail h3')?.textContent.startsWith('frame 6') && document.querySelector('#detail h3').textContent")
        .await;
    assert_eq!(
        heading,
        json!("frame 6 · server → client · 0.360 s · serverContent.text")
    );
    assert_eq!(
        browser.eval("window.studio.state.cursorMs").await,
        json!(360)
    );
    browser
        .screenshot(&root().join("target/studio-screenshots/frames.png"))
        .await;
    studio.stop().await;
}
