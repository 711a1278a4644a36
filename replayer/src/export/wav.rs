//! A call's audio as one WAV file: the user on the left channel, the model on the right, on
//! the session's time axis, 16-bit PCM at 24 kHz (the model's rate; the user's 16 kHz audio
//! is resampled linearly).
//!
//! A chunk is placed at its recorded time, or right after the channel's previous chunk if
//! that one is still playing: the model streams its audio faster than real time, and the
//! listener hears it as it would have been played. Written as it is read, in bounded memory:
//! every frame before the current entry's time is final (later chunks start at their time or
//! later) and goes to the file; only the audio ahead of it waits. Rendering is linear in the
//! audio and the silence written, however far ahead of real time the audio arrived.
//!
//! The output is bounded before it is written ([`WavLimits`]): an entry whose time jumps
//! more than [`MAX_GAP_MS`] past every entry before it (an edited `ts_ms`, a clock gone
//! wrong) is refused with its `seq` rather than rendered as hours of silence, and a file
//! that would grow past its byte limit stops with [`WavError::TooLong`] before the bytes
//! over it are written or held.

use std::collections::VecDeque;
use std::io::{self, Seek, SeekFrom, Write};

use reel_protocol::{Blob, decode_client, decode_server};
use reel_recorder::wire_log::{Direction, WireEntry};

/// The file's sample rate.
pub const WAV_RATE: u32 = 24_000;

/// The user's rate when a chunk's MIME type names none.
const DEFAULT_INPUT_RATE: u32 = 16_000;
/// The model's rate when a chunk's MIME type names none.
const DEFAULT_OUTPUT_RATE: u32 = 24_000;

/// The size of the RIFF/WAVE header written before the samples.
const HEADER_BYTES: u64 = 44;

/// The bytes of one stereo 16-bit frame.
const FRAME_BYTES: u64 = 4;

/// How many frames are written at a time (1 MiB).
const BLOCK_FRAMES: usize = 1 << 18;

/// The longest silence between an entry and every entry before it that a WAV renders by
/// default: 30 minutes, twice the longest audio session the Live API holds. A longer jump
/// is a damaged timestamp.
pub const MAX_GAP_MS: u64 = 30 * 60 * 1000;

/// The most sample bytes a WAV file can hold: its sizes are 32-bit (about 12 hours of
/// stereo at 24 kHz).
pub const MAX_WAV_DATA_BYTES: u64 = u32::MAX as u64 - (HEADER_BYTES - 8);

/// How much a [`WavExporter`] renders at most.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WavLimits {
    /// The longest jump of an entry's time past every entry before it, in milliseconds
    /// (default [`MAX_GAP_MS`]); a longer one is refused ([`WavError::Gap`]).
    pub max_gap_ms: u64,
    /// The most sample bytes written or held (default, and at most, [`MAX_WAV_DATA_BYTES`]);
    /// audio past it is refused ([`WavError::TooLong`]) before it is written.
    pub max_data_bytes: u64,
}

impl Default for WavLimits {
    fn default() -> Self {
        WavLimits {
            max_gap_ms: MAX_GAP_MS,
            max_data_bytes: MAX_WAV_DATA_BYTES,
        }
    }
}

/// What went wrong writing a WAV.
#[derive(Debug, thiserror::Error)]
pub enum WavError {
    /// The file could not be written.
    #[error("cannot write the WAV: {0}")]
    Io(#[from] io::Error),
    /// The audio would grow past the byte limit (at most the 4 GiB a WAV's sizes can say,
    /// about 12 hours of stereo at 24 kHz); nothing past the limit was written.
    #[error(
        "the call's audio reaches {bytes} bytes at entry seq {seq}, over the limit of {limit} \
         bytes; nothing past the limit was written"
    )]
    TooLong {
        /// The size the audio would have reached.
        bytes: u64,
        /// The limit.
        limit: u64,
        /// The entry whose audio or time crossed it (0: the end of the log).
        seq: u64,
    },
    /// An entry's time jumps further past every earlier entry's than a call's silence
    /// lasts: a damaged timestamp. Refused before any of the silence is written.
    #[error(
        "entry seq {seq}: its ts_ms jumps {gap_ms} ms past the entries before it, over the \
         {max_gap_ms} ms of silence a WAV renders; the log's timestamps are damaged"
    )]
    Gap {
        /// The entry.
        seq: u64,
        /// How far its time is past the latest before it, in milliseconds.
        gap_ms: u64,
        /// The limit.
        max_gap_ms: u64,
    },
}

