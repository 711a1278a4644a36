//! [`VoiceActivityDetector`]: is the user speaking? An energy detector with an adaptive
//! noise floor, for client audio when the server's activity detection is off.
//!
//! Per frame (10–30 ms of 16 kHz PCM16LE mono): its energy in dBFS, measured through the
//! speech band ([`SpeechBand`], 200–3400 Hz), is compared with the noise floor. A frame at
//! least `threshold_db` above the floor (and above `min_speech_dbfs`) is speech. The floor
//! follows the quiet frames: it falls quickly to a quieter frame (the floor is the quietest
//! stretch, not the average), rises slowly towards a frame less than half the threshold
//! above it (time constant [`FLOOR_RISE_FRAMES`] frames: the noise's own wobble), and
//! towards anything louder — speech, or the weak frames around it — creeps up by at most
//! `floor_rise_db_per_s`. Activity starts after `onset_ms` of speech frames in a row and
//! ends after `hangover_ms` of non-speech frames in a row. The first frame seeds the
//! floor.
//!
//! Time is the audio itself (frames counted), so the detector is exact and repeatable.

use super::speech_band::SpeechBand;
use super::vad_config::{VadConfig, VadConfigError};

/// Energy of digital silence: the floor of the dB scale used here.
pub const SILENCE_DBFS: f64 = -100.0;

/// Frames for the floor to rise most of the way to a louder non-speech level (an
/// exponential average with weight 1/this).
pub const FLOOR_RISE_FRAMES: f64 = 25.0;

/// Frames for the floor to fall most of the way to a quieter level.
pub const FLOOR_FALL_FRAMES: f64 = 2.0;

/// A change of the user's activity.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum VadTransition {
    /// Speech has lasted the onset: the user started speaking.
    Start,
    /// Non-speech has lasted the hangover: the user stopped speaking.
    End,
}

/// What the detector made of one frame.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct FrameVerdict {
    /// The frame's energy, in dBFS.
    pub energy_dbfs: f64,
    /// The noise floor the frame was compared with, in dBFS.
    pub floor_dbfs: f64,
    /// Whether the frame reads as speech.
    pub speech: bool,
    /// Whether activity started or ended with this frame.
    pub transition: Option<VadTransition>,
}

/// The client-side voice activity detector (see the module docs).
///
/// ```
/// use reel_audio::{VadConfig, VadTransition, VoiceActivityDetector};
///
/// let mut vad = VoiceActivityDetector::new(VadConfig::default()).unwrap();
/// let quiet = vec![0i16; 320];
/// // 20 ms of a 500 Hz tone, well inside the speech band.
/// let loud: Vec<i16> = (0..320).map(|i| (8_000.0 * (i as f64 * 0.196_35).sin()) as i16).collect();
/// assert_eq!(vad.process_frame(&quiet).transition, None);
/// let verdicts: Vec<_> = (0..3).map(|_| vad.process_frame(&loud).transition).collect();
/// assert_eq!(verdicts, [None, None, Some(VadTransition::Start)]); // 60 ms onset
/// assert!(vad.is_speaking());
/// ```
#[derive(Debug, Clone)]
pub struct VoiceActivityDetector {
    config: VadConfig,
    band: SpeechBand,
    onset_frames: u32,
    hangover_frames: u32,
    creep_db: f64,
    floor_dbfs: Option<f64>,
    speaking: bool,
    speech_run: u32,
    silence_run: u32,
}

impl VoiceActivityDetector {
    /// A detector that has heard nothing yet; the config is checked first.
    pub fn new(config: VadConfig) -> Result<VoiceActivityDetector, VadConfigError> {
        config.validate()?;
        Ok(VoiceActivityDetector {
            config,
            band: SpeechBand::new(config.sample_rate),
            onset_frames: config.frames_in(config.onset_ms),
            hangover_frames: config.frames_in(config.hangover_ms),
            creep_db: config.floor_rise_db_per_s * f64::from(config.frame_ms) / 1000.0,
            floor_dbfs: None,
            speaking: false,
            speech_run: 0,
            silence_run: 0,
        })
    }

