//! [`JitterConfig`]: the settings of a [`JitterBuffer`](super::JitterBuffer), checked
//! before a session starts.

use std::time::Duration;

/// Sample rate of the model's audio (PCM16LE mono), in Hz.
pub const MODEL_AUDIO_RATE: u32 = 24_000;

/// How the playback jitter buffer sizes itself. Every length is in milliseconds of audio.
///
/// The buffer holds model audio back until `target` ms are waiting, then hands the player
/// one `frame_ms` frame per pull. The target starts at `initial_target_ms` and follows the
/// arrival jitter it observes, never below `min_target_ms` nor above `max_target_ms`. It
/// never holds more than `capacity_ms`: past that the oldest audio is dropped and counted.
///
/// ```
/// use reel_audio::JitterConfig;
/// let config = JitterConfig { min_target_ms: 60, ..JitterConfig::default() };
/// assert!(config.validate().is_ok());
/// let bad = JitterConfig { min_target_ms: 500, max_target_ms: 100, ..JitterConfig::default() };
/// assert!(bad.validate().is_err());
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct JitterConfig {
    /// Sample rate of the audio, in Hz (the Live API's output is 24 kHz).
    pub sample_rate: u32,
    /// The player's frame: how much one pull returns (20 ms by default).
    pub frame_ms: u32,
    /// The target depth before any arrival was seen (80 ms by default).
    pub initial_target_ms: u32,
    /// The smallest target depth (40 ms by default).
    pub min_target_ms: u32,
    /// The largest target depth (400 ms by default): the most latency jitter may add.
    pub max_target_ms: u32,
    /// The most audio held (30 s by default). The model sends a reply faster than real
    /// time, so this bounds memory, not latency; it must be at least `max_target_ms`.
    pub capacity_ms: u32,
}

impl Default for JitterConfig {
    fn default() -> Self {
        JitterConfig {
            sample_rate: MODEL_AUDIO_RATE,
            frame_ms: 20,
            initial_target_ms: 80,
            min_target_ms: 40,
            max_target_ms: 400,
            capacity_ms: 30_000,
        }
    }
}

/// A [`JitterConfig`] that cannot work.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum JitterConfigError {
    /// The sample rate is 0.
    #[error("the jitter buffer's sample rate is 0 Hz; the Live API's audio is 24000 Hz")]
    ZeroSampleRate,
    /// The frame is 0 ms, so a pull would return nothing.
    #[error("the jitter buffer's frame is 0 ms; give the player's frame length (e.g. 20 ms)")]
    ZeroFrame,
    /// The frame is not a whole number of samples at the sample rate.
    #[error(
        "a {frame_ms} ms frame is not a whole number of samples at {sample_rate} Hz; pick a \
         frame length that is"
    )]
    FrameNotWholeSamples {
        /// The frame length.
        frame_ms: u32,
        /// The sample rate.
        sample_rate: u32,
    },
    /// The smallest target is above the largest.
    #[error("the jitter buffer's min target ({min_ms} ms) is above its max target ({max_ms} ms)")]
    MinAboveMax {
        /// `min_target_ms`.
        min_ms: u32,
        /// `max_target_ms`.
        max_ms: u32,
    },
    /// The initial target is outside `min_target_ms..=max_target_ms`.
    #[error(
        "the jitter buffer's initial target ({initial_ms} ms) is outside its range \
         {min_ms}..={max_ms} ms"
    )]
    InitialOutOfRange {
        /// `initial_target_ms`.
        initial_ms: u32,
        /// `min_target_ms`.
        min_ms: u32,
        /// `max_target_ms`.
        max_ms: u32,
    },
    /// The capacity cannot hold the largest target (the buffer could never start).
    #[error(
        "the jitter buffer's capacity ({capacity_ms} ms) is below its max target \
         ({max_ms} ms); it could never fill up to the target"
    )]
    CapacityBelowMax {
        /// `capacity_ms`.
        capacity_ms: u32,
        /// `max_target_ms`.
        max_ms: u32,
    },
}

