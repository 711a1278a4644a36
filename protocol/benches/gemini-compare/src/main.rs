//! Decodes one of the benchmark's `toolCall` frames with gemini-rs's `JsonCodec` a number
//! of times and prints the time per frame: the baseline `protocol/examples/decode_loop.rs`
//! is compared with (same loop, same frames, same output).
//!
//! `typed` decodes the 392-byte frame and then does what a typed tool's dispatch does with
//! each call's `args`: `serde_json::from_value` into the tool's struct (the structs of
//! `../../frames/typed_args.rs`, shared with reel's side).
//!
//! ```sh
//! cargo run --release -- two 1000000     # the 392-byte frame, a million times
//! cargo run --release -- typed 1000000   # the same, each call's args into its struct
//! valgrind --tool=callgrind ./target/release/gemini-compare two 100000
//! ```

use std::hint::black_box;
use std::time::Instant;

use gemini_genai_rs::protocol::ServerMessage;
use gemini_genai_rs::transport::{Codec, JsonCodec};

#[path = "../../frames/typed_args.rs"]
mod typed_args;

use typed_args::{BookTable, Weather};

const ONE: &[u8] = include_bytes!("../../frames/tool_call_1.json");
const TWO: &[u8] = include_bytes!("../../frames/tool_call_2_nested.json");

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let typed = args.first().map(String::as_str) == Some("typed");
    let frame = match args.first().map(String::as_str) {
        Some("one") => ONE,
        Some("two" | "typed") => TWO,
        _ => {
            eprintln!("usage: gemini-compare one|two|typed ITERATIONS");
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
    if typed {
        if let Ok(message) = codec.decode_message(frame) {
            eprintln!("{:?}", dispatch(message));
        }
        for _ in 0..iterations {
            if let Ok(message) = codec.decode_message(black_box(frame)) {
                black_box(dispatch(message));
            }
        }
    } else {
        for _ in 0..iterations {
            black_box(codec.decode_message(black_box(frame)).ok());
        }
    }
    let elapsed = started.elapsed();
    let per = elapsed.as_nanos() as f64 / iterations.max(1) as f64;
    println!(
        "gemini-rs {} bytes: {per:.1} ns a frame ({iterations} frames)",
        frame.len()
    );
}

/// What a typed tool's dispatch does with each call: its `args` into the tool's struct
/// (taken by value, gemini-rs's cheapest way), then dropped.
fn dispatch(message: ServerMessage) -> (Option<BookTable>, Option<Weather>) {
    let mut typed = (None, None);
    if let ServerMessage::ToolCall(call) = message {
        for call in call.tool_call.function_calls {
            match call.name.as_str() {
                "book_table" => typed.0 = serde_json::from_value(call.args).ok(),
                "get_weather" => typed.1 = serde_json::from_value(call.args).ok(),
                _ => {}
            }
        }
    }
    typed
}
