//! [`SqlitePersistence`]: session snapshots in one embedded SQLite file (feature `sqlite`).
//!
//! One table, `reel_sessions (session_id PRIMARY KEY, generation, snapshot, saved_at)`,
//! in write-ahead-log mode so that several processes on one machine read and write it at
//! once. A session's claim ([`SessionClaim`]) is an operating-system lock on
//! `<db>.locks/<session_id>.lock`, taken without waiting on its holder and held until the
//! session's last snapshot is written: the kernel drops it when the process ends, however
//! it ends, so a session killed mid-turn can be resumed at once by another process. A lock
//! found held is tried again for [`LOCK_PATIENCE`]: a process this one starts holds a copy
//! of the lock file's descriptor, and so the lock, from its fork until it runs its program,
//! so a lock released a moment ago (a session that just ended) can still read as held.
//! Each claim takes the id's next generation, and a save is written only while its
//! generation is the id's latest: a stale owner is refused, never merged.
//!
//! The file and the lock directory must be on a local disk: network file systems do not
//! all honour the locks (use [`PostgresPersistence`](super::PostgresPersistence) to share
//! sessions between machines).

use std::fs::{File, OpenOptions, TryLockError};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use futures_util::future::BoxFuture;
use rusqlite::{Connection, OptionalExtension, params};

use reel_actors::persistence::PersistenceError;
use reel_actors::persistence::SessionClaim;
use reel_actors::persistence::SessionPersistence;
use reel_actors::persistence::SessionSnapshot;
use reel_actors::persistence::check_session_id;

/// How long a statement waits for another process's write to finish.
const BUSY_TIMEOUT: Duration = Duration::from_secs(5);

/// Session snapshots in an SQLite file (the module's docs say more).
///
/// ```
/// # fn main() -> Result<(), reel_persistence::PersistenceError> {
/// use reel_persistence::SqlitePersistence;
///
/// let dir = std::env::temp_dir().join(format!("reel-doc-sqlite-{}", std::process::id()));
/// let sessions = SqlitePersistence::open(dir.join("sessions.sqlite3"))?;
/// assert_eq!(sessions.path(), dir.join("sessions.sqlite3"));
/// # Ok(())
/// # }
/// ```
#[derive(Debug, Clone)]
pub struct SqlitePersistence {
    inner: Arc<Inner>,
}

#[derive(Debug)]
struct Inner {
    path: PathBuf,
    locks: PathBuf,
    connection: Mutex<Connection>,
}

impl SqlitePersistence {
    /// Opens (or creates, with its directory) the database at `path`.
    pub fn open(path: impl Into<PathBuf>) -> Result<SqlitePersistence, PersistenceError> {
        let path = path.into();
        if let Some(dir) = path.parent().filter(|dir| !dir.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir).map_err(|source| PersistenceError::Io {
                action: "create the directory",
                path: dir.to_path_buf(),
                source,
            })?;
        }
        let failed = |source: rusqlite::Error| backend_error(&path, "", source);
        let connection = Connection::open(&path).map_err(failed)?;
        connection.busy_timeout(BUSY_TIMEOUT).map_err(failed)?;
        connection
            .execute_batch(
                "PRAGMA journal_mode = WAL;
                 PRAGMA synchronous = FULL;
                 CREATE TABLE IF NOT EXISTS reel_sessions (
                     session_id TEXT PRIMARY KEY,
                     generation INTEGER NOT NULL,
                     snapshot TEXT,
                     saved_at TEXT
                 );",
            )
            .map_err(failed)?;
        let mut locks = path.clone().into_os_string();
        locks.push(".locks");
        Ok(SqlitePersistence {
            inner: Arc::new(Inner {
                path,
                locks: PathBuf::from(locks),
                connection: Mutex::new(connection),
            }),
        })
    }

    /// The database file.
    pub fn path(&self) -> &Path {
        &self.inner.path
    }

    /// Runs `work` on the connection, off the async runtime.
    async fn with_connection<T: Send + 'static>(
        &self,
        session_id: &str,
        work: impl FnOnce(&Connection) -> rusqlite::Result<T> + Send + 'static,
    ) -> Result<T, PersistenceError> {
        let inner = Arc::clone(&self.inner);
        let id = session_id.to_owned();
        tokio::task::spawn_blocking(move || {
            let connection = inner
                .connection
                .lock()
                .unwrap_or_else(PoisonError::into_inner);
            work(&connection).map_err(|source| backend_error(&inner.path, &id, source))
        })
        .await
        .unwrap_or_else(|join| Err(task_failed(&self.inner.path, session_id, join)))
    }
}

