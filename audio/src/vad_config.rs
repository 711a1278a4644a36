//! [`VadConfig`]: the settings of the client-side [`VoiceActivityDetector`](super::VoiceActivityDetector),
//! checked before a session starts.

/// Sample rate of the audio the application sends (PCM16LE mono), in Hz.
pub const INPUT_AUDIO_RATE: u32 = 16_000;

/// How the client-side voice activity detector decides. Levels are in dBFS (0 dB is a
/// full-scale square wave; digital silence reads -100 dB here).
///
/// A frame is *speech* when its energy is at least `threshold_db` above the adaptive noise
/// floor and above `min_speech_dbfs`. Activity *starts* once speech frames have lasted
/// `onset_ms` in a row, and *ends* once non-speech frames have lasted `hangover_ms`. The
/// `pre_roll_ms` of audio before the start is sent right after `activityStart`, so the
/// onset the detector needed to be sure is not cut from what the model hears.
///
/// The defaults were tuned on synthesized speech in white and pink noise down to 5 dB SNR
/// (`docs/BENCHMARKS.md`, "Client VAD on synthesized speech").
///
/// ```
/// use reel_audio::VadConfig;
/// assert!(VadConfig::default().validate().is_ok());
/// let bad = VadConfig { pre_roll_ms: 20, onset_ms: 100, ..VadConfig::default() };
/// assert!(bad.validate().is_err());
/// ```
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct VadConfig {
    /// Sample rate of the input audio, in Hz (the Live API takes 16 kHz).
    pub sample_rate: u32,
    /// Analysis frame, 10 to 30 ms (20 ms by default).
    pub frame_ms: u32,
    /// How far above the noise floor a frame must be to count as speech, in dB (> 0).
    pub threshold_db: f64,
    /// Frames quieter than this are never speech, whatever the floor (a quiet room's
    /// floor is so low that breathing would otherwise count).
    pub min_speech_dbfs: f64,
    /// How long speech must last before activity starts.
    pub onset_ms: u32,
    /// How long non-speech must last before activity ends (bridges the pauses between
    /// words and the quiet stretches of unvoiced consonants).
    pub hangover_ms: u32,
    /// Audio kept from before the start and sent after `activityStart`; at least
    /// `onset_ms`, so the words that triggered the start reach the model.
    pub pre_roll_ms: u32,
    /// How fast the noise floor may rise while frames read as speech, in dB per second
    /// (so a noise that steps up for good is absorbed instead of read as endless speech).
    pub floor_rise_db_per_s: f64,
}

impl Default for VadConfig {
    fn default() -> Self {
        VadConfig {
            sample_rate: INPUT_AUDIO_RATE,
            frame_ms: 20,
            threshold_db: 6.0,
            min_speech_dbfs: -50.0,
            onset_ms: 60,
            hangover_ms: 600,
            pre_roll_ms: 300,
            floor_rise_db_per_s: 1.0,
        }
    }
}

/// A [`VadConfig`] that cannot work.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum VadConfigError {
    /// The sample rate is 0.
    #[error("the voice activity detector's sample rate is 0 Hz; the Live API takes 16000 Hz")]
    ZeroSampleRate,
    /// The frame is outside 10..=30 ms.
    #[error("the voice activity detector's frame is {frame_ms} ms; use 10 to 30 ms")]
    FrameOutOfRange {
        /// The frame given.
        frame_ms: u32,
    },
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
    /// A level or rate is NaN or infinite.
    #[error("the voice activity detector's `{field}` is {value}; give a finite number")]
    NotFinite {
        /// The field.
        field: &'static str,
        /// Its value.
        value: f64,
    },
    /// The threshold is not above 0 dB, so every frame louder than the floor would be
    /// speech.
    #[error("the voice activity detector's threshold is {threshold_db} dB; it must be above 0")]
    ThresholdNotPositive {
        /// The threshold given.
        threshold_db: f64,
    },
    /// The floor may not rise during speech at a negative rate.
    #[error("the noise floor's rise rate is {rate} dB/s; it must be 0 or more")]
    NegativeFloorRise {
        /// The rate given.
        rate: f64,
    },
    /// The pre-roll is shorter than the onset: the start of every utterance would be cut.
    #[error(
        "the pre-roll ({pre_roll_ms} ms) is shorter than the onset ({onset_ms} ms), so the \
         first {onset_ms} ms of speech could not be sent after activityStart; make the \
         pre-roll at least as long"
    )]
    PreRollShorterThanOnset {
        /// `pre_roll_ms`.
        pre_roll_ms: u32,
        /// `onset_ms`.
        onset_ms: u32,
    },
}

