//! [`JournalWriter`]: a journal sink that writes on a thread of its own.
//!
//! Every mutation reaches the journal sink on the state's write path, under the state's
//! write lock, on whichever thread applied it — in a session, a tokio worker. A file sink
//! writes (and sometimes flushes) there. Wrapped in a `JournalWriter`, the write path only
//! hands a copy of the mutation to a bounded queue; a dedicated thread writes them, in
//! order, to the sink it wraps. File writes never run on a tokio worker or under the state
//! lock. When the queue is full (a disk far slower than the session), the write path waits
//! for room: the journal is never dropped.

use std::sync::mpsc::{Receiver, SyncSender, sync_channel};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;

use reel_recorder::journal::{JournalSink, StateMutation};

use crate::events::lock;

/// How many mutations may wait for the writer thread before the write path waits.
pub const JOURNAL_CAPACITY: usize = 4096;

enum Job {
    Record(StateMutation),
    /// Flush the sink, then say so.
    Flush(SyncSender<()>),
}

/// A [`JournalSink`] that hands mutations to a thread which writes them to the sink it
/// wraps. [`JournalSink::flush`] returns once everything handed over before it is written
/// and the wrapped sink is flushed.
pub struct JournalWriter {
    jobs: Mutex<Option<SyncSender<Job>>>,
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
        let (jobs, queue) = sync_channel(JOURNAL_CAPACITY);
        let thread = std::thread::Builder::new()
            .name("reel-journal".to_owned())
            .spawn(move || write_all(queue, sink.as_ref()))?;
        Ok(JournalWriter {
            jobs: Mutex::new(Some(jobs)),
            thread: Mutex::new(Some(thread)),
        })
    }

    fn send(&self, job: Job) -> bool {
        match lock(&self.jobs).as_ref() {
            Some(jobs) => jobs.send(job).is_ok(),
            None => false,
        }
    }
}

/// The writer thread: every job in order, until the writer is dropped; then a last flush.
fn write_all(queue: Receiver<Job>, sink: &dyn JournalSink) {
    while let Ok(job) = queue.recv() {
        match job {
            Job::Record(mutation) => sink.record(&mutation),
            Job::Flush(done) => {
                sink.flush();
                let _ = done.send(());
            }
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
        assert_eq!(memory.flush_count(), 1);
        drop(state);
        drop(writer);
        // The thread flushed once more on its way out.
        assert_eq!(memory.flush_count(), 2);
    }
}
