//! A progress line on stderr for long work: `replaying… 123456 frames`.
//!
//! Shown only when stderr is a terminal, only once the work has taken more than a second,
//! and redrawn at most four times a second; erased when the work is done. A short run, or
//! one whose stderr goes to a file or a pipe, prints nothing.

use std::io::{IsTerminal, Write};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{self, RecvTimeoutError, Sender};
use std::sync::{Arc, Mutex, PoisonError};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use reel_recorder::wire_log::{WireEntry, WireRecorder};

/// How long work runs before the progress line appears.
const SHOW_AFTER: Duration = Duration::from_secs(1);
/// How often the line is redrawn.
const REDRAW_EVERY: Duration = Duration::from_millis(250);

/// What the line says: a label and a count of frames.
#[derive(Debug, Default)]
struct Shared {
    label: Mutex<&'static str>,
    /// What is counted (`frames`, `sessions`).
    unit: &'static str,
    count: Arc<AtomicU64>,
}

/// The progress line of one command.
#[derive(Debug)]
pub struct Progress {
    shared: Arc<Shared>,
    ticker: Option<(Sender<()>, JoinHandle<()>)>,
}

impl Progress {
    /// Starts counting under `label`; draws only if stderr is a terminal.
    pub fn start(label: &'static str) -> Progress {
        Progress::counting(label, "frames")
    }

    /// A progress that counts but never shows (a session of a farm, whose progress is the
    /// farm's).
    pub fn hidden() -> Progress {
        Progress {
            shared: Arc::new(Shared {
                label: Mutex::new(""),
                unit: "frames",
                count: Arc::default(),
            }),
            ticker: None,
        }
    }

    /// As [`Progress::start`], counting `unit`s (`sessions`) instead of frames.
    pub fn counting(label: &'static str, unit: &'static str) -> Progress {
        let shared = Arc::new(Shared {
            label: Mutex::new(label),
            unit,
            count: Arc::default(),
        });
        let ticker = std::io::stderr().is_terminal().then(|| {
            let (stop, stopped) = mpsc::channel();
            let shared = Arc::clone(&shared);
            let handle = std::thread::spawn(move || {
                let started = Instant::now();
                let mut drawn = false;
                loop {
                    match stopped.recv_timeout(REDRAW_EVERY) {
                        Err(RecvTimeoutError::Timeout) if started.elapsed() >= SHOW_AFTER => {
                            let label =
                                *shared.label.lock().unwrap_or_else(PoisonError::into_inner);
                            let count = shared.count.load(Ordering::Relaxed);
                            let line = render(label, count, shared.unit);
                            eprint!("\r{line}\x1b[K");
                            drawn = true;
                        }
                        Err(RecvTimeoutError::Timeout) => {}
                        Ok(()) | Err(RecvTimeoutError::Disconnected) => break,
                    }
                }
                if drawn {
                    eprint!("\r\x1b[K");
                    let _ = std::io::stderr().flush();
                }
            });
            (stop, handle)
        });
        Progress { shared, ticker }
    }

    /// Whether a line may be drawn at all (stderr is a terminal).
    pub fn is_visible(&self) -> bool {
        self.ticker.is_some()
    }

    /// The counter the line shows.
    pub fn counter(&self) -> Arc<AtomicU64> {
        Arc::clone(&self.shared.count)
    }

    /// Goes on with another stage of the work: a new label, the count back to 0.
    pub fn stage(&self, label: &'static str) {
        *self
            .shared
            .label
            .lock()
            .unwrap_or_else(PoisonError::into_inner) = label;
        self.shared.count.store(0, Ordering::Relaxed);
    }

    /// A wire recorder that only counts the frames it is given (for the replay's frames).
    pub fn frame_counter(&self) -> Arc<dyn WireRecorder> {
        Arc::new(FrameCounter(self.counter()))
    }

    /// Erases the line (if drawn) and stops.
    pub fn finish(mut self) {
        self.stop();
    }

    fn stop(&mut self) {
        if let Some((stop, handle)) = self.ticker.take() {
            let _ = stop.send(());
            let _ = handle.join();
        }
    }
}

impl Drop for Progress {
    fn drop(&mut self) {
        self.stop();
    }
}

/// The progress line's text.
fn render(label: &str, count: u64, unit: &str) -> String {
    format!("{label}… {count} {unit}")
}

/// Counts recorded frames into the progress counter.
struct FrameCounter(Arc<AtomicU64>);

impl WireRecorder for FrameCounter {
    fn record(&self, _entry: WireEntry) {
        self.0.fetch_add(1, Ordering::Relaxed);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_line_names_the_stage_and_the_count() {
        assert_eq!(
            render("replaying", 123_456, "frames"),
            "replaying… 123456 frames"
        );
    }

    #[test]
    fn stages_restart_the_count() {
        let progress = Progress::start("reading");
        progress.counter().fetch_add(5, Ordering::Relaxed);
        progress.stage("replaying");
        assert_eq!(progress.counter().load(Ordering::Relaxed), 0);
        progress.frame_counter().record(WireEntry::frame(
            1,
            reel_recorder::wire_log::Direction::In,
            0,
            &b"{}"[..],
            None,
            false,
        ));
        assert_eq!(progress.counter().load(Ordering::Relaxed), 1);
        progress.finish();
    }
}
