//! A progress line on stderr for long work: `replaying… 123456 frames`; when the total is
//! known (a replay farm's sessions), a bar, the share done and the time left:
//! `replaying… 12/40 sessions [######--------------] 30% · about 14s left`.
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
    /// How many there are in all, when known.
    total: Option<u64>,
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
        Progress::new(label, unit, None)
    }

    /// As [`Progress::counting`], out of `total`: the line shows a bar, the share done and
    /// an estimate of the time left.
    pub fn out_of(label: &'static str, unit: &'static str, total: u64) -> Progress {
        Progress::new(label, unit, Some(total))
    }

    fn new(label: &'static str, unit: &'static str, total: Option<u64>) -> Progress {
        let shared = Arc::new(Shared {
            label: Mutex::new(label),
            unit,
            count: Arc::default(),
            total,
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
                            let line = match shared.total {
                                Some(total) => render_out_of(
                                    label,
                                    count,
                                    total,
                                    shared.unit,
                                    started.elapsed(),
                                ),
                                None => render(label, count, shared.unit),
                            };
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

/// Cells in the bar.
const BAR_WIDTH: u64 = 20;

/// The progress line's text when the total is known: count out of total, a bar, the share
/// done, and the time left at the pace so far (once something is done).
fn render_out_of(label: &str, count: u64, total: u64, unit: &str, elapsed: Duration) -> String {
    let count = count.min(total);
    let filled = (count * BAR_WIDTH).checked_div(total).unwrap_or(BAR_WIDTH);
    let percent = (count * 100).checked_div(total).unwrap_or(100);
    let bar = format!(
        "{}{}",
        "#".repeat(usize::try_from(filled).unwrap_or(0)),
        "-".repeat(usize::try_from(BAR_WIDTH - filled).unwrap_or(0))
    );
    let mut line = format!("{label}… {count}/{total} {unit} [{bar}] {percent}%");
    if count > 0 && count < total {
        let left = elapsed.as_secs_f64() * (total - count) as f64 / count as f64;
        line.push_str(&format!(" · about {} left", duration(left)));
    }
    line
}

/// `14s`, `2m 05s`, `1h 02m`.
fn duration(seconds: f64) -> String {
    // Whole seconds, rounded up: "about 0s left" would be wrong while work remains.
    let s = seconds.ceil().max(0.0) as u64;
    match s {
        0..60 => format!("{s}s"),
        60..3600 => format!("{}m {:02}s", s / 60, s % 60),
        _ => format!("{}h {:02}m", s / 3600, (s % 3600) / 60),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn with_a_total_the_line_has_a_bar_the_share_and_the_time_left() {
        assert_eq!(
            render_out_of("replaying", 12, 40, "sessions", Duration::from_secs(6)),
            "replaying… 12/40 sessions [######--------------] 30% · about 14s left"
        );
        assert_eq!(
            render_out_of("replaying", 1, 100, "sessions", Duration::from_millis(1500)),
            "replaying… 1/100 sessions [--------------------] 1% · about 2m 29s left"
        );
        assert_eq!(
            render_out_of("replaying", 0, 3, "sessions", Duration::from_secs(2)),
            "replaying… 0/3 sessions [--------------------] 0%"
        );
        assert_eq!(
            render_out_of("replaying", 3, 3, "sessions", Duration::from_secs(2)),
            "replaying… 3/3 sessions [####################] 100%"
        );
    }

    #[test]
    fn the_line_names_the_stage_and_the_count() {
        assert_eq!(
            render("replaying", 123_456, "frames"),
            "replaying… 123456 frames"
        );
    }
}
