//! [`PostgresPersistence`]: session snapshots in PostgreSQL, shared by a fleet of reel
//! processes (feature `postgres`).
//!
//! One table, `reel_sessions (session_id PRIMARY KEY, generation, snapshot, saved_at)`,
//! created when first connected. A session's claim ([`SessionClaim`]) is a connection of
//! its own holding a session-level advisory lock on the id (`pg_try_advisory_lock` on a
//! 64-bit hash of it), taken without waiting: the server drops the lock when that
//! connection closes, so when a process dies — killed, or its machine lost — its sessions
//! can be claimed by another process as soon as the server sees the connection gone. Each
//! claim takes the id's next generation, and saves go through the claim's connection,
//! written only while the generation is the id's latest: a process that lost its claim
//! without knowing it is refused ([`PersistenceError::Fenced`]), never merged.
//!
//! A lost machine sends nothing: the server learns its connections are gone from TCP
//! keepalives, which a claim's connection sets to about 25 s (10 s idle, 3 probes 5 s
//! apart), so a lost machine's sessions are claimable again within about half a minute.
//!
//! Connections are plain TCP (`NoTls`): run it on a private network or through a
//! TLS-terminating proxy; a URL asking for TLS (`sslmode=require`) is refused rather than
//! silently downgraded.

use std::sync::Arc;

use futures_util::future::BoxFuture;
use tokio_postgres::{Client, NoTls};

use reel_actors::persistence::PersistenceError;
use reel_actors::persistence::SessionClaim;
use reel_actors::persistence::SessionPersistence;
use reel_actors::persistence::SessionSnapshot;
use reel_actors::persistence::check_session_id;

/// The table, created if missing.
const SCHEMA: &str = "CREATE TABLE IF NOT EXISTS reel_sessions (
    session_id TEXT PRIMARY KEY,
    generation BIGINT NOT NULL,
    snapshot TEXT,
    saved_at TEXT
)";

/// The server-side keepalives of a claim's connection (see [`PostgresPersistence`]).
const CLAIM_KEEPALIVES: &str =
    "SET tcp_keepalives_idle = 10; SET tcp_keepalives_interval = 5; SET tcp_keepalives_count = 3";

/// Session snapshots in PostgreSQL (the module's docs say more).
#[derive(Clone)]
pub struct PostgresPersistence {
    inner: Arc<Inner>,
}

struct Inner {
    url: String,
    /// For loads, deletes and unclaimed saves; a claim has its own connection.
    client: Client,
}

impl std::fmt::Debug for PostgresPersistence {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PostgresPersistence")
            .field("url", &redacted(&self.inner.url))
            .finish_non_exhaustive()
    }
}

impl PostgresPersistence {
    /// Connects to the database at `url` (`postgres://user:password@host:port/db`, or
    /// `host=… port=… user=… dbname=…`) and creates the table if it is missing.
    pub async fn connect(url: impl Into<String>) -> Result<PostgresPersistence, PersistenceError> {
        let url = url.into();
        let client = open(&url, "").await?;
        client
            .batch_execute(SCHEMA)
            .await
            .map_err(|source| backend_error(&url, "", source))?;
        Ok(PostgresPersistence {
            inner: Arc::new(Inner { url, client }),
        })
    }
}

/// A connection to `url`, its driver running on a task of its own.
async fn open(url: &str, session_id: &str) -> Result<Client, PersistenceError> {
    if url.contains("sslmode=require")
        || url.contains("sslmode=verify")
        || url.contains("sslmode=prefer")
    {
        return Err(PersistenceError::Backend {
            backend: format!("postgres ({})", redacted(url)),
            session_id: session_id.to_owned(),
            source: "TLS connections are not supported: connect over a private network or a TLS-terminating proxy, with sslmode=disable".into(),
        });
    }
    let (client, connection) = tokio_postgres::connect(url, NoTls)
        .await
        .map_err(|source| backend_error(url, session_id, source))?;
    let shown = redacted(url);
    tokio::spawn(async move {
        if let Err(error) = connection.await {
            tracing::warn!(url = %shown, %error, "a PostgreSQL connection of the session store ended");
        }
    });
    Ok(client)
}

