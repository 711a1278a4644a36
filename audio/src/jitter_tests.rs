//! The jitter buffer on scripted arrivals (exact depths, targets and counts), and a seeded
//! property test against a reference model of its playout rules.

use std::time::Duration;

use bytes::Bytes;

use super::{JitterBuffer, JitterConfig, Pulled, SilenceReason};

/// `ms` of 24 kHz audio whose every sample is `tag` (so a test can tell chunks apart).
fn chunk(ms: u32, tag: u16) -> Bytes {
    let samples = (ms * 24) as usize;
    Bytes::from(tag.to_le_bytes().repeat(samples))
}

fn tags(pcm: &[u8]) -> Vec<u16> {
    let mut tags: Vec<u16> = pcm
        .chunks_exact(2)
        .map(|s| u16::from_le_bytes([s[0], s[1]]))
        .collect();
    tags.dedup();
    tags
}

fn audio(pulled: Pulled) -> Bytes {
    match pulled {
        Pulled::Audio(pcm) => pcm,
        other => panic!("expected audio, got {other:?}"),
    }
}

#[test]
fn a_stream_prebuffers_to_the_target_and_a_dry_pull_is_one_underrun() {
    let mut buffer = JitterBuffer::new(JitterConfig::default()).unwrap();
    assert_eq!(buffer.pull(), Pulled::Silence(SilenceReason::Idle));
    buffer.push(chunk(40, 1), 0);
    assert_eq!(buffer.pull(), Pulled::Silence(SilenceReason::Buffering));
    buffer.push(chunk(40, 1), 40);
    let stats = buffer.stats();
    assert_eq!(
        (stats.depth_ms, stats.target_ms, stats.jitter_ms),
        (80, 80, 56)
    );
    for _ in 0..4 {
        assert_eq!(audio(buffer.pull()).len(), 960);
    }
    assert_eq!(buffer.pull(), Pulled::Silence(SilenceReason::Underrun));
    // Re-buffering is not another underrun.
    assert_eq!(buffer.pull(), Pulled::Silence(SilenceReason::Buffering));
    assert_eq!(buffer.stats().underruns, 1);

    // The next chunk is 120 ms later than the stream's media time: the target follows.
    buffer.push(chunk(100, 2), 200);
    assert_eq!(buffer.stats().target_ms, 140);
    assert_eq!(buffer.pull(), Pulled::Silence(SilenceReason::Buffering));
    // The stream's end: what waits plays although it is below the target, and running dry
    // afterwards is not an underrun.
    buffer.finish();
    for _ in 0..5 {
        assert_eq!(tags(&audio(buffer.pull())), [2]);
    }
    assert_eq!(buffer.pull(), Pulled::Silence(SilenceReason::Idle));
    let stats = buffer.stats();
    assert_eq!(
        (stats.underruns, stats.frames_played, stats.playing),
        (1, 9, false)
    );
}

#[test]
fn the_last_partial_frame_of_a_stream_is_padded_with_silence() {
    let mut buffer = JitterBuffer::new(JitterConfig::default()).unwrap();
    buffer.push(chunk(30, 7), 0);
    buffer.finish();
    assert_eq!(tags(&audio(buffer.pull())), [7]);
    let last = audio(buffer.pull());
    assert_eq!(last.len(), 960);
    assert_eq!(tags(&last), [7, 0]);
    assert_eq!(&last[480..], &[0u8; 480][..]);
    assert_eq!(buffer.pull(), Pulled::Silence(SilenceReason::Idle));
    assert_eq!(buffer.stats().underruns, 0);
}

#[test]
fn the_target_jumps_to_a_late_arrival_and_decays_while_arrivals_are_on_time() {
    let mut buffer = JitterBuffer::new(JitterConfig::default()).unwrap();
    // 20 ms chunks on schedule, then a 90 ms stall and a burst that catches up, then on
    // schedule again.
    let arrivals: Vec<u64> = (0..10)
        .map(|k| 20 * k)
        .chain([290, 291, 292, 293, 294])
        .chain((15..40).map(|k| 20 * k))
        .collect();
    let mut targets = Vec::new();
    for (k, at) in arrivals.iter().enumerate() {
        buffer.push(chunk(20, k as u16), *at);
        targets.push(buffer.stats().target_ms);
        // The player keeps up, so the buffer stays shallow.
        let _ = buffer.pull();
    }
    let expected: Vec<u64> = [
        80, 80, 80, 80, 80, 80, 80, 60, 60, 60, // on time: decays from the initial 80
        120, 120, 120, 120, 100, // 90 ms late, then a burst 71, 52, 33, 14 ms late
        100, 100, 100, 100, 80, 80, 80, 80, 80, 80, 60, 60, 60, 60, 60, 60, 60, 60, 60, 60, 60, 40,
        40, 40, 40,
    ]
    .to_vec();
    assert_eq!(targets, expected);
    assert_eq!(buffer.stats().jitter_ms, 15);

    // A lateness past the largest target is clamped to it.
    buffer.push(chunk(20, 99), 5_000);
    assert_eq!(buffer.stats().target_ms, 400);
    assert_eq!(buffer.stats().jitter_ms, 4_200);
}

