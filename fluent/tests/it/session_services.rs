//! Session services: snapshots kept in SQLite (the default, beside the recordings) and in
//! a real PostgreSQL server, one owner per session id.
//!
//! - The SQLite store claims an id once (a second claim, from this process or another, is
//!   refused while the first is held) and fences a stale owner's saves.
//! - A chain with `.session_id(..)` and a wire log file keeps its sessions in
//!   `reel-sessions.sqlite3` beside the log; a second session with a running session's id
//!   is refused before it starts, and starts once the first has ended.
//! - The PostgreSQL store claims an id once; a claim whose connection died cannot save.
//! - The distributed case: process A runs a session on PostgreSQL and is killed with
//!   SIGKILL while a model turn streams; process B, given only the session id and the
//!   database URL, resumes it (state, phase, turn count, the stored resumption handle in its
//!   setup), the conversation goes on, and A's recording and B's each replay with no
//!   divergence and their journals written again entry by entry.
//!
//! The processes are this test binary run again with `REEL_CHILD` set (see
//! [`child_session`]).

use crate::postgres_server;
use crate::support;

use std::path::{Path, PathBuf};
use std::process::{Child, Command};
use std::sync::Arc;
use std::time::Duration;

use postgres_server::Postgres;
use reel_actors::SessionStartError;
use reel_actors::testing::{SCRIPTED_API_KEY, ScriptedServer};
use reel_fluent::{ConnectError, Live, LiveBuilder};
use reel_persistence::{
    MemoryPersistence, PersistenceError, PostgresPersistence, SessionPersistence, SessionSnapshot,
    SqlitePersistence,
};
use reel_protocol::ApiEndpoint;
use reel_recorder::journal::{FileJournalSink, read_journal};
use reel_recorder::read_wire_log;
use reel_recorder::wire_file::{Durability, FileWireRecorder};
use reel_tools::TypedTool;
use serde_json::{Value, json};
use support::{text, turn_complete, until_turn_complete};

const ID: &str = "call-42";

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct NameArgs {
    /// The caller's first name.
    name: String,
}

