//! Figure 2 of the session tree: fast-lane latency, from the moment the link hands a frame
//! to the transport to the moment the fast lane's callback runs, while a tool sleeps 5 s and
//! the control lane has a backlog. Target p99 ≤ 200 µs.
//!
//! A plain `main` (`harness = false`): criterion does not do percentiles. One session on a
//! tokio runtime with 2 workers, over an in-memory link (a bench `Connector`). The bench
//! feeds the link frames at a steady 1 per 2 ms, alternating text deltas and 40 ms chunks
//! of 24 kHz audio, each carrying its index (the text is the index; the first four PCM
//! bytes are the index, little-endian). The link's `recv` writes the hand-off time of frame
//! `i` into slot `i`; `on_text` / `on_audio` write the callback time into slot `i` of
//! another table. The first 100 frames warm up and are not counted; 2,200 are.
//!
//! Two scenarios, one session each:
//!
//! - `idle`: nothing else going on (the baseline);
//! - `loaded`: first a `toolCall` for a tool that sleeps 5 s (real time) and 250
//!   `turnComplete` frames (with `usageMetadata`) whose blocking `on_turn_complete` takes
//!   25 ms each (an async sleep: a slow callback that waits, as callbacks should), so the
//!   control lane has more than 6 s of backlog; the frames are streamed once the tool is
//!   running and the control lane is busy, and the bench checks that both still are when the
//!   stream ends.
//!
//! Run with `cargo bench -p reel-actors --bench fast_lane_latency` (about 15 s).

mod support;

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use bytes::Bytes;
use reel_actors::callbacks::{AsyncCallback, CallbackMode, ControlCallbacks, FastCallbacks};
use reel_actors::transport::LinkFrame;
use reel_protocol::Base64Data;
use reel_tools::{SimpleTool, ToolDispatcher};
use serde_json::json;

use support::{
    Fed, MemoryConnector, Stamps, Summary, load_average, memory_builder, nanos_since, runtime,
    summarize, wait_until,
};

const WARMUP: usize = 100;
const MEASURED: usize = 2_200;
const TOTAL: usize = WARMUP + MEASURED;
const PERIOD: Duration = Duration::from_millis(2);
const TOOL_SLEEP: Duration = Duration::from_secs(5);
const TURN_FRAMES: u64 = 250;
const TURN_CALLBACK: Duration = Duration::from_millis(25);
/// 40 ms of 24 kHz PCM16 mono.
const AUDIO_BYTES: usize = 24_000 * 2 * 40 / 1000;
const TARGET_P99_NS: u64 = 200_000;

/// Frame `i`: a text delta saying `i` for even `i`, a 40 ms audio chunk starting with `i`
/// for odd `i`.
fn frame(i: usize) -> LinkFrame {
    if i.is_multiple_of(2) {
        let value = json!({"serverContent": {"modelTurn": {"parts": [{"text": i.to_string()}]}}});
        LinkFrame::text(value.to_string())
    } else {
        let mut pcm: Vec<u8> = (0..AUDIO_BYTES).map(|n| (n * 7 % 251) as u8).collect();
        pcm[..4].copy_from_slice(&(i as u32).to_le_bytes());
        let data = Base64Data(Bytes::from(pcm)).encode();
        let value = json!({"serverContent": {"modelTurn": {"parts": [{"inlineData": {"mimeType": "audio/pcm;rate=24000", "data": data}}]}}});
        LinkFrame::text(value.to_string())
    }
}

fn tool_call_frame() -> LinkFrame {
    let value =
        json!({"toolCall": {"functionCalls": [{"id": "call-1", "name": "slow_tool", "args": {}}]}});
    LinkFrame::text(value.to_string())
}

fn turn_complete_frame() -> LinkFrame {
    let value =
        json!({"serverContent": {"turnComplete": true}, "usageMetadata": {"totalTokenCount": 9}});
    LinkFrame::text(value.to_string())
}

/// When the slow tool started and finished, in ns since the scenario's base (0 = not yet).
#[derive(Default)]
struct ToolTimes {
    started: AtomicU64,
    finished: AtomicU64,
}

struct Outcome {
    name: &'static str,
    handoff: Summary,
    enqueue: Summary,
    text: Summary,
    audio: Summary,
    stream_ms: f64,
    load: Option<Load>,
}

