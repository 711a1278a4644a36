//! Issue 12, item 5: what one state write costs, so that 10,000 writes a second stay under
//! 5 % of a core (≤ 5 µs a write, everything included).
//!
//! `State::set` on a state with its recent-mutations ring full (1,100 writes before the
//! timed ones), keys cycling over ten `app:` keys, each write a new number, so every write is
//! a real mutation: the persistent map updated, the mutation numbered, put in the ring, and
//! handed to a journal sink. Two sinks: none, and one that serializes each mutation to a
//! JSON line in memory (what recording a journal costs before any I/O, which a session runs
//! on a writer thread of its own).
//!
//! Run with `cargo bench -p reel-actors --bench state_commit`.

use std::hint::black_box;
use std::sync::{Arc, Mutex};

use criterion::{Criterion, criterion_group, criterion_main};
use reel_actors::state::State;
use reel_recorder::journal::{JournalSink, StateMutation};

/// Keys the writes cycle over.
const KEYS: [&str; 10] = [
    "app:k0", "app:k1", "app:k2", "app:k3", "app:k4", "app:k5", "app:k6", "app:k7", "app:k8",
    "app:k9",
];

/// A journal sink that writes each mutation as a JSON line into a buffer it reuses.
#[derive(Default)]
struct JsonLines {
    buffer: Mutex<Vec<u8>>,
}

impl JournalSink for JsonLines {
    fn record(&self, mutation: &StateMutation) {
        let mut buffer = self.buffer.lock().unwrap_or_else(|e| e.into_inner());
        buffer.clear();
        if serde_json::to_writer(&mut *buffer, mutation).is_ok() {
            buffer.push(b'\n');
        }
    }
}

/// A state whose ring is full.
fn warmed(runtime: &tokio::runtime::Runtime, sink: Option<Arc<dyn JournalSink>>) -> State {
    let state = State::new();
    if let Some(sink) = sink {
        state.set_journal_sink(sink);
    }
    runtime.block_on(async {
        for i in 0..1_100u64 {
            if let Err(error) = state.set(KEYS[(i % 10) as usize], i).await {
                panic!("warm-up write failed: {error}");
            }
        }
    });
    state
}

fn state_commit(c: &mut Criterion) {
    let runtime = match tokio::runtime::Builder::new_current_thread().build() {
        Ok(runtime) => runtime,
        Err(error) => panic!("no runtime: {error}"),
    };
    let mut group = c.benchmark_group("state_commit");
    for (name, sink) in [
        ("set_no_sink", None),
        (
            "set_json_sink",
            Some(Arc::new(JsonLines::default()) as Arc<dyn JournalSink>),
        ),
    ] {
        let state = warmed(&runtime, sink);
        let mut i = 1_100u64;
        group.bench_function(name, |b| {
            b.iter(|| {
                i += 1;
                let key = KEYS[(i % 10) as usize];
                runtime.block_on(async { state.set(black_box(key), black_box(i)).await })
            })
        });
        assert!(state.mutation_cursor() > 1_100, "the writes were mutations");
    }
    group.finish();
}

criterion_group!(benches, state_commit);
criterion_main!(benches);
