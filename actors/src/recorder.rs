//! The Recorder actor: takes recorded frames off the hot path and writes them.
//!
//! The transport's [`crate::transport::WireTap`] stamps each frame and pushes its entry onto
//! a [`RecordQueue`] — an [`Inbox`] of entries: a push under a short lock, and a doorbell
//! when the Recorder is not already on its way. The Recorder hands queued entries to the
//! application's [`WireRecorder`] (the file writer, by default) in order, and flushes it.
//! It writes when `WAKE_AT` (64) entries wait or one ends a model turn (flushing once the
//! queue is empty, so a turn's frames are on disk before the next turn), and otherwise
//! every [`FLUSH_INTERVAL`] while entries keep coming (a voice session's frames come one at
//! a time: a trip to a writer thread for each was most of what recording cost with many
//! sessions), and on stop; it reports write errors to telemetry. The tick comes from one
//! thread for every session where the disk work runs on the process's shared threads
//! (`crate::recorder_ticks`, only to sessions that recorded something since their last
//! one), from the Recorder's own timer elsewhere (a paused clock, a simulator's disk). A
//! `kill -9` therefore loses at most the last [`FLUSH_INTERVAL`] of frames (plus the time
//! the process was not scheduled), and nothing from before the last finished turn.
//!
//! Writing happens on the session's [`Disk`] (the process's writer threads, where a tick's
//! write waits up to 5 ms for other sessions' to gather; tokio's blocking pool on a
//! current-thread runtime), never on a worker thread: a slow disk does not stall the
//! session's actors. Draining is exclusive: the Recorder, its successor and
//! the supervisor's final drain at the end of the session take a lock around each entry's
//! take-record-done, so no entry is written twice or out of order. If the recorder panics
//! while writing an entry, the Recorder's successor writes that entry again first, then the
//! rest. A successor that fails on it too (its start fails; the supervisor restarts it like
//! any failure) leaves it to the next, up to [`REWRITES`] successors in all: an entry the
//! recorder fails on every time is then counted as a recording error and left out, rather
//! than ending the session through the restart limit.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, LazyLock, Mutex, OnceLock, Weak};
use std::time::Duration;

use memchr::memmem;
use ractor::ActorProcessingErr;
use reel_recorder::wire_log::{Direction, WireEntry, WireRecorder};

use crate::child::Child;
use crate::disk::{Disk, DiskWork};
use crate::disk_threads::Urgency;
use crate::events::lock;
use crate::inbox::{Bound, Failed, Inbox};
use crate::mailbox::{Consumer, ConsumerMailbox, Instance, Mailbox, RecorderTick};
use crate::recorder_ticks::RecorderTicks;
use crate::telemetry::TelemetryShared;

/// How often the recorder is flushed while frames are being recorded, however long the
/// queue stays busy (an idle session is not ticked where the process's tick thread ticks
/// the Recorders, `recorder_ticks`; elsewhere its tick does nothing). Half the
/// 100 ms a crash may lose at most, so a late tick still keeps the promise.
pub const FLUSH_INTERVAL: Duration = Duration::from_millis(50);

/// How many entries may wait for the Recorder before the transport waits for room
/// (backpressure: recorded frames are never dropped).
pub const RECORD_CAPACITY: usize = 4096;

/// How many successors write again the entry their predecessor failed on before it is left
/// out (and counted as a recording error).
pub const REWRITES: u32 = 2;

/// How many entries one drain writes before the Recorder lets its mailbox in.
const RECORD_CHUNK: usize = 256;

/// How many entries may wait before the Recorder is woken to write them; fewer wait for
/// its next tick ([`FLUSH_INTERVAL`]), unless one ends a model turn. Each wake costs a trip
/// to a writer thread (two context switches): a voice session's 100 frames a second woke
/// it 100 times, and with many sessions those trips were most of recording's cost.
const WAKE_AT: usize = 64;

