//! [`Bell`]: wakes the one task that waits on it — a consumer instance's task, the live
//! transport's writer — with a permit flag and an [`AtomicWaker`], no lock.
//!
//! A `tokio::sync::Notify` serves any number of waiters, so each wait registers in a list
//! under a mutex and each wake takes that mutex again; with thousands of sessions those
//! locks (and the list's bookkeeping when a `Notified` is polled and dropped) were about 5 %
//! of a voice session's ticks (`docs/bench-log/fleet.md`, "A bell for one waiter"). A bell
//! has one waiter by construction, so a ring is a swap and, when it set the permit, a wake.

use std::future::poll_fn;
use std::sync::atomic::{AtomicBool, Ordering};
use std::task::Poll;

use futures_util::task::AtomicWaker;

/// Wakes the one task that waits on it (see the [module docs](self)). A ring while nobody
/// waits is kept: the next [`Bell::wait`] returns at once, as `Notify`'s permit does.
#[derive(Default)]
pub(crate) struct Bell {
    /// Rung since the last wait took it.
    permit: AtomicBool,
    /// The waiting task, if it is parked.
    waker: AtomicWaker,
}

impl std::fmt::Debug for Bell {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Bell")
            .field("permit", &self.permit.load(Ordering::Relaxed))
            .finish_non_exhaustive()
    }
}

impl Bell {
    /// Rings it: the waiting task wakes, or the next wait returns at once. A ring while the
    /// permit is already set wakes nobody: whoever set it woke the task after setting it.
    pub(crate) fn ring(&self) {
        if !self.permit.swap(true, Ordering::AcqRel) {
            self.waker.wake();
        }
    }

    /// Waits for a ring since the last wait returned. Only one task may wait on a bell at a
    /// time (its owner's); a second waiter would take the first one's place.
    pub(crate) async fn wait(&self) {
        poll_fn(|cx| {
            if self.permit.swap(false, Ordering::AcqRel) {
                return Poll::Ready(());
            }
            self.waker.register(cx.waker());
            // A ring between the first look and the registration woke nobody (or the
            // waker it found before this one): look again now that this one is in place.
            if self.permit.swap(false, Ordering::AcqRel) {
                Poll::Ready(())
            } else {
                Poll::Pending
            }
        })
        .await;
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;
    use std::time::Duration;

    use super::*;

    #[tokio::test(start_paused = true)]
    async fn a_ring_before_the_wait_is_kept_once() {
        let bell = Bell::default();
        bell.ring();
        bell.ring();
        bell.wait().await;
        let again = tokio::time::timeout(Duration::from_millis(1), bell.wait()).await;
        assert!(again.is_err(), "two rings before a wait make one permit");
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn every_ring_from_another_thread_wakes_the_waiter() {
        let bell = Arc::new(Bell::default());
        let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
        let waiter = {
            let bell = Arc::clone(&bell);
            tokio::spawn(async move {
                for n in 0..10_000u32 {
                    bell.wait().await;
                    if tx.send(n).is_err() {
                        return;
                    }
                }
            })
        };
        // Each ring waits for the waiter's answer: a lost wake-up would hang here, and the
        // test's harness would end it.
        for n in 0..10_000u32 {
            bell.ring();
            assert_eq!(rx.recv().await, Some(n));
        }
        waiter.await.unwrap();
    }
}
