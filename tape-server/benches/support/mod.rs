//! What the tape server benchmark needs around its measurement: the runtime, the session
//! time of its tapes, percentiles and the process's CPU time and the machine's load (the
//! same definitions as reel-replayer's benchmarks, so their figures compare).

/// Session time of the first frame of every synthetic tape.
pub const T0: u64 = 1_718_000_000_000;

#[path = "../../../benches/shared/machine.rs"]
mod machine;

#[allow(unused_imports)] // each bench target uses its own subset
pub use machine::{cpu_times, load_average, quantile, runtime};
