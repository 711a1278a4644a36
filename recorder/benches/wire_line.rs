//! What writing one wire-log line costs: the hand-written line (`wire_line::write_entry`,
//! what `FileWireRecorder` uses) against serde_json's for the same entry, for a 116-byte
//! text frame and a 6.5 KB audio frame (100 ms of 24 kHz PCM16 in base64 JSON).
//!
//! ```sh
//! cargo bench -p reel-recorder --bench wire_line
//! ```

use std::hint::black_box;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use reel_recorder::wire_line::write_entry;
use reel_recorder::wire_log::{Direction, WireEntry};

fn entries() -> [(&'static str, WireEntry); 2] {
    let text = br#"{"serverContent":{"modelTurn":{"parts":[{"text":"It is 14 degrees and cloudy in London right now."}]}}}"#;
    let audio: Vec<u8> = (0..6_500u32).map(|i| (i * 31 % 251) as u8).collect();
    [
        (
            "text_116B",
            WireEntry::frame(
                1_234,
                Direction::In,
                1_718_000_000_123,
                &text[..],
                None,
                false,
            ),
        ),
        (
            "audio_6500B",
            WireEntry::frame(
                1_235,
                Direction::In,
                1_718_000_000_223,
                audio,
                Some(2),
                false,
            ),
        ),
    ]
}

fn bench(c: &mut Criterion) {
    for (name, entry) in entries() {
        let mut group = c.benchmark_group(format!("wire_line/{name}"));
        group.throughput(Throughput::Elements(1));
        let mut line = Vec::with_capacity(16 * 1024);
        group.bench_function("by_hand", |b| {
            b.iter(|| {
                line.clear();
                write_entry(black_box(&entry), &mut line).unwrap();
                black_box(line.len())
            })
        });
        group.bench_function("serde_json", |b| {
            b.iter(|| {
                line.clear();
                serde_json::to_writer(&mut line, black_box(&entry)).unwrap();
                black_box(line.len())
            })
        });
        group.finish();
    }
}

criterion_group!(benches, bench);
criterion_main!(benches);