/// What was written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WavSummary {
    /// Stereo frames written.
    pub frames: u64,
    /// Audio chunks the user sent.
    pub chunks_in: u64,
    /// Audio chunks the model sent.
    pub chunks_out: u64,
}

/// Writes a call's audio as it reads the wire log (the module's docs say how).
#[derive(Debug)]
pub struct WavExporter<W: Write + Seek> {
    out: W,
    /// The first entry's time, the file's zero.
    t0: Option<u64>,
    /// The latest entry time so far (epoch ms).
    latest_ms: u64,
    /// Frames already in the file.
    flushed: u64,
    /// Per channel (0 user, 1 model): samples of frames `flushed..`, not yet written. A
    /// deque: writing takes from its front, in time linear in what is written, however much
    /// audio waits behind it.
    pending: [VecDeque<i16>; 2],
    /// The bytes being written, kept between writes.
    block: Vec<u8>,
    limits: WavLimits,
    /// Per channel: the first frame after its last chunk.
    cursor: [u64; 2],
    chunks: [u64; 2],
}

impl<W: Write + Seek> WavExporter<W> {
    /// Starts the file (its header's sizes are filled in by [`WavExporter::finish`]), with
    /// the default [`WavLimits`].
    pub fn new(out: W) -> Result<Self, WavError> {
        WavExporter::with_limits(out, WavLimits::default())
    }

    /// [`new`](WavExporter::new) with other limits (a byte limit over
    /// [`MAX_WAV_DATA_BYTES`] is lowered to it).
    pub fn with_limits(mut out: W, limits: WavLimits) -> Result<Self, WavError> {
        out.write_all(&header(0))?;
        Ok(WavExporter {
            out,
            t0: None,
            latest_ms: 0,
            flushed: 0,
            pending: [VecDeque::new(), VecDeque::new()],
            block: Vec::new(),
            limits: WavLimits {
                max_data_bytes: limits.max_data_bytes.min(MAX_WAV_DATA_BYTES),
                ..limits
            },
            cursor: [0, 0],
            chunks: [0, 0],
        })
    }

    /// Takes the next entry of the log: its audio, if any, is placed; the frames before its
    /// time are written. Refuses an entry whose time jumps too far ([`WavError::Gap`]) or
    /// whose audio or time would take the file past its byte limit
    /// ([`WavError::TooLong`]), before writing any of it.
    pub fn push(&mut self, entry: &WireEntry) -> Result<(), WavError> {
        let t0 = *self.t0.get_or_insert(entry.ts_ms);
        let latest = self.latest_ms.max(t0);
        let gap_ms = entry.ts_ms.saturating_sub(latest);
        if gap_ms > self.limits.max_gap_ms {
            return Err(WavError::Gap {
                seq: entry.seq,
                gap_ms,
                max_gap_ms: self.limits.max_gap_ms,
            });
        }
        self.latest_ms = latest.max(entry.ts_ms);
        let at = frame_at(entry.ts_ms.saturating_sub(t0));
        let at = at.max(self.flushed);
        self.check_size(at, entry.seq)?;
        self.flush_until(at)?;
        if entry.close.is_some() {
            return Ok(());
        }
        let (channel, chunks) = match entry.dir {
            Direction::Out => (0, client_audio(&entry.payload)),
            Direction::In => (1, server_audio(&entry.payload)),
        };
        for (rate, pcm) in chunks {
            let start = at.max(self.cursor[channel]);
            let end = start.saturating_add(resampled_len(pcm.len(), rate, WAV_RATE));
            // Checked before resampling (a low rate multiplies the samples) and before it
            // is held in memory until written: within the limit like what is written.
            self.check_size(end, entry.seq)?;
            let samples = resample(&pcm, rate, WAV_RATE);
            // Both fit in memory: `end - flushed` frames are within the byte limit.
            let offset = usize::try_from(start - self.flushed).unwrap_or(usize::MAX);
            let pending = &mut self.pending[channel];
            if pending.len() < offset + samples.len() {
                pending.resize(offset + samples.len(), 0);
            }
            copy_into(pending, offset, &samples);
            self.cursor[channel] = end;
            self.chunks[channel] += 1;
        }
        Ok(())
    }

