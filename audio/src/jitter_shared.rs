//! [`SharedJitterBuffer`]: one [`JitterBuffer`] shared by the fast lane, which pushes the
//! model's audio and clears it on a barge-in, and the application's player, which pulls.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use bytes::Bytes;

use super::jitter::{JitterBuffer, JitterStats, Pulled};
use super::jitter_config::{JitterConfig, JitterConfigError};

/// A [`JitterBuffer`] behind a lock. Cheap to clone; every clone is the same buffer. The
/// lock is held only for a push, a pull or a copy of the figures: no I/O, no waiting.
///
/// ```
/// use bytes::Bytes;
/// use reel_audio::{JitterConfig, Pulled, SharedJitterBuffer, SilenceReason};
///
/// let buffer = SharedJitterBuffer::new(JitterConfig::default()).unwrap();
/// // 100 ms of model audio (24 kHz, 16-bit) arrives at session time 5 000 ms.
/// buffer.push(Bytes::from(vec![1u8; 4_800]), 5_000);
/// assert!(matches!(buffer.pull(), Pulled::Audio(frame) if frame.len() == 960));
/// assert_eq!(buffer.interrupt().as_millis(), 80); // the user barged in
/// assert_eq!(buffer.pull(), Pulled::Silence(SilenceReason::Idle));
/// ```
#[derive(Debug, Clone)]
pub struct SharedJitterBuffer {
    inner: Arc<Mutex<JitterBuffer>>,
    config: JitterConfig,
}

/// The buffer, even if a thread panicked holding it: every operation leaves it whole (a
/// push, a pull, a clear), so a poisoned lock is no reason to stop playback.
fn lock(mutex: &Mutex<JitterBuffer>) -> std::sync::MutexGuard<'_, JitterBuffer> {
    mutex
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

impl SharedJitterBuffer {
    /// An empty buffer; the config is checked first.
    pub fn new(config: JitterConfig) -> Result<SharedJitterBuffer, JitterConfigError> {
        Ok(SharedJitterBuffer {
            inner: Arc::new(Mutex::new(JitterBuffer::new(config)?)),
            config,
        })
    }

    /// The settings.
    pub fn config(&self) -> &JitterConfig {
        &self.config
    }

    /// Adds a chunk that arrived at `arrival_ms` (session time); see [`JitterBuffer::push`].
    pub fn push(&self, chunk: Bytes, arrival_ms: u64) {
        lock(&self.inner).push(chunk, arrival_ms);
    }

    /// The player's next frame; see [`JitterBuffer::pull`].
    pub fn pull(&self) -> Pulled {
        lock(&self.inner).pull()
    }

    /// The model's stream is complete; see [`JitterBuffer::finish`].
    pub fn finish(&self) {
        lock(&self.inner).finish();
    }

    /// Drops everything waiting (a barge-in); returns how much audio was dropped.
    pub fn interrupt(&self) -> Duration {
        lock(&self.inner).interrupt()
    }

    /// The figures now.
    pub fn stats(&self) -> JitterStats {
        lock(&self.inner).stats()
    }
}
