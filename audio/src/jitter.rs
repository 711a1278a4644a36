//! [`JitterBuffer`]: model audio held back just long enough to play it without gaps.
//!
//! The model's audio arrives in chunks of any size, in bursts (a reply is usually sent
//! faster than real time) and sometimes late. The player pulls one fixed frame at its own
//! cadence. The buffer:
//!
//! - **pre-buffers**: a stream starts playing once `target` ms are waiting (or when the
//!   stream is marked finished with less than that), so one late chunk does not starve the
//!   player at once;
//! - **adapts** the target to the arrivals: each chunk's *transit* is its arrival time less
//!   the media time received before it in the same stream; how much later than the
//!   stream's earliest transit a chunk came (its lateness) is what the buffer must cover.
//!   The estimate jumps up to a larger lateness at once and decays by 1/16 of the gap per
//!   on-time chunk (a peak follower), and the target is that estimate rounded up to whole
//!   frames, plus one frame, clamped to `min_target_ms..=max_target_ms`;
//! - **counts underruns**: a pull while playing with less than a frame waiting (and the
//!   stream not finished) returns silence, counts one underrun and re-buffers to the
//!   target. The end of a stream (`finish`) is not an underrun: the last partial frame is
//!   padded with silence and the buffer goes idle;
//! - is **bounded** (`capacity_ms`; the oldest audio is dropped and counted) and is
//!   **cleared on interruption** (a barge-in): nothing received before it is played.
//!
//! Time is passed in (`arrival_ms` of each chunk, the session time of its frame), never
//! read here, so a test or a replay drives it exactly. Pulls take no time: they are the
//! player's clock.

use std::collections::VecDeque;
use std::time::Duration;

use bytes::{Bytes, BytesMut};

use super::jitter_config::{JitterConfig, JitterConfigError};

/// What one pull gives the player.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Pulled {
    /// One frame of audio (the last frame of a stream is padded with silence).
    Audio(Bytes),
    /// Nothing to play now: the player plays a frame of silence.
    Silence(SilenceReason),
}

impl Pulled {
    /// The frame's PCM: the audio, or `frame_bytes` zero bytes for silence.
    pub fn into_pcm(self, frame_bytes: usize) -> Bytes {
        match self {
            Pulled::Audio(pcm) => pcm,
            Pulled::Silence(_) => Bytes::from(vec![0; frame_bytes]),
        }
    }
}

/// Why a pull returned silence.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SilenceReason {
    /// No stream: the model is not talking (or was interrupted).
    Idle,
    /// A stream is filling up to the target depth before it plays.
    Buffering,
    /// A playing stream ran dry before its end: counted, and the stream re-buffers.
    Underrun,
}

/// The buffer's figures now (also in `reel_actors::telemetry::TelemetrySnapshot::jitter`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct JitterStats {
    /// Audio waiting, in whole ms.
    pub depth_ms: u64,
    /// The depth a stream fills up to before it plays, in ms.
    pub target_ms: u64,
    /// The lateness estimate the target follows, in whole ms.
    pub jitter_ms: u64,
    /// Pulls that found a playing stream dry.
    pub underruns: u64,
    /// Audio dropped, oldest first, because the buffer was full, in whole ms.
    pub overflow_dropped_ms: u64,
    /// Audio dropped by interruptions (barge-ins), in whole ms.
    pub interrupted_dropped_ms: u64,
    /// Frames of audio handed to the player.
    pub frames_played: u64,
    /// Whether a stream is playing now (not idle, not buffering).
    pub playing: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mode {
    Idle,
    Buffering,
    Playing,
}

/// The timing of the stream being received.
#[derive(Debug, Clone, Copy)]
struct Stream {
    /// Bytes of audio received in this stream before the next chunk.
    media_bytes: usize,
    /// The smallest transit (arrival less media time) seen, in µs.
    min_transit_us: i64,
}

