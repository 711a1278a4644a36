//! Client audio on the chain: the adaptive playback jitter buffer and client-side voice
//! activity detection (`reel_actors::audio`). Both are fields of the chain's
//! [`SessionOptions`], handed to the runtime whole.

use reel_actors::SessionOptions;
use reel_actors::audio::{JitterConfig, VadConfig};
use reel_protocol::SessionConfig;

use crate::builder::LiveBuilder;
use crate::error::BuildError;

/// Both client-audio configs in `options` can work, and client VAD has the server's
/// detection off in `config`.
pub(crate) fn check_audio(
    options: &SessionOptions,
    config: &SessionConfig,
) -> Result<(), BuildError> {
    if let Some(jitter) = &options.jitter_buffer {
        jitter.validate()?;
    }
    if let Some(vad) = &options.client_vad {
        vad.validate()?;
        if config.server_vad() {
            return Err(BuildError::ClientVadWithServerVad);
        }
    }
    Ok(())
}

impl LiveBuilder {
    /// Keeps model audio in an adaptive jitter buffer that the application's player pulls
    /// fixed frames from (`LiveHandle::jitter_buffer`): it waits until a target depth is
    /// buffered, moves the target with the arrival jitter it sees, is cleared when the user
    /// barges in, and reports depth, target, underruns and drops in
    /// `LiveHandle::telemetry().jitter`. Settings that cannot work are a
    /// [`BuildError::Jitter`].
    ///
    /// ```
    /// use reel_actors::audio::JitterConfig;
    /// use reel_fluent::{BuildError, Live};
    ///
    /// let builder = Live::builder().jitter_buffer(JitterConfig::default());
    /// assert!(builder.validate().is_ok());
    /// let bad = JitterConfig { frame_ms: 0, ..JitterConfig::default() };
    /// let error = Live::builder().jitter_buffer(bad).validate().unwrap_err();
    /// assert!(matches!(error, BuildError::Jitter(_)));
    /// ```
    pub fn jitter_buffer(mut self, config: JitterConfig) -> Self {
        self.options.jitter_buffer = Some(config);
        self
    }

    /// Client-side voice activity detection: the server's detection is turned off in the
    /// setup, and the audio the application sends (`LiveHandle::send_audio`) goes through
    /// an energy detector, which sends `activityStart` before each utterance (with a
    /// little audio from just before it) and `activityEnd` after it; audio outside speech
    /// is not sent. Settings that cannot work are a [`BuildError::ClientVad`]; a later
    /// `.vad(..)` that turns the server's detection back on is a
    /// [`BuildError::ClientVadWithServerVad`].
    ///
    /// ```
    /// use reel_actors::audio::VadConfig;
    /// use reel_fluent::Live;
    ///
    /// let config = Live::builder().client_vad(VadConfig::default()).session_config().unwrap();
    /// assert!(!config.server_vad());
    /// ```
    pub fn client_vad(mut self, config: VadConfig) -> Self {
        self.config = self.config.manual_activity_detection();
        self.options.client_vad = Some(config);
        self
    }
}