struct Load {
    turns_done_at_start: u64,
    turns_done_at_end: u64,
    tool_started_ms: f64,
    /// Whether the tool was still sleeping when the last frame went in.
    tool_running_at_end: bool,
    tool_finished_ms: f64,
    stream_start_ms: f64,
    stream_end_ms: f64,
}

fn ms(ns: u64) -> f64 {
    ns as f64 / 1_000_000.0
}

async fn scenario(name: &'static str, loaded: bool, frames: &[LinkFrame]) -> Outcome {
    let base = Instant::now();
    let handed = Arc::new(Stamps::new(base, TOTAL));
    let called = Arc::new(Stamps::new(base, TOTAL));
    let enqueued = Arc::new(Stamps::new(base, TOTAL));
    let callbacks_seen = Arc::new(AtomicUsize::new(0));

    let (text_stamps, text_seen) = (Arc::clone(&called), Arc::clone(&callbacks_seen));
    let (audio_stamps, audio_seen) = (Arc::clone(&called), Arc::clone(&callbacks_seen));
    let fast = FastCallbacks {
        on_text: Some(Arc::new(move |text: &str| {
            if let Ok(i) = text.parse::<usize>() {
                text_stamps.record(i);
                text_seen.fetch_add(1, Ordering::AcqRel);
            }
        })),
        on_audio: Some(Arc::new(move |pcm: &Bytes| {
            if let Some(head) = pcm.get(..4) {
                let i = u32::from_le_bytes([head[0], head[1], head[2], head[3]]) as usize;
                audio_stamps.record(i);
                audio_seen.fetch_add(1, Ordering::AcqRel);
            }
        })),
        ..FastCallbacks::default()
    };

    let (connector, link) = MemoryConnector::fed(Some(Arc::clone(&handed) as _));
    let mut session = memory_builder(connector).fast_callbacks(fast);
    let tool = Arc::new(ToolTimes::default());
    let turns_done = Arc::new(AtomicU64::new(0));
    if loaded {
        let times = Arc::clone(&tool);
        let mut tools = ToolDispatcher::new();
        let registered = tools.register(SimpleTool::new(
            "slow_tool",
            "Sleeps 5 s.",
            None,
            move |_args, _ctx| {
                let times = Arc::clone(&times);
                async move {
                    times.started.store(nanos_since(base), Ordering::Release);
                    tokio::time::sleep(TOOL_SLEEP).await;
                    times.finished.store(nanos_since(base), Ordering::Release);
                    Ok(json!({"ok": true}))
                }
            },
        ));
        assert!(registered.is_ok(), "the tool registers");
        let done = Arc::clone(&turns_done);
        let control = ControlCallbacks {
            on_turn_complete: Some(AsyncCallback::new(CallbackMode::Blocking, move |()| {
                let done = Arc::clone(&done);
                async move {
                    tokio::time::sleep(TURN_CALLBACK).await;
                    done.fetch_add(1, Ordering::AcqRel);
                }
            })),
            ..ControlCallbacks::default()
        };
        session = session.dispatcher(tools).control_callbacks(control);
    }
    let handle = match session.connect().await {
        Ok(handle) => handle,
        Err(error) => panic!("the bench session did not go live: {error}"),
    };

    let feed = |index: Option<usize>, frame: LinkFrame| {
        if link.send(Fed { index, frame }).is_err() {
            panic!("the link's receiver is gone");
        }
    };
    if loaded {
        feed(None, tool_call_frame());
        for _ in 0..TURN_FRAMES {
            feed(None, turn_complete_frame());
        }
        let busy = wait_until(Duration::from_secs(5), || {
            tool.started.load(Ordering::Acquire) != 0 && turns_done.load(Ordering::Acquire) >= 1
        })
        .await;
        assert!(
            busy,
            "the tool started and the control lane works its backlog"
        );
    }

    let turns_done_at_start = turns_done.load(Ordering::Acquire);
    let stream_start = nanos_since(base);
    let mut tick = tokio::time::interval(PERIOD);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    for (i, frame) in frames.iter().enumerate() {
        tick.tick().await;
        enqueued.record(i);
        feed(Some(i), frame.clone());
    }
    let stream_end = nanos_since(base);
    let turns_done_at_end = turns_done.load(Ordering::Acquire);
    let tool_running_at_end = tool.finished.load(Ordering::Acquire) == 0;
    let all = wait_until(Duration::from_secs(30), || {
        callbacks_seen.load(Ordering::Acquire) >= TOTAL
    })
    .await;
    assert!(all, "every streamed frame reached its callback");

    let mut handoff = Vec::with_capacity(MEASURED);
    let mut enqueue = Vec::with_capacity(MEASURED);
    let (mut text, mut audio) = (Vec::new(), Vec::new());
    for i in WARMUP..TOTAL {
        let (h, c, e) = (handed.get(i), called.get(i), enqueued.get(i));
        assert!(
            h != 0 && c >= h,
            "frame {i} was handed over and called back"
        );
        handoff.push(c - h);
        enqueue.push(c - e);
        if i.is_multiple_of(2) {
            text.push(c - h);
        } else {
            audio.push(c - h);
        }
    }

    // The disconnect waits for the control lane to drain its backlog; by then the tool has
    // finished (its finishing time is reported).
    let end = tokio::time::timeout(Duration::from_secs(30), handle.disconnect()).await;
    assert!(
        matches!(&end, Ok(end) if !end.failed),
        "the session ended cleanly"
    );
    let load = loaded.then(|| Load {
        turns_done_at_start,
        turns_done_at_end,
        tool_started_ms: ms(tool.started.load(Ordering::Acquire)),
        tool_running_at_end,
        tool_finished_ms: ms(tool.finished.load(Ordering::Acquire)),
        stream_start_ms: ms(stream_start),
        stream_end_ms: ms(stream_end),
    });
    Outcome {
        name,
        handoff: summarize(handoff),
        enqueue: summarize(enqueue),
        text: summarize(text),
        audio: summarize(audio),
        stream_ms: ms(stream_end - stream_start),
        load,
    }
}

