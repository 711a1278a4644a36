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

    /// The counter the line shows.
    pub fn counter(&self) -> Arc<AtomicU64> {
        Arc::clone(&self.shared.count)
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
}
