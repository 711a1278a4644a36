//! Fuzz target `tape_server`: one client session against one tape, through the tape
//! server's frame handling without sockets (`reel_tape_server::fuzzing`).

#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    let _ = reel_tape_server::fuzzing::client_session(data);
});
