//! A latency histogram many tasks record into at once: log-linear buckets of nanoseconds,
//! 16 per power of two (so a bucket is 1/16 of its power of two wide: 0.5 µs at 8 µs,
//! 0.5 ms at 8 ms), atomic counts, nearest-rank percentiles read as a bucket's upper edge.
//! Shared by the benches that time many sessions' frames (`many_sessions`,
//! `serve_sessions`), included with `#[path = …]` as `shared/machine.rs` is.
//!
//! Each thread counts into its own shard, and the readings add the shards up: one set of
//! buckets that both cores bump for every frame moves its few busy lines from core to core
//! a frame — a cost of the measurement, not of what it measures, which a fleet's process
//! does not pay (`docs/bench-log/fleet.md`, "the harness's shared lines").

use std::sync::atomic::{AtomicU64, Ordering};

// `many_sessions` includes both this file and the other that includes `per_thread.rs` (the
// histogram, the link's support): the module is compiled twice there, each copy numbering
// the threads on its own — the same code, no state shared between the copies.
#[allow(clippy::duplicate_mod)]
#[path = "per_thread.rs"]
mod per_thread;
use per_thread::PerThread;

/// Sub-buckets per power of two.
const SUB: u64 = 16;

/// Buckets a copy holds: every `u64` of nanoseconds.
const BUCKETS: usize = 64 * SUB as usize;

/// One thread's buckets.
struct Buckets(Box<[AtomicU64]>);

impl Default for Buckets {
    fn default() -> Self {
        Buckets((0..BUCKETS).map(|_| AtomicU64::new(0)).collect())
    }
}

/// Log-linear buckets of nanoseconds: 16 per power of two, a copy a thread.
pub struct Histogram {
    shards: PerThread<Buckets>,
}

impl Histogram {
    /// An empty histogram covering every `u64` of nanoseconds.
    pub fn new() -> Self {
        Histogram {
            shards: PerThread::default(),
        }
    }

    /// Bucket `i`'s count, every shard's added.
    fn bucket_count(&self, i: usize) -> u64 {
        self.shards
            .each()
            .filter_map(|shard| shard.0.get(i))
            .map(|b| b.load(Ordering::Relaxed))
            .sum()
    }

    fn bucket(ns: u64) -> usize {
        if ns < SUB {
            return ns as usize;
        }
        let exp = 63 - u64::from(ns.leading_zeros()); // ≥ 4
        let sub = (ns >> (exp - 4)) - SUB; // the next 4 bits
        ((exp - 3) * SUB + sub) as usize
    }

    /// The upper edge of bucket `i`.
    fn edge(i: usize) -> u64 {
        let i = i as u64;
        if i < SUB {
            return i;
        }
        let exp = i / SUB + 3;
        let sub = i % SUB;
        ((SUB + sub + 1) << (exp - 4)) - 1
    }

    /// Counts one value of `ns` nanoseconds.
    pub fn record(&self, ns: u64) {
        if let Some(bucket) = self.shards.mine().0.get(Self::bucket(ns)) {
            bucket.fetch_add(1, Ordering::Relaxed);
        }
    }

    /// How many values were recorded.
    pub fn count(&self) -> u64 {
        (0..BUCKETS).map(|i| self.bucket_count(i)).sum()
    }

    /// The nearest-rank percentile `p` (0–100): the upper edge of its bucket; 0 when empty.
    pub fn percentile(&self, p: f64) -> u64 {
        let n = self.count();
        if n == 0 {
            return 0;
        }
        let rank = ((p / 100.0) * n as f64).ceil().max(1.0) as u64;
        let mut seen = 0;
        for i in 0..BUCKETS {
            seen += self.bucket_count(i);
            if seen >= rank {
                return Self::edge(i);
            }
        }
        u64::MAX
    }

    /// The upper edge of the highest bucket with a value; 0 when empty.
    pub fn max(&self) -> u64 {
        (0..BUCKETS)
            .rposition(|i| self.bucket_count(i) > 0)
            .map_or(0, Self::edge)
    }
}
