//! [`SessionOptions`]: every tree-level setting of a session, defined once.
//!
//! The runtime's [`LiveSessionBuilder`](super::LiveSessionBuilder) keeps one and spawns the
//! tree from it; `reel-fluent`'s chain writes into one of its own and hands it over whole
//! (decision 0047), so a new option is one field here, one line where the tree reads it,
//! and the setters that write it.

use std::time::Duration;

use crate::audio::{JitterConfig, VadConfig};
use crate::conversation::{ContextDelivery, SteeringMode};
use crate::extract::DEFAULT_EXTRACTION_TIMEOUT;
use crate::supervisor::RestartPolicy;
use crate::transport::TransportOptions;

use super::{DEFAULT_CALLBACK_TIMEOUT, DEFAULT_SESSION_BUDGET, DEFAULT_SHUTDOWN_TIMEOUT};

/// The settings of a session's tree: buffers, client audio, timeouts, the session budget,
/// the transport's limits, the supervisor's restart policy, and how phases steer the
/// conversation (steering mode, context delivery; decision 0050). What the session is made of
/// besides — its setup, tools, callbacks, phases, state, recorders, transport — is given
/// to the builder on its own.
///
/// Fields are public and the struct is `#[non_exhaustive]`: start from
/// [`SessionOptions::default`] and set what differs.
///
/// ```
/// use std::time::Duration;
/// use reel_actors::LiveSessionBuilder;
/// use reel_actors::audio::JitterConfig;
/// use reel_actors::session::SessionOptions;
/// use reel_protocol::{ApiEndpoint, SessionConfig};
///
/// let mut options = SessionOptions::default();
/// options.jitter_buffer = Some(JitterConfig::default());
/// options.callback_timeout = Duration::from_secs(2);
/// let builder = LiveSessionBuilder::new(SessionConfig::default(), ApiEndpoint::offline())
///     .options(options);
/// assert_eq!(builder.session_options().callback_timeout, Duration::from_secs(2));
/// ```
#[derive(Debug, Clone, Copy, PartialEq)]
#[non_exhaustive]
pub struct SessionOptions {
    /// Keeps model audio in a playback queue of at most this many chunks, cleared on
    /// interruption ([`LiveHandle::playback`](crate::LiveHandle::playback)). Default: none.
    pub playback_buffer: Option<usize>,
    /// Keeps model audio in an adaptive jitter buffer the application's player pulls
    /// frames from ([`LiveHandle::jitter_buffer`](crate::LiveHandle::jitter_buffer)).
    /// Default: none. A config that cannot work stops the start with
    /// [`SessionStartError::Jitter`](super::SessionStartError::Jitter).
    pub jitter_buffer: Option<JitterConfig>,
    /// Client-side voice activity detection; the server's is turned off in the setup the
    /// session sends. Default: none. A config that cannot work stops the start with
    /// [`SessionStartError::ClientVad`](super::SessionStartError::ClientVad).
    pub client_vad: Option<VadConfig>,
    /// How long an awaited callback or hook may take before the control lane goes on
    /// without it (default [`DEFAULT_CALLBACK_TIMEOUT`]).
    pub callback_timeout: Duration,
    /// How long the lanes may take to finish their backlog once the connection is over
    /// (default [`DEFAULT_SHUTDOWN_TIMEOUT`]).
    pub shutdown_timeout: Duration,
    /// How long the session is expected to last, for `session:remaining_budget_ms`
    /// (default [`DEFAULT_SESSION_BUDGET`]).
    pub session_budget: Duration,
    /// How long the control lane waits for one turn extractor (default
    /// [`DEFAULT_EXTRACTION_TIMEOUT`]).
    pub extraction_timeout: Duration,
    /// Timeouts, limits and reconnects of the transport.
    pub transport: TransportOptions,
    /// Restart limits of the supervisor.
    pub restart_policy: RestartPolicy,
    /// How phases steer the model (default [`SteeringMode::InstructionUpdate`]).
    pub steering: SteeringMode,
    /// When a turn boundary's context is sent (default [`ContextDelivery::Immediate`]).
    pub context_delivery: ContextDelivery,
}

impl Default for SessionOptions {
    fn default() -> Self {
        SessionOptions {
            playback_buffer: None,
            jitter_buffer: None,
            client_vad: None,
            callback_timeout: DEFAULT_CALLBACK_TIMEOUT,
            shutdown_timeout: DEFAULT_SHUTDOWN_TIMEOUT,
            session_budget: DEFAULT_SESSION_BUDGET,
            extraction_timeout: DEFAULT_EXTRACTION_TIMEOUT,
            transport: TransportOptions::default(),
            restart_policy: RestartPolicy::default(),
            steering: SteeringMode::default(),
            context_delivery: ContextDelivery::default(),
        }
    }
}
