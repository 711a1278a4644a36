//! Figure 1 of the session tree: inbound text frames per second through
//! transport → router → fast lane → `on_text`, on one session. Target ≥ 300,000 frames/s.
//!
//! Two ways, each on a tokio runtime with 2 workers:
//!
//! - `memory_link`: the real Transport actor reading an in-memory link (a bench
//!   `Connector`) that answers the setup with `{"setupComplete":{}}` and then yields
//!   200,000 pre-built `serverContent` text frames as fast as they are pulled;
//! - `loopback_ws`: the real `WebSocketConnector` reading a loopback WebSocket from a server
//!   task (its own thread and current-thread runtime, sharing the same 2 cores) that writes
//!   200,000 pre-encoded text frames back to back.
//!
//! Each iteration is a fresh session: connect (not timed), then the clock runs from the
//! moment the frames are released until the `on_text` callback has counted all of them;
//! then a clean disconnect (not timed). Criterion prints frames/s (`Throughput::Elements`).
//!
//! Run with `cargo bench -p reel-actors --bench session_throughput`.

mod support;

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use criterion::{Criterion, SamplingMode, Throughput, criterion_group, criterion_main};
use reel_actors::callbacks::FastCallbacks;
use reel_actors::transport::LinkFrame;
use reel_actors::{LiveHandle, LiveSessionBuilder};
use tokio::sync::Notify;

use support::{
    MemoryConnector, TEXT_FRAME, TimedConnector, builder, loopback_endpoint, memory_builder,
    runtime, serve_on_thread,
};

/// Frames per iteration.
const FRAMES: u64 = 200_000;

/// Counts `on_text` calls and wakes the bench at the last one.
struct Counter {
    seen: AtomicU64,
    done: Notify,
}

impl Counter {
    fn callbacks(self: &Arc<Self>) -> FastCallbacks {
        let counter = Arc::clone(self);
        FastCallbacks {
            on_text: Some(Arc::new(move |_text: &str| {
                if counter.seen.fetch_add(1, Ordering::Relaxed) + 1 == FRAMES {
                    counter.done.notify_one();
                }
            })),
            ..FastCallbacks::default()
        }
    }
}

fn counter() -> Arc<Counter> {
    Arc::new(Counter {
        seen: AtomicU64::new(0),
        done: Notify::new(),
    })
}

async fn connect(builder: LiveSessionBuilder) -> LiveHandle {
    match builder.connect().await {
        Ok(handle) => handle,
        Err(error) => panic!("the bench session did not go live: {error}"),
    }
}

async fn finish(handle: LiveHandle, counter: &Counter) {
    let seen = counter.seen.load(Ordering::Acquire);
    assert_eq!(seen, FRAMES, "every frame reached on_text");
    let frames_in = handle.telemetry().frames_in;
    assert_eq!(
        frames_in,
        FRAMES + 1,
        "frames in: the setupComplete and the burst"
    );
    let end = handle.disconnect().await;
    assert!(!end.failed, "the session failed: {}", end.reason);
}

/// One session over the in-memory link; the time from releasing the burst to the last
/// callback.
async fn memory_run(frames: &Arc<[LinkFrame]>) -> Duration {
    let go = Arc::new(Notify::new());
    let counter = counter();
    let connector = MemoryConnector::burst(Arc::clone(&go), Arc::clone(frames));
    let handle = connect(memory_builder(connector).fast_callbacks(counter.callbacks())).await;
    let start = Instant::now();
    go.notify_one();
    counter.done.notified().await;
    let elapsed = start.elapsed();
    finish(handle, &counter).await;
    elapsed
}

/// One session over a loopback WebSocket; the time from asking the server for the burst to
/// the last callback.
async fn websocket_run(url: &str) -> Duration {
    let counter = counter();
    let connector = TimedConnector::new(Arc::default());
    let session = builder(loopback_endpoint(url), Arc::new(connector));
    let handle = connect(session.fast_callbacks(counter.callbacks())).await;
    let start = Instant::now();
    if handle.send_text(format!("burst {FRAMES}")).is_err() {
        panic!("the session ended before the burst was asked for");
    }
    counter.done.notified().await;
    let elapsed = start.elapsed();
    finish(handle, &counter).await;
    elapsed
}

fn session_throughput(c: &mut Criterion) {
    let runtime = runtime();
    let frame = LinkFrame::text(TEXT_FRAME);
    let frames: Arc<[LinkFrame]> = (0..FRAMES).map(|_| frame.clone()).collect();
    let url = serve_on_thread();

    let mut group = c.benchmark_group("session_throughput");
    group.throughput(Throughput::Elements(FRAMES));
    group.sampling_mode(SamplingMode::Flat);
    group.sample_size(10);
    group.warm_up_time(Duration::from_secs(2));
    group.measurement_time(Duration::from_secs(12));

    group.bench_function("memory_link/text_frames", |b| {
        b.iter_custom(|iters| {
            runtime.block_on(async {
                let mut total = Duration::ZERO;
                for _ in 0..iters {
                    total += memory_run(&frames).await;
                }
                total
            })
        });
    });

    group.bench_function("loopback_ws/text_frames", |b| {
        b.iter_custom(|iters| {
            runtime.block_on(async {
                let mut total = Duration::ZERO;
                for _ in 0..iters {
                    total += websocket_run(&url).await;
                }
                total
            })
        });
    });
    group.finish();
}

criterion_group!(benches, session_throughput);
criterion_main!(benches);