/// Entries waiting for the Recorder; shared by the tap and every Recorder instance.
pub struct RecordQueue {
    /// The Recorder's mailbox: its entries, labelled with a copy of each (its payload is
    /// shared, not copied), so a successor can write again the one its predecessor failed
    /// on; and its current instance.
    entries: Mailbox<WireEntry, WireEntry, RecorderTick>,
    recorder: Arc<dyn WireRecorder>,
    /// Held by whoever drains, for each entry from take to done.
    draining: Mutex<()>,
    /// Entries lost because the recorder panicked while writing them (the one being
    /// written again counts until it is written).
    lost: std::sync::atomic::AtomicU64,
    /// The entry a failed Recorder left, and how many successors have tried to write it.
    rewrite: Mutex<Option<(WireEntry, u32)>>,
    /// Set when an entry is queued, cleared by the flush tick that writes it out: an idle
    /// session's tick costs no trip to a writer thread.
    unflushed: AtomicBool,
    /// Entries queued since the Recorder last drained.
    waiting: AtomicUsize,
    /// The Recorder was woken to write ([`WAKE_AT`] entries wait, or one ends a turn) and
    /// has not drained since. A wake without it (the doorbell's) leaves the entries to the
    /// next tick.
    due: AtomicBool,
    /// Where the writes run.
    disk: Disk,
    /// Set when the process's tick thread ticks this queue's Recorder
    /// ([`RecorderTicks`]): the queue itself, to enrol.
    ticked: OnceLock<Weak<RecordQueue>>,
    /// Enrolled for the tick thread's next tick.
    pub(crate) enrolled: AtomicBool,
}

impl std::fmt::Debug for RecordQueue {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RecordQueue")
            .field("entries", &self.entries)
            .finish_non_exhaustive()
    }
}

impl RecordQueue {
    /// A queue in front of `recorder`.
    pub fn new(recorder: Arc<dyn WireRecorder>) -> Self {
        RecordQueue {
            entries: Mailbox::new("recorder", Bound::wait(RECORD_CAPACITY), WireEntry::clone),
            recorder,
            draining: Mutex::new(()),
            lost: std::sync::atomic::AtomicU64::new(0),
            rewrite: Mutex::new(None),
            unflushed: AtomicBool::new(false),
            waiting: AtomicUsize::new(0),
            due: AtomicBool::new(false),
            disk: Disk::default(),
            ticked: OnceLock::new(),
            enrolled: AtomicBool::new(false),
        }
    }

    /// The same queue, writing on `disk` (the process's writer threads by default).
    pub fn on_disk(mut self, disk: Disk) -> Self {
        self.disk = disk;
        self
    }

    /// The Recorder's mailbox (the session's [`crate::peers::Peers`] holds it too).
    pub fn mailbox(&self) -> &Mailbox<WireEntry, WireEntry, RecorderTick> {
        &self.entries
    }

    /// The entries' inbox (its figures: high-water mark, waiting entries).
    pub fn inbox(&self) -> &Inbox<WireEntry, WireEntry> {
        &self.entries.inbox
    }

    /// Waits until the queue has room: the transport calls it after recording a frame, so
    /// a disk slower than the wire slows the wire rather than growing the queue.
    pub async fn room(&self) {
        self.entries.room().await;
    }

