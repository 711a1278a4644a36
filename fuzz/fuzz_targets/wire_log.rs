//! Fuzz target `wire_log`: see `../targets/wire_log.rs` for what it checks.

#![no_main]

#[path = "../targets/wire_log.rs"]
mod target;

libfuzzer_sys::fuzz_target!(|data: &[u8]| target::run(data));