/// An adaptive playback jitter buffer (see the module docs). Not shared: the session
/// shares one through [`super::SharedJitterBuffer`].
#[derive(Debug)]
pub struct JitterBuffer {
    config: JitterConfig,
    frame_bytes: usize,
    capacity_bytes: usize,
    chunks: VecDeque<Bytes>,
    /// Bytes of the front chunk already played or dropped.
    front_offset: usize,
    buffered: usize,
    mode: Mode,
    /// The stream was marked finished: no more audio is expected for it.
    finished: bool,
    stream: Option<Stream>,
    /// The lateness estimate, in µs.
    estimate_us: u64,
    target_ms: u32,
    underruns: u64,
    overflow_dropped: u64,
    interrupted_dropped: u64,
    frames_played: u64,
}

impl JitterBuffer {
    /// An empty, idle buffer; the config is checked first.
    pub fn new(config: JitterConfig) -> Result<JitterBuffer, JitterConfigError> {
        config.validate()?;
        let estimate_us =
            u64::from(config.initial_target_ms.saturating_sub(config.frame_ms)) * 1000;
        let mut buffer = JitterBuffer {
            config,
            frame_bytes: config.frame_bytes(),
            capacity_bytes: config.bytes_of_ms(config.capacity_ms),
            chunks: VecDeque::new(),
            front_offset: 0,
            buffered: 0,
            mode: Mode::Idle,
            finished: false,
            stream: None,
            estimate_us,
            target_ms: config.initial_target_ms,
            underruns: 0,
            overflow_dropped: 0,
            interrupted_dropped: 0,
            frames_played: 0,
        };
        buffer.retarget();
        Ok(buffer)
    }

    /// The settings.
    pub fn config(&self) -> &JitterConfig {
        &self.config
    }

    /// Bytes of audio waiting (never more than the capacity).
    pub fn depth_bytes(&self) -> usize {
        self.buffered
    }

    /// Adds a chunk of audio that arrived at `arrival_ms` (session time, ms). Arrivals are
    /// expected in order; a chunk after [`JitterBuffer::finish`] starts a new stream.
    pub fn push(&mut self, chunk: Bytes, arrival_ms: u64) {
        if chunk.is_empty() {
            return;
        }
        if self.finished {
            self.finished = false;
            self.stream = None;
        }
        if self.mode == Mode::Idle {
            self.mode = Mode::Buffering;
            self.stream = None;
        }
        let arrival_us = i64::try_from(arrival_ms.saturating_mul(1000)).unwrap_or(i64::MAX);
        let len = chunk.len();
        match self.stream.as_mut() {
            None => {
                self.stream = Some(Stream {
                    media_bytes: len,
                    min_transit_us: arrival_us,
                });
            }
            Some(stream) => {
                let media_us =
                    i64::try_from(self.config.us_of_bytes(stream.media_bytes)).unwrap_or(i64::MAX);
                let transit = arrival_us.saturating_sub(media_us);
                stream.min_transit_us = stream.min_transit_us.min(transit);
                let lateness = transit.saturating_sub(stream.min_transit_us).max(0) as u64;
                stream.media_bytes += len;
                self.observe(lateness);
            }
        }
        self.chunks.push_back(chunk);
        self.buffered += len;
        if self.buffered > self.capacity_bytes {
            let excess = self.buffered - self.capacity_bytes;
            self.discard_front(excess);
            self.overflow_dropped += excess as u64;
        }
    }

    /// Takes the next frame for the player (see [`Pulled`]).
    pub fn pull(&mut self) -> Pulled {
        if self.mode == Mode::Buffering {
            let target = self.config.bytes_of_ms(self.target_ms);
            if self.buffered >= target || (self.finished && self.buffered > 0) {
                self.mode = Mode::Playing;
            } else if self.finished {
                self.go_idle();
                return Pulled::Silence(SilenceReason::Idle);
            } else {
                return Pulled::Silence(SilenceReason::Buffering);
            }
        }
        match self.mode {
            Mode::Idle => Pulled::Silence(SilenceReason::Idle),
            Mode::Buffering => Pulled::Silence(SilenceReason::Buffering),
            Mode::Playing if self.buffered >= self.frame_bytes => {
                self.frames_played += 1;
                Pulled::Audio(self.take_front(self.frame_bytes))
            }
            Mode::Playing if self.finished => {
                if self.buffered == 0 {
                    self.go_idle();
                    return Pulled::Silence(SilenceReason::Idle);
                }
                let mut last = BytesMut::from(&self.take_front(self.buffered)[..]);
                last.resize(self.frame_bytes, 0);
                self.frames_played += 1;
                self.go_idle();
                Pulled::Audio(last.freeze())
            }
            Mode::Playing => {
                self.underruns += 1;
                self.mode = Mode::Buffering;
                Pulled::Silence(SilenceReason::Underrun)
            }
        }
    }

