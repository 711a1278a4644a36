//! # reel-audio
//!
//! Client audio for reel sessions: smoothing the model's audio for playback, and detecting
//! the user's voice in the audio the application sends.
//!
//! - [`JitterBuffer`] (shared as [`SharedJitterBuffer`], configured by [`JitterConfig`]):
//!   the fast lane pushes the model's audio with its arrival time and clears it on a
//!   barge-in; the application's player pulls fixed frames. Its figures are in
//!   `reel_actors::telemetry::TelemetrySnapshot::jitter`.
//! - [`VoiceActivityDetector`] (configured by [`VadConfig`]) and [`ActivityGate`]: with
//!   client VAD on, the server's activity detection is off and the application's audio
//!   goes through the gate, which sends `activityStart` / speech / `activityEnd`.
//!
//! See `docs/decisions/0017-client-audio.md` for why they work the way they do. The session
//! tree (`reel-actors`) uses these types and re-exports this crate as `reel_actors::audio`;
//! nothing here knows the tree (decision 0043).

// Library code never unwraps: bad input is an error value, never a panic.
#![cfg_attr(not(test), deny(clippy::unwrap_used, clippy::expect_used))]

mod activity_gate;
mod jitter;
mod jitter_config;
mod jitter_shared;
mod speech_band;
mod vad;
mod vad_config;

#[cfg(test)]
mod jitter_tests;
#[cfg(test)]
mod vad_tests;

pub use activity_gate::ActivityGate;
pub use jitter::{JitterBuffer, JitterStats, Pulled, SilenceReason};
pub use jitter_config::{JitterConfig, JitterConfigError, MODEL_AUDIO_RATE};
pub use jitter_shared::SharedJitterBuffer;
pub use speech_band::{SPEECH_BAND_HIGH_HZ, SPEECH_BAND_LOW_HZ, SpeechBand};
pub use vad::{
    FLOOR_FALL_FRAMES, FLOOR_RISE_FRAMES, FrameVerdict, SILENCE_DBFS, VadTransition,
    VoiceActivityDetector, energy_dbfs,
};
pub use vad_config::{INPUT_AUDIO_RATE, VadConfig, VadConfigError};
