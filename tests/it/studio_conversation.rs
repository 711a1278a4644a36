//! `reel studio` shows conversation control on the phases lane: the context the runtime sent
//! at each turn boundary (its one `clientContent` frame: turns, roles, whether it asked the
//! model to answer; under deferred delivery where it was queued and where it went out) and
//! the navigation block at each turn where it changed.
//!
//! The call is the `debt_collection` example's bundled recording, with the journal its agent
//! writes when it replays that recording offline beside it (the bundled tape has none). The
//! call model the page renders from is compared with a golden file
//! (`tests/golden/studio_debt_collection.phases.json`; after an intended change:
//! `REEL_BLESS=1 cargo test --test it studio_conversation`), and headless Chromium opens the
//! page and reads the context and the navigation block as text.

#[allow(dead_code)] // the example's `main` is not called here
#[path = "../../examples/debt_collection.rs"]
mod debt_collection;

use crate::chromium;

use std::path::{Path, PathBuf};

use chromium::Browser;
use debt_collection::collector::{CALLER_TURNS, debt_collector};
use reel::studio::RunningStudio;
use reel::studio::call::overview;
use serde_json::{Value, json};

/// The recording's file name.
const NAME: &str = "debt_collection.wire.jsonl";

fn fresh_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("reel-conversation-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// A directory holding the bundled recording and, beside it, the journal the agent writes
/// replaying it (offline, on virtual time, in a runtime of its own).
fn recording_dir(name: &str) -> PathBuf {
    let dir = fresh_dir(name);
    std::fs::write(dir.join(NAME), debt_collection::DEBT_TAPE).unwrap();
    let journal = std::thread::spawn(|| {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .start_paused(true)
            .build()
            .unwrap();
        runtime.block_on(async {
            let outcome = debt_collector()
                .greeting(CALLER_TURNS[0].0)
                .replay(debt_collection::bundled_tape().unwrap())
                .await
                .unwrap()
                .finish()
                .await;
            assert_eq!(outcome.divergences, vec![]);
            outcome.journal
        })
    })
    .join()
    .unwrap();
    let text: String = journal
        .iter()
        .map(|mutation| serde_json::to_string(mutation).unwrap() + "\n")
        .collect();
    std::fs::write(dir.join("debt_collection.journal.jsonl"), text).unwrap();
    dir
}

/// What the phases lane draws: the phases, the context at each boundary, the navigation.
fn phases_lane(path: &Path) -> Value {
    let call = overview(path, NAME).unwrap();
    json!({
        "phases": call.phases,
        "context": call.context,
        "navigation": call.navigation,
    })
}

#[test]
fn the_phases_lane_of_the_debt_collection_call_is_the_golden_one() {
    let dir = recording_dir("golden");
    let lane = phases_lane(&dir.join(NAME));
    let text = serde_json::to_string_pretty(&lane).unwrap() + "\n";
    let golden = format!(
        "{}/tests/golden/studio_debt_collection.phases.json",
        env!("CARGO_MANIFEST_DIR")
    );
    if std::env::var_os("REEL_BLESS").is_some() {
        std::fs::write(&golden, &text).unwrap();
        return;
    }
    let expected = std::fs::read_to_string(&golden).unwrap();
    assert_eq!(
        text, expected,
        "{golden} differs: re-bless it with REEL_BLESS=1 after an intended change"
    );
}

/// The page coordinates of the middle of the first timeline item `i` for which `test` holds.
async fn item_point(browser: &mut Browser, test: &str) -> (f64, f64) {
    let point = browser
        .wait_for(&format!(
            "(() => {{ const i = window.studio.state.items.find((i) => {test}); \
             if (!i) return null; const c = document.querySelector('#timeline'); \
             const b = c.getBoundingClientRect(); \
             return {{ x: b.left + ((i.x + i.w / 2) * b.width) / c.width, \
                       y: b.top + ((i.y + i.h / 2) * b.height) / c.height }}; }})()"
        ))
        .await;
    (point["x"].as_f64().unwrap(), point["y"].as_f64().unwrap())
}

/// Clicks the first item for which `test` holds; the detail's texts once its heading starts
/// with `heading`.
async fn detail_of(browser: &mut Browser, test: &str, heading: &str) -> Value {
    let (x, y) = item_point(browser, test).await;
    browser.click(x, y).await;
    browser
        .wait_for(&format!(
            "document.querySelector('#detail h3')?.textContent.startsWith({}) && \
             [...document.querySelectorAll('#detail > *')].map((e) => e.textContent)",
            json!(heading)
        ))
        .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_studio_page_shows_the_context_and_the_navigation_on_the_phases_lane() {
    if !chromium::available(
        "the_studio_page_shows_the_context_and_the_navigation_on_the_phases_lane",
    ) {
        return;
    }
    let dir = recording_dir("chromium-call");
    let studio = RunningStudio::start("127.0.0.1:0", &dir).await.unwrap();
    let profile = fresh_dir("chromium-profile");
    let mut browser = Browser::start(&profile).await;
    browser.goto(&studio.url()).await;
    browser
        .eval(&format!(
            "location.hash = '#/call/' + encodeURIComponent({})",
            json!(NAME)
        ))
        .await;
    browser
        .wait_for("window.studio.state.overview && window.studio.state.items.length")
        .await;

    // The nudge, queued at the boundary of turn 6 and sent with the caller's next line.
    let deferred = detail_of(
        &mut browser,
        "i.type === 'context' && i.mark.seq === 35",
        "context ",
    )
    .await;
    assert_eq!(
        deferred,
        json!([
            "context · frame 35 · turn 6 boundary (frame 34)",
            "queued at 2.400 s (frame 34), went out at 2.400 s with the application's frame 36",
            "context turn 1 · model",
            "I still need to collect: debt_acknowledged.",
        ])
    );
    // verify_identity's entry: its instruction, its navigation block and its enter prompt,
    // sent at once and asking the model to answer.
    let entry = detail_of(
        &mut browser,
        "i.type === 'context' && i.mark.seq === 11",
        "context ",
    )
    .await;
    assert_eq!(
        entry,
        json!([
            "context · frame 11 · turn 1 boundary (frame 10) · asks the model to answer",
            "sent at once at 0.720 s",
            "context turn 1 · model",
            "Verify the caller's identity: full name and date of birth.",
            "context turn 2 · model",
            "[Navigation]\nCurrent phase: verify_identity -- Verify the caller's identity: full \
             name and date of birth.\nPrevious: disclosure (turn 0)\nStill needed: caller_name, \
             identity_verified\nPossible next:\n  -> inform_debt: once the identity is verified",
            "context turn 3 · model",
            "I'll now verify who I'm speaking with.",
        ])
    );
    // The navigation block of the last phase, from the journal.
    let navigation = detail_of(
        &mut browser,
        "i.type === 'navigation' && i.mark.text.includes('Current phase: close')",
        "navigation ",
    )
    .await;
    assert_eq!(
        navigation,
        json!([
            "navigation · turn 8 · 3.360 s",
            "[Navigation]\nCurrent phase: close -- Confirm the plan and end the call politely.\n\
             Previous: negotiate (turn 7)",
        ])
    );
    drop(browser);
    studio.stop().await;
}
