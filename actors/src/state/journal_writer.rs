//! [`JournalWriter`]: a journal sink that writes on the process's disk writer threads.
//!
//! Every mutation reaches the journal sink on the state's write path, under the state's
//! write lock, on whichever thread applied it — in a session, a tokio worker. A file sink
//! writes (and sometimes flushes) there. Wrapped in a `JournalWriter`, the write path only
//! hands a copy of the mutation to a bounded queue; the process's disk writer threads
//! (`crate::disk_threads`, shared by every session's wire log and journal: decision 0084)
//! write them, in order, to the sink it wraps. File writes never run on a tokio worker or
//! under the state lock. When the queue is full (a disk far slower than the session), the
//! write path waits for room: the journal is never dropped.
//!
//! It used to be a thread of its own for each session: ten thousand recording sessions were
//! ten thousand threads, each waking for a mutation or two a second. Now a mutation queues a
//! drain on the shared threads (it may wait up to `disk_threads::LINGER` for other work to
//! gather) unless one is queued or running already. One drain at a time touches the sink,
//! so mutations are written in the order they came.
//!
//! The sink is flushed as soon as no mutation waits, and at least every
//! [`JOURNAL_FLUSH_INTERVAL`] while mutations keep coming: a `kill -9` loses at most what
//! was not yet written and that interval (plus the time the process was not scheduled),
//! never a tail that waits in a buffer for the next write.
//!
//! A caller that must wait for the writer — [`JournalSink::flush`], a full queue, the
//! writer's drop — never waits on a drain that is only queued: when nobody drains, it
//! drains itself, on its own thread. The shared threads' own work (a session's final
//! journal flush runs there) therefore never waits for a thread that is busy waiting.

use std::collections::VecDeque;
use std::panic::AssertUnwindSafe;
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use reel_recorder::journal::{JournalSink, StateMutation};

use crate::disk_threads::{DiskThreads, Urgency};
use crate::events::lock;

/// How many mutations may wait to be written before the write path waits.
pub const JOURNAL_CAPACITY: usize = 4096;

/// How long a written mutation may sit in the sink's buffer, at most, while more keep
/// coming (the writer flushes at once when none waits): half the 100 ms a crash may lose
/// at most.
pub const JOURNAL_FLUSH_INTERVAL: Duration = Duration::from_millis(50);

/// How many batches one drain on a shared thread writes before it queues itself again,
/// so one busy session's journal does not hold a thread the other sessions' writes share.
const BATCHES_PER_DRAIN: usize = 4;

// Nearly every job is a mutation, held by value: boxing it would add an allocation to each
// for the sake of the rare flush.
#[allow(clippy::large_enum_variant)]
enum Job {
    Record(StateMutation),
    /// Flush the sink; counted in [`Pending::flushes_done`].
    Flush,
}

/// What waits for the writer, and who writes.
#[derive(Default)]
struct Pending {
    jobs: VecDeque<Job>,
    /// Mutations not yet written: those waiting and those of the batch being written. The
    /// write path waits while there are [`JOURNAL_CAPACITY`].
    unwritten: usize,
    /// A drain waits in the shared threads' queue.
    queued: bool,
    /// Someone drains (a shared thread, or a caller that must wait): only it touches the
    /// sink.
    running: bool,
    /// Flushes asked for, and flushes done, in the queue's order.
    flushes_asked: u64,
    flushes_done: u64,
    /// When the oldest mutation written and not yet flushed was written, if any.
    unflushed_since: Option<Instant>,
}

struct Shared {
    sink: Arc<dyn JournalSink>,
    pending: Mutex<Pending>,
    /// Something a waiting caller may wait for happened: room freed, a flush done, a drain
    /// stopped.
    changed: Condvar,
}

/// A [`JournalSink`] that hands mutations to the process's disk writer threads, which write
/// them to the sink it wraps. [`JournalSink::flush`] returns once everything handed over
/// before it is written and the wrapped sink is flushed.
pub struct JournalWriter {
    shared: Arc<Shared>,
}

impl std::fmt::Debug for JournalWriter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("JournalWriter")
            .field("unwritten", &self.shared.pending().unwritten)
            .finish_non_exhaustive()
    }
}

