//! `reel studio` shows the flow of a governed recording on its `flow` lane: each step active
//! and done over time (from the journal's `flow:active` / `flow:done`), the denied calls
//! (the flow's violations, scored from `X.flow.json` beside the log, and the calls whose
//! response carries an `error`), each step's verdict.
//!
//! The recording is built here: a call whose first `charge_card` came before the caller
//! was verified (the governed session answered it with an error), then a lookup, then the
//! charge; its journal as the live wiring writes it; its flow file. The studio's API is
//! compared with exact JSON — scored, journal only, a flow file that does not read — and
//! headless Chromium opens the page, clicks a step and the denied call, and reads them as
//! text. Step ids and reasons are untrusted: a recording with hostile ones shows them as
//! text and runs nothing.

use crate::chromium;
use crate::studio_calls::{entries, fresh_dir, write_log};

use std::path::{Path, PathBuf};

use chromium::Browser;
use reel::studio::RunningStudio;
use reel_flow::{Flow, Guard};
use reel_recorder::journal::StateMutation;
use reel_recorder::wire_log::Direction;
use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

const T0: u64 = 1_718_000_000_000;
const NAME: &str = "governed.wire.jsonl";

/// The error the governed session answered the early charge with.
const LIVE_DENIAL: &str = "\"charge_card\" is not allowed: no active step allows it";

fn flow() -> Flow {
    Flow::new()
        .step("verify")
        .allow(["lookup_account"])
        .done(Guard::is_true("identity_verified"))
        .step("pay")
        .after("verify")
        .allow(["charge_card"])
        .done(Guard::called_ok("charge_card"))
        .step("close")
        .after("pay")
        .terminal()
        .require(["close"])
}

/// The governed call: `charge_card` too early (denied), `lookup_account`, `charge_card`.
fn governed_call(denial: &str) -> Vec<reel_recorder::wire_log::WireEntry> {
    let frames = vec![
        (
            0,
            Direction::Out,
            json!({"setup": {"model": "models/gemini-live", "tools": [{"functionDeclarations": [
                {"name": "lookup_account"}, {"name": "charge_card"}
            ]}]}}),
        ),
        (50, Direction::In, json!({"setupComplete": {}})),
        (
            100,
            Direction::Out,
            json!({"clientContent": {"turns": [{"role": "user", "parts": [{"text": "Charge me."}]}], "turnComplete": true}}),
        ),
        (
            200,
            Direction::In,
            json!({"toolCall": {"functionCalls": [{"id": "c1", "name": "charge_card", "args": {"amount": 50}}]}}),
        ),
        (
            210,
            Direction::Out,
            json!({"toolResponse": {"functionResponses": [{"id": "c1", "name": "charge_card", "response": {"error": denial}}]}}),
        ),
        (
            300,
            Direction::In,
            json!({"toolCall": {"functionCalls": [{"id": "c2", "name": "lookup_account", "args": {}}]}}),
        ),
        (
            320,
            Direction::Out,
            json!({"toolResponse": {"functionResponses": [{"id": "c2", "name": "lookup_account", "response": {"found": true}}]}}),
        ),
        (
            400,
            Direction::In,
            json!({"toolCall": {"functionCalls": [{"id": "c3", "name": "charge_card", "args": {"amount": 50}}]}}),
        ),
        (
            430,
            Direction::Out,
            json!({"toolResponse": {"functionResponses": [{"id": "c3", "name": "charge_card", "response": {"charged": 50}}]}}),
        ),
        (
            500,
            Direction::In,
            json!({"serverContent": {"turnComplete": true}}),
        ),
    ];
    entries(
        T0,
        frames
            .into_iter()
            .map(|(t, dir, payload)| (t, dir, payload.to_string()))
            .collect(),
    )
}

