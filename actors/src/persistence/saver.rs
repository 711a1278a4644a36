//! [`SnapshotSaver`]: saves a session's snapshots in order, off the control lane.

use std::sync::Arc;
use std::time::Duration;

use tokio::sync::{mpsc, oneshot};

use super::claim::SessionClaim;
use super::snapshot::SessionSnapshot;

/// What the writer task is asked to do.
enum Job {
    Save(SessionSnapshot),
    /// Answer once every snapshot handed over before this is written.
    Flush(oneshot::Sender<()>),
    /// Write what waits, give the claim up, answer, and take no more jobs: the session has
    /// ended.
    Finish(oneshot::Sender<()>),
}

/// The control lane's end of a session's writer task. Cheap to clone (each lane instance
/// gets one); the task ends when the session ends ([`SnapshotSaver::finish`], which gives
/// the claim up before the end is announced), or when the last clone is dropped, after the
/// jobs it was given.
#[derive(Clone)]
pub(crate) struct SnapshotSaver {
    session_id: Arc<str>,
    jobs: mpsc::UnboundedSender<Job>,
}

impl std::fmt::Debug for SnapshotSaver {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SnapshotSaver")
            .field("session_id", &self.session_id)
            .finish_non_exhaustive()
    }
}

impl SnapshotSaver {
    /// Starts the writer task of session `session_id`, saving through `claim` (released
    /// once the last snapshot is written).
    pub(crate) fn start(claim: Box<dyn SessionClaim>, session_id: String) -> Self {
        let session_id: Arc<str> = Arc::from(session_id);
        let (jobs, receiver) = mpsc::unbounded_channel();
        tokio::spawn(write_loop(claim, Arc::clone(&session_id), receiver));
        SnapshotSaver { session_id, jobs }
    }

    /// Hands `snapshot` to the writer task and returns at once.
    pub(crate) fn save(&self, snapshot: SessionSnapshot) {
        if self.jobs.send(Job::Save(snapshot)).is_err() {
            tracing::warn!(session_id = %self.session_id, "the snapshot writer has stopped; a snapshot was not saved");
        }
    }

    /// Hands `snapshot` to the writer task and waits (at most `timeout`) until it and
    /// every earlier snapshot are written. Returns whether they were.
    pub(crate) async fn save_and_wait(&self, snapshot: SessionSnapshot, timeout: Duration) -> bool {
        self.save(snapshot);
        let (done, written) = oneshot::channel();
        if self.jobs.send(Job::Flush(done)).is_err() {
            return false;
        }
        match tokio::time::timeout(timeout, written).await {
            Ok(Ok(())) => true,
            Ok(Err(_)) => false,
            Err(_) => {
                tracing::warn!(session_id = %self.session_id, ?timeout, "the final snapshot was not written in time");
                false
            }
        }
    }

    /// The session has ended: writes what waits, gives the claim up and stops the writer
    /// task, waiting (at most `timeout`) until the claim is released — so that when the
    /// end is announced, the id is free for the next session. Snapshots handed over after
    /// this are not saved (logged). Returns whether the claim was released in time.
    pub(crate) async fn finish(&self, timeout: Duration) -> bool {
        let (done, released) = oneshot::channel();
        if self.jobs.send(Job::Finish(done)).is_err() {
            return true; // the writer task already ended and gave the claim up
        }
        match tokio::time::timeout(timeout, released).await {
            Ok(_) => true,
            Err(_) => {
                tracing::warn!(session_id = %self.session_id, ?timeout, "the session's claim was not released in time");
                false
            }
        }
    }
}

