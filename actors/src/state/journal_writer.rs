//! [`JournalWriter`]: a journal sink that writes on a thread of its own.
//!
//! Every mutation reaches the journal sink on the state's write path, under the state's
//! write lock, on whichever thread applied it — in a session, a tokio worker. A file sink
//! writes (and sometimes flushes) there. Wrapped in a `JournalWriter`, the write path only
//! hands a copy of the mutation to a bounded queue; a dedicated thread writes them, in
//! order, to the sink it wraps. File writes never run on a tokio worker or under the state
//! lock. When the queue is full (a disk far slower than the session), the write path waits
//! for room: the journal is never dropped.
//!
//! The thread flushes the sink as soon as no mutation waits for it, and at least every
//! [`JOURNAL_FLUSH_INTERVAL`] while mutations keep coming: a `kill -9` loses at most what
//! was not yet written and that interval (plus the time the process was not scheduled),
//! never a tail that waits in a buffer for the next write.

use std::sync::mpsc::{Receiver, Sender, SyncSender, channel, sync_channel};
use std::sync::{Arc, Mutex};
use std::sync::{Condvar, MutexGuard};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use reel_recorder::journal::{JournalSink, StateMutation};

use crate::events::lock;

/// How many mutations may wait for the writer thread before the write path waits.
pub const JOURNAL_CAPACITY: usize = 4096;

/// How long a written mutation may sit in the sink's buffer, at most, while more keep
/// coming (the writer flushes at once when none waits): half the 100 ms a crash may lose
/// at most.
pub const JOURNAL_FLUSH_INTERVAL: Duration = Duration::from_millis(50);

enum Job {
    Record(StateMutation),
    /// Flush the sink, then say so.
    Flush(SyncSender<()>),
}

/// How many jobs wait for the writer thread; the write path waits while there are
/// [`JOURNAL_CAPACITY`]. The queue itself is an unbounded channel, whose slots are allocated
/// as jobs arrive: a `sync_channel` of the same bound allocates and stamps all 4,096 slots
/// of 224 bytes (896 KiB) when the writer starts, for every recording session, idle or not
/// (measured by the `many_sessions` bench, issue 32).
#[derive(Default)]
struct Waiting {
    count: Mutex<usize>,
    room: Condvar,
}

impl Waiting {
    fn count(&self) -> MutexGuard<'_, usize> {
        lock(&self.count)
    }

    /// Waits until fewer than [`JOURNAL_CAPACITY`] jobs wait, then counts one more.
    fn enter(&self) {
        let mut count = self.count();
        while *count >= JOURNAL_CAPACITY {
            count = self
                .room
                .wait(count)
                .unwrap_or_else(|poisoned| poisoned.into_inner());
        }
        *count += 1;
    }

    /// The writer took a job off the queue.
    fn leave(&self) {
        let mut count = self.count();
        *count = count.saturating_sub(1);
        self.room.notify_one();
    }
}

/// A [`JournalSink`] that hands mutations to a thread which writes them to the sink it
/// wraps. [`JournalSink::flush`] returns once everything handed over before it is written
/// and the wrapped sink is flushed.
pub struct JournalWriter {
    jobs: Mutex<Option<Sender<Job>>>,
    waiting: Arc<Waiting>,
    thread: Mutex<Option<JoinHandle<()>>>,
}

impl std::fmt::Debug for JournalWriter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("JournalWriter").finish_non_exhaustive()
    }
}

impl JournalWriter {
    /// Starts the writer thread in front of `sink`. Fails only if the system cannot start a
    /// thread.
    pub fn new(sink: Arc<dyn JournalSink>) -> std::io::Result<Self> {
        let (jobs, queue) = channel();
        let waiting = Arc::new(Waiting::default());
        let taken = Arc::clone(&waiting);
        let thread = std::thread::Builder::new()
            .name("reel-journal".to_owned())
            .spawn(move || write_all(queue, &taken, sink.as_ref()))?;
        Ok(JournalWriter {
            jobs: Mutex::new(Some(jobs)),
            waiting,
            thread: Mutex::new(Some(thread)),
        })
    }

    fn send(&self, job: Job) -> bool {
        // Room first, without the sender's lock: a full queue holds up this writer only.
        self.waiting.enter();
        let sent = match lock(&self.jobs).as_ref() {
            Some(jobs) => jobs.send(job).is_ok(),
            None => false,
        };
        if !sent {
            self.waiting.leave();
        }
        sent
    }
}