impl SessionPersistence for SqlitePersistence {
    fn save<'a>(
        &'a self,
        session_id: &'a str,
        snapshot: &'a SessionSnapshot,
    ) -> BoxFuture<'a, Result<(), PersistenceError>> {
        Box::pin(async move {
            check_session_id(session_id)?;
            let json = snapshot.to_stored(session_id)?;
            let (id, saved_at) = (session_id.to_owned(), snapshot.saved_at.clone());
            self.with_connection(session_id, move |db| {
                db.execute(
                    "INSERT INTO reel_sessions (session_id, generation, snapshot, saved_at)
                     VALUES (?1, 0, ?2, ?3)
                     ON CONFLICT (session_id) DO UPDATE
                     SET snapshot = excluded.snapshot, saved_at = excluded.saved_at",
                    params![id, json, saved_at],
                )
                .map(drop)
            })
            .await
        })
    }

    fn load<'a>(
        &'a self,
        session_id: &'a str,
    ) -> BoxFuture<'a, Result<Option<SessionSnapshot>, PersistenceError>> {
        Box::pin(async move {
            check_session_id(session_id)?;
            let id = session_id.to_owned();
            let stored: Option<Option<String>> = self
                .with_connection(session_id, move |db| {
                    db.query_row(
                        "SELECT snapshot FROM reel_sessions WHERE session_id = ?1",
                        params![id],
                        |row| row.get(0),
                    )
                    .optional()
                })
                .await?;
            let Some(json) = stored.flatten() else {
                return Ok(None);
            };
            SessionSnapshot::from_stored(
                &json,
                session_id,
                &format!("{} (table reel_sessions)", self.inner.path.display()),
            )
            .map(Some)
        })
    }

    fn delete<'a>(&'a self, session_id: &'a str) -> BoxFuture<'a, Result<(), PersistenceError>> {
        Box::pin(async move {
            check_session_id(session_id)?;
            let id = session_id.to_owned();
            self.with_connection(session_id, move |db| {
                db.execute(
                    "DELETE FROM reel_sessions WHERE session_id = ?1",
                    params![id],
                )
                .map(drop)
            })
            .await
        })
    }

    fn claim(
        self: Arc<Self>,
        session_id: String,
    ) -> BoxFuture<'static, Result<Box<dyn SessionClaim>, PersistenceError>> {
        Box::pin(async move {
            check_session_id(&session_id)?;
            // On the blocking pool: a lock found held is waited for a moment, in real time.
            let (locks, id) = (self.inner.locks.clone(), session_id.clone());
            let lock = tokio::task::spawn_blocking(move || take_lock(&locks, &id, LOCK_PATIENCE))
                .await
                .unwrap_or_else(|join| Err(task_failed(&self.inner.path, &session_id, join)))?;
            let id = session_id.clone();
            let generation: i64 = self
                .with_connection(&session_id, move |db| {
                    db.query_row(
                        "INSERT INTO reel_sessions (session_id, generation) VALUES (?1, 1)
                         ON CONFLICT (session_id) DO UPDATE SET generation = generation + 1
                         RETURNING generation",
                        params![id],
                        |row| row.get(0),
                    )
                })
                .await?;
            Ok(Box::new(SqliteClaim {
                backend: SqlitePersistence::clone(&self),
                session_id,
                generation: u64::try_from(generation).unwrap_or(0),
                _lock: lock,
            }) as Box<dyn SessionClaim>)
        })
    }
}

/// How long a claim tries again a lock it finds held before it reports the id claimed:
/// long enough for a process forked a moment before to run its program (and so close its
/// copy of the lock file), short beside a session's life.
pub const LOCK_PATIENCE: Duration = Duration::from_millis(200);

/// How often a lock found held is tried again.
const LOCK_RETRY: Duration = Duration::from_millis(5);

/// Takes `<locks>/<session_id>.lock`; a lock found held is tried again every
/// [`LOCK_RETRY`] until `patience` has passed (blocks the thread meanwhile).
fn take_lock(locks: &Path, session_id: &str, patience: Duration) -> Result<File, PersistenceError> {
    std::fs::create_dir_all(locks).map_err(|source| PersistenceError::Io {
        action: "create the directory",
        path: locks.to_path_buf(),
        source,
    })?;
    let path = locks.join(format!("{session_id}.lock"));
    let file = OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(&path)
        .map_err(|source| PersistenceError::Io {
            action: "open the lock file",
            path: path.clone(),
            source,
        })?;
    match lock_patiently(patience, || file.try_lock()) {
        Ok(()) => Ok(file),
        Err(TryLockError::WouldBlock) => Err(PersistenceError::Claimed {
            session_id: session_id.to_owned(),
            holder: format!("the lock file {} is held", path.display()),
        }),
        Err(TryLockError::Error(source)) => Err(PersistenceError::Io {
            action: "lock",
            path,
            source,
        }),
    }
}

/// Runs `try_lock` until it takes the lock, fails otherwise than by finding it held, or
/// has found it held for `patience` (then its last `WouldBlock`); tries again every
/// [`LOCK_RETRY`], and at least once.
fn lock_patiently(
    patience: Duration,
    mut try_lock: impl FnMut() -> Result<(), TryLockError>,
) -> Result<(), TryLockError> {
    let started = std::time::Instant::now();
    loop {
        match try_lock() {
            Err(TryLockError::WouldBlock) if started.elapsed() < patience => {
                std::thread::sleep(LOCK_RETRY);
            }
            outcome => return outcome,
        }
    }
}

