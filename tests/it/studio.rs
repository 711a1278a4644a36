//! `reel studio`: the JSON API over real HTTP (the list with a corrupt log in it, a call's
//! overview, windows of frames, one frame, the audio, path traversal refused), and the page
//! in a real browser: headless Chromium opens the studio on the bundled tapes, checks the
//! list and its search, opens a call, clicks a tool bar and reads its arguments, plays a
//! call's audio and sees the cursor move. Screenshots land in `target/studio-screenshots/`.

use crate::chromium;

use std::path::{Path, PathBuf};

use chromium::Browser;
use reel::studio::RunningStudio;
use reel_protocol::Base64Data;
use reel_recorder::wire_log::{Direction, WireEntry};
use reel_replayer::last_replay::LastReplay;
use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn fresh_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("reel-studio-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// A call with audio both ways: the user speaks 400 ms, the model answers with 1.2 s of
/// audio streamed in 100 ms chunks, then the turn completes.
fn audio_call() -> Vec<WireEntry> {
    let t0 = 1_718_000_000_000;
    let mut entries = Vec::new();
    let mut push = |ts: u64, dir: Direction, payload: String| {
        let seq = entries.len() as u64 + 1;
        entries.push(WireEntry::frame(
            seq,
            dir,
            t0 + ts,
            payload.into_bytes(),
            None,
            false,
        ));
    };
    let pcm = |samples: usize, value: i16| -> String {
        let bytes: Vec<u8> = (0..samples).flat_map(|_| value.to_le_bytes()).collect();
        Base64Data(bytes.into()).encode()
    };
    push(
        0,
        Direction::Out,
        r#"{"setup":{"model":"models/gemini-live-2.5-flash-native-audio"}}"#.into(),
    );
    push(50, Direction::In, r#"{"setupComplete":{}}"#.into());
    for n in 0..4 {
        let data = pcm(1_600, 3_000);
        push(
            100 + n * 100,
            Direction::Out,
            format!(
                r#"{{"realtimeInput":{{"audio":{{"mimeType":"audio/pcm;rate=16000","data":"{data}"}}}}}}"#
            ),
        );
    }
    for n in 0..12 {
        let data = pcm(2_400, -3_000);
        push(
            650 + n * 10,
            Direction::In,
            format!(
                r#"{{"serverContent":{{"modelTurn":{{"parts":[{{"inlineData":{{"mimeType":"audio/pcm;rate=24000","data":"{data}"}}}}]}}}}}}"#
            ),
        );
    }
    push(
        900,
        Direction::In,
        r#"{"serverContent":{"turnComplete":true},"usageMetadata":{"totalTokenCount":99}}"#.into(),
    );
    entries
}

fn write_log(path: &Path, entries: &[WireEntry]) {
    let text: String = entries
        .iter()
        .map(|entry| serde_json::to_string(entry).unwrap() + "\n")
        .collect();
    std::fs::write(path, text).unwrap();
}

/// The bundled tapes, a call with audio, and a corrupt log.
fn studio_dir(name: &str) -> PathBuf {
    let dir = fresh_dir(name);
    for tape in ["weather", "phases"] {
        std::fs::copy(
            root().join(format!("assets/tapes/{tape}.wire.jsonl")),
            dir.join(format!("{tape}.wire.jsonl")),
        )
        .unwrap();
    }
    write_log(&dir.join("voice.wire.jsonl"), &audio_call());
    // The weather call again, the tool answering 15 °C instead of 14.
    let mut drifted =
        reel_recorder::read_wire_log(root().join("assets/tapes/weather.wire.jsonl")).unwrap();
    let tool_response = drifted.iter_mut().find(|e| e.seq == 11).unwrap();
    let text = String::from_utf8(tool_response.payload.to_vec()).unwrap();
    assert!(text.contains(r#""temp_c":14"#), "{text}");
    tool_response.payload = text
        .replace(r#""temp_c":14"#, r#""temp_c":15"#)
        .into_bytes()
        .into();
    write_log(&dir.join("weather-drifted.wire.jsonl"), &drifted);
    // What `reel replay` left beside two of them: weather clean, the drifted one drifted.
    let size = |name: &str| std::fs::metadata(dir.join(name)).unwrap().len();
    LastReplay::clean(size("weather.wire.jsonl"), 1_764_000_000_000)
        .write_beside(&dir.join("weather.wire.jsonl"))
        .unwrap();
    LastReplay::drift(
        size("weather-drifted.wire.jsonl"),
        1_764_000_000_000,
        "frame 11: the replayed frame differs (toolResponse)".to_owned(),
    )
    .write_beside(&dir.join("weather-drifted.wire.jsonl"))
    .unwrap();
    std::fs::write(dir.join("broken.wire.jsonl"), "{not json\n").unwrap();
    std::fs::write(dir.join("notes.txt"), "not a recording").unwrap();
    dir
}

/// Clicks the first tool call's bar on the timeline; its arguments as the detail shows them.
async fn first_tool_args(browser: &mut Browser) -> Value {
    let point = browser.wait_for("window.studio.toolBarPoint(0)").await;
    browser
        .click(point["x"].as_f64().unwrap(), point["y"].as_f64().unwrap())
        .await;
    let args = browser
        .wait_for("document.querySelector('#detail-args')?.textContent")
        .await;
    serde_json::from_str(args.as_str().unwrap()).unwrap()
}

/// Waits until the audio cursor is past `ms`.
async fn cursor_passes(browser: &mut Browser, ms: f64) {
    let cursor = browser
        .wait_for(&format!("Number(document.querySelector('#timeline').dataset.cursorMs) > {ms} && Number(document.querySelector('#timeline').dataset.cursorMs)"))
        .await;
    assert!(cursor.as_f64().unwrap() > ms, "{cursor}");
}

/// `GET target`: the status and the body.
async fn get(studio: &RunningStudio, target: &str) -> (u16, Vec<u8>) {
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
    (status, answer[end + 4..].to_vec())
}

async fn get_json(studio: &RunningStudio, target: &str) -> (u16, Value) {
    let (status, body) = get(studio, target).await;
    (status, serde_json::from_slice(&body).unwrap())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_api_lists_opens_windows_and_plays_a_call_and_serves_nothing_else() {
    let dir = studio_dir("api");
    let studio = RunningStudio::start("127.0.0.1:0", &dir).await.unwrap();

    let (status, list) = get_json(&studio, "/api/recordings").await;
    assert_eq!(status, 200);
    let names: Vec<&str> = list["recordings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        [
            "broken.wire.jsonl",
            "phases.wire.jsonl",
            "voice.wire.jsonl",
            "weather-drifted.wire.jsonl",
            "weather.wire.jsonl"
        ]
    );
    assert!(
        list["recordings"][0]["error"]
            .as_str()
            .unwrap()
            .contains("line 1"),
        "{}",
        list["recordings"][0]
    );
    assert_eq!(
        list["recordings"][4],
        json!({
            "name": "weather.wire.jsonl",
            "model": "models/gemini-live-2.5-flash-preview",
            "started": "2025-06-01T09:00:00.000Z",
            "duration_ms": 1300,
            "frames": 22,
            "turns": 3,
            "tools": ["get_weather"],
            "tokens": 374,
            "reconnects": 0,
            "live": false,
            "last_replay": {
                "verdict": "CLEAN",
                "replayed_at_ms": 1_764_000_000_000u64,
                "log_bytes": std::fs::metadata(dir.join("weather.wire.jsonl")).unwrap().len(),
            },
        })
    );
    assert_eq!(list["recordings"][2]["last_replay"], Value::Null);
    assert_eq!(
        list["recordings"][3]["last_replay"]["first_divergence"],
        "frame 11: the replayed frame differs (toolResponse)"
    );

    let (_, voice) = get_json(&studio, "/api/recordings/voice.wire.jsonl").await;
    // The model's 1.2 s of audio, streamed from 650 ms, plays until 1850 ms.
    assert_eq!(
        (&voice["duration_ms"], &voice["audio_end_ms"]),
        (&json!(900), &json!(1850))
    );
    assert_eq!(
        voice["turns"],
        json!([{"n": 1, "start_ms": 0, "end_ms": 900, "first_audio_ms": 250, "first_text_ms": null, "tool_ms": 0}])
    );
    let (_, weather) = get_json(&studio, "/api/recordings/weather.wire.jsonl").await;
    assert_eq!(
        weather["tools"],
        json!([{"id": "fc-1", "name": "get_weather", "args": {"city": "London"}, "start_ms": 540, "end_ms": 540, "duration_ms": 0, "result": {"city": "London", "temp_c": 14, "conditions": "cloudy"}, "cancelled": false, "call_seq": 10}])
    );

    // A window: from 100 ms (inclusive) to 300 ms (exclusive), at most 1 frame.
    let (_, window) = get_json(
        &studio,
        "/api/recordings/voice.wire.jsonl/events?from=100&to=300&limit=1",
    )
    .await;
    assert_eq!(window["truncated"], json!(true));
    assert_eq!(
        window["events"],
        json!([{"seq": 3, "t_ms": 100, "dir": "out", "kind": "realtimeInput.audio", "summary": "audio ×1 (0.1s)", "audio_ms": 100.0, "bytes": 4341}])
    );
    // Zoomed out on a long call: one in 3 audio frames, every other frame.
    let (_, sampled) = get_json(
        &studio,
        "/api/recordings/voice.wire.jsonl/events?from=0&to=2000&every=3",
    )
    .await;
    let seqs: Vec<u64> = sampled["events"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["seq"].as_u64().unwrap())
        .collect();
    // setup 1, setupComplete 2; audio 3..=18 (the 1st, 4th, 7th, … of them); turnComplete 19.
    assert_eq!(seqs, [1, 2, 3, 6, 9, 12, 15, 18, 19]);
    assert_eq!(sampled["every"], json!(3));
    // Each server frame's events on the lanes the router sends them to: audio to the fast
    // lane, the turn's end to the control lane, the setup's answer (connected) to the
    // control lane; nothing for the client's frames.
    let lanes: Vec<(u64, &Value)> = sampled["events"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| (e["seq"].as_u64().unwrap(), &e["lanes"]))
        .collect();
    assert_eq!(lanes[0], (1, &Value::Null));
    assert_eq!(lanes[1], (2, &json!(["control"])));
    assert_eq!(lanes[2], (3, &Value::Null));
    assert_eq!(lanes[4], (9, &json!(["fast"])));
    assert_eq!(lanes[8], (19, &json!(["control"])));
    let (_, frame) = get_json(&studio, "/api/recordings/weather.wire.jsonl/frames/10").await;
    assert_eq!(frame["kind"], "toolCall");
    assert_eq!(
        frame["json"]["toolCall"]["functionCalls"][0]["args"],
        json!({"city": "London"})
    );
    assert_eq!(frame["bytes"], json!(frame["raw"].as_str().unwrap().len()));

    // The audio: 24 kHz stereo from the first entry to the end of the model's answer.
    let (status, wav) = get(&studio, "/api/recordings/voice.wire.jsonl/audio.wav").await;
    assert_eq!(status, 200);
    assert_eq!(&wav[..4], b"RIFF");
    assert_eq!(wav.len(), 44 + (650 + 1_200) * 24 * 4);

    // The audio's loudness in 4 slices of 500 ms: the user speaks in the first (3000, with
    // silence around it), the model answers from 650 ms to 1850 ms (-3000), so the third
    // slice is its voice only.
    let (_, peaks) = get_json(
        &studio,
        "/api/recordings/voice.wire.jsonl/peaks?from=0&to=2000&buckets=4",
    )
    .await;
    assert_eq!(
        peaks,
        json!({"from": 0, "to": 2000, "peaks": [[0, 3000, 0, 0], [0, 0, -3000, 0], [0, 0, -3000, -3000], [0, 0, -3000, 0]]})
    );

    // A window at the end of the clock is empty, not an overflow (`to` defaults to
    // `from + 1`).
    let (status, end) = get_json(
        &studio,
        "/api/recordings/voice.wire.jsonl/peaks?from=18446744073709551615",
    )
    .await;
    assert_eq!(status, 200, "{end}");
    assert_eq!(end["to"], json!(u64::MAX));

    // Two recordings compared: where they part, by turn.
    let (_, diff) = get_json(
        &studio,
        "/api/diff/weather.wire.jsonl/weather-drifted.wire.jsonl",
    )
    .await;
    assert_eq!(diff["comparison"]["result"], "differs");
    assert_eq!(diff["comparison"]["position"], json!(11));
    assert_eq!(
        diff["comparison"]["difference"],
        json!({"kind": "payload", "diffs": [{"path": "toolResponse.functionResponses[0].response.temp_c", "expected": 14, "actual": 15}]})
    );
    assert_eq!(
        diff["divergence"],
        json!([{"seq": 11, "t_ms": 540, "turn": 2}, {"seq": 11, "t_ms": 540, "turn": 2}])
    );
    let (_, same) = get_json(&studio, "/api/diff/weather.wire.jsonl/weather.wire.jsonl").await;
    assert_eq!(
        same["comparison"],
        json!({"result": "same", "frames": 22, "close_markers": 1})
    );

    // Nothing outside the directory, nothing that is not a recording.
    for target in [
        "/api/recordings/..%2Fweather.wire.jsonl",
        "/api/recordings/%2Fetc%2Fpasswd",
        "/api/recordings/notes.txt",
        "/api/recordings/missing.wire.jsonl",
        "/../../etc/passwd",
        "/api/recordings/weather.wire.jsonl/frames/999",
        "/api/diff/weather.wire.jsonl/..%2Fx.wire.jsonl",
    ] {
        assert_eq!(get(&studio, target).await.0, 404, "{target}");
    }
    studio.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn in_a_browser_the_studio_lists_opens_a_call_shows_a_tool_call_and_plays_audio() {
    if !chromium::available(
        "in_a_browser_the_studio_lists_opens_a_call_shows_a_tool_call_and_plays_audio",
    ) {
        return;
    }
    let dir = studio_dir("browser");
    let studio = RunningStudio::start("127.0.0.1:0", &dir).await.unwrap();
    let shots = root().join("target/studio-screenshots");
    let profile = fresh_dir("chromium-profile");
    let mut browser = Browser::start(&profile).await;

    browser.goto(&studio.url()).await;
    assert_eq!(
        browser
            .wait_for("document.querySelectorAll('#recordings tbody tr').length === 5 && 5")
            .await,
        json!(5)
    );
    let broken = browser
        .eval("document.querySelector('#recordings tbody tr.broken').textContent")
        .await;
    assert!(
        broken
            .as_str()
            .unwrap()
            .starts_with("broken.wire.jsonlcannot be read:"),
        "{broken}"
    );
    let verdicts = browser
        .eval("[...document.querySelectorAll('#recordings tbody tr:not(.broken)')].map((r) => r.cells[7].textContent)")
        .await;
    assert_eq!(verdicts, json!(["—", "—", "DRIFT", "CLEAN"]));
    browser.screenshot(&shots.join("list.png")).await;

    // Search by tool name.
    browser
        .eval("(() => { const s = document.querySelector('#search'); s.value = 'get_weather'; s.dispatchEvent(new Event('input')); })()")
        .await;
    let shown = browser
        .eval("[...document.querySelectorAll('#recordings tbody tr')].filter((r) => !r.hidden).map((r) => r.cells[0].textContent)")
        .await;
    assert_eq!(
        shown,
        json!(["weather-drifted.wire.jsonl", "weather.wire.jsonl"])
    );

    // Open the weather call and click its tool bar.
    browser
        .eval("document.querySelector('#recordings a[href=\"#/call/weather.wire.jsonl\"]').click()")
        .await;
    browser
        .wait_for("window.studio.state.events.length > 0 && window.studio.state.items.length")
        .await;
    assert_eq!(
        first_tool_args(&mut browser).await,
        json!({"city": "London"})
    );
    let heading = browser
        .eval("document.querySelector('#detail h3').textContent")
        .await;
    assert_eq!(heading, json!("tool get_weather · id fc-1 · 0 ms"));
    // The call's head, legend and lanes fill the first screen: show the opened tool call.
    browser
        .eval("document.querySelector('#detail').scrollIntoView({block: 'end'})")
        .await;
    browser.screenshot(&shots.join("call-tool.png")).await;
    browser.eval("window.scrollTo(0, 0)").await;

    // A frame: the setup, with its JSON.
    let point = browser.wait_for("window.studio.framePoint(1)").await;
    browser
        .click(point["x"].as_f64().unwrap(), point["y"].as_f64().unwrap())
        .await;
    let json_text = browser
        .wait_for("document.querySelector('#detail-json')?.textContent")
        .await;
    let setup: Value = serde_json::from_str(json_text.as_str().unwrap()).unwrap();
    assert_eq!(
        setup["setup"]["model"],
        "models/gemini-live-2.5-flash-preview"
    );

    // The voice call's audio plays and the cursor moves with it.
    browser
        .eval("location.hash = '#/call/voice.wire.jsonl'")
        .await;
    browser
        .wait_for("window.studio.state.name === 'voice.wire.jsonl' && window.studio.state.overview")
        .await;
    browser
        .eval("document.querySelector('#play').click()")
        .await;
    cursor_passes(&mut browser, 300.0).await;
    browser.screenshot(&shots.join("call-audio.png")).await;

    // The drifted replay beside the recording: the divergence found, its path shown, its
    // turn marked on both sides.
    browser
        .eval("document.querySelector('#play').click()")
        .await;
    browser.eval("location.hash = '#/'").await;
    browser
        .wait_for("document.querySelector('#compare-a').options.length === 4")
        .await;
    browser
        .eval("(() => { document.querySelector('#compare-a').value = 'weather.wire.jsonl'; document.querySelector('#compare-b').value = 'weather-drifted.wire.jsonl'; document.querySelector('#compare-go').click(); })()")
        .await;
    let result = browser
        .wait_for("document.querySelector('#diff-result').textContent")
        .await;
    assert_eq!(
        result,
        json!(
            "First divergence at frame 11 (payload): first seq 11 at 0.540 s, turn 2; second seq 11 at 0.540 s, turn 2."
        )
    );
    let paths = browser
        .eval("[...document.querySelectorAll('#diff-paths tbody tr')].map((r) => [...r.cells].map((c) => c.textContent))")
        .await;
    assert_eq!(
        paths,
        json!([[
            "toolResponse.functionResponses[0].response.temp_c",
            "14",
            "15"
        ]])
    );
    let marked = browser
        .eval("document.querySelectorAll('#diff-sides li.diverged').length")
        .await;
    assert_eq!(marked, json!(2));
    browser.screenshot(&shots.join("diff.png")).await;
    drop(browser);
    studio.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_call_as_one_html_file_opens_from_disk_with_its_timeline_and_audio() {
    if !chromium::available("a_call_as_one_html_file_opens_from_disk_with_its_timeline_and_audio") {
        return;
    }
    let dir = studio_dir("html");
    let weather_html = dir.join("weather.html");
    let voice_html = dir.join("voice.html");
    let reel = env!("CARGO_BIN_EXE_reel");
    for (log, html, said) in [
        ("weather.wire.jsonl", &weather_html, "23 entries\n"),
        (
            "voice.wire.jsonl",
            &voice_html,
            "19 entries, with the audio\n",
        ),
    ] {
        let output = std::process::Command::new(reel)
            .args([
                "show",
                dir.join(log).to_str().unwrap(),
                "--html",
                html.to_str().unwrap(),
            ])
            .output()
            .unwrap();
        assert!(output.status.success(), "{output:?}");
        assert_eq!(
            String::from_utf8(output.stderr).unwrap(),
            format!("reel show: {}: {said}", html.display())
        );
    }
    // Self-contained: nothing to load from anywhere.
    let page = std::fs::read_to_string(&voice_html).unwrap();
    for outside in [
        "src=\"studio.js\"",
        "href=\"studio.css\"",
        "src=\"http",
        "href=\"http",
    ] {
        assert!(!page.contains(outside), "{outside}");
    }
    assert!(page.contains("data:audio/wav;base64,UklGR"));

    let profile = fresh_dir("chromium-profile-html");
    let mut browser = Browser::start(&profile).await;
    browser
        .goto(&format!("file://{}", weather_html.display()))
        .await;
    browser
        .wait_for("window.studio.state.events.length > 0 && window.studio.state.items.length")
        .await;
    let head = browser
        .eval("document.querySelector('#call-head').textContent")
        .await;
    assert_eq!(
        head,
        json!("models/gemini-live-2.5-flash-preview · 1.300 s · 22 frames · 3 turns · 1 tool call")
    );
    assert_eq!(
        first_tool_args(&mut browser).await,
        json!({"city": "London"})
    );

    browser
        .goto(&format!("file://{}", voice_html.display()))
        .await;
    browser
        .wait_for("window.studio.state.name === 'voice.wire.jsonl' && window.studio.state.peaks")
        .await;
    browser
        .eval("document.querySelector('#play').click()")
        .await;
    cursor_passes(&mut browser, 300.0).await;
    browser
        .screenshot(&root().join("target/studio-screenshots/offline-page.png"))
        .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn in_a_browser_a_live_session_shows_its_events_as_they_arrive() {
    if !chromium::available("in_a_browser_a_live_session_shows_its_events_as_they_arrive") {
        return;
    }
    let dir = fresh_dir("live");
    let studio = RunningStudio::start("127.0.0.1:0", &dir).await.unwrap();
    let mut server = reel_actors::testing::ScriptedServer::bind().await;
    let endpoint = server.endpoint();
    let builder = reel_fluent::Live::builder()
        .text_only()
        .studio_as(studio.local_addr().to_string(), "on-air")
        .studio_token(studio.token());
    let script = async {
        let mut conn = server.accept().await;
        conn.recv().await.unwrap();
        conn.send_json(&json!({"setupComplete": {}})).await;
        conn
    };
    let (handle, mut conn) = tokio::join!(builder.connect(endpoint), script);
    let handle = handle.unwrap();

    let profile = fresh_dir("chromium-profile-live");
    let mut browser = Browser::start(&profile).await;
    browser.goto(&studio.url()).await;
    let badge = browser
        .wait_for("document.querySelector('#recordings a[href=\"#/call/on-air.wire.jsonl\"] + .live')?.textContent")
        .await;
    assert_eq!(badge, json!("live"));
    browser
        .eval("document.querySelector('#recordings a[href=\"#/call/on-air.wire.jsonl\"]').click()")
        .await;
    browser
        .wait_for("window.studio.state.live && window.studio.state.events.length === 2")
        .await;
    // A mark on the page: it must still be there when the turn shows (no reload).
    browser.eval("window.reelTestMark = 'same page'").await;

    // A turn while the page is open: its frames appear without a reload.
    handle.send_text("Is it raining?").unwrap();
    conn.recv().await.unwrap();
    conn.send_json(&json!({"serverContent": {"modelTurn": {"parts": [{"text": "No."}]}}}))
        .await;
    conn.send_json(&json!({"serverContent": {"turnComplete": true}}))
        .await;
    let kinds = browser
        .wait_for("window.studio.state.events.length === 5 && window.studio.state.events.map((e) => e.kind)")
        .await;
    assert_eq!(
        kinds,
        json!([
            "setup",
            "setupComplete",
            "clientContent",
            "serverContent.text",
            "serverContent.turnComplete"
        ])
    );
    assert_eq!(
        browser.eval("window.reelTestMark").await,
        json!("same page")
    );
    let head = browser
        .eval("document.querySelector('#call-head').textContent")
        .await;
    assert!(
        head.as_str()
            .unwrap()
            .ends_with("5 frames · 1 turn · 0 tool calls · live"),
        "{head}"
    );
    browser
        .screenshot(&root().join("target/studio-screenshots/live.png"))
        .await;

    // The session ends: the page stops following and the call stays.
    tokio::join!(handle.disconnect(), conn.expect_closed());
    drop(handle);
    browser.wait_for("window.studio.state.live === false").await;
    let head = browser
        .eval("document.querySelector('#call-head').textContent")
        .await;
    assert!(
        head.as_str()
            .unwrap()
            .ends_with("5 frames · 1 turn · 0 tool calls"),
        "{head}"
    );
    drop(browser);
    studio.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_call_shows_its_phases_and_what_happened_to_the_session_itself() {
    if !chromium::available("a_call_shows_its_phases_and_what_happened_to_the_session_itself") {
        return;
    }
    let dir = fresh_dir("supervisor");
    let t0 = 1_718_000_000_000;
    let frame = |seq: u64, ts: u64, dir: Direction, conn: Option<u32>, payload: &str| {
        WireEntry::frame(seq, dir, t0 + ts, payload.as_bytes().to_vec(), conn, false)
    };
    let mut close = WireEntry::close_mark(
        5,
        t0 + 400,
        None,
        reel_recorder::CloseMark {
            code: Some(1001),
            reason: Some("going away".into()),
            client: false,
        },
    );
    close.conn = None;
    write_log(
        &dir.join("reconnect.wire.jsonl"),
        &[
            frame(1, 0, Direction::Out, None, r#"{"setup":{"model":"m"}}"#),
            frame(2, 20, Direction::In, None, r#"{"setupComplete":{}}"#),
            frame(
                3,
                300,
                Direction::In,
                None,
                r#"{"goAway":{"timeLeft":"5s"}}"#,
            ),
            frame(
                4,
                350,
                Direction::Out,
                None,
                r#"{"clientContent":{"turnComplete":true}}"#,
            ),
            close,
            frame(
                6,
                450,
                Direction::Out,
                Some(2),
                r#"{"setup":{"model":"m"}}"#,
            ),
            frame(7, 470, Direction::In, Some(2), r#"{"setupComplete":{}}"#),
        ],
    );
    let mutation = |sequence: u64, ts: u64, key: &str, old: Value, new: Value| {
        serde_json::to_string(&reel_recorder::journal::StateMutation {
            sequence,
            key: key.into(),
            old,
            new,
            origin: "set".into(),
            timestamp_ms: t0 + ts,
            delta: false,
        })
        .unwrap()
            + "\n"
    };
    std::fs::write(
        dir.join("reconnect.journal.jsonl"),
        [
            mutation(1, 20, "session:phase", Value::Null, json!("live")),
            mutation(
                2,
                20,
                "session:active_phase",
                Value::Null,
                json!("greeting"),
            ),
            mutation(
                3,
                200,
                "session:active_phase",
                json!("greeting"),
                json!("booking"),
            ),
            mutation(
                4,
                400,
                "session:phase",
                json!("live"),
                json!("reconnecting"),
            ),
            mutation(
                5,
                470,
                "session:phase",
                json!("reconnecting"),
                json!("live"),
            ),
        ]
        .concat(),
    )
    .unwrap();
    let studio = RunningStudio::start("127.0.0.1:0", &dir).await.unwrap();
    let (status, overview) = get_json(&studio, "/api/recordings/reconnect.wire.jsonl").await;
    assert_eq!(status, 200);
    assert_eq!(
        overview["lanes"],
        json!([
            "wire out",
            "wire in",
            "fast lane",
            "control lane",
            "tools",
            "turns",
            "phases",
            "state",
            "supervisor"
        ])
    );
    assert_eq!(
        overview["phases"],
        json!([
            {"name": "greeting", "start_ms": 20, "end_ms": 200},
            {"name": "booking", "start_ms": 200, "end_ms": null},
        ])
    );
    assert_eq!(
        overview["supervisor"],
        json!([
            {"t_ms": 0, "kind": "connected", "detail": "connection 1"},
            {"t_ms": 20, "kind": "phase", "detail": "live"},
            {"t_ms": 300, "kind": "go_away", "detail": "goAway on connection 1: 5s left"},
            {"t_ms": 400, "kind": "closed", "detail": "connection 1 closed by the server: 1001 going away"},
            {"t_ms": 400, "kind": "phase", "detail": "reconnecting"},
            {"t_ms": 450, "kind": "connected", "detail": "connection 2"},
            {"t_ms": 470, "kind": "phase", "detail": "live"},
        ])
    );

    // In the page: the goAway's mark, clicked, says what it was.
    let profile = fresh_dir("chromium-profile-supervisor");
    let mut browser = Browser::start(&profile).await;
    browser
        .goto(&format!("{}#/call/reconnect.wire.jsonl", studio.url()))
        .await;
    let point = browser.wait_for("window.studio.supervisorPoint(2)").await;
    browser
        .click(point["x"].as_f64().unwrap(), point["y"].as_f64().unwrap())
        .await;
    let detail = browser
        .wait_for("document.querySelector('#detail p')?.textContent")
        .await;
    assert_eq!(detail, json!("goAway on connection 1: 5s left"));
    browser
        .screenshot(&root().join("target/studio-screenshots/supervisor.png"))
        .await;
    drop(browser);
    studio.stop().await;
}

/// A voice call long enough to index: 40 turns, the user's audio in real time, the
/// model's streamed faster than it plays (so audio placed before a point plays after it).
fn long_voice_call() -> Vec<WireEntry> {
    let t0 = 1_718_000_000_000;
    let mut entries = Vec::new();
    let mut push = |ts: u64, dir: Direction, payload: String| {
        let seq = entries.len() as u64 + 1;
        entries.push(WireEntry::frame(
            seq,
            dir,
            t0 + ts,
            payload.into_bytes(),
            None,
            false,
        ));
    };
    let pcm = |samples: usize, value: i16| -> String {
        let bytes: Vec<u8> = (0..samples).flat_map(|_| value.to_le_bytes()).collect();
        Base64Data(bytes.into()).encode()
    };
    push(0, Direction::Out, r#"{"setup":{"model":"m"}}"#.into());
    push(20, Direction::In, r#"{"setupComplete":{}}"#.into());
    let mut at = 100;
    for turn in 0..40u64 {
        for n in 0..10 {
            // 20 ms of the user at 16 kHz, every 20 ms.
            let data = pcm(320, 1_000 + turn as i16);
            push(
                at + n * 20,
                Direction::Out,
                format!(
                    r#"{{"realtimeInput":{{"audio":{{"mimeType":"audio/pcm;rate=16000","data":"{data}"}}}}}}"#
                ),
            );
        }
        at += 250;
        for n in 0..20 {
            // 50 ms of the model at 24 kHz, every 5 ms: it plays long after it arrived.
            let data = pcm(1_200, -2_000 - turn as i16 * 10);
            push(
                at + n * 5,
                Direction::In,
                format!(
                    r#"{{"serverContent":{{"modelTurn":{{"parts":[{{"inlineData":{{"mimeType":"audio/pcm;rate=24000","data":"{data}"}}}}]}}}}}}"#
                ),
            );
        }
        push(
            at + 100,
            Direction::In,
            r#"{"serverContent":{"turnComplete":true}}"#.into(),
        );
        at += 1_200;
    }
    entries
}

#[test]
fn reading_from_a_seek_point_gives_exactly_what_reading_from_the_start_gives() {
    use reel::studio::call;
    use reel::studio::seek::SeekIndex;

    let dir = fresh_dir("seek");
    let log = dir.join("long.wire.jsonl");
    write_log(&log, &long_voice_call());
    let size = std::fs::metadata(&log).unwrap().len();
    let index = SeekIndex::build_every(&log, 32 * 1024).unwrap();
    // A point every 32 KiB, give or take the line that crosses the mark (at most 4 KiB).
    assert!(
        index.points.len() as u64 >= size / (36 * 1024),
        "{} points in {size} bytes",
        index.points.len()
    );
    assert_eq!(index.t0, 1_718_000_000_000);
    let span = call::overview(&log, "long.wire.jsonl")
        .unwrap()
        .audio_end_ms;
    let (mut seeked, mut earlier_for_audio) = (0, 0);
    for k in 0..16u64 {
        let from = span * k / 16 + k * 37;
        let to = from + 900;
        if let Some(window) = index.for_window(from) {
            seeked += 1;
            let peaks = index.for_peaks(from).unwrap();
            assert!(peaks.offset <= window.offset);
            if peaks.offset < window.offset {
                earlier_for_audio += 1;
            }
        }
        assert_eq!(
            call::events(&log, from, to, 20_000, 1, Some(&index)).unwrap(),
            call::events(&log, from, to, 20_000, 1, None).unwrap(),
            "events from {from}"
        );
        assert_eq!(
            call::events(&log, from, to, 50, 3, Some(&index)).unwrap(),
            call::events(&log, from, to, 50, 3, None).unwrap(),
            "sampled events from {from}"
        );
        assert_eq!(
            call::peaks(&log, from, to, 97, Some(&index)).unwrap(),
            call::peaks(&log, from, to, 97, None).unwrap(),
            "peaks from {from}"
        );
    }
    assert!(seeked >= 14, "{seeked}");
    // The model's audio plays long after it arrived: some waveforms start at an earlier
    // point than the window of frames does.
    assert!(earlier_for_audio > 0, "{earlier_for_audio}");
    for seq in [1, 2, 777, 1_500, 9_999] {
        assert_eq!(
            call::frame(&log, seq, Some(&index)).unwrap(),
            call::frame(&log, seq, None).unwrap(),
            "frame {seq}"
        );
    }
}
