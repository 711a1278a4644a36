//! What stops a long-running command: Ctrl-C (SIGINT) and, on Unix, SIGTERM — what a
//! service manager, a container runtime or `kill` sends — and SIGHUP — what a closed
//! terminal or SSH session sends — handled alike.

use std::io;

/// The signals that stop the command, listened for from the moment it is made: one that
/// arrives before [`StopSignal::recv`] is awaited, or while the command is busy, is kept.
/// A second one, while the command winds down, is for the caller to read as "now".
pub struct StopSignal {
    #[cfg(unix)]
    interrupt: tokio::signal::unix::Signal,
    #[cfg(unix)]
    terminate: tokio::signal::unix::Signal,
    #[cfg(unix)]
    hangup: tokio::signal::unix::Signal,
}

impl StopSignal {
    /// Starts listening. Call it inside the tokio runtime, before the work begins.
    pub fn listen() -> io::Result<StopSignal> {
        #[cfg(unix)]
        {
            use tokio::signal::unix::{SignalKind, signal};
            Ok(StopSignal {
                interrupt: signal(SignalKind::interrupt())?,
                terminate: signal(SignalKind::terminate())?,
                hangup: signal(SignalKind::hangup())?,
            })
        }
        #[cfg(not(unix))]
        {
            Ok(StopSignal {})
        }
    }

    /// Waits for the next stop signal; returns its name (`Ctrl-C`, `SIGTERM`, `SIGHUP`).
    pub async fn recv(&mut self) -> io::Result<&'static str> {
        #[cfg(unix)]
        {
            tokio::select! {
                _ = self.interrupt.recv() => Ok("Ctrl-C"),
                _ = self.terminate.recv() => Ok("SIGTERM"),
                _ = self.hangup.recv() => Ok("SIGHUP"),
            }
        }
        #[cfg(not(unix))]
        {
            tokio::signal::ctrl_c().await.map(|()| "Ctrl-C")
        }
    }
}