    /// Refuses a file that would reach `frames` frames, over the byte limit.
    fn check_size(&self, frames: u64, seq: u64) -> Result<(), WavError> {
        let bytes = frames.saturating_mul(FRAME_BYTES);
        if bytes > self.limits.max_data_bytes {
            return Err(WavError::TooLong {
                bytes,
                limit: self.limits.max_data_bytes,
                seq,
            });
        }
        Ok(())
    }

    /// Writes the frames before `frame` (within the limit: the callers checked), a block
    /// at a time: the block starts as silence and each channel's waiting samples are laid
    /// into it, so a gap costs a zeroed buffer, not a loop over its frames.
    fn flush_until(&mut self, frame: u64) -> Result<(), WavError> {
        if frame <= self.flushed {
            return Ok(());
        }
        let count = usize::try_from(frame - self.flushed).unwrap_or(usize::MAX);
        let mut done = 0;
        while done < count {
            let frames = (count - done).min(BLOCK_FRAMES);
            self.block.clear();
            self.block.resize(frames * FRAME_BYTES as usize, 0);
            for (channel, pending) in self.pending.iter().enumerate() {
                let waiting = done.min(pending.len())..(done + frames).min(pending.len());
                let at = channel * 2;
                for (slot, sample) in self.block.chunks_exact_mut(4).zip(pending.range(waiting)) {
                    slot[at..at + 2].copy_from_slice(&sample.to_le_bytes());
                }
            }
            self.out.write_all(&self.block)?;
            done += frames;
        }
        for channel in &mut self.pending {
            channel.drain(..count.min(channel.len()));
        }
        self.flushed = frame;
        Ok(())
    }

    /// Writes the audio still waiting and the header's sizes; returns what was written.
    pub fn finish(mut self) -> Result<WavSummary, WavError> {
        let end = self.cursor[0].max(self.cursor[1]).max(self.flushed);
        self.check_size(end, 0)?;
        self.flush_until(end)?;
        let data_bytes = self.flushed * FRAME_BYTES;
        // Within MAX_WAV_DATA_BYTES, which is below u32::MAX: checked before writing.
        let data_size = u32::try_from(data_bytes).map_err(|_| WavError::TooLong {
            bytes: data_bytes,
            limit: self.limits.max_data_bytes,
            seq: 0,
        })?;
        self.out.seek(SeekFrom::Start(0))?;
        self.out.write_all(&header(data_size))?;
        self.out.flush()?;
        Ok(WavSummary {
            frames: self.flushed,
            chunks_in: self.chunks[0],
            chunks_out: self.chunks[1],
        })
    }
}

/// The loudness of a call's audio per slice of time, placed exactly as [`WavExporter`]
/// places it but without rendering a sample: each chunk's samples go straight to the slices
/// they fall in, as the smallest and largest value of the user's channel and of the
/// model's, `[user_min, user_max, model_min, model_max]`. Memory holds the slices only.
#[derive(Debug)]
pub struct PeakMeter {
    t0: Option<u64>,
    cursor: [u64; 2],
    /// The first frame (at [`WAV_RATE`]) measured, and the one after the last.
    first: u64,
    last: u64,
    peaks: Vec<[i16; 4]>,
    /// Per slice and channel: how many of its frames a chunk covers (the rest are silence).
    covered: Vec<[u64; 2]>,
}

impl PeakMeter {
    /// Measures frames `from_ms..to_ms` of the call (at least one millisecond) in
    /// `buckets` slices (at least one).
    pub fn new(from_ms: u64, to_ms: u64, buckets: usize) -> Self {
        // Below u64::MAX, so that `last` can be after it.
        let first = frame_at(from_ms).min(u64::MAX - 1);
        let buckets = buckets.max(1);
        PeakMeter {
            t0: None,
            cursor: [0, 0],
            first,
            last: frame_at(to_ms).max(first + 1),
            peaks: vec![[i16::MAX, i16::MIN, i16::MAX, i16::MIN]; buckets],
            covered: vec![[0, 0]; buckets],
        }
    }

    /// [`new`](PeakMeter::new), for a meter that starts reading the log in its middle: at an
    /// entry before which the call started at `t0` (epoch ms) and each channel's audio
    /// ended at `cursor` (what [`placement`](PeakMeter::placement) said there). The
    /// entries from there on place their audio exactly as from the start.
    pub fn resume(from_ms: u64, to_ms: u64, buckets: usize, t0: u64, cursor: [u64; 2]) -> Self {
        PeakMeter {
            t0: Some(t0),
            cursor,
            ..PeakMeter::new(from_ms, to_ms, buckets)
        }
    }