    /// Hands every waiting entry to the recorder, in order, and flushes it. Blocking: for
    /// the end of a session, on the session's disk.
    ///
    /// It drains under the drain lock, held throughout: a live Recorder draining at the
    /// same moment (the session's end and the Recorder's own stop both drain) waits, so no
    /// other drainer goes on past an entry this drain failed on. A failure on an entry here
    /// (the fault hook on its take, a recorder that panics writing it) leaves that entry in
    /// flight, as a failed Recorder would: the drain goes round again and writes it first.
    pub fn drain_and_flush(&self) {
        let _exclusive = lock(&self.draining);
        loop {
            // Under the drain lock no live drainer is between a take and its done, so an
            // entry in flight is one a failed Recorder (or a failed round of this drain)
            // left (the session may end before a successor writes it): written now, first.
            self.take_failed();
            // Unless [`REWRITES`] tries already failed on it: a recorder that fails on it
            // every time would fail the final drain too, and lose what follows.
            if let Some(entry) = self.next_rewrite() {
                self.recorder.record(entry);
                *lock(&self.rewrite) = None;
                self.lost.fetch_sub(1, std::sync::atomic::Ordering::Relaxed);
            }
            let round = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                while self.drain_held(usize::MAX) {}
            }));
            if round.is_ok() {
                break;
            }
        }
        self.recorder.flush();
    }

    /// Moves the entry a failed Recorder was writing, if any, to [`RecordQueue::rewrite`]:
    /// counted lost until it is written.
    fn take_failed(&self) {
        self.note_failed(self.entries.recover());
    }

    /// Keeps the entry a failed Recorder was writing (see [`RecordQueue::take_failed`]).
    fn note_failed(&self, failed: Option<Failed<WireEntry>>) {
        if let Some(failed) = failed {
            self.lost.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            *lock(&self.rewrite) = Some((failed.label, 0));
        }
    }

    /// The entry a starting Recorder writes first, if one is left and fewer than
    /// [`REWRITES`] successors tried it (one that many failed on is dropped, still counted).
    fn next_rewrite(&self) -> Option<WireEntry> {
        let mut slot = lock(&self.rewrite);
        let (entry, tries) = slot.take()?;
        if tries >= REWRITES {
            return None;
        }
        *slot = Some((entry.clone(), tries + 1));
        Some(entry)
    }

    /// Hands up to `max` waiting entries to the recorder, in order, holding the drain lock
    /// for each. Returns whether it stopped at `max` (more may wait).
    fn drain(&self, max: usize) -> bool {
        for _ in 0..max {
            let _exclusive = lock(&self.draining);
            if !self.drain_held(1) {
                return false;
            }
        }
        true
    }

    /// [`RecordQueue::drain`], for a caller that holds the drain lock.
    fn drain_held(&self, max: usize) -> bool {
        for _ in 0..max {
            let Some(taken) = self.entries.take() else {
                return false;
            };
            let turn_ended = taken.item.dir == Direction::In && ends_a_turn(&taken.item.payload);
            self.recorder.record(taken.item);
            if turn_ended {
                // A turn boundary: what the model said is on disk before the next turn.
                self.recorder.flush();
            }
            self.entries.done(taken.seq);
        }
        true
    }

    /// Whether anything was queued since the last call (which clears it).
    fn take_unflushed(&self) -> bool {
        self.unflushed.swap(false, Ordering::AcqRel)
    }

    /// Whether the Recorder was woken to write; if so, clears it and the count of waiting
    /// entries (those it drains now). A wake that writes nothing leaves the count going.
    fn take_due(&self) -> bool {
        let due = self.due.swap(false, Ordering::AcqRel);
        if due {
            self.waiting.store(0, Ordering::Release);
        }
        due
    }

    /// The tick drains everything that waits: no wake is due, nothing counts as waiting.
    fn drains_all(&self) {
        self.due.store(false, Ordering::Release);
        self.waiting.store(0, Ordering::Release);
    }

    /// Write errors so far: the recorder's own, and entries lost to a recorder that panicked.
    fn errors(&self) -> u64 {
        self.recorder.error_count() + self.lost.load(std::sync::atomic::Ordering::Relaxed)
    }
}

impl WireRecorder for RecordQueue {
    fn record(&self, entry: WireEntry) {
        let ends_a_turn = entry.dir == Direction::In && ends_a_turn(&entry.payload);
        // Refused only once the session is over and nobody drains any more.
        if let Err(closed) = self.entries.push(entry) {
            self.recorder.record(closed.0);
            return;
        }
        // After the push: a tick that clears the mark drains this entry too.
        self.unflushed.store(true, Ordering::Release);
        if let Some(me) = self.ticked.get()
            && !self.enrolled.load(Ordering::Acquire)
        {
            RecorderTicks::global().enrol(self, me);
        }
        let waiting = self.waiting.fetch_add(1, Ordering::AcqRel) + 1;
        if (ends_a_turn || waiting >= WAKE_AT) && !self.due.swap(true, Ordering::AcqRel) {
            self.entries.actor.ring();
        }
    }