/// Saves snapshots in the order they come. When several wait, only the latest is saved:
/// each snapshot holds the whole state, so the earlier ones would be overwritten at once.
/// Gives the claim up when the session's savers are all gone.
async fn write_loop(
    claim: Box<dyn SessionClaim>,
    session_id: Arc<str>,
    mut jobs: mpsc::UnboundedReceiver<Job>,
) {
    let mut finished = None;
    while let Some(first) = jobs.recv().await {
        let mut latest = None;
        let mut waiting = Vec::new();
        let mut next = Some(first);
        while let Some(job) = next {
            match job {
                Job::Save(snapshot) => latest = Some(snapshot),
                Job::Flush(done) => waiting.push(done),
                Job::Finish(done) => {
                    finished = Some(done);
                    break;
                }
            }
            next = jobs.try_recv().ok();
        }
        if let Some(snapshot) = latest
            && let Err(error) = claim.save(&snapshot).await
        {
            tracing::warn!(session_id = %session_id, %error, "could not save the session snapshot");
        }
        for done in waiting {
            let _ = done.send(());
        }
        if finished.is_some() {
            break;
        }
    }
    // No job is taken from now on: a save handed over after the end finds the task gone.
    drop(jobs);
    claim.release().await;
    if let Some(done) = finished {
        let _ = done.send(());
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;
    use std::sync::Mutex;

    use futures_util::future::BoxFuture;

    use super::*;
    use crate::persistence::{PersistenceError, SessionPersistence};

    /// Records the turn counts it saved; each save takes 10 ms.
    #[derive(Default)]
    struct Slow {
        saved: Mutex<Vec<u32>>,
    }

    impl SessionPersistence for Slow {
        fn save<'a>(
            &'a self,
            _id: &'a str,
            snapshot: &'a SessionSnapshot,
        ) -> BoxFuture<'a, Result<(), PersistenceError>> {
            Box::pin(async move {
                tokio::time::sleep(Duration::from_millis(10)).await;
                self.saved.lock().unwrap().push(snapshot.turn_count);
                Ok(())
            })
        }
        fn load<'a>(
            &'a self,
            _id: &'a str,
        ) -> BoxFuture<'a, Result<Option<SessionSnapshot>, PersistenceError>> {
            Box::pin(async { Ok(None) })
        }
        fn delete<'a>(&'a self, _id: &'a str) -> BoxFuture<'a, Result<(), PersistenceError>> {
            Box::pin(async { Ok(()) })
        }
    }

    fn snapshot(turn_count: u32) -> SessionSnapshot {
        SessionSnapshot {
            state: BTreeMap::new(),
            phase: String::new(),
            turn_count,
            transcript_summary: String::new(),
            resume_handle: None,
            saved_at: String::new(),
        }
    }

    #[tokio::test(start_paused = true)]
    async fn saves_in_order_and_skips_snapshots_already_superseded() {
        let backend = Arc::new(Slow::default());
        let claim = (Arc::clone(&backend) as Arc<dyn SessionPersistence>)
            .claim("s".into())
            .await
            .unwrap();
        let saver = SnapshotSaver::start(claim, "s".into());
        saver.save(snapshot(1));
        tokio::task::yield_now().await; // the task takes snapshot 1 and starts saving it
        saver.save(snapshot(2));
        saver.save(snapshot(3));
        assert!(
            saver
                .save_and_wait(snapshot(4), Duration::from_secs(1))
                .await
        );
        // 2 and 3 waited behind 1 with 4: only the latest of them is written.
        assert_eq!(*backend.saved.lock().unwrap(), [1, 4]);
    }

    /// Counts releases of its claims.
    #[derive(Default)]
    struct Owned {
        released: std::sync::atomic::AtomicU32,
    }

    impl SessionClaim for Arc<Owned> {
        fn save<'a>(
            &'a self,
            _snapshot: &'a SessionSnapshot,
        ) -> BoxFuture<'a, Result<(), PersistenceError>> {
            Box::pin(async { Ok(()) })
        }
        fn generation(&self) -> u64 {
            1
        }
        fn release(self: Box<Self>) -> BoxFuture<'static, ()> {
            self.released
                .fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            Box::pin(async {})
        }
    }

    #[tokio::test(start_paused = true)]
    async fn finish_releases_the_claim_before_it_returns_while_clones_live_on() {
        let owned = Arc::new(Owned::default());
        let saver = SnapshotSaver::start(Box::new(Arc::clone(&owned)), "s".into());
        let lane_clone = saver.clone();
        assert!(saver.finish(Duration::from_secs(1)).await);
        assert_eq!(owned.released.load(std::sync::atomic::Ordering::SeqCst), 1);
        // Later saves find the writer gone; a second finish has nothing to do.
        lane_clone.save(snapshot(9));
        assert!(lane_clone.finish(Duration::from_secs(1)).await);
        assert_eq!(owned.released.load(std::sync::atomic::Ordering::SeqCst), 1);
    }
}
