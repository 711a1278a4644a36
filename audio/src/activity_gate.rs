//! [`ActivityGate`]: the application's audio, framed, judged by the client-side
//! [`VoiceActivityDetector`] and turned into what goes on the wire: `activityStart`, the
//! speech (with its pre-roll), `activityEnd`.
//!
//! With the server's activity detection off, the model hears only what lies between an
//! `activityStart` and its `activityEnd`, so the gate sends nothing outside speech: it
//! keeps the last `pre_roll_ms` of audio, and when speech starts it sends `activityStart`
//! and then that pre-roll, so the words that triggered the start are heard. During speech
//! audio goes out as it comes (the frames of one `feed` in one message); the hangover is
//! sent too, then `activityEnd`. A partial frame waits for the next `feed`.

use std::collections::VecDeque;

use bytes::{Bytes, BytesMut};
use reel_protocol::SessionCommand;

use super::vad::{VadTransition, VoiceActivityDetector};
use super::vad_config::{VadConfig, VadConfigError};

/// Frames the application's audio and gates it on voice activity (see the module docs).
///
/// ```
/// use reel_audio::{ActivityGate, VadConfig};
/// use reel_protocol::SessionCommand;
///
/// let mut gate = ActivityGate::new(VadConfig::default()).unwrap();
/// let quiet = vec![0u8; 640 * 5]; // 100 ms of silence: nothing is sent
/// assert!(gate.feed(&quiet).is_empty());
/// // 80 ms of a 500 Hz tone.
/// let loud: Vec<u8> = (0..320 * 4)
///     .flat_map(|i| ((8_000.0 * (i as f64 * 0.196_35).sin()) as i16).to_le_bytes())
///     .collect();
/// let sent = gate.feed(&loud);
/// assert_eq!(sent[0], SessionCommand::ActivityStart);
/// assert!(matches!(&sent[1], SessionCommand::SendAudio(pcm) if pcm.len() == 640 * 9)); // the pre-roll, then speech
/// ```
#[derive(Debug, Clone)]
pub struct ActivityGate {
    vad: VoiceActivityDetector,
    frame_bytes: usize,
    pre_roll_frames: usize,
    /// Bytes short of a whole frame, waiting for the next feed.
    partial: BytesMut,
    /// The latest frames before a start, oldest first.
    pre_roll: VecDeque<Bytes>,
}

impl ActivityGate {
    /// A gate with a fresh detector; the config is checked first.
    pub fn new(config: VadConfig) -> Result<ActivityGate, VadConfigError> {
        let vad = VoiceActivityDetector::new(config)?;
        Ok(ActivityGate {
            vad,
            frame_bytes: config.frame_samples() * 2,
            pre_roll_frames: config.pre_roll_ms.div_ceil(config.frame_ms) as usize,
            partial: BytesMut::new(),
            pre_roll: VecDeque::new(),
        })
    }

    /// The detector.
    pub fn detector(&self) -> &VoiceActivityDetector {
        &self.vad
    }

    /// Whether the user is speaking now.
    pub fn is_speaking(&self) -> bool {
        self.vad.is_speaking()
    }

    /// Takes `pcm` (16 kHz PCM16LE mono, any length) and returns what to send, in order:
    /// `ActivityStart`, `SendAudio` and `ActivityEnd` commands.
    pub fn feed(&mut self, pcm: &[u8]) -> Vec<SessionCommand> {
        let mut out = Vec::new();
        let mut speech = BytesMut::new();
        self.partial.extend_from_slice(pcm);
        while self.partial.len() >= self.frame_bytes {
            let frame = self.partial.split_to(self.frame_bytes).freeze();
            let verdict = self.vad.process_frame_bytes(&frame);
            match verdict.transition {
                Some(VadTransition::Start) => {
                    out.push(SessionCommand::ActivityStart);
                    for held in self.pre_roll.drain(..) {
                        speech.extend_from_slice(&held);
                    }
                    speech.extend_from_slice(&frame);
                }
                Some(VadTransition::End) => {
                    speech.extend_from_slice(&frame);
                    out.push(SessionCommand::SendAudio(speech.split().freeze()));
                    out.push(SessionCommand::ActivityEnd);
                }
                None if self.vad.is_speaking() => speech.extend_from_slice(&frame),
                None => {
                    if self.pre_roll.len() == self.pre_roll_frames {
                        self.pre_roll.pop_front();
                    }
                    self.pre_roll.push_back(frame);
                }
            }
        }
        if !speech.is_empty() {
            out.push(SessionCommand::SendAudio(speech.freeze()));
        }
        out
    }
}