    fn flush(&self) {
        self.entries.actor.cast(RecorderTick::Flush);
    }

    fn error_count(&self) -> u64 {
        self.errors()
    }
}

/// The two spellings of a turn's end, searched for in every inbound frame the session
/// records (on the transport's path since the Recorder wakes at a turn's end): built once,
/// not per frame as `memmem::find` builds its searcher.
static TURN_COMPLETE: LazyLock<[memmem::Finder<'static>; 2]> = LazyLock::new(|| {
    [
        memmem::Finder::new("turnComplete"),
        memmem::Finder::new("turn_complete"),
    ]
});

/// Whether an inbound frame ends a model turn (`turnComplete`, in either spelling the
/// protocol accepts). A frame that only mentions the word costs one flush more, never a
/// frame less.
fn ends_a_turn(payload: &[u8]) -> bool {
    TURN_COMPLETE
        .iter()
        .any(|finder| finder.find(payload).is_some())
}

/// Runs `work` on the queue on the session's disk (the process's writer threads, tokio's
/// blocking pool, or a simulator's); a panic in the recorder comes back as the actor's
/// failure, saying what failed. Work of `Urgency::Linger` (a tick's) may wait a few
/// milliseconds for other sessions' writes, so one writer's wake writes for many.
async fn off_worker<T: Send + 'static>(
    queue: &Arc<RecordQueue>,
    urgency: Urgency,
    work: impl FnOnce(&RecordQueue) -> T + Send + 'static,
) -> Result<T, ActorProcessingErr> {
    let disk = queue.disk.clone();
    let queue = Arc::clone(queue);
    let work = move || work(&queue);
    match urgency {
        Urgency::Now => disk.run(DiskWork::WireLog, work).await,
        Urgency::Linger => disk.run_lingering(DiskWork::WireLog, work).await,
    }
    .map_err(|error| format!("the wire recorder failed: {error}").into())
}

/// What a Recorder starts with (each instance).
#[derive(Clone)]
pub struct RecorderArgs {
    /// The queue it drains.
    pub queue: Arc<RecordQueue>,
    /// Where recording errors are counted.
    pub telemetry: Arc<TelemetryShared>,
}

/// The Recorder: what one instance holds.
pub struct Recorder {
    args: RecorderArgs,
}

impl Consumer for Recorder {
    type Item = WireEntry;
    type Label = WireEntry;
    type Msg = RecorderTick;
    type Args = RecorderArgs;

    const CHILD: Child = Child::Recorder;
    const CHUNK: usize = RECORD_CHUNK;

    fn mailbox(args: &RecorderArgs) -> &ConsumerMailbox<Self> {
        &args.queue.entries
    }