    /// Where the entries pushed so far leave the call: its first entry's time (epoch ms)
    /// and where each channel's audio ends (frames at [`WAV_RATE`], user then model). A
    /// seek index keeps it to [`resume`](PeakMeter::resume) a meter there.
    pub fn placement(&self) -> (Option<u64>, [u64; 2]) {
        (self.t0, self.cursor)
    }

    /// The slice frame `frame` (within `first..last`) falls in.
    fn bucket(&self, frame: u64) -> usize {
        let n = self.peaks.len() as u128;
        let index = u128::from(frame - self.first) * n / u128::from(self.last - self.first);
        usize::try_from(index)
            .unwrap_or(usize::MAX)
            .min(self.peaks.len() - 1)
    }

    /// Where slice `bucket` starts, in frames after `first` (`last - first` for the slice
    /// after the last).
    fn bucket_start(&self, bucket: usize) -> u64 {
        let n = self.peaks.len() as u128;
        let span = u128::from(self.last - self.first);
        u64::try_from((bucket as u128 * span).div_ceil(n)).unwrap_or(u64::MAX)
    }

    /// How many frames slice `bucket` spans.
    fn bucket_frames(&self, bucket: usize) -> u64 {
        self.bucket_start(bucket + 1) - self.bucket_start(bucket)
    }

    /// Takes the next entry of the log.
    pub fn push(&mut self, entry: &WireEntry) {
        let t0 = *self.t0.get_or_insert(entry.ts_ms);
        if entry.close.is_some() {
            return;
        }
        let at = frame_at(entry.ts_ms.saturating_sub(t0));
        let (channel, chunks) = match entry.dir {
            Direction::Out => (0, client_audio(&entry.payload)),
            Direction::In => (1, server_audio(&entry.payload)),
        };
        for (rate, samples) in chunks {
            let length = (samples.len() as u64 * u64::from(WAV_RATE)).div_ceil(u64::from(rate));
            let start = at.max(self.cursor[channel]);
            let stop = start.saturating_add(length);
            self.cursor[channel] = stop;
            if start >= self.last || stop <= self.first {
                continue;
            }
            // The frames the chunk plays, slice by slice; each frame plays the sample at its
            // place (the WAV's resampling without the interpolation), so a slice's extremes
            // are those of the samples its frames fall on.
            let end = stop.min(self.last);
            let mut frame = start.max(self.first);
            let mut bucket = self.bucket(frame);
            let (low, high) = (channel * 2, channel * 2 + 1);
            while frame < end {
                let stop = end.min(self.first + self.bucket_start(bucket + 1));
                let sample_at = |f: u64| {
                    let offset = (f - start) * u64::from(rate) / u64::from(WAV_RATE);
                    usize::try_from(offset)
                        .unwrap_or(usize::MAX)
                        .min(samples.len() - 1)
                };
                let played = &samples[sample_at(frame)..=sample_at(stop - 1)];
                let peak = &mut self.peaks[bucket];
                peak[low] = played.iter().copied().fold(peak[low], i16::min);
                peak[high] = played.iter().copied().fold(peak[high], i16::max);
                self.covered[bucket][channel] += stop - frame;
                frame = stop;
                bucket = (bucket + 1).min(self.peaks.len() - 1);
            }
        }
    }

    /// The slices. A slice part of which no chunk covers has silence (0) in it too.
    pub fn finish(self) -> Vec<[i16; 4]> {
        let mut peaks = self.peaks.clone();
        for (bucket, peak) in peaks.iter_mut().enumerate() {
            let frames = self.bucket_frames(bucket);
            for channel in 0..2 {
                let (low, high) = (channel * 2, channel * 2 + 1);
                if self.covered[bucket][channel] < frames {
                    peak[low] = peak[low].min(0);
                    peak[high] = peak[high].max(0);
                }
            }
        }
        peaks
    }
}

/// Copies `samples` into `deque` from `offset` on (the deque holds them: the caller grew
/// it), slice by slice rather than sample by sample.
fn copy_into(deque: &mut VecDeque<i16>, offset: usize, samples: &[i16]) {
    let (front, back) = deque.as_mut_slices();
    let in_front = front.len().saturating_sub(offset).min(samples.len());
    if in_front > 0 {
        front[offset..offset + in_front].copy_from_slice(&samples[..in_front]);
    }
    let rest = &samples[in_front..];
    if !rest.is_empty() {
        let at = (offset + in_front) - front.len();
        back[at..at + rest.len()].copy_from_slice(rest);
    }
}

