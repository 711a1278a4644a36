//! Hostile strings in a recording cannot inject anything into the studio's page, nor blank
//! it: the XSS matrix — `<script>`, `"><img onerror>`, `</script><script>`, `<!--<script>`
//! (and U+2028) — in the model name, the tool names, the texts, a tool call's id and
//! arguments, the journal's state keys and values, the runtime's context at a turn boundary
//! and the navigation block (the phases lane), a close reason, the last replay's verdict
//! and the file name, opened in headless Chromium both from `reel studio` (served) and from
//! `reel show --html` (a file). Every payload tries to set `window.__pwned` and
//! `document.title`; the test reads both over the DevTools protocol, checks that no `<img>`
//! or extra `<script>` element appeared, and that the page shows every hostile string as
//! text where it belongs (the list, the call's head, a tool call, a state change, a frame, a
//! close, a diff).

use crate::chromium;

use std::path::{Path, PathBuf};

use chromium::Browser;
use reel::studio::RunningStudio;
use reel_recorder::journal::StateMutation;
use reel_recorder::wire_log::{CloseMark, Direction, Source, WireEntry};
use reel_replayer::last_replay::LastReplay;
use serde_json::{Value, json};

/// A script element in the data.
const SCRIPT: &str = "<script>window.__pwned='script';document.title='pwned'</script>";
/// An attribute broken out of, into an element whose handler runs.
const IMG: &str = "\"><img src=x onerror=\"window.__pwned='img';document.title='pwned'\">";
/// The data's own script element closed, and another opened.
const CLOSE: &str = "</script><script>window.__pwned='close';document.title='pwned'</script>";
/// The script-data "double escaped" state: the real `</script>` no longer ends the element.
const COMMENT: &str = "<!--<script>window.__pwned='comment'";

/// Every payload in one string, with a JavaScript line terminator.
fn all() -> String {
    format!("{SCRIPT}{IMG}{CLOSE}{COMMENT}\u{2028}end")
}

/// A file name holding what a file name can (no `/`).
const NAME: &str = "x<!--<script>\"><img src=x onerror=window.__pwned=1>&amp;.wire.jsonl";
/// The second recording of the diff.
const NAME_B: &str = "y<script>&lt;.wire.jsonl";

const T0: u64 = 1_718_000_000_000;

fn fresh_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("reel-xss-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn model() -> String {
    format!("models/m{}", all())
}

/// A call with a hostile string everywhere a recording carries one; `said` is what the
/// model says (the diff's difference).
fn hostile_call(said: &str) -> Vec<WireEntry> {
    let all = all();
    let frames = [
        (
            0,
            Direction::Out,
            json!({"setup": {"model": model(), "tools": [{"functionDeclarations": [
                {"name": all, "description": all}
            ]}]}}),
        ),
        (50, Direction::In, json!({"setupComplete": {}})),
        (
            200,
            Direction::Out,
            json!({"clientContent": {"turns": [{"role": "user", "parts": [{"text": all}]}], "turnComplete": true}}),
        ),
        (
            250,
            Direction::In,
            json!({"serverContent": {"modelTurn": {"parts": [{"text": said}]}}}),
        ),
        (
            300,
            Direction::In,
            json!({"toolCall": {"functionCalls": [{"id": IMG, "name": all, "args": {all.clone(): all}}]}}),
        ),
        (
            320,
            Direction::Out,
            json!({"toolResponse": {"functionResponses": [{"id": IMG, "name": all, "response": {all.clone(): all}}]}}),
        ),
        (
            400,
            Direction::In,
            json!({"serverContent": {"outputTranscription": {"text": all}}}),
        ),
        (
            450,
            Direction::In,
            json!({"serverContent": {"turnComplete": true}}),
        ),
    ];
    let mut entries: Vec<WireEntry> = frames
        .into_iter()
        .enumerate()
        .map(|(i, (ts, dir, payload))| {
            WireEntry::frame(
                i as u64 + 1,
                dir,
                T0 + ts,
                payload.to_string().into_bytes(),
                None,
                false,
            )
        })
        .collect();
    // The text sent after the setup is the runtime's context (conversation control's mark):
    // the phases lane shows it.
    entries[2].source = Some(Source::Runtime);
    entries.push(WireEntry::close_mark(
        9,
        T0 + 500,
        None,
        CloseMark {
            code: Some(1000),
            reason: Some(all),
            client: true,
        },
    ));
    entries
}