    async fn start(
        args: RecorderArgs,
        failed: Option<Failed<WireEntry>>,
        myself: &Instance<RecorderTick>,
    ) -> Result<Self, ActorProcessingErr> {
        args.queue.note_failed(failed);
        if let Some(entry) = args.queue.next_rewrite() {
            // Written again, first, on the session's disk. A failure here fails this
            // instance's start: the supervisor restarts it, and the next tries again.
            tracing::warn!(
                seq = entry.seq,
                "the wire recorder failed while writing an entry; writing it again"
            );
            off_worker(&args.queue, Urgency::Now, move |queue| {
                queue.recorder.record(entry)
            })
            .await?;
            *lock(&args.queue.rewrite) = None;
            args.queue
                .lost
                .fetch_sub(1, std::sync::atomic::Ordering::Relaxed);
        }
        let queue = &args.queue;
        // Entries its predecessor left (it may have failed in a tick's drain, which had
        // cleared the mark) are written at this one's first tick, not only once another
        // entry comes.
        if !queue.entries.inbox.is_empty() {
            queue.unflushed.store(true, Ordering::Release);
        }
        let ticks = RecorderTicks::global();
        if queue.disk.on_shared_threads() && ticks.available() {
            // The process's tick thread ticks it while entries come (an idle session is
            // not ticked); entries that came while no Recorder ran wait for the next tick.
            let me = queue.ticked.get_or_init(|| Arc::downgrade(queue));
            if queue.unflushed.load(Ordering::Acquire) {
                ticks.enrol(queue, me);
            }
        } else {
            // A paused clock or a simulator's disk: ticks on the session's own clock.
            myself.send_interval(FLUSH_INTERVAL, || RecorderTick::Flush);
        }
        Ok(Recorder { args })
    }

    /// One entry, on the session's disk. The Recorder drains a chunk per trip there instead
    /// ([`Consumer::drain`] below); this is what a drain does for each entry.
    async fn handle(&mut self, entry: WireEntry) -> Result<(), ActorProcessingErr> {
        off_worker(&self.args.queue, Urgency::Now, move |queue| {
            let turn_ended = entry.dir == Direction::In && ends_a_turn(&entry.payload);
            queue.recorder.record(entry);
            if turn_ended {
                queue.recorder.flush();
            }
        })
        .await
    }

    /// A chunk per trip to the session's disk, each entry under the drain lock; flushed once
    /// nothing more waits. Only when woken to write (`WAKE_AT` entries wait, or one ends a
    /// turn): the doorbell's wake of a few entries leaves them to the next tick, and the
    /// doorbell stays armed (nothing was taken), so the next pushes do not ring it.
    async fn drain(
        &mut self,
        _inbox: &Arc<Inbox<WireEntry, WireEntry>>,
    ) -> Result<bool, ActorProcessingErr> {
        if !self.args.queue.take_due() {
            return Ok(false);
        }
        let more = off_worker(&self.args.queue, Urgency::Now, |queue| {
            let more = queue.drain(RECORD_CHUNK);
            if !more {
                // Nothing more waits: write it out now, not at the next tick.
                queue.recorder.flush();
            }
            more
        })
        .await?;
        if more {
            // The skeleton wakes it again for the rest: that wake writes too.
            self.args.queue.due.store(true, Ordering::Release);
        }
        Ok(more)
    }

    async fn message(
        &mut self,
        RecorderTick::Flush: RecorderTick,
        _myself: &Instance<RecorderTick>,
    ) -> Result<(), ActorProcessingErr> {
        let args = &self.args;
        if args.queue.take_unflushed() {
            args.queue.drains_all();
            off_worker(&args.queue, Urgency::Linger, |queue| {
                while queue.drain(RECORD_CHUNK) {}
                queue.recorder.flush();
            })
            .await?;
        }
        args.telemetry.set_recording_errors(args.queue.errors());
        Ok(())
    }

