//! One current-thread runtime a core, each holding its own sessions (`many_sessions --cores
//! K`): a fleet's process sharded by core, as servers built thread-per-core run. A session
//! connected on a shard has every task of its tree there, its pacers' too, so its lines stay
//! in one core's caches and no worker steals it; the process is still one.

use std::future::Future;
use std::pin::Pin;
use std::thread::JoinHandle;

use tokio::sync::{mpsc, oneshot};

/// A future a shard runs as a task of its own.
type Job = Pin<Box<dyn Future<Output = ()> + Send>>;

/// `K` threads, each running a current-thread runtime that runs what it is handed.
pub struct Shards {
    senders: Vec<mpsc::UnboundedSender<Job>>,
    threads: Vec<JoinHandle<()>>,
}

impl Shards {
    /// Starts `count` shards (at least one).
    pub fn start(count: usize) -> Shards {
        let mut senders = Vec::new();
        let mut threads = Vec::new();
        for k in 0..count.max(1) {
            let (tx, mut rx) = mpsc::unbounded_channel::<Job>();
            let thread = std::thread::Builder::new()
                .name(format!("shard-{k}"))
                .spawn(move || {
                    let runtime = crate::support::current_thread_runtime(&format!("shard {k}"));
                    runtime.block_on(async move {
                        while let Some(job) = rx.recv().await {
                            tokio::spawn(job);
                        }
                    });
                });
            match thread {
                Ok(thread) => threads.push(thread),
                Err(error) => panic!("cannot start shard {k}: {error}"),
            }
            senders.push(tx);
        }
        Shards { senders, threads }
    }

    /// How many shards there are.
    pub fn count(&self) -> usize {
        self.senders.len()
    }

    /// Runs `future` as a task of shard `k` (modulo the count); resolves to its output.
    pub fn run<T: Send + 'static>(
        &self,
        k: usize,
        future: impl Future<Output = T> + Send + 'static,
    ) -> impl Future<Output = T> + Send + 'static {
        let (tx, rx) = oneshot::channel();
        let job: Job = Box::pin(async move {
            // The caller may have stopped waiting; the output is then of no use.
            let _ = tx.send(future.await);
        });
        if let Some(sender) = self.senders.get(k % self.senders.len().max(1)) {
            // Refused only once the shard's loop has ended: the receiver below says so.
            let _ = sender.send(job);
        }
        async move {
            match rx.await {
                Ok(output) => output,
                Err(_) => panic!("shard {k} stopped before its task ended"),
            }
        }
    }
}

impl Drop for Shards {
    /// Ends each shard's loop (its runtime drops what still runs on it) and waits for it.
    fn drop(&mut self) {
        self.senders.clear();
        for thread in self.threads.drain(..) {
            let _ = thread.join();
        }
    }
}