impl VadConfig {
    /// Checks that the settings can work together.
    pub fn validate(&self) -> Result<(), VadConfigError> {
        if self.sample_rate == 0 {
            return Err(VadConfigError::ZeroSampleRate);
        }
        if !(10..=30).contains(&self.frame_ms) {
            return Err(VadConfigError::FrameOutOfRange {
                frame_ms: self.frame_ms,
            });
        }
        if (u64::from(self.frame_ms) * u64::from(self.sample_rate)) % 1000 != 0 {
            return Err(VadConfigError::FrameNotWholeSamples {
                frame_ms: self.frame_ms,
                sample_rate: self.sample_rate,
            });
        }
        for (field, value) in [
            ("threshold_db", self.threshold_db),
            ("min_speech_dbfs", self.min_speech_dbfs),
            ("floor_rise_db_per_s", self.floor_rise_db_per_s),
        ] {
            if !value.is_finite() {
                return Err(VadConfigError::NotFinite { field, value });
            }
        }
        if self.threshold_db <= 0.0 {
            return Err(VadConfigError::ThresholdNotPositive {
                threshold_db: self.threshold_db,
            });
        }
        if self.floor_rise_db_per_s < 0.0 {
            return Err(VadConfigError::NegativeFloorRise {
                rate: self.floor_rise_db_per_s,
            });
        }
        if self.pre_roll_ms < self.onset_ms {
            return Err(VadConfigError::PreRollShorterThanOnset {
                pre_roll_ms: self.pre_roll_ms,
                onset_ms: self.onset_ms,
            });
        }
        Ok(())
    }

    /// Samples in one frame.
    pub fn frame_samples(&self) -> usize {
        (u64::from(self.frame_ms) * u64::from(self.sample_rate) / 1000) as usize
    }

    /// Frames in `ms`, rounded up, at least one.
    pub(crate) fn frames_in(&self, ms: u32) -> u32 {
        ms.div_ceil(self.frame_ms.max(1)).max(1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_impossible_setting_is_named() {
        let base = VadConfig::default();
        assert_eq!(base.validate(), Ok(()));
        assert_eq!(base.frame_samples(), 320);
        let cases = [
            (
                VadConfig {
                    sample_rate: 0,
                    ..base
                },
                VadConfigError::ZeroSampleRate,
            ),
            (
                VadConfig {
                    frame_ms: 40,
                    ..base
                },
                VadConfigError::FrameOutOfRange { frame_ms: 40 },
            ),
            (
                VadConfig {
                    sample_rate: 11_025,
                    ..base
                },
                VadConfigError::FrameNotWholeSamples {
                    frame_ms: 20,
                    sample_rate: 11_025,
                },
            ),
            (
                VadConfig {
                    threshold_db: f64::NAN,
                    ..base
                },
                VadConfigError::NotFinite {
                    field: "threshold_db",
                    value: f64::NAN,
                },
            ),
            (
                VadConfig {
                    threshold_db: 0.0,
                    ..base
                },
                VadConfigError::ThresholdNotPositive { threshold_db: 0.0 },
            ),
            (
                VadConfig {
                    floor_rise_db_per_s: -1.0,
                    ..base
                },
                VadConfigError::NegativeFloorRise { rate: -1.0 },
            ),
            (
                VadConfig {
                    pre_roll_ms: 40,
                    ..base
                },
                VadConfigError::PreRollShorterThanOnset {
                    pre_roll_ms: 40,
                    onset_ms: 60,
                },
            ),
        ];
        for (config, error) in cases {
            // NaN is not equal to itself: compare the texts.
            assert_eq!(
                config.validate().map_err(|e| e.to_string()),
                Err(error.to_string())
            );
        }
    }
}
