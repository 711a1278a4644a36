//! The deterministic fault simulator: from a seed, a plan (a scripted model conversation
//! and faults at seed-chosen points), a run of the whole session tree against it under
//! paused time, and the invariants checked on what everyone saw.
//!
//! - [`rng`]: the seeded PRNG; [`plan`]: what a run does; [`generate`]: seed to plan.
//! - [`frames`]: the model's frames; [`memory_link`]: an in-memory `Connector`;
//!   [`model_link`]: the model's end of a connection, in memory or over loopback;
//!   [`model`]: the model playing a script.
//! - [`app`]: the application and its faulty callbacks; [`faulty_io`]: failing disks.
//! - [`run`]: one run; [`seed`]: one seed and its report; [`scenarios`]: hand-written plans; [`check`]: the invariants; [`violation`]: what breaks them;
//!   [`trace`]: a run as text, which a rerun must repeat byte for byte;
//!   [`tally`]: the figures over many seeds; [`quiet`]: keeping planned panics off stderr;
//!   [`hook`]: the faults injected inside the tree, through its fault hook; [`claims`]: a
//!   session store with one owner per id; [`governed`]: a flow's monitor at the tool gate.

pub mod app;
pub mod check;
pub mod claims;
pub mod faulty_io;
pub mod frames;
pub mod generate;
pub mod governed;
pub mod hook;
pub mod memory_link;
pub mod model;
pub mod model_link;
pub mod plan;
pub mod quiet;
pub mod rng;
pub mod run;
pub mod scenarios;
pub mod seed;
pub mod tally;
pub mod trace;
pub mod violation;
