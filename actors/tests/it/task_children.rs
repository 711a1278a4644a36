//! Issue 32 item 1, decision 0079: the inbox-driven children (store, lanes, telemetry,
//! recorder, router) run on plain tasks the session's supervisor holds. A child that fails
//! is restarted with what it was handling reported as before; no child task outlives its
//! session — whether the session ends, the supervisor dies, or its start fails.
//!
//! The tasks are counted on a runtime of the session's own (the scripted server runs on the
//! test's runtime), whose count of alive tasks is the session's alone.

use crate::support;

use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures_util::future::BoxFuture;
use reel_actors::child::Child;
use reel_actors::state::StateError;
use reel_actors::testing::{ScriptedServer, ServerConn};
use reel_actors::transport::{LiveTransportFactory, TransportArgs, TransportFactory, TransportMsg};
use reel_actors::{EventStream, LiveEvent, LiveHandle, LiveSessionBuilder, SessionStartError};
use reel_protocol::SessionConfig;
use reel_recorder::journal::{JournalSink, MemoryJournalSink, StateMutation};
use serde_json::{Value, json};
use support::settle;
use tokio::runtime::Runtime;

/// A runtime for one session's tree alone (one worker).
fn session_runtime() -> Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .unwrap()
}

/// Connects a session built by `build` on `runtime`, the server's side on the test's.
async fn connect_on(
    runtime: &Runtime,
    server: &mut ScriptedServer,
    build: impl FnOnce(LiveSessionBuilder) -> LiveSessionBuilder,
) -> (LiveHandle, ServerConn, EventStream) {
    let builder = build(LiveSessionBuilder::new(
        SessionConfig::default(),
        server.endpoint(),
    ));
    let events = builder.subscribe();
    let connecting = runtime.spawn(builder.connect());
    let mut conn = server.accept().await;
    let _setup = conn.recv_json().await;
    conn.send_json(&json!({"setupComplete": {}})).await;
    let handle = connecting.await.unwrap().unwrap();
    (handle, conn, events)
}

/// The tasks alive on `runtime` once they have all ended, or after 60 s, whichever comes
/// first (its count has no wake-up to wait on: it is polled). Among them is the transport's
/// setup timeout (a ractor timer task, which ends when it fires, 15 s after the connect):
/// a session's count reaches 0 only then.
async fn tasks_left(runtime: &Runtime) -> usize {
    let give_up = std::time::Instant::now() + Duration::from_secs(60);
    loop {
        let alive = runtime.metrics().num_alive_tasks();
        if alive == 0 || std::time::Instant::now() > give_up {
            return alive;
        }
        tokio::time::sleep(Duration::from_millis(2)).await;
    }
}

#[tokio::test]
async fn a_session_that_ends_leaves_no_task_behind() {
    let runtime = session_runtime();
    let mut server = ScriptedServer::bind().await;
    let (handle, mut conn, mut events) = connect_on(&runtime, &mut server, |b| b).await;
    let _ = events.recv().await;
    assert_eq!(
        handle.actors(),
        [
            Child::StateStore,
            Child::FastLane,
            Child::ControlLane,
            Child::Router,
            Child::Transport
        ]
    );
    assert!(runtime.metrics().num_alive_tasks() >= 5);

    let (end, _) = tokio::join!(handle.disconnect(), conn.expect_closed());
    assert_eq!(end.reason, "closed with code 1000: client disconnect");
    assert_eq!(
        tasks_left(&runtime).await,
        0,
        "every task of the tree ended"
    );
    assert_eq!(handle.actors(), []);
    runtime.shutdown_background();
}

/// Hands the live transport its args and keeps the supervisor's cell, so the test can kill
/// the supervisor.
struct KeepSupervisor(Arc<Mutex<Option<ractor::ActorCell>>>);

impl TransportFactory for KeepSupervisor {
    fn spawn(
        self: Box<Self>,
        args: TransportArgs,
        supervisor: ractor::ActorCell,
    ) -> BoxFuture<'static, Result<ractor::ActorRef<TransportMsg>, ractor::SpawnErr>> {
        *self.0.lock().unwrap() = Some(supervisor.clone());
        Box::new(LiveTransportFactory).spawn(args, supervisor)
    }
}