#[test]
fn audio_sent_faster_than_real_time_needs_only_the_smallest_target() {
    let mut buffer = JitterBuffer::new(JitterConfig::default()).unwrap();
    for k in 0..50 {
        buffer.push(chunk(40, 1), k);
    }
    let stats = buffer.stats();
    assert_eq!(
        (stats.target_ms, stats.jitter_ms, stats.depth_ms),
        (40, 2, 2_000)
    );
}

#[test]
fn a_full_buffer_drops_the_oldest_audio_and_counts_it() {
    let config = JitterConfig {
        capacity_ms: 400,
        ..JitterConfig::default()
    };
    let mut buffer = JitterBuffer::new(config).unwrap();
    for tag in 1..=10 {
        buffer.push(chunk(50, tag), 0);
    }
    assert_eq!(buffer.depth_bytes(), 400 * 48);
    let stats = buffer.stats();
    assert_eq!((stats.depth_ms, stats.overflow_dropped_ms), (400, 100));
    assert_eq!(tags(&audio(buffer.pull())), [3]);
    // A drop inside a chunk keeps the rest of it.
    buffer.push(chunk(40, 11), 1);
    assert_eq!(buffer.stats().overflow_dropped_ms, 120);
    assert_eq!(tags(&audio(buffer.pull())), [3, 4]);
}

#[test]
fn an_interruption_drops_what_waits_and_the_next_stream_starts_afresh() {
    let mut buffer = JitterBuffer::new(JitterConfig::default()).unwrap();
    buffer.push(chunk(200, 1), 0);
    assert_eq!(tags(&audio(buffer.pull())), [1]);
    assert_eq!(tags(&audio(buffer.pull())), [1]);
    assert_eq!(buffer.interrupt(), Duration::from_millis(160));
    let stats = buffer.stats();
    assert_eq!(
        (stats.depth_ms, stats.interrupted_dropped_ms, stats.playing),
        (0, 160, false)
    );
    assert_eq!(buffer.pull(), Pulled::Silence(SilenceReason::Idle));
    buffer.push(chunk(100, 2), 500);
    assert_eq!(tags(&audio(buffer.pull())), [2]);
    assert_eq!(buffer.stats().underruns, 0);
    // Interrupting an idle buffer drops nothing.
    let mut idle = JitterBuffer::new(JitterConfig::default()).unwrap();
    assert_eq!(idle.interrupt(), Duration::ZERO);
}

/// splitmix64: a small deterministic generator, so a failing seed can be run again.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in `0..n`.
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

/// The playout rules restated over byte counts alone: when a pull plays, waits or is an
/// underrun, given the target the buffer reports. Adaptation is checked on its own above.
#[derive(Debug, Default)]
struct Model {
    bytes: usize,
    mode: u8, // 0 idle, 1 buffering, 2 playing
    finished: bool,
    underruns: u64,
    overflow: usize,
    interrupted: usize,
}

impl Model {
    fn push(&mut self, len: usize, capacity: usize) {
        if self.finished {
            self.finished = false;
        }
        if self.mode == 0 {
            self.mode = 1;
        }
        self.bytes += len;
        if self.bytes > capacity {
            self.overflow += self.bytes - capacity;
            self.bytes = capacity;
        }
    }

    /// `Some(bytes of audio)` or `None` with the silence reason.
    fn pull(&mut self, frame: usize, target: usize) -> Result<usize, SilenceReason> {
        if self.mode == 1 {
            if self.bytes >= target || (self.finished && self.bytes > 0) {
                self.mode = 2;
            } else if self.finished {
                (self.mode, self.finished) = (0, false);
                return Err(SilenceReason::Idle);
            } else {
                return Err(SilenceReason::Buffering);
            }
        }
        match self.mode {
            0 => Err(SilenceReason::Idle),
            _ if self.bytes >= frame => {
                self.bytes -= frame;
                Ok(frame)
            }
            _ if self.finished => {
                let left = self.bytes;
                (self.bytes, self.mode, self.finished) = (0, 0, false);
                if left == 0 {
                    Err(SilenceReason::Idle)
                } else {
                    Ok(left)
                }
            }
            _ => {
                self.underruns += 1;
                self.mode = 1;
                Err(SilenceReason::Underrun)
            }
        }
    }