/// The frame (at [`WAV_RATE`]) `ms` milliseconds into the call; saturates far past any
/// call's end rather than wrap.
fn frame_at(ms: u64) -> u64 {
    ms.saturating_mul(u64::from(WAV_RATE)) / 1000
}

/// A 16-bit stereo PCM WAVE header for `data_size` bytes of samples.
fn header(data_size: u32) -> [u8; 44] {
    let channels: u16 = 2;
    let bits: u16 = 16;
    let block_align = channels * bits / 8;
    let byte_rate = WAV_RATE * u32::from(block_align);
    let mut header = [0u8; 44];
    let mut at = 0;
    let mut put = |bytes: &[u8]| {
        header[at..at + bytes.len()].copy_from_slice(bytes);
        at += bytes.len();
    };
    put(b"RIFF");
    put(&(data_size.saturating_add(36)).to_le_bytes());
    put(b"WAVE");
    put(b"fmt ");
    put(&16u32.to_le_bytes());
    put(&1u16.to_le_bytes()); // PCM
    put(&channels.to_le_bytes());
    put(&WAV_RATE.to_le_bytes());
    put(&byte_rate.to_le_bytes());
    put(&block_align.to_le_bytes());
    put(&bits.to_le_bytes());
    put(b"data");
    put(&data_size.to_le_bytes());
    header
}

/// The audio a client frame sends: `(rate, samples)` per chunk.
fn client_audio(payload: &[u8]) -> Vec<(u32, Vec<i16>)> {
    let Ok(message) = decode_client(payload) else {
        return Vec::new();
    };
    let Some(input) = message.realtime_input else {
        return Vec::new();
    };
    input
        .audio
        .iter()
        .chain(input.media_chunks.iter().flatten())
        .filter_map(|blob| pcm_of(blob, DEFAULT_INPUT_RATE))
        .collect()
}

/// The audio a server frame carries: `(rate, samples)` per part.
fn server_audio(payload: &[u8]) -> Vec<(u32, Vec<i16>)> {
    let Ok(message) = decode_server(payload) else {
        return Vec::new();
    };
    message
        .server_content
        .and_then(|content| content.model_turn)
        .and_then(|turn| turn.parts)
        .unwrap_or_default()
        .iter()
        .filter_map(|part| part.inline_data.as_ref())
        .filter_map(|blob| pcm_of(blob, DEFAULT_OUTPUT_RATE))
        .collect()
}

/// A PCM16LE audio blob's rate and samples; `None` for anything else.
fn pcm_of(blob: &Blob, default_rate: u32) -> Option<(u32, Vec<i16>)> {
    let mime = blob.mime_type.as_deref()?;
    if !mime.starts_with("audio/pcm") {
        return None;
    }
    let rate = blob.pcm_rate().unwrap_or(default_rate);
    let data = blob.data.as_ref()?;
    let samples = data
        .0
        .chunks_exact(2)
        .map(|pair| i16::from_le_bytes([pair[0], pair[1]]))
        .collect();
    Some((rate, samples))
}

/// How many samples `len` samples at `from` Hz make at `to` Hz ([`resample`]).
fn resampled_len(len: usize, from: u32, to: u32) -> u64 {
    if from == to {
        return len as u64;
    }
    (len as u64)
        .saturating_mul(u64::from(to))
        .div_ceil(u64::from(from.max(1)))
}

