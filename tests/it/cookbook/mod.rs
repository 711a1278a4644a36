//! The cookbook (`examples/cookbook/`): every example runs offline from its bundled
//! cassette or recording and prints exactly its bundled output; each bundled cassette is
//! its script recorded, byte for byte. One module per example, named `exNN_name`.

#[allow(dead_code)] // each example's test uses its own part of it
#[path = "../../support/example_process.rs"]
mod example_process;
mod support;

mod ex13_review_loop;
mod ex21_full_algebra;
mod ex22_contract_testing;
mod ex23_deep_research;
mod ex24_customer_support;
mod ex25_code_review;
mod ex26_dispatch_join;
mod ex27_race_timeout;
mod ex30_production_pipeline;