fn fresh_dir(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../target/tmp/session-services")
        .join(format!("{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn snapshot(turn_count: u32) -> SessionSnapshot {
    SessionSnapshot {
        state: [("app:name".to_owned(), json!("Ada"))].into(),
        phase: "booking".into(),
        turn_count,
        transcript_summary: String::new(),
        resume_handle: Some("h-1".into()),
        saved_at: "2024-06-10T06:13:20.000Z".into(),
    }
}

#[tokio::test]
async fn the_sqlite_store_claims_an_id_once_and_fences_a_stale_owner() {
    let dir = fresh_dir("sqlite-claims");
    let db = dir.join("sessions.sqlite3");
    let store = Arc::new(SqlitePersistence::open(&db).unwrap());
    let first = Arc::clone(&store).claim(ID.into()).await.unwrap();
    assert_eq!(first.generation(), 1);

    // Held: a second claim is refused, through this handle or another one on the file.
    let other = Arc::new(SqlitePersistence::open(&db).unwrap());
    let refused = Arc::clone(&other).claim(ID.into()).await.err().unwrap();
    let lock = format!("{}.locks/{ID}.lock", db.display());
    assert_eq!(
        refused.to_string(),
        format!(
            "session \"call-42\" is running elsewhere (the lock file {lock} is held); two \
             sessions cannot share an id: wait for it to end, or give this one another id"
        )
    );
    first.save(&snapshot(1)).await.unwrap();
    assert_eq!(other.load(ID).await.unwrap(), Some(snapshot(1)));

    // Released: the next claim is generation 2 and sees what the first saved.
    first.release().await;
    let second = Arc::clone(&other).claim(ID.into()).await.unwrap();
    assert_eq!(second.generation(), 2);
    assert_eq!(other.load(ID).await.unwrap(), Some(snapshot(1)));
    second.save(&snapshot(2)).await.unwrap();

    // A stale owner (its lock file removed under it, so a third claim got in) is fenced:
    // its save is refused, the newer owner's snapshot stays.
    std::fs::remove_file(&lock).unwrap();
    let third = Arc::clone(&store).claim(ID.into()).await.unwrap();
    assert_eq!(third.generation(), 3);
    let fenced = second.save(&snapshot(9)).await.unwrap_err();
    assert!(
        matches!(
            fenced,
            PersistenceError::Fenced {
                generation: 2,
                current: 3,
                ..
            }
        ),
        "{fenced:?}"
    );
    assert_eq!(
        fenced.to_string(),
        "session \"call-42\" was taken over by a newer claim (generation 3, this one 2); its \
         snapshot was not written"
    );
    assert_eq!(store.load(ID).await.unwrap(), Some(snapshot(2)));
    third.save(&snapshot(3)).await.unwrap();
    assert_eq!(store.load(ID).await.unwrap(), Some(snapshot(3)));

    // Forgotten.
    store.delete(ID).await.unwrap();
    assert_eq!(store.load(ID).await.unwrap(), None);
}

#[tokio::test]
async fn a_chain_keeps_its_sessions_beside_its_recordings_and_refuses_a_second_owner() {
    let dir = fresh_dir("default-sqlite");
    let mut server = ScriptedServer::bind().await;
    let endpoint = server.endpoint();
    let chain = |name: &str| {
        Live::builder()
            .text_only()
            .session_resume(true)
            .session_id(ID)
            .record_wire(dir.join(format!("{name}.wire.jsonl")))
    };
    let script = async {
        let mut conn = server.accept().await;
        conn.recv().await.unwrap();
        conn.send_json(&json!({"setupComplete": {}})).await;
        conn
    };
    let (first, mut conn) = tokio::join!(chain("first").connect(endpoint.clone()), script);
    let first = first.unwrap();
    assert!(dir.join("reel-sessions.sqlite3").is_file());

    // The id is taken while the first session runs: refused before anything starts.
    let refused = chain("second").connect(endpoint.clone()).await.unwrap_err();
    assert!(
        matches!(
            &refused,
            ConnectError::Start(SessionStartError::Persistence(
                PersistenceError::Claimed { .. }
            ))
        ),
        "{refused:?}"
    );
    assert_eq!(
        refused.to_string(),
        format!(
            "session \"call-42\" is running elsewhere (the lock file {} is held); two sessions \
             cannot share an id: wait for it to end, or give this one another id",
            dir.join("reel-sessions.sqlite3.locks/call-42.lock")
                .display()
        )
    );
    assert!(server.try_accept().is_none(), "the second never connected");

    // Once the first has ended, the id is free and the third session resumes from it.
    conn.send_json(&json!({"sessionResumptionUpdate": {"newHandle": "h-7", "resumable": true}}))
        .await;
    conn.send_json(&turn_complete()).await;
    let (end, _) = tokio::join!(first.disconnect(), conn.expect_closed());
    assert!(!end.failed);
    let stored = SqlitePersistence::open(dir.join("reel-sessions.sqlite3"))
        .unwrap()
        .load(ID)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(
        (stored.turn_count, stored.resume_handle.as_deref()),
        (1, Some("h-7"))
    );
    let script = async {
        let mut conn = server.accept().await;
        let setup = conn.recv_json().await;
        conn.send_json(&json!({"setupComplete": {}})).await;
        (conn, setup)
    };
    let (third, (mut conn, setup)) = tokio::join!(chain("third").connect(endpoint), script);
    let third = third.unwrap();
    assert_eq!(
        setup["setup"]["sessionResumption"],
        json!({"handle": "h-7"})
    );
    tokio::join!(third.disconnect(), conn.expect_closed());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_postgres_store_claims_an_id_once_and_a_claim_that_lost_its_connection_cannot_save() {
    let Some(pg) = Postgres::start("claims") else {
        return;
    };
    let store = Arc::new(PostgresPersistence::connect(pg.url()).await.unwrap());
    let first = Arc::clone(&store).claim(ID.into()).await.unwrap();
    assert_eq!(first.generation(), 1);
    let refused = Arc::clone(&store).claim(ID.into()).await.err().unwrap();
    assert_eq!(
        refused.to_string(),
        "session \"call-42\" is running elsewhere (another PostgreSQL connection holds its \
         advisory lock); two sessions cannot share an id: wait for it to end, or give this one \
         another id"
    );
    first.save(&snapshot(1)).await.unwrap();
    assert_eq!(store.load(ID).await.unwrap(), Some(snapshot(1)));

    // The first claim's connection dies (an administrator, a network partition): the
    // server drops its lock, a new owner claims generation 2, and the old claim's save is
    // refused, not merged.
    let killer = tokio_postgres_connect(&pg.url()).await;
    let terminated: i64 = killer
        .query_one(
            "SELECT count(pg_terminate_backend(pid)) FROM pg_locks \
             WHERE locktype = 'advisory' AND pid <> pg_backend_pid()",
            &[],
        )
        .await
        .unwrap()
        .get(0);
    assert_eq!(terminated, 1);
    let second = until_claimed(&store).await;
    assert_eq!(second.generation(), 2);
    assert!(first.save(&snapshot(9)).await.is_err());
    second.save(&snapshot(2)).await.unwrap();
    assert_eq!(store.load(ID).await.unwrap(), Some(snapshot(2)));
    second.release().await;
    store.delete(ID).await.unwrap();
    assert_eq!(store.load(ID).await.unwrap(), None);
}

/// A plain connection, for what the store does not do (terminating another backend).
async fn tokio_postgres_connect(url: &str) -> tokio_postgres::Client {
    let (client, connection) = tokio_postgres::connect(url, tokio_postgres::NoTls)
        .await
        .unwrap();
    tokio::spawn(connection);
    client
}

/// Claims [`ID`] as soon as the server has dropped the previous owner's lock (it does when
/// it sees the connection gone: a moment after the process died).
async fn until_claimed(
    store: &Arc<PostgresPersistence>,
) -> Box<dyn reel_persistence::SessionClaim> {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(20);
    loop {
        match Arc::clone(store).claim(ID.into()).await {
            Ok(claim) => return claim,
            Err(PersistenceError::Claimed { .. }) if tokio::time::Instant::now() < deadline => {
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
            Err(other) => panic!("{other}"),
        }
    }
}

/// The application both processes run: greets, saves the caller's name with a tool, then
/// books; its sessions in `store`.
fn booking(store: Arc<dyn SessionPersistence>) -> LiveBuilder {
    Live::builder()
        .model("gemini-live-2.5-flash-preview")
        .text_only()
        .session_resume(true)
        .tool(TypedTool::new(
            "save_name",
            "Saves the caller's name.",
            |args: NameArgs, ctx| async move {
                ctx.state
                    .set("app:name", &args.name)
                    .map_err(|e| ctx.fail(e))?;
                Ok(json!({"saved": true}))
            },
        ))
        .phase("greeting", |p| {
            p.instruction("Greet the caller and ask their name.")
                .tools(["save_name"])
                .transition("booking", |s| s.contains("app:name"))
        })
        .phase("booking", |p| p.instruction("Book a table for the caller."))
        .persistence(store)
        .session_id(ID)
}

/// One of the processes of the distributed test, when this binary runs as one: `a` runs
/// the session until it is killed, recording every frame and journal entry as it happens;
/// `b` resumes it, finishes the turn and disconnects. Without `REEL_CHILD`, nothing.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn child_session() {
    let Ok(role) = std::env::var("REEL_CHILD") else {
        return;
    };
    let var = |name: &str| std::env::var(name).unwrap();
    let dir = PathBuf::from(var("REEL_CHILD_DIR"));
    let store = Arc::new(
        PostgresPersistence::connect(var("REEL_CHILD_DB"))
            .await
            .unwrap(),
    );
    let endpoint =
        ApiEndpoint::google_ai(SCRIPTED_API_KEY).with_base_url(&var("REEL_CHILD_SERVER"));
    if role == "a" {
        let wire = FileWireRecorder::create(dir.join("a.wire.jsonl"))
            .unwrap()
            .with_durability(Durability::FlushEachEntry);
        let journal = FileJournalSink::create(dir.join("a.journal.jsonl"))
            .unwrap()
            .with_flush_interval(Duration::ZERO);
        let handle = booking(store)
            .record_wire_to(Arc::new(wire))
            .journal_to(Arc::new(journal))
            .connect(endpoint)
            .await
            .unwrap();
        handle.join().await;
    } else {
        let builder = booking(store)
            .record_wire(dir.join("b.wire.jsonl"))
            .journal(dir.join("b.journal.jsonl"));
        let mut events = builder.subscribe();
        let handle = builder.connect(endpoint).await.unwrap();
        until_turn_complete(&mut events).await;
        let end = handle.disconnect().await;
        assert!(!end.failed, "{end:?}");
    }
}

fn spawn_child(role: &str, pg: &Postgres, server: &ScriptedServer, dir: &Path) -> Child {
    Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            // The test's name in this crate's one test binary (tests/it/main.rs).
            "session_services::child_session",
            "--nocapture",
            "--test-threads=1",
        ])
        .env("REEL_CHILD", role)
        .env("REEL_CHILD_DB", pg.url())
        .env("REEL_CHILD_SERVER", server.url())
        .env("REEL_CHILD_DIR", dir)
        .stdout(std::process::Stdio::null())
        .spawn()
        .unwrap()
}

/// Waits until `done` holds (another process is working; this does not assert anything
/// itself, and gives up after 20 s).
async fn until<T>(what: &str, mut done: impl AsyncFnMut() -> Option<T>) -> T {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(20);
    loop {
        if let Some(value) = done().await {
            return value;
        }
        assert!(tokio::time::Instant::now() < deadline, "never: {what}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_session_killed_mid_turn_resumes_in_another_process_and_both_halves_replay() {
    let Some(pg) = Postgres::start("failover") else {
        return;
    };
    let dir = fresh_dir("failover");
    let store = Arc::new(PostgresPersistence::connect(pg.url()).await.unwrap());
    let mut server = ScriptedServer::bind().await;

    // Process A: the first turn, to the booking phase.
    let mut a = spawn_child("a", &pg, &server, &dir);
    let mut conn = server.accept().await;
    let setup = conn.recv_json().await;
    assert_eq!(setup["setup"]["sessionResumption"], json!({}));
    conn.send_json(&json!({"setupComplete": {}})).await;
    conn.send_json(&json!({"sessionResumptionUpdate": {"newHandle": "h-1", "resumable": true}}))
        .await;
    conn.send_json(&json!({"toolCall": {"functionCalls": [
        {"id": "c1", "name": "save_name", "args": {"name": "Ada"}}
    ]}}))
    .await;
    assert_eq!(
        conn.recv_json().await,
        json!({"toolResponse": {"functionResponses": [{"id": "c1", "name": "save_name", "response": {"saved": true}}]}})
    );
    conn.send_json(&text("Thanks, Ada.")).await;
    conn.send_json(&turn_complete()).await;
    assert_eq!(
        conn.recv_json().await,
        json!({"contextUpdate": {"systemInstruction": {"parts": [{"text": "Book a table for the caller."}]}}})
    );
    let saved = until("the first turn's snapshot in PostgreSQL", async || {
        store.load(ID).await.unwrap().filter(|s| s.turn_count == 1)
    })
    .await;
    assert_eq!(
        (saved.phase.as_str(), saved.resume_handle.as_deref()),
        ("booking", Some("h-1"))
    );
    assert_eq!(saved.state["app:name"], "Ada");

    // The second turn streams; A is killed with SIGKILL once the frame is in its log.
    conn.send_json(&text("Let me look at tonight's tables"))
        .await;
    let a_wire = dir.join("a.wire.jsonl");
    until("the streaming frame in A's wire log", async || {
        let entries = read_wire_log(&a_wire).ok()?;
        let last = entries.last()?;
        String::from_utf8_lossy(&last.payload)
            .contains("tonight's tables")
            .then_some(())
    })
    .await;
    a.kill().unwrap();
    let status = a.wait().unwrap();
    assert_eq!(
        std::os::unix::process::ExitStatusExt::signal(&status),
        Some(9)
    );
    drop(conn);
    // The server drops A's claim when it sees A's connection closed: a moment later.
    let watcher = tokio_postgres_connect(&pg.url()).await;
    until("A's claim released by the server", async || {
        let held: i64 = watcher
            .query_one(
                "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory'",
                &[],
            )
            .await
            .unwrap()
            .get(0);
        (held == 0).then_some(())
    })
    .await;

    // Process B, given only the id and the database: resumes with the stored handle, in
    // the saved phase, and the conversation goes on.
    let mut b = spawn_child("b", &pg, &server, &dir);
    let mut conn = server.accept().await;
    assert_eq!(
        conn.recv_json().await,
        json!({"setup": {
            "model": "models/gemini-live-2.5-flash-preview",
            "generationConfig": {"responseModalities": ["TEXT"]},
            "systemInstruction": {"parts": [{"text": "Book a table for the caller."}]},
            "tools": [{"functionDeclarations": [{
                "name": "save_name",
                "description": "Saves the caller's name.",
                "parameters": {"type": "object",
                               "properties": {"name": {"type": "string", "description": "The caller's first name."}},
                               "required": ["name"]}
            }]}],
            "sessionResumption": {"handle": "h-1"}
        }})
    );
    conn.send_json(&json!({"setupComplete": {}})).await;
    conn.send_json(&text("A table for two at eight is booked, Ada."))
        .await;
    conn.send_json(&turn_complete()).await;
    conn.expect_closed().await;
    assert!(b.wait().unwrap().success());
    let last = store.load(ID).await.unwrap().unwrap();
    assert_eq!((last.turn_count, last.phase.as_str()), (2, "booking"));
    assert_eq!(last.state["app:name"], "Ada");

    // Both halves replay offline: no divergence; A's journal (cut by the kill) is the start
    // of its replay's, entry by entry, and B's (which began by restoring the snapshot) is
    // its replay's exactly.
    let replay = |log: PathBuf| async move {
        booking(Arc::new(MemoryPersistence::new()))
            .replay(log)
            .await
            .unwrap()
            .finish()
            .await
    };
    let a_replay = replay(a_wire).await;
    assert_eq!(a_replay.divergences, vec![]);
    let a_journal = read_journal(dir.join("a.journal.jsonl")).unwrap();
    assert!(a_journal.len() > 10, "{}", a_journal.len());
    assert_eq!(a_replay.journal[..a_journal.len()], a_journal[..]);
    let b_replay = replay(dir.join("b.wire.jsonl")).await;
    assert_eq!(b_replay.divergences, vec![]);
    let b_journal = read_journal(dir.join("b.journal.jsonl")).unwrap();
    assert_eq!(b_replay.journal, b_journal);
    let restored: Vec<(&str, &Value)> = b_journal
        .iter()
        .filter(|m| m.key == "app:name")
        .map(|m| (m.key.as_str(), &m.new))
        .collect();
    assert_eq!(restored, [("app:name", &json!("Ada"))]);
}
