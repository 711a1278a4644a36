//! The simulated disk, and writers that fail on purpose: a wire recorder and a journal
//! writer.

use std::io::{self, Write};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use reel_recorder::journal::{FileJournalSink, JournalSink, MemoryJournalSink, StateMutation};
use reel_recorder::wire_log::{WireEntry, WireRecorder};

use reel_actors::disk::{DiskWork, SimulatedDisk};

use super::plan::{Fault, Plan};
use super::rng::Rng;

/// The run's disk: each piece of disk work (the Recorder's writes, the journal's flushes,
/// the final write) takes a time drawn from the seed, up to the plan's `disk_ms`, and runs
/// on the run's own thread once it has passed — so writes complete in an order the seed
/// chose, and a rerun repeats it.
pub struct SimDisk {
    rng: Mutex<Rng>,
    max_ms: u64,
}

impl SimDisk {
    /// The disk `plan` asks for.
    pub fn new(plan: &Plan) -> Self {
        SimDisk {
            // A stream of its own: the plan's draws stay what they are.
            rng: Mutex::new(Rng::new(plan.seed ^ 0xD15C_D15C_D15C_D15C)),
            max_ms: plan.disk_ms,
        }
    }
}

impl SimulatedDisk for SimDisk {
    fn latency(&self, _work: DiskWork) -> std::time::Duration {
        let ms = self
            .rng
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .range(0, self.max_ms + 1);
        std::time::Duration::from_millis(ms)
    }
}

/// The wire log of a run: keeps the sequence numbers it stored, fails the writes the plan
/// says, and panics once if the plan says so (which fails the Recorder actor).
#[derive(Debug, Default)]
pub struct SimWireLog {
    stored: Mutex<Vec<u64>>,
    failed: Mutex<Vec<u64>>,
    failing: Option<(u64, u64)>,
    panic_on: Option<u64>,
    panicked: AtomicBool,
    errors: AtomicU64,
}

impl SimWireLog {
    /// The wire log `plan` asks for.
    pub fn new(plan: &Plan) -> Self {
        let mut log = SimWireLog::default();
        for fault in &plan.faults {
            match fault {
                Fault::FailingWireLog { from, count } => log.failing = Some((*from, from + count)),
                Fault::RecorderPanic { seq } => log.panic_on = Some(*seq),
                _ => {}
            }
        }
        log
    }

    /// Sequence numbers stored, in the order they came.
    pub fn stored(&self) -> Vec<u64> {
        self.stored
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }

    /// Sequence numbers whose write failed.
    pub fn failed(&self) -> Vec<u64> {
        self.failed
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }

    /// Whether the planned panic happened.
    pub fn panicked(&self) -> bool {
        self.panicked.load(Ordering::SeqCst)
    }
}

impl WireRecorder for SimWireLog {
    fn record(&self, entry: WireEntry) {
        if self.panic_on == Some(entry.seq) && !self.panicked.swap(true, Ordering::SeqCst) {
            panic!("sim fault: the wire recorder panics on entry {}", entry.seq);
        }
        if self
            .failing
            .is_some_and(|(from, to)| (from..to).contains(&entry.seq))
        {
            self.errors.fetch_add(1, Ordering::SeqCst);
            self.failed
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .push(entry.seq);
            return;
        }
        self.stored
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .push(entry.seq);
    }

    fn error_count(&self) -> u64 {
        self.errors.load(Ordering::SeqCst)
    }
}

/// A writer that takes `ok` writes, then fails every one: a disk that filled up.
#[derive(Debug)]
pub struct FullDisk {
    ok: u64,
}

impl Write for FullDisk {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        if self.ok == 0 {
            return Err(io::Error::other("no space left on device (simulated)"));
        }
        self.ok -= 1;
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        if self.ok == 0 {
            return Err(io::Error::other("no space left on device (simulated)"));
        }
        Ok(())
    }
}

/// The journal of a run: every mutation in memory (what the checks compare), and, if the
/// plan says so, a journal file on a disk that fills up.
pub struct SimJournal {
    /// Every mutation, in order.
    pub memory: MemoryJournalSink,
    /// The journal file, when the plan makes its disk fail.
    pub file: Option<FileJournalSink<FullDisk>>,
}

impl SimJournal {
    /// The journal `plan` asks for.
    pub fn new(plan: &Plan) -> Arc<Self> {
        let file = plan.faults.iter().find_map(|fault| match fault {
            Fault::FailingJournal { after } => Some(
                FileJournalSink::from_writer(FullDisk { ok: *after }, "sim-journal.jsonl")
                    .with_flush_interval(std::time::Duration::ZERO),
            ),
            _ => None,
        });
        Arc::new(SimJournal {
            memory: MemoryJournalSink::new(),
            file,
        })
    }

    /// How many journal file writes failed (0 without a failing disk).
    pub fn file_errors(&self) -> u64 {
        self.file.as_ref().map_or(0, FileJournalSink::error_count)
    }
}

impl JournalSink for SimJournal {
    fn record(&self, mutation: &StateMutation) {
        self.memory.record(mutation);
        if let Some(file) = &self.file {
            file.record(mutation);
        }
    }

    fn flush(&self) {
        if let Some(file) = &self.file {
            file.flush();
        }
    }
}