/// The writer thread: every job in order, until the writer is dropped; then a last flush.
/// It flushes as soon as no job waits, and at least every [`JOURNAL_FLUSH_INTERVAL`] while
/// mutations keep coming.
fn write_all(queue: Receiver<Job>, waiting: &Waiting, sink: &dyn JournalSink) {
    // When the oldest mutation not yet flushed was written, if any.
    let mut unflushed_since: Option<Instant> = None;
    while let Ok(first) = queue.recv() {
        let mut next = Some(first);
        while let Some(job) = next.take() {
            waiting.leave();
            match job {
                Job::Record(mutation) => {
                    sink.record(&mutation);
                    let since = *unflushed_since.get_or_insert_with(Instant::now);
                    // A steady stream of writes never leaves the queue empty.
                    if since.elapsed() >= JOURNAL_FLUSH_INTERVAL {
                        sink.flush();
                        unflushed_since = None;
                    }
                }
                Job::Flush(done) => {
                    sink.flush();
                    unflushed_since = None;
                    let _ = done.send(());
                }
            }
            next = queue.try_recv().ok();
        }
        // Nothing waits: what was written goes out now, not with the next mutation.
        if unflushed_since.take().is_some() {
            sink.flush();
        }
    }
    sink.flush();
}

impl JournalSink for JournalWriter {
    fn record(&self, mutation: &StateMutation) {
        if !self.send(Job::Record(mutation.clone())) {
            tracing::warn!(
                sequence = mutation.sequence,
                "the journal writer thread is gone; a mutation is missing from the journal"
            );
        }
    }

    fn flush(&self) {
        let (done, flushed) = sync_channel(1);
        if self.send(Job::Flush(done)) {
            let _ = flushed.recv();
        }
    }

    /// The flush waits for the writer thread to write and flush the file.
    fn flush_blocks(&self) -> bool {
        true
    }
}

impl Drop for JournalWriter {
    fn drop(&mut self) {
        // Closing the queue ends the thread after it wrote everything and flushed.
        lock(&self.jobs).take();
        if let Some(thread) = lock(&self.thread).take() {
            let _ = thread.join();
        }
    }
}

#[cfg(test)]
mod tests {
    use reel_recorder::journal::MemoryJournalSink;
    use serde_json::json;

    use super::*;
    use crate::state::State;

    #[tokio::test]
    async fn mutations_reach_the_wrapped_sink_in_order_by_the_flush() {
        let memory = Arc::new(MemoryJournalSink::new());
        let writer = Arc::new(JournalWriter::new(memory.clone()).unwrap());
        let state = State::new();
        state.set_journal_sink(writer.clone());
        for n in 0..100 {
            state.set("app:n", n).await.unwrap();
        }
        state.flush_journal();
        let values: Vec<_> = memory.entries().into_iter().map(|m| m.new).collect();
        assert_eq!(values, (0..100).map(|n| json!(n)).collect::<Vec<_>>());
        // The explicit flush, and any the timer made while the writes came in.
        let flushed = memory.flush_count();
        assert!(flushed >= 1);
        drop(state);
        drop(writer);
        // The thread flushed once more on its way out (nothing was left for the timer).
        assert_eq!(memory.flush_count(), flushed + 1);
    }

    /// A sink whose first `record` holds the writer thread until the test lets it go.
    struct Held {
        entered: std::sync::mpsc::SyncSender<()>,
        release: Mutex<Option<std::sync::mpsc::Receiver<()>>>,
        inner: MemoryJournalSink,
    }

    impl JournalSink for Held {
        fn record(&self, mutation: &StateMutation) {
            if let Some(release) = lock(&self.release).take() {
                let _ = self.entered.send(());
                let _ = release.recv();
            }
            self.inner.record(mutation);
        }
    }