    /// The settings.
    pub fn config(&self) -> &VadConfig {
        &self.config
    }

    /// Whether the user is speaking (between a start and its end).
    pub fn is_speaking(&self) -> bool {
        self.speaking
    }

    /// The noise floor now, in dBFS (`None` before the first frame).
    pub fn floor_dbfs(&self) -> Option<f64> {
        self.floor_dbfs
    }

    /// Judges one frame of samples (normally [`VadConfig::frame_samples`] of them; any
    /// length works, the onset and hangover count frames).
    pub fn process_frame(&mut self, samples: &[i16]) -> FrameVerdict {
        let energy = self.band_energy(samples.iter().copied());
        self.judge(energy)
    }

    /// The same as [`VoiceActivityDetector::process_frame`], on PCM16LE bytes (a trailing
    /// odd byte is ignored).
    pub fn process_frame_bytes(&mut self, pcm: &[u8]) -> FrameVerdict {
        let samples = pcm
            .chunks_exact(2)
            .map(|pair| i16::from_le_bytes([pair[0], pair[1]]));
        let energy = self.band_energy(samples);
        self.judge(energy)
    }

    /// The energy of `samples` in the speech band, in dBFS.
    fn band_energy(&mut self, samples: impl Iterator<Item = i16>) -> f64 {
        let (mut sum, mut count) = (0.0f64, 0usize);
        for sample in samples {
            let y = self.band.step(f64::from(sample) / 32768.0);
            sum += y * y;
            count += 1;
        }
        mean_square_dbfs(sum, count)
    }

    fn judge(&mut self, energy: f64) -> FrameVerdict {
        let floor = *self.floor_dbfs.get_or_insert(energy);
        let speech =
            energy >= floor + self.config.threshold_db && energy >= self.config.min_speech_dbfs;
        self.floor_dbfs = Some(self.next_floor(floor, energy, speech));
        let mut transition = None;
        if speech {
            self.silence_run = 0;
            self.speech_run = self.speech_run.saturating_add(1);
            if !self.speaking && self.speech_run >= self.onset_frames {
                self.speaking = true;
                transition = Some(VadTransition::Start);
            }
        } else {
            self.speech_run = 0;
            self.silence_run = self.silence_run.saturating_add(1);
            if self.speaking && self.silence_run >= self.hangover_frames {
                self.speaking = false;
                transition = Some(VadTransition::End);
            }
        }
        FrameVerdict {
            energy_dbfs: energy,
            floor_dbfs: floor,
            speech,
            transition,
        }
    }

    fn next_floor(&self, floor: f64, energy: f64, speech: bool) -> f64 {
        if energy < floor {
            floor + (energy - floor) / FLOOR_FALL_FRAMES
        } else if !speech && energy < floor + self.config.threshold_db / 2.0 {
            floor + (energy - floor) / FLOOR_RISE_FRAMES
        } else {
            floor + (energy - floor).min(self.creep_db)
        }
    }
}

/// The RMS energy of `samples` in dBFS (full scale = 32768, unfiltered),
/// [`SILENCE_DBFS`] at least.
pub fn energy_dbfs(samples: impl Iterator<Item = i16>) -> f64 {
    let (mut sum, mut count) = (0.0f64, 0usize);
    for sample in samples {
        let x = f64::from(sample) / 32768.0;
        sum += x * x;
        count += 1;
    }
    mean_square_dbfs(sum, count)
}

fn mean_square_dbfs(sum: f64, count: usize) -> f64 {
    if count == 0 || sum <= 0.0 {
        return SILENCE_DBFS;
    }
    (10.0 * (sum / count as f64).log10()).max(SILENCE_DBFS)
}
