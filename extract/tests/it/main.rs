//! The crate's integration tests, gathered into one binary (one link, one process):
//! each file beside this one is a module holding one area's tests; the support
//! modules they share are declared here once.

#[path = "../../../actors/tests/support/mod.rs"]
mod support;
#[path = "../../../actors/tests/turns_support/mod.rs"]
mod turns_support;

mod extractors;
mod recognize_extraction;