impl JournalWriter {
    /// A writer in front of `sink`. It starts no thread: its writes run on the process's
    /// disk writer threads.
    pub fn new(sink: Arc<dyn JournalSink>) -> Self {
        JournalWriter {
            shared: Arc::new(Shared {
                sink,
                pending: Mutex::new(Pending::default()),
                changed: Condvar::new(),
            }),
        }
    }

    /// Mutations handed over and not yet written.
    #[cfg(test)]
    fn unwritten(&self) -> usize {
        self.shared.pending().unwritten
    }
}

impl Shared {
    fn pending(&self) -> MutexGuard<'_, Pending> {
        lock(&self.pending)
    }

    fn wait<'a>(&self, pending: MutexGuard<'a, Pending>) -> MutexGuard<'a, Pending> {
        self.changed
            .wait(pending)
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

/// Queues a drain on the shared threads unless one is queued or running; `pending` is the
/// locked queue, released before the drain is handed over.
fn schedule(shared: &Arc<Shared>, mut pending: MutexGuard<'_, Pending>) {
    if pending.queued || pending.running {
        return;
    }
    pending.queued = true;
    drop(pending);
    let for_drain = Arc::clone(shared);
    let drain = Box::new(move || drain_queued(&for_drain));
    if let Err(drain) = DiskThreads::global().submit(drain, Urgency::Linger) {
        // No writer thread could be started: the journal is written here.
        drain();
    }
}

/// A drain the shared threads run: writes up to [`BATCHES_PER_DRAIN`] batches, unless
/// someone already drains (they write what waits).
fn drain_queued(shared: &Arc<Shared>) {
    let mut pending = shared.pending();
    pending.queued = false;
    if pending.running || pending.jobs.is_empty() {
        return;
    }
    pending.running = true;
    drop(pending);
    Drain { shared }.run(Some(BATCHES_PER_DRAIN));
}

/// The one writer of the sink while it lives (its creator set `running`, under the lock).
/// When it ends, however it ends (a panic in the wrapped sink included), it clears
/// `running`, wakes the waiting callers, and queues a drain for whatever came meanwhile.
struct Drain<'a> {
    shared: &'a Arc<Shared>,
}

impl Drain<'_> {
    /// Writes batch after batch, at most `limit` of them; flushes once nothing waits.
    fn run(self, limit: Option<usize>) {
        let sink = self.shared.sink.as_ref();
        let mut batches = 0;
        loop {
            let (batch, mut unflushed_since) = {
                let mut pending = self.shared.pending();
                if pending.jobs.is_empty() || limit.is_some_and(|limit| batches >= limit) {
                    // Nothing waits: what was written goes out now, not with the next
                    // mutation. (Stopped at the limit: the next drain goes on, and flushes.)
                    let flush = pending.jobs.is_empty() && pending.unflushed_since.take().is_some();
                    drop(pending);
                    if flush
                        && let Err(panic) =
                            std::panic::catch_unwind(AssertUnwindSafe(|| sink.flush()))
                    {
                        tracing::warn!(
                            panic = %crate::panic_message::panic_message(panic.as_ref()),
                            "the journal sink panicked on a flush"
                        );
                    }
                    return;
                }
                (
                    std::mem::take(&mut pending.jobs),
                    pending.unflushed_since.take(),
                )
            };
            batches += 1;
            // Counted before it is written: a panic in the wrapped sink part-way through
            // leaves neither the bound's count nor a waiting flush behind.
            let records = batch
                .iter()
                .filter(|job| matches!(job, Job::Record(_)))
                .count();
            let flushes = (batch.len() - records) as u64;
            let written = std::panic::catch_unwind(AssertUnwindSafe(|| {
                write_batch(sink, batch, &mut unflushed_since)
            }));
            if let Err(panic) = written {
                tracing::warn!(
                    panic = %crate::panic_message::panic_message(panic.as_ref()),
                    "the journal sink panicked; the rest of a batch of {records} mutations \
                     may be missing from the journal"
                );
            }
            let mut pending = self.shared.pending();
            pending.unwritten = pending.unwritten.saturating_sub(records);
            pending.flushes_done += flushes;
            pending.unflushed_since = unflushed_since;
            drop(pending);
            self.shared.changed.notify_all();
        }
    }
}

