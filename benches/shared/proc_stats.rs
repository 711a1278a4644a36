//! A process's resident memory and CPU time and the machine's load, read from `/proc`, for
//! the load tests that report them: this process's (`"self"`) or another's by pid (a server
//! the bench started). Included with `#[path]` by `actors/benches/support/mod.rs` and
//! `benches/serve_sessions.rs`.

#![allow(dead_code)] // each bench target uses its own subset

use std::time::Duration;

/// `VmRSS` of process `pid` (`"self"` for this one), in bytes; 0 if unreadable.
pub fn rss_bytes_of(pid: &str) -> u64 {
    kib_field(&format!("/proc/{pid}/status"), "VmRSS:")
}

/// The `KEY  N kB` line of a `/proc` file, in bytes; 0 if the file or the line is missing.
fn kib_field(path: &str, key: &str) -> u64 {
    let text = std::fs::read_to_string(path).unwrap_or_default();
    text.lines()
        .find_map(|line| line.strip_prefix(key))
        .and_then(|rest| {
            rest.trim()
                .trim_end_matches("kB")
                .trim()
                .parse::<u64>()
                .ok()
        })
        .map_or(0, |kib| kib * 1024)
}

/// CPU time (user + system) process `pid` (`"self"` for this one) has used, from
/// `/proc/PID/stat` (USER_HZ = 100); zero if unreadable.
pub fn cpu_time_of(pid: &str) -> Duration {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    // Fields after the command name (which is in parentheses and may hold spaces).
    let rest = stat.rsplit_once(')').map_or("", |(_, rest)| rest);
    let fields: Vec<&str> = rest.split_whitespace().collect();
    // `rest` starts at field 3 (state); utime is field 14, stime field 15.
    let ticks = |i: usize| {
        fields
            .get(i - 3)
            .and_then(|f| f.parse::<u64>().ok())
            .unwrap_or(0)
    };
    Duration::from_millis((ticks(14) + ticks(15)) * 10)
}

/// The 1-minute load average, to judge how quiet the machine was ("?" if unreadable).
pub fn load_average() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .ok()
        .and_then(|s| s.split_whitespace().next().map(str::to_owned))
        .unwrap_or_else(|| "?".to_owned())
}

/// Anonymous memory of process `pid` (`"self"` for this one) backed by transparent huge
/// pages (`AnonHugePages` in `/proc/PID/smaps_rollup`), in bytes; 0 if unreadable.
pub fn anon_huge_bytes_of(pid: &str) -> u64 {
    kib_field(&format!("/proc/{pid}/smaps_rollup"), "AnonHugePages:")
}

/// The machine's transparent huge page mode (`always`, `madvise` or `never`: the bracketed
/// word of `/sys/kernel/mm/transparent_hugepage/enabled`); "?" if unreadable.
pub fn transparent_huge_pages() -> String {
    std::fs::read_to_string("/sys/kernel/mm/transparent_hugepage/enabled")
        .ok()
        .and_then(|text| {
            let start = text.find('[')?;
            let end = text[start..].find(']')?;
            Some(text[start + 1..start + end].to_owned())
        })
        .unwrap_or_else(|| "?".to_owned())
}
