//! Decodes one of the benchmark's `toolCall` frames with gemini-rs's `JsonCodec` a number
//! of times and prints the time per frame: the baseline `protocol/examples/decode_loop.rs`
//! is compared with (same loop, same frames, same output).
//!
//! ```sh
//! cargo run --release -- two 1000000     # the 392-byte frame, a million times
//! valgrind --tool=callgrind ./target/release/gemini-compare two 100000
//! ```

use std::hint::black_box;
use std::time::Instant;

use gemini_genai_rs::transport::{Codec, JsonCodec};

const ONE: &[u8] = include_bytes!("../../frames/tool_call_1.json");
const TWO: &[u8] = include_bytes!("../../frames/tool_call_2_nested.json");

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let frame = match args.first().map(String::as_str) {
        Some("one") => ONE,
        Some("two") => TWO,
        _ => {
            eprintln!("usage: gemini-compare one|two ITERATIONS");
            std::process::exit(2);
        }
    };
    let iterations: u64 = args
        .get(1)
        .and_then(|n| n.parse().ok())
        .unwrap_or(1_000_000);
    let codec = JsonCodec;
    match codec.decode_message(frame) {
        Ok(message) => eprintln!("{message:?}"),
        Err(error) => {
            eprintln!("the frame does not decode: {error}");
            std::process::exit(1);
        }
    }
    let started = Instant::now();
    for _ in 0..iterations {
        black_box(codec.decode_message(black_box(frame)).ok());
    }
    let elapsed = started.elapsed();
    let per = elapsed.as_nanos() as f64 / iterations.max(1) as f64;
    println!(
        "gemini-rs {} bytes: {per:.1} ns a frame ({iterations} frames)",
        frame.len()
    );
}
