//! Decodes one of the codec benchmark's `toolCall` frames with [`reel_protocol::decode_server`]
//! a number of times and prints the time per frame: the same loop, frames and output as
//! gemini-rs's in `protocol/benches/gemini-compare`, so the two binaries can be timed side
//! by side and counted under callgrind (instructions of `N` frames minus those of 0).
//!
//! `typed` decodes the 392-byte frame and then does what a typed tool's dispatch does with
//! each call's `args`: [`Args::deserialize`](reel_protocol::Args::deserialize) into the
//! tool's struct (the structs of `benches/frames/typed_args.rs`, shared with gemini-rs's
//! side).
//!
//! ```sh
//! cargo run --release -p reel-protocol --example decode_loop -- two 1000000
//! cargo run --release -p reel-protocol --example decode_loop -- typed 1000000
//! valgrind --tool=callgrind target/release/examples/decode_loop two 100000
//! ```

use std::hint::black_box;
use std::time::Instant;

use reel_protocol::{ServerMessage, decode_server};

#[path = "../benches/frames/typed_args.rs"]
mod typed_args;

use typed_args::{BookTable, Weather};

const ONE: &[u8] = include_bytes!("../benches/frames/tool_call_1.json");
const TWO: &[u8] = include_bytes!("../benches/frames/tool_call_2_nested.json");

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let typed = args.first().map(String::as_str) == Some("typed");
    let frame = match args.first().map(String::as_str) {
        Some("one") => ONE,
        Some("two" | "typed") => TWO,
        _ => {
            eprintln!("usage: decode_loop one|two|typed ITERATIONS");
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
    if typed {
        if let Ok(message) = decode_server(frame) {
            eprintln!("{:?}", dispatch(message));
        }
        for _ in 0..iterations {
            if let Ok(message) = decode_server(black_box(frame)) {
                black_box(dispatch(message));
            }
        }
    } else {
        for _ in 0..iterations {
            black_box(decode_server(black_box(frame)).ok());
        }
    }
    let elapsed = started.elapsed();
    let per = elapsed.as_nanos() as f64 / iterations.max(1) as f64;
    println!(
        "reel {} bytes: {per:.1} ns a frame ({iterations} frames)",
        frame.len()
    );
}

/// What a typed tool's dispatch does with each call: its `args` read into the tool's struct
/// straight from the frame's text, then dropped with the message.
fn dispatch(message: ServerMessage) -> (Option<BookTable>, Option<Weather>) {
    let mut typed = (None, None);
    let calls = message.tool_call.and_then(|call| call.function_calls);
    for call in calls.into_iter().flatten() {
        let Some(args) = &call.args else { continue };
        match call.name.as_deref() {
            Some("book_table") => typed.0 = args.deserialize().ok(),
            Some("get_weather") => typed.1 = args.deserialize().ok(),
            _ => {}
        }
    }
    typed
}