    /// The bound survives the lazily allocated queue: with the writer thread held on the
    /// first mutation, `JOURNAL_CAPACITY` more wait, the next sender waits for room, and
    /// once the thread goes on every mutation is written, in order.
    #[test]
    fn the_write_path_waits_at_the_bound_and_nothing_is_lost() {
        let (entered, thread_in) = sync_channel(1);
        let (release, released) = sync_channel(1);
        let held = Arc::new(Held {
            entered,
            release: Mutex::new(Some(released)),
            inner: MemoryJournalSink::new(),
        });
        let writer = Arc::new(JournalWriter::new(held.clone()).unwrap());
        let total = JOURNAL_CAPACITY as u64 + 2;
        let sent = Arc::new(std::sync::atomic::AtomicU64::new(0));
        let (sender_writer, sender_sent) = (Arc::clone(&writer), Arc::clone(&sent));
        let sender = std::thread::spawn(move || {
            for sequence in 0..total {
                let mutation = StateMutation {
                    sequence,
                    key: "app:n".to_owned(),
                    old: serde_json::Value::Null,
                    new: json!(sequence),
                    origin: "set".to_owned(),
                    timestamp_ms: 0,
                    delta: false,
                };
                sender_writer.record(&mutation);
                sender_sent.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            }
        });
        thread_in.recv().unwrap(); // the writer thread holds mutation 0
        // Mutations 1..=CAPACITY fill the queue; the sender then waits on the last one.
        while *writer.waiting.count() < JOURNAL_CAPACITY {
            std::thread::yield_now();
        }
        assert_eq!(*writer.waiting.count(), JOURNAL_CAPACITY);
        assert!(sent.load(std::sync::atomic::Ordering::SeqCst) <= JOURNAL_CAPACITY as u64 + 1);
        assert!(
            !sender.is_finished(),
            "the sender waits for room at the bound"
        );
        release.send(()).unwrap();
        sender.join().unwrap();
        writer.flush();
        let sequences: Vec<u64> = held.inner.entries().iter().map(|m| m.sequence).collect();
        assert_eq!(sequences, (0..total).collect::<Vec<_>>());
        assert_eq!(*writer.waiting.count(), 0);
    }

    /// This process's resident set size (`VmRSS` of `/proc/self/status`), in bytes.
    fn rss_bytes() -> u64 {
        let status = std::fs::read_to_string("/proc/self/status").unwrap();
        let kib = status
            .lines()
            .find_map(|line| line.strip_prefix("VmRSS:"))
            .unwrap()
            .trim()
            .trim_end_matches("kB")
            .trim()
            .parse::<u64>()
            .unwrap();
        kib * 1024
    }

    /// Issue 32: a writer's queue costs memory only for the jobs in it. With a
    /// `sync_channel` of `JOURNAL_CAPACITY` slots every writer allocated and stamped 896 KiB
    /// at start (64 writers: 56 MiB), idle or not; now an idle writer is its thread's stack.
    #[test]
    fn an_idle_writer_holds_no_queue_memory() {
        const WRITERS: usize = 64;
        let before = rss_bytes();
        let writers: Vec<JournalWriter> = (0..WRITERS)
            .map(|_| JournalWriter::new(Arc::new(MemoryJournalSink::new())).unwrap())
            .collect();
        let grown = rss_bytes().saturating_sub(before);
        drop(writers);
        assert!(
            grown < 16 << 20,
            "{WRITERS} idle journal writers grew the RSS by {grown} bytes"
        );
    }

    /// Tells a channel about every flush, and what it held by then.
    struct FlushSignal {
        recorded: Mutex<Vec<u64>>,
        flushed: Mutex<std::sync::mpsc::Sender<Vec<u64>>>,
    }

    impl JournalSink for FlushSignal {
        fn record(&self, mutation: &StateMutation) {
            lock(&self.recorded).push(mutation.sequence);
        }

        fn flush(&self) {
            let _ = lock(&self.flushed).send(lock(&self.recorded).clone());
        }
    }

    #[test]
    fn a_lone_mutation_is_flushed_without_another_write_or_an_explicit_flush() {
        let (flushed, flushes) = std::sync::mpsc::channel();
        let sink = Arc::new(FlushSignal {
            recorded: Mutex::new(Vec::new()),
            flushed: Mutex::new(flushed),
        });
        let writer = JournalWriter::new(sink).unwrap();
        let mutation = StateMutation {
            sequence: 1,
            key: "app:city".to_owned(),
            old: serde_json::Value::Null,
            new: json!("London"),
            origin: "set".to_owned(),
            timestamp_ms: 0,
            delta: false,
        };
        writer.record(&mutation);
        // The timer's flush, not the one on drop: the writer is still alive. (The bound is
        // generous: a busy machine may run the thread late, but it must run it.)
        let held = flushes
            .recv_timeout(Duration::from_secs(30))
            .expect("the writer thread flushed the lone mutation");
        assert_eq!(held, [1]);
        drop(writer);
    }
}