    async fn stopped(&mut self) -> Result<(), ActorProcessingErr> {
        let args = &self.args;
        off_worker(&args.queue, Urgency::Now, RecordQueue::drain_and_flush).await?;
        args.telemetry.set_recording_errors(args.queue.errors());
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use reel_recorder::wire_log::{Direction, MemoryWireRecorder};

    use super::*;
    use crate::fault::FaultHook;

    /// Fails the recorder on one inbox item, once.
    struct FailOnce(u64, AtomicBool);

    impl FaultHook for FailOnce {
        fn before(&self, child: Child, input: u64) {
            if child == Child::Recorder && input == self.0 && !self.1.swap(true, Ordering::SeqCst) {
                panic!("injected fault on entry {input}");
            }
        }
    }

    /// Found by the fault simulator (seeds 980, 2058, 2882, 2996 at 3,000 seeds, once the
    /// consumers ran on tasks): the session's end drained the queue itself while its live
    /// Recorder lagged, and the fault struck that final drain. The entry was left in flight,
    /// the Recorder went on past it, and nobody wrote it again: it was never recorded. The
    /// final drain now goes round again and writes it first.
    #[test]
    fn an_entry_the_final_drain_fails_on_is_written_again_and_nothing_after_it_is_lost() {
        let memory = Arc::new(MemoryWireRecorder::new());
        let queue = RecordQueue::new(Arc::clone(&memory) as Arc<dyn WireRecorder>);
        queue.inbox().set_fault_hook(
            Child::Recorder,
            Arc::new(FailOnce(2, AtomicBool::new(false))),
        );
        for seq in 1..=4 {
            queue.record(WireEntry::frame(
                seq,
                Direction::In,
                0,
                &b"{}"[..],
                None,
                false,
            ));
        }
        queue.drain_and_flush();
        let written: Vec<u64> = memory.entries().iter().map(|e| e.seq).collect();
        assert_eq!(written, [1, 2, 3, 4], "each once, in order");
        assert_eq!(queue.errors(), 0, "written again: nothing lost");
        assert_eq!(queue.inbox().stats().failed, 1);
    }

    fn entry(seq: u64) -> WireEntry {
        WireEntry::frame(seq, Direction::In, 0, &b"{}"[..], None, false)
    }

    /// A queue in front of a memory recorder, and a Recorder draining it.
    async fn spawn_recorder() -> (
        Arc<MemoryWireRecorder>,
        Arc<RecordQueue>,
        Instance<RecorderTick>,
    ) {
        let memory = Arc::new(MemoryWireRecorder::new());
        let queue = Arc::new(RecordQueue::new(
            Arc::clone(&memory) as Arc<dyn WireRecorder>
        ));
        let (instance, _ended) = spawn_on(&queue).await;
        (memory, queue, instance)
    }

    /// A queue in front of a memory recorder whose Recorder fails on entry 2, once.
    fn failing_on_entry_2() -> (Arc<MemoryWireRecorder>, Arc<RecordQueue>) {
        let memory = Arc::new(MemoryWireRecorder::new());
        let queue = Arc::new(RecordQueue::new(
            Arc::clone(&memory) as Arc<dyn WireRecorder>
        ));
        queue.inbox().set_fault_hook(
            Child::Recorder,
            Arc::new(FailOnce(2, AtomicBool::new(false))),
        );
        (memory, queue)
    }

    /// A Recorder draining `queue`, and what its task's end says (`Some(failure)`).
    async fn spawn_on(
        queue: &Arc<RecordQueue>,
    ) -> (
        Instance<RecorderTick>,
        tokio::sync::oneshot::Receiver<Option<String>>,
    ) {
        let args = RecorderArgs {
            queue: Arc::clone(queue),
            telemetry: Arc::default(),
        };
        let (ended, end) = tokio::sync::oneshot::channel();
        let (instance, _task) = crate::mailbox::spawn_consumer::<Recorder, _>(args, move |done| {
            let _ = ended.send(done.failure);
        })
        .await
        .unwrap();
        (instance, end)
    }

    /// Waits until `memory` holds `n` entries; the bound fails the test rather than hang it.
    async fn writes(
        memory: &MemoryWireRecorder,
        n: usize,
    ) -> Result<(), tokio::time::error::Elapsed> {
        tokio::time::timeout(Duration::from_secs(60), async {
            while memory.entries().len() < n {
                tokio::time::sleep(Duration::from_millis(1)).await;
            }
        })
        .await
    }

    /// Where the disk work runs on the shared threads, the process's tick thread ticks the
    /// Recorder: it runs no timer of its own, a lone entry (no turn's end, fewer than
    /// `WAKE_AT`) is written at a tick, and a queue with nothing new leaves the tick list.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn on_the_shared_threads_the_process_tick_writes_a_lone_entry_and_leaves_an_idle_queue() {
        let (memory, queue, recorder) = spawn_recorder().await;
        assert_eq!(recorder.timers(), 0, "no timer of its own");
        queue.record(entry(1));
        // Only a tick writes it (the doorbell's wake of one entry leaves it to the tick).
        let written = writes(&memory, 1).await;
        assert!(written.is_ok(), "the tick thread's tick wrote the entry");
        assert_eq!(
            memory.entries().iter().map(|e| e.seq).collect::<Vec<_>>(),
            [1]
        );
        // It left the list before its Recorder was sent the tick, and nothing came since.
        assert!(!RecorderTicks::is_enrolled(&queue));
    }

