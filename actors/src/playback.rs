//! [`PlaybackQueue`]: model audio waiting to be played.
//!
//! The fast lane pushes every audio chunk; the application's audio device pulls. When the
//! user barges in, the fast lane clears the queue: audio the model said before the
//! interruption is not played. The queue is bounded (oldest chunks go first when full), so
//! an application that never pulls does not grow without limit.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use bytes::Bytes;

use crate::events::lock;

/// A bounded queue of audio chunks, shared by the fast lane and the player.
#[derive(Debug, Clone)]
pub struct PlaybackQueue {
    inner: Arc<Inner>,
}

#[derive(Debug)]
struct Inner {
    chunks: Mutex<VecDeque<Bytes>>,
    capacity: usize,
    dropped_by_interruption: AtomicU64,
    dropped_by_overflow: AtomicU64,
}

impl PlaybackQueue {
    /// A queue holding at most `capacity` chunks.
    pub fn new(capacity: usize) -> Self {
        PlaybackQueue {
            inner: Arc::new(Inner {
                chunks: Mutex::new(VecDeque::new()),
                capacity: capacity.max(1),
                dropped_by_interruption: AtomicU64::new(0),
                dropped_by_overflow: AtomicU64::new(0),
            }),
        }
    }

    /// Adds a chunk at the end.
    pub fn push(&self, chunk: Bytes) {
        let mut chunks = lock(&self.inner.chunks);
        if chunks.len() == self.inner.capacity {
            chunks.pop_front();
            self.inner
                .dropped_by_overflow
                .fetch_add(1, Ordering::Relaxed);
        }
        chunks.push_back(chunk);
    }

    /// Takes the next chunk to play.
    pub fn pop(&self) -> Option<Bytes> {
        lock(&self.inner.chunks).pop_front()
    }

    /// Chunks waiting.
    pub fn len(&self) -> usize {
        lock(&self.inner.chunks).len()
    }

    /// Whether nothing is waiting.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Drops everything waiting (an interruption); returns how many chunks were dropped.
    pub fn interrupt(&self) -> usize {
        let mut chunks = lock(&self.inner.chunks);
        let dropped = chunks.len();
        chunks.clear();
        self.inner
            .dropped_by_interruption
            .fetch_add(dropped as u64, Ordering::Relaxed);
        dropped
    }

    /// Chunks dropped by interruptions so far.
    pub fn dropped_by_interruption(&self) -> u64 {
        self.inner.dropped_by_interruption.load(Ordering::Relaxed)
    }

    /// Chunks dropped because the queue was full.
    pub fn dropped_by_overflow(&self) -> u64 {
        self.inner.dropped_by_overflow.load(Ordering::Relaxed)
    }
}
