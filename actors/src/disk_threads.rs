//! [`DiskThreads`]: the process's disk writers, shared by every session.
//!
//! Each recording session's Recorder writes its wire log every 50 ms while frames come. On
//! tokio's blocking pool each of those writes woke a thread for a few kilobytes and parked it
//! again: with a thousand recording sessions, twenty thousand wakes a second, and the context
//! switches were most of what recording cost (`docs/bench-log/fleet.md`, "one writer for
//! every session"). Here a few threads take every session's disk work from one queue, and
//! work that may wait (a Recorder's tick) waits up to [`LINGER`] for other sessions' work to
//! gather, so one wake writes for many. Work that should not wait (a turn's end, a full
//! queue, a session's end, a journal flush) wakes a thread at once, and takes what lingers
//! with it.
//!
//! Work runs in the order it was queued, on one of [`THREADS`] threads: a write that blocks on
//! a slow disk holds up the work queued in its batch, and the next batch goes to another
//! thread. A panic in a piece of work is caught and handed back to whoever waits for it, as
//! the blocking pool hands it back; the thread goes on.

use std::panic::AssertUnwindSafe;
use std::sync::{Condvar, LazyLock, Mutex, MutexGuard, OnceLock};
use std::time::{Duration, Instant};

use crate::events::lock;

/// How long work that may wait is held for more to gather before a thread writes it: a
/// tenth of the Recorder's 50 ms tick, so a crash still loses at most 100 ms of frames.
pub const LINGER: Duration = Duration::from_millis(5);

/// The writer threads: two, so a write stuck on a slow disk leaves the other writing.
pub const THREADS: usize = 2;

/// A piece of work, with whatever it reports its outcome through.
pub(crate) type Job = Box<dyn FnOnce() + Send + 'static>;

/// Whether a piece of work may wait for others to gather.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Urgency {
    /// Write it now (and whatever lingers with it).
    Now,
    /// It may wait up to [`LINGER`].
    Linger,
}

#[derive(Default)]
struct Queue {
    jobs: Vec<Job>,
    /// A piece of work that should not wait is queued.
    urgent: bool,
}

/// The process's writer threads and their queue.
pub(crate) struct DiskThreads {
    queue: Mutex<Queue>,
    work: Condvar,
    /// Whether any thread started (set on the first piece of work).
    running: OnceLock<bool>,
    /// How long work that may wait is held ([`LINGER`]).
    linger: Duration,
    /// How many threads to start ([`THREADS`]).
    threads: usize,
}

static WRITERS: LazyLock<DiskThreads> = LazyLock::new(|| DiskThreads::new(THREADS, LINGER));

impl DiskThreads {
    /// `threads` writers holding work that may wait `linger`; none runs before the first
    /// piece of work.
    fn new(threads: usize, linger: Duration) -> Self {
        DiskThreads {
            queue: Mutex::new(Queue::default()),
            work: Condvar::new(),
            running: OnceLock::new(),
            linger,
            threads,
        }
    }

