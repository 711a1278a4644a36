//! What every benchmark of the workspace measures around its figure the same way, so their
//! figures compare: a 2-worker tokio runtime, nearest-rank quantiles, the process's CPU time
//! and the machine's load. Included by the crates' bench support modules with
//! `#[path = "../../../benches/shared/machine.rs"]`.

#![allow(dead_code)] // each bench target uses its own subset

/// A tokio runtime with 2 worker threads (the machine has 2 cores).
pub fn runtime() -> tokio::runtime::Runtime {
    match tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(error) => panic!("cannot build the tokio runtime: {error}"),
    }
}

/// The `q` quantile (0..=1) of sorted `values` (nearest rank).
pub fn quantile(sorted: &[u64], q: f64) -> u64 {
    if sorted.is_empty() {
        return 0;
    }
    let rank = ((q * sorted.len() as f64).ceil() as usize).clamp(1, sorted.len());
    sorted[rank - 1]
}

/// User and system CPU time of this process so far, in seconds (`/proc/self/stat`).
pub fn cpu_times() -> (f64, f64) {
    let Ok(stat) = std::fs::read_to_string("/proc/self/stat") else {
        return (0.0, 0.0);
    };
    // Fields after the command name (which is in parentheses and may hold spaces).
    let Some((_, rest)) = stat.rsplit_once(')') else {
        return (0.0, 0.0);
    };
    let fields: Vec<&str> = rest.split_whitespace().collect();
    // utime and stime are fields 14 and 15 of the line, 12 and 13 after the name.
    let ticks = |i: usize| {
        fields
            .get(i)
            .and_then(|f| f.parse::<u64>().ok())
            .unwrap_or(0)
    };
    (ticks(11) as f64 / 100.0, ticks(12) as f64 / 100.0)
}

/// The 1-minute load average (`/proc/loadavg`), if readable.
pub fn load_average() -> Option<String> {
    let text = std::fs::read_to_string("/proc/loadavg").ok()?;
    Some(
        text.split_whitespace()
            .take(3)
            .collect::<Vec<_>>()
            .join(" "),
    )
}
