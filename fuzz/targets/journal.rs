//! The journal reader on arbitrary bytes, strict and salvaging. Nothing may panic; beyond
//! that, a salvaging reader reads exactly the mutations a strict one reads before its first
//! error, and every mutation read writes back to a line that reads back to it.
//!
//! Shared by the fuzz target `journal` and the workspace test `tests/it/fuzz_seeds.rs`.

use reel_recorder::journal::StateMutation;
use reel_recorder::jsonl::JsonlReader;

/// Checks one input.
pub fn run(data: &[u8]) {
    let mut strict = JsonlReader::<StateMutation, _>::new(data, "fuzz.journal.jsonl");
    let mut mutations = Vec::new();
    for item in strict.by_ref() {
        match item {
            Ok(mutation) => mutations.push(mutation),
            Err(error) => {
                let _ = error.to_string();
            }
        }
    }
    for mutation in &mutations {
        let line = serde_json::to_vec(mutation).expect("a read mutation writes");
        let again: StateMutation = serde_json::from_slice(&line).expect("a written line reads");
        assert_eq!(&again, mutation);
    }
    let salvaged: Vec<StateMutation> =
        JsonlReader::<StateMutation, _>::new(data, "fuzz.journal.jsonl")
            .salvaging()
            .map_while(Result::ok)
            .collect();
    assert_eq!(salvaged, mutations);
}
