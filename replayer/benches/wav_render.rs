//! What rendering a call's audio as a WAV costs (`reel export --format wav`, the studio's
//! `audio.wav`): model audio in 40 ms chunks (960 samples at 24 kHz), either paced (each
//! chunk sent when the one before finished playing, as real time goes) or in a burst (each
//! chunk 1 ms after the one before: the model streams faster than real time, so the audio
//! waits in memory, ahead of the log's time, until it is written). Issue 25 measured 8,000
//! burst chunks at 32.7 s against 0.52 s paced: quadratic. Rendering must be linear in the
//! audio either way.
//!
//! ```sh
//! cargo bench -p reel-replayer --bench wav_render
//! cargo bench -p reel-replayer --bench wav_render -- burst/2000
//! ```

use std::hint::black_box;
use std::io::{self, Seek, SeekFrom, Write};

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use reel_protocol::Base64Data;
use reel_recorder::wire_log::{Direction, WireEntry};
use reel_replayer::export::WavExporter;

/// Samples per chunk: 40 ms at 24 kHz.
const CHUNK: usize = 960;

/// Takes the file's bytes and forgets them: the bench measures rendering, not a disk.
struct Discard(u64);

impl Write for Discard {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.0 += buf.len() as u64;
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

impl Seek for Discard {
    fn seek(&mut self, _: SeekFrom) -> io::Result<u64> {
        Ok(0)
    }
}

/// `chunks` model audio frames, `step_ms` apart.
fn log(chunks: u64, step_ms: u64) -> Vec<WireEntry> {
    let samples: Vec<u8> = (0..CHUNK)
        .flat_map(|i| ((i as i16).wrapping_mul(37)).to_le_bytes())
        .collect();
    let payload = format!(
        r#"{{"serverContent":{{"modelTurn":{{"parts":[{{"inlineData":{{"mimeType":"audio/pcm;rate=24000","data":"{}"}}}}]}}}}}}"#,
        Base64Data(samples.into()).encode()
    );
    (0..chunks)
        .map(|n| {
            WireEntry::frame(
                n + 1,
                Direction::In,
                1_718_000_000_000 + n * step_ms,
                payload.clone().into_bytes(),
                None,
                false,
            )
        })
        .collect()
}

fn render(entries: &[WireEntry]) -> u64 {
    let mut out = Discard(0);
    let mut exporter = WavExporter::new(&mut out).unwrap();
    for entry in entries {
        exporter.push(entry).unwrap();
    }
    black_box(exporter.finish().unwrap());
    out.0
}

fn wav_render(c: &mut Criterion) {
    let mut group = c.benchmark_group("wav_render");
    group.sample_size(10);
    for chunks in [1_000u64, 2_000, 4_000, 8_000] {
        for (name, step_ms) in [("paced", 40), ("burst", 1)] {
            let entries = log(chunks, step_ms);
            group.throughput(Throughput::Elements(chunks));
            group.bench_with_input(BenchmarkId::new(name, chunks), &entries, |b, entries| {
                b.iter(|| render(entries));
            });
        }
    }
    group.finish();
}

criterion_group!(benches, wav_render);
criterion_main!(benches);
