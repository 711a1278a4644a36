//! [`Disk`]: where the tree's file writes run.
//!
//! The Recorder writes the wire log, and the control lane, the state store and the
//! supervisor flush the journal, off tokio's workers: a slow disk must not stall the
//! session's actors. In use that is [`Disk::BlockingPool`], the default: on a multi-thread
//! runtime the process's writer threads, shared by every session (`disk_threads`: a
//! Recorder's tick waits up to 5 ms for other sessions' writes, so one wake writes for
//! many; decision 0082), and on a current-thread runtime tokio's blocking pool (one
//! `spawn_blocking` per piece of work: a paused clock holds still only for that pool's work).
//!
//! A simulator wants each run to be a function of its seed, and writes on the blocking pool
//! run on threads outside its control: when they finish, relative to what the session's
//! own tasks do meanwhile, is the machine's choice. It installs a [`SimulatedDisk`]
//! (`LiveSessionBuilder::simulated_disk`), and each piece of disk work then runs on the
//! session's own runtime, after the latency the simulated disk gives it (virtual time under
//! a paused clock): writes complete in the order and at the times the seed chose.
//!
//! Either way, work that panics (a writer's bug, a simulator's planned fault) comes back as
//! a [`DiskFailed`] that says what failed and why, without tokio's task id (a `JoinError`
//! names the task, which differs from run to run and tells a reader of a restart reason
//! nothing).

use std::fmt;
use std::panic::AssertUnwindSafe;
use std::sync::Arc;
use std::time::Duration;

use tokio::runtime::RuntimeFlavor;

use crate::disk_threads::{DiskThreads, Job, Urgency};
use crate::panic_message::panic_message;

/// A piece of disk work the tree runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum DiskWork {
    /// The Recorder writes queued wire-log entries (and flushes them).
    WireLog,
    /// A lane or the state store flushes the journal as it stops.
    JournalFlush,
    /// The supervisor's last write at the session's end: the journal flushed, the wire
    /// log's queue written and flushed.
    FinalFlush,
}

impl fmt::Display for DiskWork {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            DiskWork::WireLog => "writing the wire log",
            DiskWork::JournalFlush => "flushing the journal",
            DiskWork::FinalFlush => "the final write of the recording and the journal",
        })
    }
}

/// A disk a simulator controls: how long each piece of work takes.
pub trait SimulatedDisk: Send + Sync + 'static {
    /// How long `work`, about to start, takes (virtual time: the work runs on the
    /// session's runtime once it has passed).
    fn latency(&self, work: DiskWork) -> Duration;
}

/// Where the tree's file writes run (see the [module docs](self)).
#[derive(Clone, Default)]
pub enum Disk {
    /// Real files, off the workers: the process's writer threads on a multi-thread runtime,
    /// tokio's blocking pool on a current-thread one. (The name is the seam's first
    /// meaning, kept: it is public, and a simulator names it.)
    #[default]
    BlockingPool,
    /// A simulator's disk: the work runs on the session's runtime, after its latency.
    Simulated(Arc<dyn SimulatedDisk>),
}

impl fmt::Debug for Disk {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Disk::BlockingPool => "Disk::BlockingPool",
            Disk::Simulated(_) => "Disk::Simulated",
        })
    }
}

/// Disk work that did not finish.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DiskFailed {
    /// The work panicked.
    #[error("{work} panicked: {message}")]
    Panicked {
        /// What was being done.
        work: DiskWork,
        /// The panic's message.
        message: String,
    },
    /// The runtime is shutting down: the work was cancelled before it finished.
    #[error("{work} was cancelled: the runtime is shutting down")]
    Cancelled {
        /// What was being done.
        work: DiskWork,
    },
}