    /// No more audio is coming for this stream (the model's turn or generation is
    /// complete): what waits plays out, even below the target, and running dry afterwards
    /// is the stream's end, not an underrun.
    pub fn finish(&mut self) {
        if self.mode != Mode::Idle {
            self.finished = true;
        }
    }

    /// Drops everything waiting (the user barged in) and goes idle; returns how much audio
    /// was dropped.
    pub fn interrupt(&mut self) -> Duration {
        let dropped = self.buffered;
        self.chunks.clear();
        self.front_offset = 0;
        self.buffered = 0;
        self.interrupted_dropped += dropped as u64;
        self.go_idle();
        Duration::from_micros(self.config.us_of_bytes(dropped))
    }

    /// The figures now.
    pub fn stats(&self) -> JitterStats {
        let ms = |bytes: u64| self.config.ms_of_bytes(bytes as usize);
        JitterStats {
            depth_ms: ms(self.buffered as u64),
            target_ms: u64::from(self.target_ms),
            jitter_ms: self.estimate_us / 1000,
            underruns: self.underruns,
            overflow_dropped_ms: ms(self.overflow_dropped),
            interrupted_dropped_ms: ms(self.interrupted_dropped),
            frames_played: self.frames_played,
            playing: self.mode == Mode::Playing,
        }
    }

    fn go_idle(&mut self) {
        self.mode = Mode::Idle;
        self.finished = false;
        self.stream = None;
    }

    /// A chunk `lateness_us` later than the stream's earliest: the estimate jumps up to a
    /// larger lateness, and decays towards a smaller one by 1/16 of the gap.
    fn observe(&mut self, lateness_us: u64) {
        if lateness_us >= self.estimate_us {
            self.estimate_us = lateness_us;
        } else {
            self.estimate_us -= (self.estimate_us - lateness_us) / 16;
        }
        self.retarget();
    }

    fn retarget(&mut self) {
        let frame_us = u64::from(self.config.frame_ms) * 1000;
        let frames = self.estimate_us.div_ceil(frame_us);
        let wanted = (frames + 1).saturating_mul(u64::from(self.config.frame_ms));
        let clamped = wanted.clamp(
            u64::from(self.config.min_target_ms),
            u64::from(self.config.max_target_ms),
        );
        // Clamped to a u32 range just above.
        self.target_ms = u32::try_from(clamped).unwrap_or(self.config.max_target_ms);
    }

    /// The first `n` waiting bytes (`n` ≤ what waits), without copying when they lie in one
    /// chunk.
    fn take_front(&mut self, n: usize) -> Bytes {
        if let Some(front) = self.chunks.front()
            && front.len() - self.front_offset >= n
        {
            let taken = front.slice(self.front_offset..self.front_offset + n);
            self.advance(n);
            return taken;
        }
        let mut out = BytesMut::with_capacity(n);
        let mut left = n;
        for chunk in &self.chunks {
            let start = if out.is_empty() { self.front_offset } else { 0 };
            let part = &chunk[start..];
            let take = part.len().min(left);
            out.extend_from_slice(&part[..take]);
            left -= take;
            if left == 0 {
                break;
            }
        }
        self.advance(n);
        out.freeze()
    }

    fn discard_front(&mut self, n: usize) {
        self.advance(n);
    }

    /// Forgets the first `n` waiting bytes.
    fn advance(&mut self, n: usize) {
        let mut left = n.min(self.buffered);
        self.buffered -= left;
        while left > 0 {
            let Some(front) = self.chunks.front() else {
                break;
            };
            let available = front.len() - self.front_offset;
            if available <= left {
                left -= available;
                self.chunks.pop_front();
                self.front_offset = 0;
            } else {
                self.front_offset += left;
                left = 0;
            }
        }
    }
}