    fn finish(&mut self) {
        if self.mode != 0 {
            self.finished = true;
        }
    }

    fn interrupt(&mut self) {
        self.interrupted += self.bytes;
        (self.bytes, self.mode, self.finished) = (0, 0, false);
    }
}

fn random_config(rng: &mut Rng) -> JitterConfig {
    let frame_ms = [10, 20, 40][rng.below(3) as usize];
    let min_target_ms = frame_ms * (1 + rng.below(4) as u32);
    let max_target_ms = min_target_ms + frame_ms * rng.below(12) as u32;
    let initial_target_ms = min_target_ms + (max_target_ms - min_target_ms) / 2;
    let capacity_ms = max_target_ms + rng.below(600) as u32;
    JitterConfig {
        frame_ms,
        min_target_ms,
        max_target_ms,
        initial_target_ms,
        capacity_ms,
        ..JitterConfig::default()
    }
}

/// Thousands of seeds of jittery arrivals, pulls, stream ends and interruptions: the depth
/// never exceeds the capacity, nothing received before an interruption is ever played,
/// audio plays in arrival order, and every pull and every count is what the model says.
#[test]
fn seeded_arrivals_keep_the_buffer_bounded_fresh_and_counted_as_the_model_says() {
    for seed in 0..3_000u64 {
        let mut rng = Rng(seed);
        let config = random_config(&mut rng);
        let mut buffer = JitterBuffer::new(config).unwrap();
        let mut model = Model::default();
        let capacity = config.bytes_of_ms(config.capacity_ms);
        let frame = config.frame_bytes();
        let (mut now, mut next_tag, mut oldest_allowed, mut last_played) = (0u64, 1u16, 1u16, 0u16);
        for step in 0..400 {
            match rng.below(100) {
                0..45 => {
                    let ms = 1 + rng.below(80) as u32;
                    now += rng.below(60);
                    buffer.push(chunk(ms, next_tag), now);
                    model.push(config.bytes_of_ms(ms), capacity);
                    next_tag += 1;
                }
                45..90 => {
                    let target = config.bytes_of_ms(buffer.stats().target_ms as u32);
                    let expected = model.pull(frame, target);
                    let pulled = buffer.pull();
                    let context = format!("seed {seed} step {step} {config:?}");
                    match (&pulled, expected) {
                        (Pulled::Audio(pcm), Ok(real)) => {
                            assert_eq!(pcm.len(), frame, "{context}");
                            let played = tags(&pcm[..real]);
                            assert!(!played.contains(&0), "{context}");
                            // Never audio from before the latest interruption, and in order.
                            assert!(played[0] >= oldest_allowed, "{context}: {played:?}");
                            assert!(played[0] >= last_played, "{context}: {played:?}");
                            assert!(pcm[real..].iter().all(|b| *b == 0), "{context}");
                            last_played = *played.last().unwrap();
                        }
                        (Pulled::Silence(reason), Err(model_reason)) => {
                            assert_eq!(*reason, model_reason, "{context}")
                        }
                        (pulled, expected) => {
                            panic!("{context}: pulled {pulled:?}, the model says {expected:?}")
                        }
                    }
                }
                90..95 => {
                    buffer.finish();
                    model.finish();
                }
                _ => {
                    buffer.interrupt();
                    model.interrupt();
                    oldest_allowed = next_tag;
                }
            }
            assert!(buffer.depth_bytes() <= capacity, "seed {seed} step {step}");
            assert_eq!(buffer.depth_bytes(), model.bytes, "seed {seed} step {step}");
            let stats = buffer.stats();
            assert!(stats.depth_ms <= u64::from(config.capacity_ms));
            assert!(
                (u64::from(config.min_target_ms)..=u64::from(config.max_target_ms))
                    .contains(&stats.target_ms)
            );
            assert_eq!(stats.underruns, model.underruns, "seed {seed} step {step}");
        }
        let stats = buffer.stats();
        assert_eq!(
            stats.overflow_dropped_ms,
            config.ms_of_bytes(model.overflow)
        );
        assert_eq!(
            stats.interrupted_dropped_ms,
            config.ms_of_bytes(model.interrupted)
        );
    }
}
