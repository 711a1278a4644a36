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

/// A file on the simulated disk: it keeps what it is written. With a planned full disk,
/// after `ok` writes the disk fills up in the middle of the next one: the file takes the
/// first half of it, then every write and flush is refused with ENOSPC (`StorageFull`),
/// as a real disk does — which leaves a torn last line.
#[derive(Debug, Clone, Default)]
pub struct SimFile {
    inner: Arc<Mutex<FileState>>,
}

#[derive(Debug, Default)]
struct FileState {
    bytes: Vec<u8>,
    /// Writes that succeed before the disk fills up (`None`: it never does).
    ok: Option<u64>,
    full: bool,
    refused: u64,
}

impl SimFile {
    /// A file on a disk that fills up after `ok` writes (`None`: never).
    pub fn filling_after(ok: Option<u64>) -> Self {
        SimFile {
            inner: Arc::new(Mutex::new(FileState {
                ok,
                ..FileState::default()
            })),
        }
    }

    fn state(&self) -> std::sync::MutexGuard<'_, FileState> {
        self.inner.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// What the file holds.
    pub fn bytes(&self) -> Vec<u8> {
        self.state().bytes.clone()
    }

    /// Writes and flushes refused (the disk was full).
    pub fn refused(&self) -> u64 {
        self.state().refused
    }

    fn no_space(state: &mut FileState) -> io::Error {
        state.refused += 1;
        io::Error::new(
            io::ErrorKind::StorageFull,
            "no space left on device (simulated)",
        )
    }
}

impl Write for SimFile {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let mut state = self.state();
        if state.full {
            return Err(SimFile::no_space(&mut state));
        }
        match state.ok.as_mut() {
            Some(0) => {
                state.full = true;
                let half = buf.len() / 2;
                if half == 0 {
                    return Err(SimFile::no_space(&mut state));
                }
                state.bytes.extend_from_slice(&buf[..half]);
                Ok(half)
            }
            Some(left) => {
                *left -= 1;
                state.bytes.extend_from_slice(buf);
                Ok(buf.len())
            }
            None => {
                state.bytes.extend_from_slice(buf);
                Ok(buf.len())
            }
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        let mut state = self.state();
        if state.full {
            return Err(SimFile::no_space(&mut state));
        }
        Ok(())
    }
}

/// The journal of a run: every mutation in memory (what the checks compare), and the
/// journal file on the simulated disk, written by the production `FileJournalSink` — on a
/// disk that fills up if the plan says so.
pub struct SimJournal {
    /// Every mutation, in order.
    pub memory: MemoryJournalSink,
    /// The journal file's writer.
    file: FileJournalSink<SimFile>,
    /// The journal file, as the disk holds it.
    pub disk_file: SimFile,
}

/// The journal file's name (in the writer's log lines and the reader's errors).
pub const JOURNAL_FILE: &str = "sim-journal.jsonl";

impl SimJournal {
    /// The journal `plan` asks for.
    pub fn new(plan: &Plan) -> Arc<Self> {
        let fills_after = plan.faults.iter().find_map(|fault| match fault {
            Fault::FailingJournal { after } => Some(*after),
            _ => None,
        });
        let disk_file = SimFile::filling_after(fills_after);
        // Flushed on every record: when the file is written does not depend on the wall
        // clock (the sink's interval is measured with it).
        let file = FileJournalSink::from_writer(disk_file.clone(), JOURNAL_FILE)
            .with_flush_interval(std::time::Duration::ZERO);
        Arc::new(SimJournal {
            memory: MemoryJournalSink::new(),
            file,
            disk_file,
        })
    }

    /// How many journal file writes and flushes failed, as the writer counts them (what
    /// an application reads to know its journal file is incomplete).
    pub fn file_errors(&self) -> u64 {
        self.file.error_count()
    }
}

impl JournalSink for SimJournal {
    fn record(&self, mutation: &StateMutation) {
        self.memory.record(mutation);
        self.file.record(mutation);
    }

    fn flush(&self) {
        self.file.flush();
    }
}