/// Writes `batch` to `sink` in order, flushing when asked and at least every
/// [`JOURNAL_FLUSH_INTERVAL`] since the oldest unflushed write (`unflushed_since`).
fn write_batch(
    sink: &dyn JournalSink,
    batch: VecDeque<Job>,
    unflushed_since: &mut Option<Instant>,
) {
    for job in batch {
        match job {
            Job::Record(mutation) => {
                sink.record(&mutation);
                let since = *unflushed_since.get_or_insert_with(Instant::now);
                // A steady stream of writes never leaves the queue empty.
                if since.elapsed() >= JOURNAL_FLUSH_INTERVAL {
                    sink.flush();
                    *unflushed_since = None;
                }
            }
            Job::Flush => {
                sink.flush();
                *unflushed_since = None;
            }
        }
    }
}

impl Drop for Drain<'_> {
    fn drop(&mut self) {
        let mut pending = self.shared.pending();
        pending.running = false;
        self.shared.changed.notify_all();
        // A mutation pushed while this drain was finishing found it running and queued
        // nothing: queue a drain for it now.
        if !pending.jobs.is_empty() {
            schedule(self.shared, pending);
        }
    }
}

impl JournalWriter {
    /// Waits until `done` holds of the queue, draining here whenever nobody else does (so
    /// it never waits on a drain that is only queued).
    fn wait_until(&self, done: impl Fn(&Pending) -> bool) {
        let mut pending = self.shared.pending();
        loop {
            if done(&pending) {
                return;
            }
            if pending.running {
                pending = self.shared.wait(pending);
                continue;
            }
            pending.running = true;
            drop(pending);
            Drain {
                shared: &self.shared,
            }
            .run(None);
            pending = self.shared.pending();
        }
    }
}

impl JournalSink for JournalWriter {
    fn record(&self, mutation: &StateMutation) {
        let mut pending = self.shared.pending();
        if pending.unwritten >= JOURNAL_CAPACITY {
            // Room first: a full queue holds up this writer only.
            drop(pending);
            self.wait_until(|pending| pending.unwritten < JOURNAL_CAPACITY);
            pending = self.shared.pending();
        }
        pending.jobs.push_back(Job::Record(mutation.clone()));
        pending.unwritten += 1;
        schedule(&self.shared, pending);
    }

    fn flush(&self) {
        let ticket = {
            let mut pending = self.shared.pending();
            pending.jobs.push_back(Job::Flush);
            pending.flushes_asked += 1;
            pending.flushes_asked
        };
        self.wait_until(|pending| pending.flushes_done >= ticket);
    }

    /// The flush waits for the mutations handed over before it to be written, and for the
    /// file's flush.
    fn flush_blocks(&self) -> bool {
        true
    }
}

impl Drop for JournalWriter {
    fn drop(&mut self) {
        // Everything handed over is written and flushed before the writer is gone (a drain
        // still queued then finds nothing to do).
        self.flush();
    }
}

#[cfg(test)]
mod tests {
    use std::sync::mpsc::sync_channel;

    use reel_recorder::journal::MemoryJournalSink;
    use serde_json::json;

    use super::*;
    use crate::state::State;