/// A session's claim in an SQLite file: the lock file held open, and its generation.
struct SqliteClaim {
    backend: SqlitePersistence,
    session_id: String,
    generation: u64,
    /// Held for the claim's life; closing it drops the lock.
    _lock: File,
}

impl SessionClaim for SqliteClaim {
    fn save<'a>(
        &'a self,
        snapshot: &'a SessionSnapshot,
    ) -> BoxFuture<'a, Result<(), PersistenceError>> {
        Box::pin(async move {
            let json = snapshot.to_stored(&self.session_id)?;
            let (id, saved_at) = (self.session_id.clone(), snapshot.saved_at.clone());
            let generation = i64::try_from(self.generation).unwrap_or(i64::MAX);
            let current: Option<i64> = self
                .backend
                .with_connection(&self.session_id, move |db| {
                    let written = db.execute(
                        "UPDATE reel_sessions SET snapshot = ?2, saved_at = ?3
                         WHERE session_id = ?1 AND generation = ?4",
                        params![id, json, saved_at, generation],
                    )?;
                    if written == 1 {
                        return Ok(None);
                    }
                    db.query_row(
                        "SELECT generation FROM reel_sessions WHERE session_id = ?1",
                        params![id],
                        |row| row.get(0),
                    )
                    .optional()
                    .map(|current| Some(current.unwrap_or(0)))
                })
                .await?;
            match current {
                None => Ok(()),
                Some(current) => Err(PersistenceError::Fenced {
                    session_id: self.session_id.clone(),
                    generation: self.generation,
                    current: u64::try_from(current).unwrap_or(0),
                }),
            }
        })
    }

    fn generation(&self) -> u64 {
        self.generation
    }

    fn release(self: Box<Self>) -> BoxFuture<'static, ()> {
        // Dropping the file unlocks it.
        Box::pin(async move { drop(self) })
    }
}

fn backend_error(path: &Path, session_id: &str, source: rusqlite::Error) -> PersistenceError {
    PersistenceError::Backend {
        backend: format!("sqlite ({})", path.display()),
        session_id: session_id.to_owned(),
        source: Box::new(source),
    }
}

fn task_failed(path: &Path, session_id: &str, join: tokio::task::JoinError) -> PersistenceError {
    PersistenceError::Backend {
        backend: format!("sqlite ({})", path.display()),
        session_id: session_id.to_owned(),
        source: Box::new(join),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A lock directory of this test's own.
    fn locks(test: &str) -> PathBuf {
        let dir =
            std::env::temp_dir().join(format!("reel-sqlite-locks-{}-{test}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        dir
    }

    /// What a process forked while a claim was held does to it: a copy of the descriptor
    /// holds the lock after the claim's own is closed, until the copy closes too.
    #[test]
    fn a_copy_of_a_released_claims_descriptor_still_holds_its_lock() {
        let dir = locks("copy");
        let held = take_lock(&dir, "s-1", Duration::ZERO).unwrap();
        let copy = held.try_clone().unwrap();
        drop(held);
        assert!(matches!(
            take_lock(&dir, "s-1", Duration::ZERO),
            Err(PersistenceError::Claimed { .. })
        ));
        drop(copy);
        assert!(take_lock(&dir, "s-1", Duration::ZERO).is_ok());
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn a_lock_found_held_is_tried_again_until_it_is_free() {
        let mut tries = 0;
        let outcome = lock_patiently(Duration::from_secs(30), || {
            tries += 1;
            if tries < 3 {
                Err(TryLockError::WouldBlock)
            } else {
                Ok(())
            }
        });
        assert!(outcome.is_ok());
        assert_eq!(tries, 3);
    }

    #[test]
    fn a_lock_that_fails_otherwise_is_not_tried_again() {
        let mut tries = 0;
        let outcome = lock_patiently(Duration::from_secs(30), || {
            tries += 1;
            Err(TryLockError::Error(std::io::Error::other("no locks here")))
        });
        assert!(matches!(outcome, Err(TryLockError::Error(_))));
        assert_eq!(tries, 1);
    }

    #[test]
    fn a_lock_still_held_after_the_patience_is_another_owners() {
        let dir = locks("held");
        let _held = take_lock(&dir, "s-2", Duration::ZERO).unwrap();
        let copy = take_lock(&dir, "s-2", Duration::from_millis(20));
        match copy {
            Err(PersistenceError::Claimed { session_id, holder }) => {
                assert_eq!(session_id, "s-2");
                assert_eq!(
                    holder,
                    format!("the lock file {} is held", dir.join("s-2.lock").display())
                );
            }
            other => panic!("expected Claimed, got {other:?}"),
        }
        let _ = std::fs::remove_dir_all(&dir);
    }
}
