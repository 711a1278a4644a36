//! The crate's integration tests, gathered into one binary (one link, one process): each
//! file beside this one is a module holding one area's tests. The session tests of the
//! control lane's commit points (when the reactor is called, in which order, across a
//! restart) are the tree's: `actors/tests/it/session_reactive.rs`.

mod crossings;
mod rules_refused;
