//! The replay harness: run a recorded session through the real tree, offline.
//!
//! ```no_run
//! # async fn example() -> Result<(), Box<dyn std::error::Error>> {
//! use reel_actors::LiveSessionBuilder;
//! use reel_protocol::{ApiEndpoint, SessionConfig};
//! use reel_replayer::{ReplayOptions, Tape, replay_session};
//!
//! let tape = Tape::open("user-123.wire.jsonl")?;
//! let builder = LiveSessionBuilder::new(SessionConfig::default(), ApiEndpoint::offline());
//! // … attach the same tools, phases and callbacks as the live application …
//! let mut replay = replay_session(builder, tape, ReplayOptions::default()).await?;
//! let mut events = replay.events(); // every event since the start, nothing missed
//! replay.release();                 // let the recorded frames flow
//! replay.drained().await;           // every frame handed over and consumed
//! assert!(replay.divergences().is_empty());
//! replay.disconnect().await;
//! # Ok(())
//! # }
//! ```

use std::sync::Arc;
use std::time::Duration;

use reel_actors::{EventEnvelope, EventStream, LiveHandle, LiveSessionBuilder, SessionEnd};
use reel_recorder::RecordError;

use crate::divergence::Divergence;
use crate::outbound::CapturedFrame;
use crate::replay_transport::{ReplayOptions, ReplayShared, ReplayTransportFactory};
use crate::tape::Tape;

/// A replay that could not start.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ReplayError {
    /// The tape could not be read.
    #[error(transparent)]
    Tape(#[from] RecordError),
    /// The tape is empty.
    #[error("{tape}: the recording has no frames")]
    Empty {
        /// The tape.
        tape: String,
    },
    /// The session could not start.
    #[error("the replayed session could not start: {0}")]
    Start(#[from] reel_actors::SessionStartError),
    /// The recording's setup handshake did not complete.
    #[error("{tape}: the recording has no setupComplete; nothing can be replayed after the setup")]
    NoHandshake {
        /// The tape.
        tape: String,
    },
}

/// A replaying session.
pub struct Replay {
    handle: LiveHandle,
    shared: Arc<ReplayShared>,
    /// The stream subscribed at the start, until taken by [`Replay::events`] or dropped by
    /// [`Replay::release`] (nobody took it: keeping it would hold every event of the replay).
    events: std::sync::Mutex<Option<EventStream>>,
}

impl std::fmt::Debug for Replay {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Replay")
            .field("handle", &self.handle)
            .finish_non_exhaustive()
    }
}

/// Starts `builder`'s session against `tape`: the tree is the real one, only the transport
/// reads the tape. Returns once the recorded setup handshake has been played; the rest of
/// the tape waits for [`Replay::release`].
pub async fn replay_session(
    builder: LiveSessionBuilder,
    mut tape: Tape,
    options: ReplayOptions,
) -> Result<Replay, ReplayError> {
    let start_ms = match tape.peek() {
        Some(entry) => entry.ts_ms,
        None => {
            return Err(ReplayError::Empty {
                tape: tape.name.clone(),
            });
        }
    };
    let name = tape.name.clone();
    let shared = Arc::new(ReplayShared::new(start_ms));
    let builder = builder
        .clock(shared.clock.clone())
        .transport_factory(Box::new(ReplayTransportFactory {
            tape,
            shared: Arc::clone(&shared),
            options,
        }));
    let events = builder.subscribe();
    let handle = builder.spawn().await?;
    let mut handshake = shared.handshake.subscribe();
    let mut drained = shared.drained.subscribe();
    tokio::select! {
        _ = handshake.wait_for(|done| *done) => {}
        _ = drained.wait_for(|done| *done) => {
            if !*shared.handshake.borrow() {
                return Err(ReplayError::NoHandshake { tape: name });
            }
        }
    }
    Ok(Replay {
        handle,
        shared,
        events: std::sync::Mutex::new(Some(events)),
    })
}

impl Replay {
    /// The session's handle (state, phase, telemetry, events).
    pub fn handle(&self) -> &LiveHandle {
        &self.handle
    }

    /// The session's events. The first call before [`Replay::release`] returns a stream
    /// holding every event since the session started; any other call subscribes from now on.
    pub fn events(&mut self) -> EventStream {
        let first = self
            .events
            .get_mut()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .take();
        first.unwrap_or_else(|| self.handle.events())
    }

    /// Lets the recorded frames after the setup handshake flow. The stream of events since
    /// the start is dropped if nobody took it, so an unobserved replay of any length runs in
    /// bounded memory.
    pub fn release(&self) {
        self.events
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .take();
        self.shared.release.send_replace(true);
    }

    /// Waits until every recorded frame has been handed to the tree and consumed.
    pub async fn drained(&self) {
        let mut drained = self.shared.drained.subscribe();
        let _ = drained.wait_for(|done| *done).await;
    }

    /// Every frame the replayed session sent: the setup, tool responses, instruction
    /// updates, and anything the application sent.
    pub fn outbound_frames(&self) -> Vec<CapturedFrame> {
        self.shared.matcher.captured()
    }

    /// The recorded runtime frames taken from the recording instead of expected, by
    /// sequence number (only with `ReplayOptions::without_application`).
    pub fn taken_from_recording(&self) -> Vec<u64> {
        self.shared.matcher.taken()
    }

    /// Where the replay parted from the recording, first first.
    pub fn divergences(&self) -> Vec<Divergence> {
        self.shared.matcher.divergences()
    }

    /// Ends the replay (if the recording did not end the session already) and waits for
    /// the session to end.
    pub async fn disconnect(&self) -> SessionEnd {
        match self.handle.ended() {
            Some(end) => end,
            None => self.handle.disconnect().await,
        }
    }

    /// Runs the replay to its end: lets the recorded frames flow, waits until every one was
    /// handed over and consumed, then ends the session. Every event since the start reaches
    /// `on_event` while the replay runs (nothing is held back), the last before this returns.
    pub async fn run_to_end(&mut self, mut on_event: impl FnMut(EventEnvelope)) -> SessionEnd {
        let mut events = self.events();
        let drive = async {
            self.release();
            self.drained().await;
            self.disconnect().await
        };
        // The stream ends when the session has ended and every event was read.
        let collect = async {
            while let Some(event) = events.recv().await {
                on_event(event);
            }
        };
        let (end, ()) = tokio::join!(drive, collect);
        end
    }
}

/// Events from `stream` until none arrives for `idle`, or `max` has passed, or the stream
/// ends.
pub async fn collect_events_until_idle(
    stream: &mut EventStream,
    idle: Duration,
    max: Duration,
) -> Vec<EventEnvelope> {
    stream.collect_until_idle(idle, max).await
}