fn write_lines<T: serde::Serialize>(path: &Path, items: &[T]) {
    let text: String = items
        .iter()
        .map(|item| serde_json::to_string(item).unwrap() + "\n")
        .collect();
    std::fs::write(path, text).unwrap();
}

/// A directory with the hostile call (its journal and its last replay beside it) and a
/// second call that differs from it in what the model said.
fn hostile_dir(name: &str) -> PathBuf {
    let dir = fresh_dir(name);
    let all = all();
    write_lines(&dir.join(NAME), &hostile_call(&all));
    write_lines(&dir.join(NAME_B), &hostile_call(&format!("{all}!")));
    let journal = NAME.replace(".wire.jsonl", ".journal.jsonl");
    write_lines(
        &dir.join(journal),
        &[
            StateMutation {
                sequence: 1,
                key: all.clone(),
                old: Value::Null,
                new: json!({all.clone(): all}),
                origin: "set".to_owned(),
                timestamp_ms: T0 + 310,
                delta: false,
            },
            StateMutation {
                sequence: 2,
                key: "session:navigation_context".to_owned(),
                old: Value::Null,
                new: json!(all),
                origin: "set".to_owned(),
                timestamp_ms: T0 + 450,
                delta: false,
            },
        ],
    );
    let size = std::fs::metadata(dir.join(NAME)).unwrap().len();
    LastReplay::drift(size, 1_764_000_000_000, all)
        .write_beside(&dir.join(NAME))
        .unwrap();
    dir
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

/// The call view of the hostile call: every string shown as text where it belongs.
async fn check_call_view(browser: &mut Browser) {
    let all = all();
    browser
        .wait_for("window.studio.state.events.length > 0 && window.studio.state.items.length")
        .await;
    assert_eq!(
        browser
            .eval("document.querySelector('#call-head').textContent")
            .await,
        json!(format!(
            "{} · 0.500 s · 8 frames · 1 turn · 1 tool call",
            model()
        ))
    );
    assert_eq!(
        detail_of(browser, "i.type === 'tool'", "tool ").await,
        json!([
            format!("tool {all} · id {IMG} · 20 ms"),
            "called at 0.300 s, answered at 0.320 s (as recorded on the wire)",
            "arguments",
            serde_json::to_string_pretty(&json!({all.clone(): all})).unwrap(),
            "result",
            serde_json::to_string_pretty(&json!({all.clone(): all})).unwrap(),
        ])
    );
    assert_eq!(
        detail_of(browser, "i.type === 'state'", "state ").await,
        json!([
            format!("state {all} · set · 0.310 s"),
            format!("null → {}", json!({all.clone(): all})),
        ])
    );
    assert_eq!(
        detail_of(browser, "i.type === 'context'", "context ").await,
        json!([
            "context · frame 3 · the start (frame 2) · asks the model to answer",
            "sent at once at 0.200 s",
            "context turn 1 · user",
            all,
        ])
    );
    assert_eq!(
        detail_of(browser, "i.type === 'navigation'", "navigation ").await,
        json!(["navigation · turn 1 · 0.450 s", all])
    );
    // The close is the call's last instant, on the canvas's right edge: zoomed out, it is
    // inside.
    browser
        .eval("document.querySelector('#zoom-out').click()")
        .await;
    browser
        .wait_for(
            "window.studio.state.items.some((i) => i.type === 'supervisor' && i.mark.kind === 'closed' \
             && i.x < document.querySelector('#timeline').width * 0.9)",
        )
        .await;
    let close = detail_of(
        browser,
        "i.type === 'supervisor' && i.mark.kind === 'closed'",
        "closed",
    )
    .await;
    assert_eq!(
        close,
        json!([
            "closed · 0.500 s",
            format!("connection 1 closed by the client: 1000 {all}")
        ])
    );
    let point = browser.wait_for("window.studio.framePoint(3)").await;
    browser
        .click(point["x"].as_f64().unwrap(), point["y"].as_f64().unwrap())
        .await;
    let text = browser
        .wait_for("document.querySelector('#detail h3')?.textContent.startsWith('frame 3') && document.querySelector('#detail-json').textContent")
        .await;
    let frame: Value = serde_json::from_str(text.as_str().unwrap()).unwrap();
    assert_eq!(
        frame["clientContent"]["turns"][0]["parts"][0]["text"],
        json!(all)
    );
}

/// Nothing injected ran or was added; `scripts` is how many script elements the page has.
async fn check_nothing_ran(browser: &mut Browser, scripts: u64) {
    let seen = browser
        .eval(
            "({ pwned: window.__pwned ?? null, title: document.title, \
               images: document.querySelectorAll('img').length, \
               scripts: document.querySelectorAll('script').length })",
        )
        .await;
    assert_eq!(
        seen,
        json!({"pwned": null, "title": "reel studio", "images": 0, "scripts": scripts})
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_served_studio_shows_hostile_strings_as_text() {
    if !chromium::available("the_served_studio_shows_hostile_strings_as_text") {
        return;
    }
    let dir = hostile_dir("served");
    let all = all();
    let studio = RunningStudio::start("127.0.0.1:0", &dir).await.unwrap();
    let profile = fresh_dir("chromium-served");
    let mut browser = Browser::start(&profile).await;

    browser.goto(&studio.url()).await;
    let row = browser
        .wait_for(&format!(
            "[...document.querySelectorAll('#recordings tbody tr')].find((r) => r.cells[0].textContent === {}) \
             ?.cells && (() => {{ const r = [...document.querySelectorAll('#recordings tbody tr')] \
             .find((r) => r.cells[0].textContent === {}); \
             return {{ model: r.cells[1].textContent, tools: r.cells[5].textContent, \
                       verdict: r.cells[7].textContent, why: r.cells[7].title }}; }})()",
            json!(NAME),
            json!(NAME)
        ))
        .await;
    assert_eq!(
        row,
        json!({"model": model(), "tools": all, "verdict": "DRIFT", "why": all})
    );

    browser
        .eval(&format!(
            "location.hash = '#/call/' + encodeURIComponent({})",
            json!(NAME)
        ))
        .await;
    check_call_view(&mut browser).await;

    browser
        .eval(&format!(
            "location.hash = '#/diff/' + encodeURIComponent({}) + '/' + encodeURIComponent({})",
            json!(NAME),
            json!(NAME_B)
        ))
        .await;
    let paths = browser
        .wait_for(
            "document.querySelectorAll('#diff-paths tbody tr').length > 0 && \
             [...document.querySelectorAll('#diff-paths tbody tr')].map((r) => [...r.cells].map((c) => c.textContent))",
        )
        .await;
    assert_eq!(
        paths,
        json!([[
            "serverContent.modelTurn.parts[0].text",
            json!(all).to_string(),
            json!(format!("{all}!")).to_string()
        ]])
    );
    assert_eq!(
        browser
            .eval("document.querySelector('#diff-title').textContent")
            .await,
        json!(format!("{NAME} ⟷ {NAME_B}"))
    );
    check_nothing_ran(&mut browser, 1).await;
    drop(browser);
    studio.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_show_html_page_shows_hostile_strings_as_text_and_is_never_blank() {
    if !chromium::available("a_show_html_page_shows_hostile_strings_as_text_and_is_never_blank") {
        return;
    }
    let dir = hostile_dir("html");
    let page = dir.join("page.html");
    let output = std::process::Command::new(env!("CARGO_BIN_EXE_reel"))
        .args([
            "show",
            dir.join(NAME).to_str().unwrap(),
            "--html",
            page.to_str().unwrap(),
        ])
        .output()
        .unwrap();
    assert_eq!(
        (
            output.status.code(),
            String::from_utf8(output.stderr).unwrap()
        ),
        (
            Some(0),
            format!("reel show: {}: 9 entries\n", page.display())
        )
    );
    // The embedded data holds no markup character at all.
    let html = std::fs::read_to_string(&page).unwrap();
    let data = html
        .split_once("window.REEL_OFFLINE = ")
        .and_then(|(_, rest)| rest.split_once(";\n</script>"))
        .map(|(data, _)| data)
        .unwrap();
    for markup in ['<', '>', '&', '\u{2028}', '\u{2029}'] {
        assert!(!data.contains(markup), "{markup:?} in the embedded data");
    }

    let profile = fresh_dir("chromium-html");
    let mut browser = Browser::start(&profile).await;
    browser.goto(&format!("file://{}", page.display())).await;
    check_call_view(&mut browser).await;
    assert_eq!(browser.eval("window.studio.state.name").await, json!(NAME));
    check_nothing_ran(&mut browser, 2).await;
}