impl JitterConfig {
    /// Checks that the settings can work together.
    pub fn validate(&self) -> Result<(), JitterConfigError> {
        if self.sample_rate == 0 {
            return Err(JitterConfigError::ZeroSampleRate);
        }
        if self.frame_ms == 0 {
            return Err(JitterConfigError::ZeroFrame);
        }
        if (u64::from(self.frame_ms) * u64::from(self.sample_rate)) % 1000 != 0 {
            return Err(JitterConfigError::FrameNotWholeSamples {
                frame_ms: self.frame_ms,
                sample_rate: self.sample_rate,
            });
        }
        if self.min_target_ms > self.max_target_ms {
            return Err(JitterConfigError::MinAboveMax {
                min_ms: self.min_target_ms,
                max_ms: self.max_target_ms,
            });
        }
        if !(self.min_target_ms..=self.max_target_ms).contains(&self.initial_target_ms) {
            return Err(JitterConfigError::InitialOutOfRange {
                initial_ms: self.initial_target_ms,
                min_ms: self.min_target_ms,
                max_ms: self.max_target_ms,
            });
        }
        if self.capacity_ms < self.max_target_ms {
            return Err(JitterConfigError::CapacityBelowMax {
                capacity_ms: self.capacity_ms,
                max_ms: self.max_target_ms,
            });
        }
        Ok(())
    }

    /// Bytes of one frame (16-bit mono samples).
    pub fn frame_bytes(&self) -> usize {
        self.bytes_of_ms(self.frame_ms)
    }

    /// The frame as a duration.
    pub fn frame(&self) -> Duration {
        Duration::from_millis(u64::from(self.frame_ms))
    }

    /// Bytes of `ms` of audio.
    pub(crate) fn bytes_of_ms(&self, ms: u32) -> usize {
        (u64::from(ms) * u64::from(self.sample_rate) / 1000 * 2) as usize
    }

    /// Microseconds of `bytes` of audio.
    pub(crate) fn us_of_bytes(&self, bytes: usize) -> u64 {
        (bytes as u64 / 2) * 1_000_000 / u64::from(self.sample_rate.max(1))
    }

    /// Whole milliseconds of `bytes` of audio.
    pub(crate) fn ms_of_bytes(&self, bytes: usize) -> u64 {
        self.us_of_bytes(bytes) / 1000
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_impossible_setting_is_named() {
        let base = JitterConfig::default();
        assert_eq!(base.validate(), Ok(()));
        assert_eq!(base.frame_bytes(), 960);
        let cases = [
            (
                JitterConfig {
                    sample_rate: 0,
                    ..base
                },
                JitterConfigError::ZeroSampleRate,
            ),
            (
                JitterConfig {
                    frame_ms: 0,
                    ..base
                },
                JitterConfigError::ZeroFrame,
            ),
            (
                JitterConfig {
                    sample_rate: 11_025,
                    frame_ms: 10,
                    ..base
                },
                JitterConfigError::FrameNotWholeSamples {
                    frame_ms: 10,
                    sample_rate: 11_025,
                },
            ),
            (
                JitterConfig {
                    min_target_ms: 500,
                    ..base
                },
                JitterConfigError::MinAboveMax {
                    min_ms: 500,
                    max_ms: 400,
                },
            ),
            (
                JitterConfig {
                    initial_target_ms: 20,
                    ..base
                },
                JitterConfigError::InitialOutOfRange {
                    initial_ms: 20,
                    min_ms: 40,
                    max_ms: 400,
                },
            ),
            (
                JitterConfig {
                    capacity_ms: 100,
                    ..base
                },
                JitterConfigError::CapacityBelowMax {
                    capacity_ms: 100,
                    max_ms: 400,
                },
            ),
        ];
        for (config, error) in cases {
            assert_eq!(config.validate(), Err(error));
        }
    }
}