impl SessionPersistence for PostgresPersistence {
    fn save<'a>(
        &'a self,
        session_id: &'a str,
        snapshot: &'a SessionSnapshot,
    ) -> BoxFuture<'a, Result<(), PersistenceError>> {
        Box::pin(async move {
            check_session_id(session_id)?;
            let json = snapshot.to_stored(session_id)?;
            self.inner
                .client
                .execute(
                    "INSERT INTO reel_sessions (session_id, generation, snapshot, saved_at)
                     VALUES ($1, 0, $2, $3)
                     ON CONFLICT (session_id) DO UPDATE
                     SET snapshot = excluded.snapshot, saved_at = excluded.saved_at",
                    &[&session_id, &json, &snapshot.saved_at],
                )
                .await
                .map(drop)
                .map_err(|source| backend_error(&self.inner.url, session_id, source))
        })
    }

    fn load<'a>(
        &'a self,
        session_id: &'a str,
    ) -> BoxFuture<'a, Result<Option<SessionSnapshot>, PersistenceError>> {
        Box::pin(async move {
            check_session_id(session_id)?;
            let row = self
                .inner
                .client
                .query_opt(
                    "SELECT snapshot FROM reel_sessions WHERE session_id = $1",
                    &[&session_id],
                )
                .await
                .map_err(|source| backend_error(&self.inner.url, session_id, source))?;
            let Some(json) = row.and_then(|row| row.get::<_, Option<String>>(0)) else {
                return Ok(None);
            };
            SessionSnapshot::from_stored(
                &json,
                session_id,
                &format!("{} (table reel_sessions)", redacted(&self.inner.url)),
            )
            .map(Some)
        })
    }

    fn delete<'a>(&'a self, session_id: &'a str) -> BoxFuture<'a, Result<(), PersistenceError>> {
        Box::pin(async move {
            check_session_id(session_id)?;
            self.inner
                .client
                .execute(
                    "DELETE FROM reel_sessions WHERE session_id = $1",
                    &[&session_id],
                )
                .await
                .map(drop)
                .map_err(|source| backend_error(&self.inner.url, session_id, source))
        })
    }

    fn claim(
        self: Arc<Self>,
        session_id: String,
    ) -> BoxFuture<'static, Result<Box<dyn SessionClaim>, PersistenceError>> {
        Box::pin(async move {
            check_session_id(&session_id)?;
            let url = &self.inner.url;
            let failed = |source| backend_error(url, &session_id, source);
            let client = open(url, &session_id).await?;
            // The server notices a dead process's connection at once (its socket closes), a
            // lost machine's only through TCP keepalives: these bound how long its sessions
            // stay claimed to about 25 s (10 s idle, then 3 probes 5 s apart).
            client
                .batch_execute(CLAIM_KEEPALIVES)
                .await
                .map_err(failed)?;
            let locked: bool = client
                .query_one(
                    "SELECT pg_try_advisory_lock(hashtextextended($1, 0))",
                    &[&session_id],
                )
                .await
                .map_err(failed)?
                .get(0);
            if !locked {
                return Err(PersistenceError::Claimed {
                    session_id,
                    holder: "another PostgreSQL connection holds its advisory lock".to_owned(),
                });
            }
            let generation: i64 = client
                .query_one(
                    "INSERT INTO reel_sessions (session_id, generation) VALUES ($1, 1)
                     ON CONFLICT (session_id)
                     DO UPDATE SET generation = reel_sessions.generation + 1
                     RETURNING generation",
                    &[&session_id],
                )
                .await
                .map_err(failed)?
                .get(0);
            Ok(Box::new(PostgresClaim {
                url: url.clone(),
                client,
                session_id,
                generation,
            }) as Box<dyn SessionClaim>)
        })
    }
}

/// A session's claim: its own connection, holding the advisory lock, and its generation.
struct PostgresClaim {
    url: String,
    client: Client,
    session_id: String,
    generation: i64,
}

impl SessionClaim for PostgresClaim {
    fn save<'a>(
        &'a self,
        snapshot: &'a SessionSnapshot,
    ) -> BoxFuture<'a, Result<(), PersistenceError>> {
        Box::pin(async move {
            let json = snapshot.to_stored(&self.session_id)?;
            let failed = |source| backend_error(&self.url, &self.session_id, source);
            let written = self
                .client
                .execute(
                    "UPDATE reel_sessions SET snapshot = $2, saved_at = $3
                     WHERE session_id = $1 AND generation = $4",
                    &[
                        &self.session_id,
                        &json,
                        &snapshot.saved_at,
                        &self.generation,
                    ],
                )
                .await
                .map_err(failed)?;
            if written == 1 {
                return Ok(());
            }
            let current: Option<i64> = self
                .client
                .query_opt(
                    "SELECT generation FROM reel_sessions WHERE session_id = $1",
                    &[&self.session_id],
                )
                .await
                .map_err(failed)?
                .map(|row| row.get(0));
            Err(PersistenceError::Fenced {
                session_id: self.session_id.clone(),
                generation: self.generation(),
                current: current.map_or(0, |c| u64::try_from(c).unwrap_or(0)),
            })
        })
    }

    fn generation(&self) -> u64 {
        u64::try_from(self.generation).unwrap_or(0)
    }

    fn release(self: Box<Self>) -> BoxFuture<'static, ()> {
        Box::pin(async move {
            // Unlocked at once; closing the connection (dropping the client) would too.
            let _ = self
                .client
                .execute(
                    "SELECT pg_advisory_unlock(hashtextextended($1, 0))",
                    &[&self.session_id],
                )
                .await;
        })
    }
}

fn backend_error(url: &str, session_id: &str, source: tokio_postgres::Error) -> PersistenceError {
    PersistenceError::Backend {
        backend: format!("postgres ({})", redacted(url)),
        session_id: session_id.to_owned(),
        source: Box::new(source),
    }
}

/// `url` without its password, for messages and logs.
fn redacted(url: &str) -> String {
    if let Some((scheme, rest)) = url.split_once("://")
        && let Some((credentials, host)) = rest.split_once('@')
    {
        let user = credentials.split(':').next().unwrap_or("");
        return format!("{scheme}://{user}@{host}");
    }
    url.split_whitespace()
        .filter(|pair| !pair.starts_with("password="))
        .collect::<Vec<_>>()
        .join(" ")
}

#[cfg(test)]
mod tests {
    use super::redacted;

    #[test]
    fn passwords_never_reach_a_message() {
        assert_eq!(
            redacted("postgres://reel:s3cret@db:5432/sessions"),
            "postgres://reel@db:5432/sessions"
        );
        assert_eq!(
            redacted("host=db port=5432 user=reel password=s3cret dbname=x"),
            "host=db port=5432 user=reel dbname=x"
        );
    }
}