    #[tokio::test]
    async fn mutations_reach_the_wrapped_sink_in_order_by_the_flush() {
        let memory = Arc::new(MemoryJournalSink::new());
        let writer = Arc::new(JournalWriter::new(memory.clone()));
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
        let writer = Arc::new(JournalWriter::new(held.clone()));
        let total = JOURNAL_CAPACITY as u64 + 2;
        let sent = Arc::new(std::sync::atomic::AtomicU64::new(0));
        let (sender_writer, sender_sent) = (Arc::clone(&writer), Arc::clone(&sent));
        let sender = std::thread::spawn(move || {
            for sequence in 0..total {
                sender_writer.record(&mutation(sequence));
                sender_sent.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            }
        });
        thread_in.recv().unwrap(); // the writer thread holds mutation 0
        // Mutations 1..=CAPACITY fill the queue; the sender then waits on the last one.
        while writer.unwritten() < JOURNAL_CAPACITY {
            std::thread::yield_now();
        }
        assert_eq!(writer.unwritten(), JOURNAL_CAPACITY);
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
        assert_eq!(writer.unwritten(), 0);
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
    /// at start (64 writers: 56 MiB), idle or not; then an idle writer was its thread's stack;
    /// now it is its queue's few words.
    #[test]
    fn an_idle_writer_holds_no_queue_memory() {
        const WRITERS: usize = 64;
        let before = rss_bytes();
        let writers: Vec<JournalWriter> = (0..WRITERS)
            .map(|_| JournalWriter::new(Arc::new(MemoryJournalSink::new())))
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
        let writer = JournalWriter::new(sink);
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
            .expect("a shared disk thread flushed the lone mutation");
        assert_eq!(held, [1]);
        drop(writer);
    }

    fn mutation(sequence: u64) -> StateMutation {
        StateMutation {
            sequence,
            key: "app:n".to_owned(),
            old: serde_json::Value::Null,
            new: json!(sequence),
            origin: "set".to_owned(),
            timestamp_ms: 0,
            delta: false,
        }
    }

    /// The shared threads' own work flushes journals (a session's final flush runs there).
    /// With one shared thread held and the other running a flush, the drain the mutation
    /// queued cannot run: the flush must write it itself, not wait for a thread. (Waiting
    /// would hold until the test lets the first thread go, and the flush would never be
    /// seen done before that.)
    #[test]
    fn a_flush_on_a_shared_thread_writes_what_waits_itself_when_no_thread_is_free() {
        let threads = DiskThreads::global();
        // Hold one shared thread until the end of the test.
        let (held_tx, held) = sync_channel::<()>(1);
        let (gate_tx, gate) = sync_channel::<()>(1);
        let hold: crate::disk_threads::Job = Box::new(move || {
            let _ = held_tx.send(());
            let _ = gate.recv();
        });
        assert!(threads.submit(hold, Urgency::Now).is_ok());
        held.recv().unwrap();
        // On the other: a mutation, then a flush, of a writer of its own.
        let memory = Arc::new(MemoryJournalSink::new());
        let writer = JournalWriter::new(memory.clone());
        let (flushed_tx, flushed) = sync_channel::<Vec<u64>>(1);
        let sink = Arc::clone(&memory);
        let flush: crate::disk_threads::Job = Box::new(move || {
            writer.record(&mutation(7));
            writer.flush();
            let written = sink.entries().iter().map(|m| m.sequence).collect();
            let _ = flushed_tx.send(written);
        });
        assert!(threads.submit(flush, Urgency::Now).is_ok());
        let written = flushed.recv_timeout(Duration::from_secs(60));
        // Let the held thread go whatever happened, so the other tests' work goes on.
        let _ = gate_tx.send(());
        assert_eq!(written, Ok(vec![7]));
        assert!(memory.flush_count() >= 1);
    }

    /// Panics on the mutation numbered 2, once; keeps what it is given otherwise.
    struct PanicsOnTwo {
        panicked: std::sync::atomic::AtomicBool,
        inner: MemoryJournalSink,
    }

    impl JournalSink for PanicsOnTwo {
        fn record(&self, mutation: &StateMutation) {
            if mutation.sequence == 2
                && !self
                    .panicked
                    .swap(true, std::sync::atomic::Ordering::SeqCst)
            {
                panic!("the disk is on fire");
            }
            self.inner.record(mutation);
        }
    }

    /// A panic in the wrapped sink leaves no waiter behind: the flush after it returns, the
    /// bound's count is back to zero, and what is handed over later is written.
    #[test]
    fn a_panicking_sink_loses_at_most_its_batch_and_leaves_no_flush_waiting() {
        let sink = Arc::new(PanicsOnTwo {
            panicked: std::sync::atomic::AtomicBool::new(false),
            inner: MemoryJournalSink::new(),
        });
        let writer = JournalWriter::new(sink.clone());
        for sequence in 1..=4 {
            writer.record(&mutation(sequence));
        }
        writer.flush();
        assert_eq!(writer.unwritten(), 0);
        let before: Vec<u64> = sink.inner.entries().iter().map(|m| m.sequence).collect();
        assert!(!before.contains(&2), "2 panicked: {before:?}");
        writer.record(&mutation(5));
        writer.flush();
        let after: Vec<u64> = sink.inner.entries().iter().map(|m| m.sequence).collect();
        assert_eq!(after.last(), Some(&5), "written after the panic: {after:?}");
    }
}
