//! Fuzz target `journal`: see `../targets/journal.rs` for what it checks.

#![no_main]

#[path = "../targets/journal.rs"]
mod target;

libfuzzer_sys::fuzz_target!(|data: &[u8]| target::run(data));