/// The journal as the live wiring writes it: `flow:active` and `flow:done` whenever they
/// change, the tool's own write committed with its response.
fn journal(steps: [&str; 3]) -> Vec<StateMutation> {
    let [verify, pay, close] = steps;
    let write = |sequence, key: &str, old: Value, new: Value, t, delta| StateMutation {
        sequence,
        key: key.to_owned(),
        old,
        new,
        origin: "set".to_owned(),
        timestamp_ms: T0 + t,
        delta,
    };
    vec![
        write(1, "flow:active", Value::Null, json!([verify]), 50, false),
        write(2, "flow:done", Value::Null, json!([]), 50, false),
        write(3, "identity_verified", Value::Null, json!(true), 320, true),
        write(4, "flow:active", json!([verify]), json!([pay]), 320, false),
        write(5, "flow:done", json!([]), json!([verify]), 320, false),
        write(6, "flow:active", json!([pay]), json!([]), 430, false),
        write(
            7,
            "flow:done",
            json!([verify]),
            json!([verify, pay, close]),
            430,
            false,
        ),
    ]
}

fn write_lines<T: serde::Serialize>(path: &Path, items: &[T]) {
    let text: String = items
        .iter()
        .map(|item| serde_json::to_string(item).unwrap() + "\n")
        .collect();
    std::fs::write(path, text).unwrap();
}

/// A directory with the governed call and its journal; `flow_file` is written as
/// `governed.flow.json` beside them when given.
fn governed_dir(name: &str, flow_file: Option<&str>) -> PathBuf {
    let dir = fresh_dir("flow", name);
    write_log(&dir, NAME, &governed_call(LIVE_DENIAL));
    write_lines(
        &dir.join("governed.journal.jsonl"),
        &journal(["verify", "pay", "close"]),
    );
    if let Some(text) = flow_file {
        std::fs::write(dir.join("governed.flow.json"), text).unwrap();
    }
    dir
}

/// `GET target` from the studio: the status and the body as JSON.
async fn get_json(studio: &RunningStudio, target: &str) -> (u16, Value) {
    let mut tcp = TcpStream::connect(studio.local_addr()).await.unwrap();
    tcp.write_all(format!("GET {target} HTTP/1.1\r\nhost: 127.0.0.1\r\n\r\n").as_bytes())
        .await
        .unwrap();
    let mut answer = Vec::new();
    tcp.read_to_end(&mut answer).await.unwrap();
    let end = answer.windows(4).position(|w| w == b"\r\n\r\n").unwrap();
    let status = std::str::from_utf8(&answer[9..12])
        .unwrap()
        .parse()
        .unwrap();
    (status, serde_json::from_slice(&answer[end + 4..]).unwrap())
}

/// The call's lanes and its flow lane, as the studio's API serves them.
async fn flow_of(dir: &Path) -> (Value, Value) {
    let studio = RunningStudio::start("127.0.0.1:0", dir).await.unwrap();
    let (status, overview) = get_json(&studio, &format!("/api/recordings/{NAME}")).await;
    studio.stop().await;
    assert_eq!(status, 200);
    (overview["lanes"].clone(), overview["flow"].clone())
}

/// The steps as the journal says them: verify active to 0.320 s, then done; pay active to
/// 0.430 s, then done; close done at 0.430 s (terminal: never active).
fn steps_over_time(verdicts: bool) -> Value {
    let verdict = |v: &str| if verdicts { json!(v) } else { Value::Null };
    let mut steps = json!([
        {"id": "verify", "verdict": verdict("done"), "spans": [
            {"state": "active", "start_ms": 50, "end_ms": 320},
            {"state": "done", "start_ms": 320, "end_ms": null}
        ]},
        {"id": "pay", "verdict": verdict("done"), "spans": [
            {"state": "active", "start_ms": 320, "end_ms": 430},
            {"state": "done", "start_ms": 430, "end_ms": null}
        ]},
        {"id": "close", "verdict": verdict("done"), "spans": [
            {"state": "done", "start_ms": 430, "end_ms": null}
        ]}
    ]);
    if !verdicts {
        for step in steps.as_array_mut().unwrap() {
            step.as_object_mut().unwrap().remove("verdict");
        }
    }
    steps
}