    /// The process's writers.
    pub(crate) fn global() -> &'static DiskThreads {
        &WRITERS
    }

    /// Queues `job`; it runs on a writer thread, at once or within [`LINGER`]. Gives it back
    /// if no writer thread could be started (the caller runs it elsewhere).
    pub(crate) fn submit(&'static self, job: Job, urgency: Urgency) -> Result<(), Job> {
        if !*self.running.get_or_init(|| self.start()) {
            return Err(job);
        }
        let mut queue = lock(&self.queue);
        let was_empty = queue.jobs.is_empty();
        queue.jobs.push(job);
        let urgent = urgency == Urgency::Now;
        queue.urgent |= urgent;
        drop(queue);
        // A thread already lingers over a non-empty queue: it takes this one with the rest.
        if urgent || was_empty {
            self.work.notify_one();
        }
        Ok(())
    }

    /// Starts the threads; `false` if none could be.
    fn start(&'static self) -> bool {
        let mut started = false;
        for i in 0..self.threads {
            let spawned = std::thread::Builder::new()
                .name(format!("reel-disk-{i}"))
                .spawn(move || self.serve());
            match spawned {
                Ok(_) => started = true,
                Err(error) => tracing::warn!(%error, "could not start a disk writer thread"),
            }
        }
        started
    }

    /// A writer thread: takes what is queued (after letting it gather, unless something is
    /// urgent) and runs it, for as long as the process lives.
    fn serve(&self) {
        let mut queue = lock(&self.queue);
        loop {
            if queue.jobs.is_empty() {
                queue = self.wait(queue, None);
                continue;
            }
            let until = Instant::now() + self.linger;
            while !queue.urgent {
                let now = Instant::now();
                if now >= until {
                    break;
                }
                queue = self.wait(queue, Some(until - now));
            }
            let batch = std::mem::take(&mut queue.jobs);
            queue.urgent = false;
            drop(queue);
            for job in batch {
                // Each job catches its own panic and reports it (see `Disk::run`); this
                // guard keeps the thread alive should one not.
                let _ = std::panic::catch_unwind(AssertUnwindSafe(job));
            }
            queue = lock(&self.queue);
        }
    }

    /// Waits for the queue's condition variable, at most `limit`.
    fn wait<'a>(
        &self,
        queue: MutexGuard<'a, Queue>,
        limit: Option<Duration>,
    ) -> MutexGuard<'a, Queue> {
        match limit {
            None => self
                .work
                .wait(queue)
                .unwrap_or_else(|poisoned| poisoned.into_inner()),
            Some(limit) => {
                self.work
                    .wait_timeout(queue, limit)
                    .unwrap_or_else(|poisoned| poisoned.into_inner())
                    .0
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::mpsc;

    /// Writers of their own (leaked: their threads live as long as the process).
    fn writers(threads: usize, linger: Duration) -> &'static DiskThreads {
        Box::leak(Box::new(DiskThreads::new(threads, linger)))
    }

    fn job(tx: &mpsc::Sender<u32>, n: u32) -> Job {
        let tx = tx.clone();
        Box::new(move || {
            let _ = tx.send(n);
        })
    }

    #[test]
    fn urgent_work_takes_the_lingering_work_with_it_in_queue_order() {
        // Lingering work would wait an hour: it runs only because urgent work came.
        let writers = writers(1, Duration::from_secs(3600));
        let (tx, rx) = mpsc::channel();
        assert!(writers.submit(job(&tx, 1), Urgency::Linger).is_ok());
        assert!(writers.submit(job(&tx, 2), Urgency::Linger).is_ok());
        assert_eq!(
            rx.recv_timeout(Duration::from_millis(50)),
            Err(mpsc::RecvTimeoutError::Timeout),
            "lingering work waits"
        );
        assert!(writers.submit(job(&tx, 3), Urgency::Now).is_ok());
        let got: Vec<u32> = (0..3).map(|_| rx.recv().unwrap()).collect();
        assert_eq!(got, [1, 2, 3]);
    }

    #[test]
    fn lingering_work_alone_is_written_once_its_linger_passes() {
        let writers = writers(2, Duration::from_millis(1));
        let (tx, rx) = mpsc::channel();
        for n in 0..100 {
            assert!(writers.submit(job(&tx, n), Urgency::Linger).is_ok());
        }
        let mut got: Vec<u32> = (0..100).map(|_| rx.recv().unwrap()).collect();
        got.sort_unstable();
        assert_eq!(got, (0..100).collect::<Vec<_>>(), "each once");
    }

    #[test]
    fn a_panicking_job_leaves_the_thread_serving() {
        let writers = writers(1, LINGER);
        let (tx, rx) = mpsc::channel();
        assert!(
            writers
                .submit(Box::new(|| panic!("disk on fire")), Urgency::Now)
                .is_ok()
        );
        assert!(writers.submit(job(&tx, 7), Urgency::Now).is_ok());
        assert_eq!(rx.recv().unwrap(), 7);
    }
}