    /// On a current-thread runtime (a paused clock lives there) the Recorder keeps its own
    /// timer on the session's clock, and its queue never enrols with the tick thread.
    #[tokio::test(start_paused = true)]
    async fn on_a_current_thread_runtime_the_recorder_ticks_on_its_own_clock() {
        let (memory, queue, recorder) = spawn_recorder().await;
        assert_eq!(recorder.timers(), 1, "its own timer");
        queue.record(entry(1));
        assert!(!RecorderTicks::is_enrolled(&queue));
        let written = writes(&memory, 1).await;
        assert!(written.is_ok(), "its own tick wrote the entry");
    }

    /// On the shared threads, a Recorder that fails while entries stream in (the fault
    /// strikes entry 2 of a drain the 64th entry woke) leaves its queue to a successor,
    /// which writes that entry again first and enrols the queue with the tick thread for
    /// the rest (more than the waking batch, fewer than another 64): every entry is written
    /// once, in order, with no timer of the Recorder's own.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn on_the_shared_threads_a_successor_takes_the_ticks_of_a_recorder_that_failed() {
        let (memory, queue) = failing_on_entry_2();
        let (_first, ended) = spawn_on(&queue).await;
        // Entries keep coming while the first Recorder drains and fails.
        let feeder = {
            let queue = Arc::clone(&queue);
            tokio::spawn(async move {
                for seq in 1..=100 {
                    queue.record(entry(seq));
                    tokio::task::yield_now().await;
                }
            })
        };
        let failure = ended.await.unwrap();
        assert_eq!(
            failure.as_deref(),
            Some(
                "the wire recorder failed: writing the wire log panicked: injected fault on entry 2"
            ),
            "the first Recorder failed on entry 2"
        );
        // The supervisor's part: a successor.
        let (second, _ended) = spawn_on(&queue).await;
        assert_eq!(second.timers(), 0, "ticked by the tick thread");
        feeder.await.unwrap();
        assert!(writes(&memory, 100).await.is_ok(), "all 100 written");
        let written: Vec<u64> = memory.entries().iter().map(|e| e.seq).collect();
        assert_eq!(written, (1..=100).collect::<Vec<_>>());
        assert_eq!(queue.errors(), 0, "written again: nothing lost");
    }

    /// A Recorder that fails in its tick's drain (ten entries: no doorbell wake, only the
    /// tick writes them) had cleared the queue's mark; its successor, with no entry coming
    /// after, still writes the rest at its first tick: entry 2 again first, then 3 to 10.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_successor_writes_what_a_recorder_that_failed_in_its_tick_left() {
        let (memory, queue) = failing_on_entry_2();
        for seq in 1..=10 {
            queue.record(entry(seq));
        }
        let (_first, ended) = spawn_on(&queue).await;
        assert!(ended.await.unwrap().is_some(), "the first Recorder failed");
        assert_eq!(memory.entries().len(), 1, "entry 1 only");
        let (_second, _ended) = spawn_on(&queue).await;
        assert!(writes(&memory, 10).await.is_ok(), "all 10 written");
        let written: Vec<u64> = memory.entries().iter().map(|e| e.seq).collect();
        assert_eq!(written, (1..=10).collect::<Vec<_>>());
        assert_eq!(queue.errors(), 0);
    }
}