fn main() {
    // `cargo bench` passes `--bench`; a filter argument that names neither scenario is
    // ignored (this target has only one measurement).
    let frames: Vec<LinkFrame> = (0..TOTAL).map(frame).collect();
    let runtime = runtime();
    println!(
        "fast_lane_latency: 1 session, 2 workers, in-memory link; {TOTAL} frames at 1 per {PERIOD:?} \
         (text and 40 ms audio alternating), first {WARMUP} not counted; load average {}",
        load_average()
    );
    let outcomes = runtime.block_on(async {
        vec![
            scenario("idle", false, &frames).await,
            scenario("loaded", true, &frames).await,
        ]
    });
    for outcome in &outcomes {
        println!();
        println!(
            "scenario {} (stream {:.0} ms):",
            outcome.name, outcome.stream_ms
        );
        println!("  link hand-off → callback   {}", outcome.handoff);
        println!("    text frames              {}", outcome.text);
        println!("    audio frames             {}", outcome.audio);
        println!("  bench enqueue → callback   {}", outcome.enqueue);
        if let Some(load) = &outcome.load {
            println!(
                "  tool: started at {:.0} ms, finished at {:.0} ms (0: cancelled at disconnect); \
                 stream from {:.0} to {:.0} ms (tool sleeping throughout: {})",
                load.tool_started_ms,
                load.tool_finished_ms,
                load.stream_start_ms,
                load.stream_end_ms,
                load.tool_started_ms < load.stream_start_ms && load.tool_running_at_end
            );
            println!(
                "  control lane: {} of {TURN_FRAMES} blocking on_turn_complete done at stream start, \
                 {} at stream end (backlog left: {})",
                load.turns_done_at_start,
                load.turns_done_at_end,
                TURN_FRAMES - load.turns_done_at_end
            );
        }
    }
    if let Some(loaded) = outcomes.iter().find(|o| o.load.is_some()) {
        let verdict = if loaded.handoff.p99 <= TARGET_P99_NS {
            "MET"
        } else {
            "MISSED"
        };
        println!();
        println!(
            "target p99 ≤ 200 µs under load: {verdict} (p50 {:.1} µs, p99 {:.1} µs, max {:.1} µs)",
            loaded.handoff.p50 as f64 / 1e3,
            loaded.handoff.p99 as f64 / 1e3,
            loaded.handoff.max as f64 / 1e3
        );
    }
}
