//! Fuzz target `frame_decoder`: see `../targets/frame_decoder.rs` for what it checks.

#![no_main]

#[path = "../targets/frame_decoder.rs"]
mod target;

libfuzzer_sys::fuzz_target!(|data: &[u8]| target::run(data));
