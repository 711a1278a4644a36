//! Decodes one of the codec benchmark's `toolCall` frames with [`reel_protocol::decode_server`]
//! a number of times and prints the time per frame: the same loop, frames and output as
//! gemini-rs's in `protocol/benches/gemini-compare`, so the two binaries can be timed side
//! by side and counted under callgrind (instructions of `N` frames minus those of 0).
//!
//! ```sh
//! cargo run --release -p reel-protocol --example decode_loop -- two 1000000
//! valgrind --tool=callgrind target/release/examples/decode_loop two 100000
//! ```

use std::hint::black_box;
use std::time::Instant;

use reel_protocol::decode_server;

const ONE: &[u8] = include_bytes!("../benches/frames/tool_call_1.json");
const TWO: &[u8] = include_bytes!("../benches/frames/tool_call_2_nested.json");

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let frame = match args.first().map(String::as_str) {
        Some("one") => ONE,
        Some("two") => TWO,
        _ => {
            eprintln!("usage: decode_loop one|two ITERATIONS");
            std::process::exit(2);
        }
    };
    let iterations: u64 = args
        .get(1)
        .and_then(|n| n.parse().ok())
        .unwrap_or(1_000_000);
    match decode_server(frame) {
        Ok(message) => eprintln!("{:?}", message.tool_call),
        Err(error) => {
            eprintln!("the frame does not decode: {error}");
            std::process::exit(1);
        }
    }
    let started = Instant::now();
    for _ in 0..iterations {
        black_box(decode_server(black_box(frame)).ok());
    }
    let elapsed = started.elapsed();
    let per = elapsed.as_nanos() as f64 / iterations.max(1) as f64;
    println!(
        "reel {} bytes: {per:.1} ns a frame ({iterations} frames)",
        frame.len()
    );
}