/// A supervisor that dies (killed: nothing of its own runs) takes its children's tasks with
/// it: no lane, store or router is left waiting for a ring that never comes. (The link's
/// reader is the transport's and ends with its connection, which the server closes here:
/// a killed transport does not close it.)
#[tokio::test]
async fn a_supervisor_that_dies_leaves_no_child_task_behind() {
    let runtime = session_runtime();
    let mut server = ScriptedServer::bind().await;
    let kept = Arc::new(Mutex::new(None));
    let factory = KeepSupervisor(Arc::clone(&kept));
    let (handle, conn, mut events) = connect_on(&runtime, &mut server, |b| {
        b.transport_factory(Box::new(factory))
    })
    .await;
    let _ = events.recv().await;
    assert_eq!(handle.actors().len(), 5);
    let supervisor = kept
        .lock()
        .unwrap()
        .clone()
        .expect("the transport was started");

    supervisor.kill();
    drop(conn);
    assert_eq!(
        tasks_left(&runtime).await,
        0,
        "every task of the tree ended"
    );
    assert_eq!(handle.actors(), []);
    runtime.shutdown_background();
}

/// A transport whose start fails.
struct FailingTransport;

impl TransportFactory for FailingTransport {
    fn spawn(
        self: Box<Self>,
        _args: TransportArgs,
        _supervisor: ractor::ActorCell,
    ) -> BoxFuture<'static, Result<ractor::ActorRef<TransportMsg>, ractor::SpawnErr>> {
        Box::pin(async { Err(ractor::SpawnErr::StartupFailed("no transport today".into())) })
    }
}

/// The supervisor starts its children before the transport; when the transport's start
/// fails, the supervisor's start fails, and the children it had started end with it.
#[tokio::test]
async fn a_supervisor_whose_start_fails_leaves_no_child_task_behind() {
    let runtime = session_runtime();
    let server = ScriptedServer::bind().await;
    let builder = LiveSessionBuilder::new(SessionConfig::default(), server.endpoint())
        .transport_factory(Box::new(FailingTransport));
    let spawned = runtime.spawn(builder.spawn()).await.unwrap();
    match spawned {
        Err(SessionStartError::Spawn { message }) => assert_eq!(
            message,
            "Actor panicked during startup 'Actor panicked during startup 'no transport today''"
        ),
        Err(other) => panic!("expected a spawn error, got {other}"),
        Ok(_) => panic!("expected a spawn error, got a session"),
    }
    assert_eq!(
        tasks_left(&runtime).await,
        0,
        "every task of the tree ended"
    );
    runtime.shutdown_background();
}

/// The state store runs on a task: a `modify` closure that panics fails it; the supervisor
/// restarts it with the same report as ever (`Restarted`, the panic's text), the writer
/// gets `StoreUnavailable`, the journal holds every other write, and the new instance
/// applies the next.
#[tokio::test(start_paused = true)]
async fn a_store_that_panics_is_restarted_with_its_report_and_journal_as_before() {
    let mut server = ScriptedServer::bind().await;
    let journal = Arc::new(MemoryJournalSink::new());
    let sink = Arc::clone(&journal) as Arc<dyn JournalSink>;
    let (handle, _conn, _, mut events) = support::start(
        &mut server,
        |b| b.journal_sink(sink),
        SessionConfig::default(),
    )
    .await;
    settle(&mut events).await;
    let state = handle.state();
    state.set("app:n", 1).await.unwrap();
    let failed = state
        .modify("app:n", 0u32, |_| panic!("modify failed on purpose"))
        .await;
    assert!(
        matches!(failed, Err(StateError::StoreUnavailable { .. })),
        "{failed:?}"
    );
    let seen = settle(&mut events).await;
    let restarted: Vec<&LiveEvent> = seen
        .iter()
        .map(|e| &e.event)
        .filter(|e| matches!(e, LiveEvent::Restarted { .. }))
        .collect();
    assert_eq!(
        restarted,
        [&LiveEvent::Restarted {
            actor: Child::StateStore,
            restarts: 1,
            reason: "modify failed on purpose".to_owned(),
        }]
    );
    assert_eq!(handle.telemetry().restarts, 1);
    assert!(handle.actors().contains(&Child::StateStore));
    assert_eq!(
        state.modify("app:n", 0u32, |n| n + 1).await.unwrap(),
        2,
        "the new store applies the next write"
    );
    let written: Vec<(String, Value, Value, String)> = journal
        .entries()
        .into_iter()
        .filter(|m: &StateMutation| m.key.starts_with("app:"))
        .map(|m| (m.key, m.old, m.new, m.origin))
        .collect();
    assert_eq!(
        written,
        [
            ("app:n".to_owned(), Value::Null, json!(1), "set".to_owned()),
            ("app:n".to_owned(), json!(1), json!(2), "modify".to_owned()),
        ]
    );
    assert_eq!(handle.ended(), None, "the session goes on");
}