impl Disk {
    /// [`Disk::run`] when `blocks` (the work may wait on I/O); otherwise, on tokio's
    /// blocking pool, the work runs right here, on the caller's task (it cannot stall
    /// the session, and a hand-over to a pool thread and back costs two context switches
    /// and a wake of an idle core). A simulated disk takes every piece of work as before,
    /// so a simulation's timings do not depend on what the sinks are.
    pub(crate) async fn run_if<T: Send + 'static>(
        &self,
        what: DiskWork,
        blocks: bool,
        work: impl FnOnce() -> T + Send + 'static,
    ) -> Result<T, DiskFailed> {
        match self {
            Disk::BlockingPool if !blocks => std::panic::catch_unwind(AssertUnwindSafe(work))
                .map_err(|payload| DiskFailed::Panicked {
                    work: what,
                    message: panic_message(payload.as_ref()),
                }),
            _ => self.run(what, work).await,
        }
    }

    /// Runs `work` (blocking file I/O) off the session's workers, or on the simulated disk.
    pub(crate) async fn run<T: Send + 'static>(
        &self,
        what: DiskWork,
        work: impl FnOnce() -> T + Send + 'static,
    ) -> Result<T, DiskFailed> {
        self.run_with(what, Urgency::Now, work).await
    }

    /// [`Disk::run`] for work that may wait up to [`crate::disk_threads::LINGER`] for other
    /// sessions' work to gather (a Recorder's tick), so one writer's wake writes for many.
    pub(crate) async fn run_lingering<T: Send + 'static>(
        &self,
        what: DiskWork,
        work: impl FnOnce() -> T + Send + 'static,
    ) -> Result<T, DiskFailed> {
        self.run_with(what, Urgency::Linger, work).await
    }

    /// Whether work runs on the process's writer threads from here: the blocking pool's
    /// variant, on a multi-thread runtime (see [`Disk::run_with`]).
    pub(crate) fn on_shared_threads(&self) -> bool {
        matches!(self, Disk::BlockingPool)
            && tokio::runtime::Handle::try_current()
                .is_ok_and(|runtime| runtime.runtime_flavor() == RuntimeFlavor::MultiThread)
    }

    /// Runs `work` off the session's workers: on a multi-thread runtime on the process's
    /// writer threads ([`DiskThreads`]), on a current-thread runtime on tokio's blocking
    /// pool. A current-thread runtime is where a paused clock lives (tests, a simulator),
    /// and tokio holds its clock still only while work of its own blocking pool runs: on
    /// threads of ours the clock would jump past timers while a write is in flight.
    async fn run_with<T: Send + 'static>(
        &self,
        what: DiskWork,
        urgency: Urgency,
        work: impl FnOnce() -> T + Send + 'static,
    ) -> Result<T, DiskFailed> {
        if self.on_shared_threads() {
            let (done, outcome) = tokio::sync::oneshot::channel();
            let job: Job = Box::new(move || {
                let result = std::panic::catch_unwind(AssertUnwindSafe(work)).map_err(|payload| {
                    DiskFailed::Panicked {
                        work: what,
                        message: panic_message(payload.as_ref()),
                    }
                });
                // The waiter may be gone (its session ended): the work is done either way.
                let _ = done.send(result);
            });
            if let Err(job) = DiskThreads::global().submit(job, urgency) {
                // No writer thread could be started: the blocking pool runs it (detached;
                // it reports through `done`).
                drop(tokio::task::spawn_blocking(job));
            }
            return outcome
                .await
                .unwrap_or(Err(DiskFailed::Cancelled { work: what }));
        }
        match self {
            Disk::BlockingPool => tokio::task::spawn_blocking(work).await.map_err(|error| {
                match error.try_into_panic() {
                    Ok(payload) => DiskFailed::Panicked {
                        work: what,
                        message: panic_message(payload.as_ref()),
                    },
                    Err(_) => DiskFailed::Cancelled { work: what },
                }
            }),
            Disk::Simulated(disk) => {
                tokio::time::sleep(disk.latency(what)).await;
                std::panic::catch_unwind(AssertUnwindSafe(work)).map_err(|payload| {
                    DiskFailed::Panicked {
                        work: what,
                        message: panic_message(payload.as_ref()),
                    }
                })
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Slow;

    impl SimulatedDisk for Slow {
        fn latency(&self, work: DiskWork) -> Duration {
            match work {
                DiskWork::WireLog => Duration::from_millis(30),
                _ => Duration::from_millis(10),
            }
        }
    }

    #[tokio::test]
    async fn a_panic_on_the_blocking_pool_says_what_failed_without_a_task_id() {
        let failed = Disk::BlockingPool
            .run(DiskWork::WireLog, || -> () { panic!("disk on fire") })
            .await;
        assert_eq!(
            failed.map_err(|e| e.to_string()),
            Err("writing the wire log panicked: disk on fire".to_owned())
        );
        assert_eq!(
            Disk::BlockingPool.run(DiskWork::JournalFlush, || 7).await,
            Ok(7)
        );
    }

    fn thread_name() -> String {
        std::thread::current().name().unwrap_or_default().to_owned()
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn on_a_multi_thread_runtime_the_work_runs_on_the_shared_writers() {
        let disk = Disk::BlockingPool;
        let now = disk.run(DiskWork::WireLog, thread_name).await;
        let lingering = disk.run_lingering(DiskWork::WireLog, thread_name).await;
        for name in [now, lingering] {
            assert!(
                name.as_deref().is_ok_and(|n| n.starts_with("reel-disk-")),
                "{name:?}"
            );
        }
        let failed = disk
            .run(DiskWork::FinalFlush, || -> () { panic!("disk on fire") })
            .await;
        assert_eq!(
            failed.map_err(|e| e.to_string()),
            Err(
                "the final write of the recording and the journal panicked: disk on fire"
                    .to_owned()
            )
        );
        assert_eq!(disk.run(DiskWork::JournalFlush, || 7).await, Ok(7));
    }

    #[tokio::test]
    async fn on_a_current_thread_runtime_the_work_runs_on_the_blocking_pool() {
        let name = Disk::BlockingPool
            .run_lingering(DiskWork::WireLog, thread_name)
            .await;
        assert!(
            name.as_deref().is_ok_and(|n| !n.starts_with("reel-disk-")),
            "{name:?}"
        );
    }

    #[tokio::test(start_paused = true)]
    async fn simulated_work_runs_after_its_latency_in_the_order_the_latencies_give() {
        let disk = Disk::Simulated(Arc::new(Slow));
        let order = Arc::new(std::sync::Mutex::new(Vec::new()));
        let start = tokio::time::Instant::now();
        let (a, b) = (Arc::clone(&order), Arc::clone(&order));
        let (wire, journal) = tokio::join!(
            disk.run(DiskWork::WireLog, move || a.lock().unwrap().push("wire")),
            disk.run(DiskWork::JournalFlush, move || b
                .lock()
                .unwrap()
                .push("journal")),
        );
        assert_eq!((wire, journal), (Ok(()), Ok(())));
        assert_eq!(*order.lock().unwrap(), vec!["journal", "wire"]);
        assert_eq!(start.elapsed(), Duration::from_millis(30));
        let failed = disk
            .run(DiskWork::FinalFlush, || -> () {
                panic!("{}", String::from("full"))
            })
            .await;
        assert_eq!(
            failed,
            Err(DiskFailed::Panicked {
                work: DiskWork::FinalFlush,
                message: "full".to_owned()
            })
        );
    }
}