const LANES: [&str; 10] = [
    "wire out",
    "wire in",
    "fast lane",
    "control lane",
    "tools",
    "turns",
    "phases",
    "flow",
    "state",
    "supervisor",
];

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_api_scores_a_governed_recording_against_its_flow_file() {
    let dir = governed_dir("scored", Some(&flow().to_json().unwrap()));
    let (lanes, flow) = flow_of(&dir).await;
    assert_eq!(lanes, json!(LANES));
    assert_eq!(
        flow,
        json!({
            "source": "flow",
            "steps": steps_over_time(true),
            "denied": [{
                "seq": 4,
                "t_ms": 200,
                "call_id": "c1",
                "tool": "charge_card",
                "reason": "\"charge_card\" is not allowed by any active step (active: verify)",
                "by_flow": true,
                "error": LIVE_DENIAL
            }],
            "complete": true
        })
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_a_flow_file_the_lane_shows_what_the_journal_says() {
    let dir = governed_dir("journal", None);
    let (lanes, flow) = flow_of(&dir).await;
    assert_eq!(lanes, json!(LANES));
    assert_eq!(
        flow,
        json!({
            "source": "journal",
            "steps": steps_over_time(false),
            "denied": [{
                "seq": 4,
                "t_ms": 200,
                "call_id": "c1",
                "tool": "charge_card",
                "reason": LIVE_DENIAL,
                "by_flow": false,
                "error": LIVE_DENIAL
            }]
        })
    );

    // A flow file that does not read: the journal's view, and why the file was not used.
    let dir = governed_dir("broken", Some("{\"steps\": 3}"));
    let (_, flow) = flow_of(&dir).await;
    assert_eq!(flow["source"], json!("journal"));
    assert_eq!(flow["steps"], steps_over_time(false));
    let problem = flow["problem"].as_str().unwrap();
    assert!(
        problem.starts_with("governed.flow.json: "),
        "the problem names the file: {problem}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_recording_without_a_flow_has_no_flow_lane() {
    let dir = fresh_dir("flow", "none");
    write_log(&dir, NAME, &governed_call(LIVE_DENIAL));
    let (lanes, flow) = flow_of(&dir).await;
    assert_eq!(flow, Value::Null);
    assert!(!lanes.as_array().unwrap().contains(&json!("flow")));
}

/// The page coordinates of the middle of the first timeline item `i` for which `test` holds,
/// the timeline scrolled to the top of the window first (the flow lane is low on it).
async fn item_point(browser: &mut Browser, test: &str) -> (f64, f64) {
    let point = browser
        .wait_for(&format!(
            "(() => {{ const i = window.studio.state.items.find((i) => {test}); \
             if (!i) return null; const c = document.querySelector('#timeline'); \
             c.scrollIntoView(); \
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

/// Opens `NAME` in a studio over `dir`, in a fresh headless Chromium, and waits for the
/// timeline's last drawing (after the audio's peaks: the frame list above it may have
/// changed the canvas's width, and so where its rows are, since the first).
async fn open_call(dir: &Path, profile: &str) -> (RunningStudio, Browser) {
    let studio = RunningStudio::start("127.0.0.1:0", dir).await.unwrap();
    let profile = fresh_dir("flow-chromium", profile);
    let mut browser = Browser::start(&profile).await;
    browser.goto(&studio.url()).await;
    browser
        .eval(&format!(
            "location.hash = '#/call/' + encodeURIComponent({})",
            json!(NAME)
        ))
        .await;
    browser
        .wait_for(
            "window.studio.state.overview && window.studio.state.events.length > 0 \
             && window.studio.state.peaks && window.studio.state.items.length",
        )
        .await;
    (studio, browser)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_studio_page_shows_the_steps_over_time_and_the_denied_call() {
    if !chromium::available("the_studio_page_shows_the_steps_over_time_and_the_denied_call") {
        return;
    }
    let dir = governed_dir("chromium", Some(&flow().to_json().unwrap()));
    let (studio, mut browser) = open_call(&dir, "page").await;
    assert_eq!(
        detail_of(
            &mut browser,
            "i.type === 'flowStep' && i.step.id === 'pay' && i.span.state === 'active'",
            "step ",
        )
        .await,
        json!([
            "step pay · active · 0.320 s → 0.430 s",
            "verdict at the end: done"
        ])
    );
    assert_eq!(
        detail_of(
            &mut browser,
            "i.type === 'flowStep' && i.step.id === 'verify' && i.span.state === 'done'",
            "step ",
        )
        .await,
        json!([
            "step verify · done · 0.320 s → the end",
            "verdict at the end: done"
        ])
    );
    assert_eq!(
        detail_of(&mut browser, "i.type === 'denied'", "denied ").await,
        json!([
            "denied charge_card · id c1 · frame 4 · 0.200 s",
            "the flow refuses this call",
            "\"charge_card\" is not allowed by any active step (active: verify)",
            "the response's error",
            LIVE_DENIAL,
        ])
    );
    drop(browser);
    studio.stop().await;
}

/// Hostile text: a script element, an attribute broken out of, the data's script closed.
const HOSTILE: &str = "<script>window.__pwned='script';document.title='pwned'</script>\
    \"><img src=x onerror=\"window.__pwned='img';document.title='pwned'\">\
    </script><script>window.__pwned='close'</script>";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hostile_step_ids_and_reasons_are_shown_as_text() {
    if !chromium::available("hostile_step_ids_and_reasons_are_shown_as_text") {
        return;
    }
    let dir = fresh_dir("flow", "xss");
    let step = format!("v{HOSTILE}");
    write_log(&dir, NAME, &governed_call(HOSTILE));
    write_lines(
        &dir.join("governed.journal.jsonl"),
        &journal([step.as_str(), "pay", "close"]),
    );
    let (studio, mut browser) = open_call(&dir, "xss").await;
    assert_eq!(
        detail_of(
            &mut browser,
            "i.type === 'flowStep' && i.step.id.startsWith('v<') && i.span.state === 'active'",
            "step ",
        )
        .await,
        json!([format!("step {step} · active · 0.050 s → 0.320 s")])
    );
    assert_eq!(
        detail_of(&mut browser, "i.type === 'denied'", "denied ").await,
        json!([
            "denied charge_card · id c1 · frame 4 · 0.200 s",
            "answered with an error",
            HOSTILE,
        ])
    );
    let seen = browser
        .eval(
            "({ pwned: window.__pwned ?? null, title: document.title, \
               images: document.querySelectorAll('img').length, \
               scripts: document.querySelectorAll('script').length })",
        )
        .await;
    assert_eq!(
        seen,
        json!({"pwned": null, "title": "reel studio", "images": 0, "scripts": 1})
    );
    drop(browser);
    studio.stop().await;
}

#[test]
fn a_show_html_page_embeds_hostile_flow_text_as_data_only() {
    let dir = fresh_dir("flow", "xss-html");
    let step = format!("v{HOSTILE}");
    write_log(&dir, NAME, &governed_call(HOSTILE));
    write_lines(
        &dir.join("governed.journal.jsonl"),
        &journal([step.as_str(), "pay", "close"]),
    );
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
    assert_eq!(output.status.code(), Some(0));
    let html = std::fs::read_to_string(&page).unwrap();
    let data = html
        .split_once("window.REEL_OFFLINE = ")
        .and_then(|(_, rest)| rest.split_once(";\n</script>"))
        .map(|(data, _)| data)
        .unwrap();
    for markup in ['<', '>', '&'] {
        assert!(!data.contains(markup), "{markup:?} in the embedded data");
    }
    let data: Value = serde_json::from_str(data).unwrap();
    let flow = &data["overview"]["flow"];
    assert_eq!(flow["steps"][0]["id"], json!(step));
    assert_eq!(flow["denied"][0]["reason"], json!(HOSTILE));
}