/// `samples` at `from` Hz as `to` Hz, by linear interpolation within the chunk.
fn resample(samples: &[i16], from: u32, to: u32) -> Vec<i16> {
    if from == to || samples.is_empty() {
        return samples.to_vec();
    }
    let count = resampled_len(samples.len(), from, to);
    (0..count)
        .map(|j| {
            // Position j in the input, as a whole index and a fraction of `to`.
            let scaled = j * u64::from(from);
            let index = usize::try_from(scaled / u64::from(to)).unwrap_or(usize::MAX);
            let fraction = (scaled % u64::from(to)) as f64 / f64::from(to);
            let a = f64::from(samples[index.min(samples.len() - 1)]);
            let b = f64::from(samples[(index + 1).min(samples.len() - 1)]);
            (a + (b - a) * fraction).round() as i16
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use std::io::Cursor;

    use reel_protocol::Base64Data;

    use super::*;

    fn audio_in(seq: u64, ts: u64, samples: &[i16]) -> WireEntry {
        let bytes: Vec<u8> = samples.iter().flat_map(|s| s.to_le_bytes()).collect();
        let payload = format!(
            r#"{{"realtimeInput":{{"audio":{{"mimeType":"audio/pcm;rate=16000","data":"{}"}}}}}}"#,
            Base64Data(bytes.into()).encode()
        );
        WireEntry::frame(seq, Direction::Out, ts, payload.into_bytes(), None, false)
    }

    fn audio_out(seq: u64, ts: u64, samples: &[i16]) -> WireEntry {
        let bytes: Vec<u8> = samples.iter().flat_map(|s| s.to_le_bytes()).collect();
        let payload = format!(
            r#"{{"serverContent":{{"modelTurn":{{"parts":[{{"inlineData":{{"mimeType":"audio/pcm;rate=24000","data":"{}"}}}}]}}}}}}"#,
            Base64Data(bytes.into()).encode()
        );
        WireEntry::frame(seq, Direction::In, ts, payload.into_bytes(), None, false)
    }

    fn frames(wav: &[u8]) -> Vec<(i16, i16)> {
        wav[44..]
            .chunks_exact(4)
            .map(|f| {
                (
                    i16::from_le_bytes([f[0], f[1]]),
                    i16::from_le_bytes([f[2], f[3]]),
                )
            })
            .collect()
    }

    #[test]
    fn resampling_16k_to_24k_interpolates_three_for_two() {
        assert_eq!(
            resample(&[0, 300, 600, 900], 16_000, 24_000),
            [0, 200, 400, 600, 800, 900]
        );
        assert_eq!(resample(&[5, 6], 24_000, 24_000), [5, 6]);
    }

    #[test]
    fn each_side_is_placed_at_its_time_and_the_models_burst_plays_in_sequence() {
        let mut wav = Cursor::new(Vec::new());
        let mut exporter = WavExporter::new(&mut wav).unwrap();
        // The user: 2 samples at 16 kHz at t=0 (3 frames at 24 kHz).
        exporter.push(&audio_in(1, 1_000, &[0, 300])).unwrap();
        // The model: two chunks of 24 samples (1 ms each) sent together at t=2 ms.
        exporter.push(&audio_out(2, 1_002, &[7; 24])).unwrap();
        exporter.push(&audio_out(3, 1_002, &[9; 24])).unwrap();
        let summary = exporter.finish().unwrap();
        assert_eq!(
            summary,
            WavSummary {
                frames: 48 + 48,
                chunks_in: 1,
                chunks_out: 2
            }
        );
        let bytes = wav.into_inner();
        assert_eq!(&bytes[..4], b"RIFF");
        assert_eq!(
            u32::from_le_bytes(bytes[40..44].try_into().unwrap()),
            96 * 4
        );
        assert_eq!(
            u32::from_le_bytes(bytes[24..28].try_into().unwrap()),
            24_000
        );
        let frames = frames(&bytes);
        assert_eq!(&frames[..4], [(0, 0), (200, 0), (300, 0), (0, 0)]);
        // The model's first chunk at 2 ms = frame 48, the second right after it.
        assert_eq!(frames[47], (0, 0));
        assert_eq!(frames[48], (0, 7));
        assert_eq!(frames[71], (0, 7));
        assert_eq!(frames[72], (0, 9));
        assert_eq!(frames[95], (0, 9));
    }

    #[test]
    fn the_peak_meter_places_chunks_as_the_wav_does() {
        // The same call as above: the user's 2 samples at 0 ms, the model's two 1 ms chunks
        // sent together at 2 ms (played 2–3 ms and 3–4 ms); four 1 ms slices.
        let mut meter = PeakMeter::new(0, 4, 4);
        meter.push(&audio_in(1, 1_000, &[0, 300]));
        meter.push(&audio_out(2, 1_002, &[7; 24]));
        meter.push(&audio_out(3, 1_002, &[9; 24]));
        assert_eq!(
            meter.finish(),
            [[0, 300, 0, 0], [0, 0, 0, 0], [0, 0, 7, 7], [0, 0, 9, 9]]
        );
    }

    /// Takes at most `cap` bytes, then fails like a full disk: a renderer without bounds
    /// fails on it instead of filling the machine's disk.
    #[derive(Debug, Default)]
    struct SmallDisk {
        data: Vec<u8>,
        cap: usize,
        at: u64,
    }

    impl Write for SmallDisk {
        fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
            let at = usize::try_from(self.at).unwrap();
            if at + buf.len() > self.cap {
                return Err(io::Error::new(io::ErrorKind::StorageFull, "disk full"));
            }
            if self.data.len() < at + buf.len() {
                self.data.resize(at + buf.len(), 0);
            }
            self.data[at..at + buf.len()].copy_from_slice(buf);
            self.at += buf.len() as u64;
            Ok(buf.len())
        }

        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }

    impl Seek for SmallDisk {
        fn seek(&mut self, to: SeekFrom) -> io::Result<u64> {
            let SeekFrom::Start(at) = to else {
                unreachable!("the exporter seeks from the start only")
            };
            self.at = at;
            Ok(at)
        }
    }

    #[test]
    fn a_timestamp_jump_is_refused_before_any_silence_is_written() {
        for jump in [u64::MAX, 1_000 + MAX_GAP_MS + 1] {
            let mut disk = SmallDisk {
                cap: 1 << 20,
                ..SmallDisk::default()
            };
            let mut exporter = WavExporter::new(&mut disk).unwrap();
            exporter.push(&audio_in(1, 1_000, &[5; 16])).unwrap();
            let error = exporter.push(&audio_out(2, jump, &[7; 24])).unwrap_err();
            let gap_ms = jump - 1_000;
            assert!(
                matches!(
                    error,
                    WavError::Gap { seq: 2, gap_ms: g, max_gap_ms: MAX_GAP_MS } if g == gap_ms
                ),
                "{error:?}"
            );
            assert_eq!(
                error.to_string(),
                format!(
                    "entry seq 2: its ts_ms jumps {gap_ms} ms past the entries before it, over \
                     the 1800000 ms of silence a WAV renders; the log's timestamps are damaged"
                )
            );
            // The header only: the user's audio waits for the next entry's time.
            assert_eq!(disk.data.len(), 44);
        }
    }

    #[test]
    fn a_gap_within_the_limit_and_a_clock_going_back_render_as_recorded() {
        let mut wav = Cursor::new(Vec::new());
        let mut exporter = WavExporter::with_limits(
            &mut wav,
            WavLimits {
                max_gap_ms: 2,
                ..WavLimits::default()
            },
        )
        .unwrap();
        exporter.push(&audio_out(1, 1_000, &[1; 24])).unwrap();
        // Back in time, then 2 ms past the latest: within the limit.
        exporter.push(&audio_out(2, 999, &[2; 24])).unwrap();
        exporter.push(&audio_out(3, 1_002, &[3; 24])).unwrap();
        assert_eq!(exporter.finish().unwrap().frames, 72);
        let frames = frames(&wav.into_inner());
        assert_eq!(frames[0], (0, 1));
        assert_eq!(frames[24], (0, 2));
        assert_eq!(frames[48], (0, 3));
    }

    #[test]
    fn the_byte_limit_is_kept_while_rendering_not_only_at_the_end() {
        let mut disk = SmallDisk {
            cap: 1 << 20,
            ..SmallDisk::default()
        };
        let limits = WavLimits {
            max_data_bytes: 400,
            ..WavLimits::default()
        };
        let mut exporter = WavExporter::with_limits(&mut disk, limits).unwrap();
        // 100 frames fit exactly: 24 + 24 + 24 + 24 ms-chunks are 96 frames.
        for seq in 1..=4 {
            exporter.push(&audio_out(seq, 1_000, &[1; 24])).unwrap();
        }
        // Its audio would end at frame 120: refused before it is held or written.
        let error = exporter.push(&audio_out(5, 1_000, &[1; 24])).unwrap_err();
        assert!(
            matches!(
                error,
                WavError::TooLong {
                    bytes: 480,
                    limit: 400,
                    seq: 5
                }
            ),
            "{error:?}"
        );
        assert_eq!(
            error.to_string(),
            "the call's audio reaches 480 bytes at entry seq 5, over the limit of 400 bytes; \
             nothing past the limit was written"
        );
        // A time past the limit: refused before the silence up to it is written.
        let error = exporter.push(&audio_out(6, 1_005, &[])).unwrap_err();
        assert!(
            matches!(
                error,
                WavError::TooLong {
                    bytes: 480,
                    limit: 400,
                    seq: 6
                }
            ),
            "{error:?}"
        );
        assert_eq!(disk.data.len(), 44);
        // A low rate multiplies the samples: checked before resampling.
        let mut wav = Cursor::new(Vec::new());
        let mut exporter = WavExporter::with_limits(&mut wav, limits).unwrap();
        let bytes: Vec<u8> = [1i16; 1_000].iter().flat_map(|s| s.to_le_bytes()).collect();
        let payload = format!(
            r#"{{"realtimeInput":{{"audio":{{"mimeType":"audio/pcm;rate=1","data":"{}"}}}}}}"#,
            Base64Data(bytes.into()).encode()
        );
        let entry = WireEntry::frame(1, Direction::Out, 0, payload.into_bytes(), None, false);
        let error = exporter.push(&entry).unwrap_err();
        assert!(
            matches!(
                error,
                WavError::TooLong {
                    bytes: 96_000_000,
                    limit: 400,
                    seq: 1
                }
            ),
            "{error:?}"
        );
    }

    #[test]
    fn the_file_is_a_44_byte_pcm_header_then_the_frames() {
        let mut wav = Cursor::new(Vec::new());
        let mut exporter = WavExporter::new(&mut wav).unwrap();
        exporter.push(&audio_out(1, 1_000, &[0x0102, -2])).unwrap();
        assert_eq!(exporter.finish().unwrap().frames, 2);
        let mut expected = Vec::new();
        expected.extend_from_slice(b"RIFF");
        expected.extend_from_slice(&(36u32 + 8).to_le_bytes());
        expected.extend_from_slice(b"WAVEfmt ");
        expected.extend_from_slice(&16u32.to_le_bytes()); // the fmt chunk's size
        expected.extend_from_slice(&1u16.to_le_bytes()); // PCM
        expected.extend_from_slice(&2u16.to_le_bytes()); // stereo
        expected.extend_from_slice(&24_000u32.to_le_bytes());
        expected.extend_from_slice(&96_000u32.to_le_bytes()); // bytes per second
        expected.extend_from_slice(&4u16.to_le_bytes()); // bytes per frame
        expected.extend_from_slice(&16u16.to_le_bytes()); // bits per sample
        expected.extend_from_slice(b"data");
        expected.extend_from_slice(&8u32.to_le_bytes());
        // Frame 0: the user silent, the model 0x0102; frame 1: silent, -2.
        expected.extend_from_slice(&[0, 0, 0x02, 0x01, 0, 0, 0xFE, 0xFF]);
        assert_eq!(wav.into_inner(), expected);
    }

    #[test]
    fn a_burst_far_ahead_of_real_time_plays_in_sequence() {
        // 2,000 model chunks of 10 ms sent 1 ms apart: each plays after the one before.
        let mut wav = Cursor::new(Vec::new());
        let mut exporter = WavExporter::new(&mut wav).unwrap();
        for n in 0..2_000u64 {
            let value = i16::try_from(n % 1_000).unwrap();
            exporter
                .push(&audio_out(n + 1, 1_000 + n, &[value; 240]))
                .unwrap();
        }
        let summary = exporter.finish().unwrap();
        assert_eq!(summary.frames, 2_000 * 240);
        let frames = frames(&wav.into_inner());
        for n in 0..2_000usize {
            let value = i16::try_from(n % 1_000).unwrap();
            assert_eq!(frames[n * 240], (0, value), "chunk {n}");
            assert_eq!(frames[n * 240 + 239], (0, value), "chunk {n}");
        }
    }

    #[test]
    fn the_peak_meter_takes_any_time_without_overflowing() {
        let mut meter = PeakMeter::new(u64::MAX, u64::MAX, 4);
        meter.push(&audio_out(1, 0, &[7; 24]));
        meter.push(&audio_out(2, u64::MAX, &[7; 24]));
        assert_eq!(meter.finish().len(), 4);
    }

    #[test]
    fn frames_other_than_audio_place_nothing() {
        let mut wav = Cursor::new(Vec::new());
        let mut exporter = WavExporter::new(&mut wav).unwrap();
        exporter
            .push(&WireEntry::frame(
                1,
                Direction::Out,
                0,
                &br#"{"setup":{}}"#[..],
                None,
                false,
            ))
            .unwrap();
        exporter
            .push(&WireEntry::frame(
                2,
                Direction::In,
                0,
                &b"not json"[..],
                None,
                false,
            ))
            .unwrap();
        assert_eq!(exporter.finish().unwrap().frames, 0);
        assert_eq!(wav.into_inner().len(), 44);
    }
}
