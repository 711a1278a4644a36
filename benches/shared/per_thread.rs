//! A value each thread writes its own copy of, on a line of its own, and readers add up:
//! what a bench's per-frame tallies need so that two cores counting the same totals do not
//! move the totals' lines between them a frame (`docs/bench-log/fleet.md`, "the harness's
//! shared lines"). Included with `#[path = …]` where a bench needs it.

#![allow(dead_code)] // each includer uses its own subset

use std::sync::atomic::{AtomicUsize, Ordering};

/// Copies a [`PerThread`] holds; threads beyond this many share them by their number's rest
/// (so a copy's fields must still be atomic).
pub const SHARDS: usize = 8;

/// The next thread number handed out.
static NEXT_THREAD: AtomicUsize = AtomicUsize::new(0);

thread_local! {
    /// This thread's number, handed out on its first use.
    static THREAD: usize = NEXT_THREAD.fetch_add(1, Ordering::Relaxed);
}

/// One copy, on lines of its own.
#[repr(align(64))]
#[derive(Default)]
struct Line<T>(T);

/// [`SHARDS`] copies of `T`, one a thread.
pub struct PerThread<T> {
    copies: Box<[Line<T>; SHARDS]>,
}

impl<T: Default> Default for PerThread<T> {
    fn default() -> Self {
        PerThread {
            copies: Box::new(std::array::from_fn(|_| Line::default())),
        }
    }
}

impl<T> PerThread<T> {
    /// The running thread's copy.
    pub fn mine(&self) -> &T {
        let thread = THREAD.with(|thread| *thread);
        // In bounds: the rest of a division by the array's length.
        &self.copies[thread % SHARDS].0
    }

    /// Every copy, to add up.
    pub fn each(&self) -> impl Iterator<Item = &T> {
        self.copies.iter().map(|line| &line.0)
    }
}
