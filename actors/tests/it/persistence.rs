//! Session persistence: the file backend (atomic, ids that cannot escape), snapshots at
//! turn boundaries and at the end of a session (exact contents), saves that never hold the
//! control lane up, and a session restored from its snapshot (state, phase, turn count and
//! the resumption handle presented in the setup).

use crate::support;
use crate::turns_support;

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures_util::future::BoxFuture;
use reel_actors::callbacks::{AsyncCallback, CallbackMode, ControlCallbacks};
use reel_actors::extract::{ExtractionContext, ExtractionError, TurnExtractor};
use reel_actors::persistence::{
    PersistenceError, SessionIdProblem, SessionPersistence, SessionSnapshot,
};
use reel_actors::phases::{Phase, PhaseMachine};
use reel_actors::state::State;
use reel_actors::testing::ScriptedServer;
use reel_actors::transcript::TranscriptTurn;
use reel_actors::writer::SessionWriter;
use reel_actors::{LiveEvent, LiveSessionBuilder, SessionStartError};
use reel_persistence::{FsPersistence, MemoryPersistence};
use reel_protocol::{ApiEndpoint, SessionConfig};
use reel_tools::{SimpleTool, ToolDispatcher};
use serde_json::{Value, json};
use support::T0;
use turns_support::Rig;

const ID: &str = "caller-7";

fn snapshot(turn_count: u32, state: Value) -> SessionSnapshot {
    SessionSnapshot {
        state: serde_json::from_value(state).unwrap(),
        phase: "booking".into(),
        turn_count,
        transcript_summary: format!("[Turn {turn_count}]\nUser: hi"),
        resume_handle: Some("h-9".into()),
        saved_at: "2024-06-10T06:13:20.000Z".into(),
    }
}

/// A fresh directory under the system's temporary one.
fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("reel-persistence-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

fn listing(dir: &std::path::Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    names.sort();
    names
}

#[tokio::test]
async fn the_file_backend_writes_whole_files_under_checked_names() {
    let root = scratch("files");
    let dir = root.join("nested").join("sessions");
    let fs = FsPersistence::new(&dir);
    assert!(
        fs.load(ID).await.unwrap().is_none(),
        "no directory yet: no snapshot"
    );
    fs.delete(ID).await.unwrap();

    let first = snapshot(1, json!({"app:name": "Ada", "session:turn_count": 1}));
    fs.save(ID, &first).await.unwrap();
    assert_eq!(
        std::fs::read_to_string(dir.join("caller-7.json")).unwrap(),
        r#"{
  "state": {
    "app:name": "Ada",
    "session:turn_count": 1
  },
  "phase": "booking",
  "turn_count": 1,
  "transcript_summary": "[Turn 1]\nUser: hi",
  "resume_handle": "h-9",
  "saved_at": "2024-06-10T06:13:20.000Z"
}"#
    );
    let second = snapshot(2, json!({"app:name": "Ada", "session:turn_count": 2}));
    fs.save(ID, &second).await.unwrap();
    assert_eq!(fs.load(ID).await.unwrap(), Some(second));
    assert_eq!(
        listing(&dir),
        ["caller-7.json"],
        "no temporary file is left"
    );

    // Ids that could reach outside the directory, or hide in it, are refused.
    for (id, problem) in [
        ("../escape", SessionIdProblem::LeadingDot),
        (
            "a/../../escape",
            SessionIdProblem::ForbiddenChar { ch: '/', at: 1 },
        ),
        ("a\\b", SessionIdProblem::ForbiddenChar { ch: '\\', at: 1 }),
        ("", SessionIdProblem::Empty),
    ] {
        let refused = fs.save(id, &first).await.unwrap_err();
        assert!(
            matches!(&refused, PersistenceError::InvalidSessionId { problem: p, .. } if *p == problem),
            "{id:?}: {refused}"
        );
        assert!(matches!(
            fs.load(id).await,
            Err(PersistenceError::InvalidSessionId { .. })
        ));
    }
    assert_eq!(listing(&dir), ["caller-7.json"]);
    assert_eq!(listing(&root), ["nested"]);

    // A file that is not a snapshot says where it is.
    std::fs::write(dir.join("broken.json"), "{\"state\": 3").unwrap();
    let corrupt = fs.load("broken").await.unwrap_err().to_string();
    assert_eq!(
        corrupt,
        format!(
            "the snapshot of session \"broken\" at {} is not a session snapshot: invalid \
             type: integer `3`, expected a map at line 1 column 11",
            dir.join("broken.json").display()
        )
    );

    fs.delete(ID).await.unwrap();
    assert!(fs.load(ID).await.unwrap().is_none());
    std::fs::remove_dir_all(&root).unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_reader_never_sees_half_a_snapshot() {
    let root = scratch("atomic");
    let fs = Arc::new(FsPersistence::new(&root));
    let big = |n: u32| {
        let state: BTreeMap<String, Value> = (0..2000)
            .map(|i| (format!("app:key{i:04}"), json!(format!("value {n} {i}"))))
            .collect();
        SessionSnapshot {
            state,
            ..snapshot(n, json!({}))
        }
    };
    fs.save(ID, &big(0)).await.unwrap();
    let writer = {
        let fs = Arc::clone(&fs);
        tokio::spawn(async move {
            for n in 1..=30 {
                fs.save(ID, &big(n)).await.unwrap();
            }
        })
    };
    let mut reads = 0;
    while !writer.is_finished() {
        let read = fs.load(ID).await.unwrap().unwrap();
        assert_eq!(read, big(read.turn_count), "a whole snapshot, old or new");
        reads += 1;
    }
    writer.await.unwrap();
    assert!(reads > 0);
    assert_eq!(fs.load(ID).await.unwrap().unwrap().turn_count, 30);
    assert_eq!(listing(&root), ["caller-7.json"]);
    std::fs::remove_dir_all(&root).unwrap();
}

fn phases() -> PhaseMachine {
    PhaseMachine::builder("greeting")
        .phase(
            Phase::new("greeting")
                .instruction("Greet the caller and ask their name.")
                .transition_with("booking", |s| s.contains("name"), "the caller gave a name"),
        )
        .phase(Phase::new("booking").instruction("Book a table."))
        .build()
        .unwrap()
}

/// The caller's name, after "I'm" in the last turn, kept once found (the extractor kinds
/// are in `reel-extract`, above this crate; this one is written out).
struct Caller;

impl TurnExtractor for Caller {
    fn name(&self) -> &str {
        "caller"
    }

    fn window_size(&self) -> usize {
        1
    }

    fn should_extract(&self, window: &[TranscriptTurn]) -> bool {
        !window.is_empty()
    }

    fn extract<'a>(
        &'a self,
        window: &'a [TranscriptTurn],
        ctx: &'a ExtractionContext,
    ) -> BoxFuture<'a, Result<Value, ExtractionError>> {
        let mut fields: serde_json::Map<String, Value> =
            ctx.existing("caller").into_iter().collect();
        let text: Vec<&str> = window
            .iter()
            .flat_map(|turn| [turn.user.as_str(), turn.model.as_str()])
            .collect();
        let words: Vec<&str> = text
            .iter()
            .flat_map(|side| side.split_whitespace())
            .collect();
        if let Some(pair) = words.windows(2).find(|w| w[0] == "I'm") {
            fields.insert("name".to_owned(), json!(pair[1].trim_end_matches('.')));
        }
        let mut sorted: Vec<(String, Value)> = fields.into_iter().collect();
        sorted.sort_by(|a, b| a.0.cmp(&b.0));
        Box::pin(async move { Ok(Value::Object(sorted.into_iter().collect())) })
    }
}

fn caller() -> Arc<Caller> {
    Arc::new(Caller)
}

fn booking_tool() -> ToolDispatcher {
    let mut tools = ToolDispatcher::new();
    tools
        .register(SimpleTool::new(
            "book",
            "Books.",
            None,
            |_a, ctx| async move {
                ctx.state.set("app:booked", true).map_err(|e| ctx.fail(e))?;
                Ok(json!({"booked": true}))
            },
        ))
        .unwrap();
    tools
}

#[tokio::test(start_paused = true)]
async fn a_snapshot_is_saved_at_each_turn_boundary_and_when_the_session_ends() {
    let mut server = ScriptedServer::bind().await;
    let store = Arc::new(MemoryPersistence::new());
    let backend: Arc<dyn SessionPersistence> = store.clone();
    let mut rig = Rig::start(&mut server, |b| {
        b.phases(phases())
            .extractor(caller())
            .dispatcher(booking_tool())
            .persistence(backend)
            .session_id(ID)
    })
    .await;
    assert_eq!(
        store.get(ID),
        None,
        "nothing before the first turn boundary"
    );

    rig.conn
        .send_json(&json!({"sessionResumptionUpdate": {"newHandle": "h-1", "resumable": true}}))
        .await;
    tokio::time::advance(Duration::from_secs(1)).await;
    let at = rig.exchange("Hi, I'm Ada.", "Hello Ada!").await;
    assert_eq!(at, T0 + 1500);
    rig.settle().await;
    // The state at the turn boundary (this turn's session: keys written), the phase the
    // extraction moved to, the latest handle, at the turn's event time.
    let summary = "[Turn 1]\nUser: Hi, I'm Ada.\nModel: Hello Ada!";
    assert_eq!(
        serde_json::to_value(store.get(ID).unwrap()).unwrap(),
        json!({
            "state": {
                "caller": {"name": "Ada"},
                "derived:name": "Ada",
                "session:active_phase": "booking",
                "session:disconnected": false,
                "session:elapsed_ms": 1500,
                "session:is_model_speaking": true,
                "session:last_input_transcription": "Hi, I'm Ada.",
                "session:last_output_transcription": "Hello Ada!",
                "session:phase": "ModelSpeaking",
                "session:remaining_budget_ms": 898500,
                "session:resumable": true,
                "session:session_type": "audio",
                "session:silence_ms": 0,
                "session:turn_count": 1
            },
            "phase": "booking",
            "turn_count": 1,
            "transcript_summary": summary,
            "resume_handle": "h-1",
            "saved_at": "2024-06-10T06:13:21.500Z"
        })
    );
    assert_eq!(
        rig.conn.recv_json().await,
        json!({"contextUpdate": {"systemInstruction": {"parts": [{"text": "Book a table."}]}}})
    );

    // After the boundary a tool writes; then the server closes the session. The final
    // snapshot is written before the session is over.
    tokio::time::advance(Duration::from_secs(1)).await;
    rig.conn
        .send_json(
            &json!({"toolCall": {"functionCalls": [{"id": "b1", "name": "book", "args": {}}]}}),
        )
        .await;
    assert_eq!(
        rig.conn.recv_json().await,
        json!({"toolResponse": {"functionResponses": [{"id": "b1", "name": "book", "response": {"booked": true}}]}})
    );
    tokio::time::advance(Duration::from_secs(1)).await;
    rig.conn.close(1000, "bye").await;
    rig.handle.join().await;
    assert_eq!(
        serde_json::to_value(store.get(ID).unwrap()).unwrap(),
        json!({
            "state": {
                "app:booked": true,
                "caller": {"name": "Ada"},
                "derived:name": "Ada",
                "session:active_phase": "booking",
                "session:disconnected": true,
                "session:elapsed_ms": 4000,
                "session:is_model_speaking": false,
                "session:last_input_transcription": "Hi, I'm Ada.",
                "session:last_output_transcription": "Hello Ada!",
                "session:phase": "Disconnected",
                "session:remaining_budget_ms": 896000,
                "session:resumable": true,
                "session:session_type": "audio",
                "session:silence_ms": 1000,
                "session:turn_count": 1
            },
            "phase": "booking",
            "turn_count": 1,
            "transcript_summary": summary,
            "resume_handle": "h-1",
            "saved_at": "2024-06-10T06:13:24.000Z"
        })
    );
}

/// A memory backend whose saves take `delay`, logging the turn count of each.
struct SlowBackend {
    inner: MemoryPersistence,
    delay: Duration,
    saved: Mutex<Vec<u32>>,
}

impl SessionPersistence for SlowBackend {
    fn save<'a>(
        &'a self,
        id: &'a str,
        snapshot: &'a SessionSnapshot,
    ) -> BoxFuture<'a, Result<(), PersistenceError>> {
        Box::pin(async move {
            tokio::time::sleep(self.delay).await;
            self.saved.lock().unwrap().push(snapshot.turn_count);
            self.inner.save(id, snapshot).await
        })
    }
    fn load<'a>(
        &'a self,
        id: &'a str,
    ) -> BoxFuture<'a, Result<Option<SessionSnapshot>, PersistenceError>> {
        self.inner.load(id)
    }
    fn delete<'a>(&'a self, id: &'a str) -> BoxFuture<'a, Result<(), PersistenceError>> {
        self.inner.delete(id)
    }
}

#[tokio::test(start_paused = true)]
async fn slow_saves_never_hold_the_lane_up_and_never_land_out_of_order() {
    let mut server = ScriptedServer::bind().await;
    let backend = Arc::new(SlowBackend {
        inner: MemoryPersistence::new(),
        delay: Duration::from_secs(2),
        saved: Mutex::new(Vec::new()),
    });
    let persistence: Arc<dyn SessionPersistence> = backend.clone();
    let mut rig = Rig::start(&mut server, |b| b.persistence(persistence).session_id(ID)).await;
    for n in 1..=3 {
        let at = rig.exchange(&format!("question {n}"), "answer").await;
        assert_eq!(
            rig.now(),
            at,
            "turn {n}: the lane did not wait for the save"
        );
    }
    let handle = rig.handle.clone();
    let ending = tokio::spawn(async move { handle.disconnect().await });
    assert_eq!(
        rig.conn.expect_closed().await,
        Some((1000, "client disconnect".to_owned()))
    );
    assert!(!ending.await.unwrap().failed);
    // Turn 1's save was under way; the snapshots of turns 2 and 3 and the final one waited
    // behind it, and only the latest of them, the final one, was saved. The lane waited for
    // it before the session ended.
    assert_eq!(*backend.saved.lock().unwrap(), [1, 3]);
    let last = backend.inner.get(ID).unwrap();
    assert_eq!(last.turn_count, 3);
    assert_eq!(last.state["session:disconnected"], json!(true));
}

#[tokio::test(start_paused = true)]
async fn a_session_resumes_from_its_snapshot() {
    let mut server = ScriptedServer::bind().await;
    let store = Arc::new(MemoryPersistence::new());
    let saved = snapshot(
        2,
        json!({
            "caller": {"name": "Ada"},
            "derived:name": "Ada",
            "session:active_phase": "booking",
            "session:turn_count": 2
        }),
    );
    store.save(ID, &saved).await.unwrap();
    let log: Arc<Mutex<Vec<String>>> = Arc::default();
    let (resumed, connected) = (Arc::clone(&log), Arc::clone(&log));
    let callbacks = ControlCallbacks {
        on_resumed: Some(AsyncCallback::new(
            CallbackMode::Blocking,
            move |(snapshot, state): (SessionSnapshot, State)| {
                let log = Arc::clone(&resumed);
                async move {
                    let name = state.get::<String>("name").unwrap_or_default();
                    log.lock().unwrap().push(format!(
                        "resumed in {} after {} turns, name {name}",
                        snapshot.phase, snapshot.turn_count
                    ));
                }
            },
        )),
        on_connected: Some(AsyncCallback::new(
            CallbackMode::Blocking,
            move |_writer: SessionWriter| {
                let log = Arc::clone(&connected);
                async move { log.lock().unwrap().push("connected".into()) }
            },
        )),
        ..ControlCallbacks::default()
    };
    let entered = Arc::clone(&log);
    let phases = PhaseMachine::builder("greeting")
        .phase(
            Phase::new("greeting")
                .instruction("Greet the caller and ask their name.")
                .on_enter(move |_state, _writer| {
                    let log = Arc::clone(&entered);
                    async move { log.lock().unwrap().push("entered greeting".into()) }
                })
                .transition("booking", |s| s.contains("name")),
        )
        .phase(Phase::new("booking").instruction("Book a table."))
        .build()
        .unwrap();
    let backend: Arc<dyn SessionPersistence> = store.clone();
    let mut rig = Rig::start(&mut server, |b| {
        b.phases(phases)
            .control_callbacks(callbacks)
            .persistence(backend)
            .session_id(ID)
    })
    .await;

    // The setup: the saved phase's instruction, and the saved handle presented.
    assert_eq!(
        rig.setup,
        json!({"setup": {
            "model": "models/gemini-live-2.5-flash-native-audio",
            "generationConfig": {"responseModalities": ["AUDIO"]},
            "systemInstruction": {"parts": [{"text": "Book a table."}]},
            "sessionResumption": {"handle": "h-9"}
        }})
    );
    assert_eq!(rig.handle.resume_handle().as_deref(), Some("h-9"));
    assert_eq!(
        rig.control(&["resumed"]),
        [LiveEvent::Resumed {
            phase: "booking".into(),
            turn_count: 2
        }]
    );
    assert_eq!(
        *log.lock().unwrap(),
        ["resumed in booking after 2 turns, name Ada", "connected"],
        "the initial phase is not entered"
    );
    // The restore is the journal's first batch, at the session's start.
    let first: Vec<(String, Value, u64)> = rig
        .journal
        .entries()
        .into_iter()
        .take(4)
        .map(|m| (m.key, m.new, m.timestamp_ms))
        .collect();
    assert_eq!(
        first,
        [
            ("caller".into(), json!({"name": "Ada"}), T0),
            ("derived:name".into(), json!("Ada"), T0),
            ("session:active_phase".into(), json!("booking"), T0),
            ("session:turn_count".into(), json!(2), T0),
        ]
    );

    // The conversation goes on from turn 3, in the saved phase.
    let at = rig.exchange("A table for two.", "Done.").await;
    assert_eq!(rig.handle.transcript()[0].turn_number, 3);
    assert_eq!(rig.handle.state().get::<u32>("session:turn_count"), Some(3));
    rig.settle().await;
    let after = store.get(ID).unwrap();
    assert_eq!(
        (
            after.phase.as_str(),
            after.turn_count,
            after.resume_handle.as_deref()
        ),
        ("booking", 3, Some("h-9"))
    );
    assert_eq!(after.saved_at, reel_actors::persistence::rfc3339_utc(at));
    assert_eq!(
        after.transcript_summary,
        "[Turn 3]\nUser: A table for two.\nModel: Done."
    );
}

#[tokio::test]
async fn the_builder_says_what_is_wrong_with_its_persistence() {
    let builder = || LiveSessionBuilder::new(SessionConfig::default(), ApiEndpoint::offline());
    let store = Arc::new(MemoryPersistence::new());
    let refused = builder()
        .persistence(store.clone())
        .spawn()
        .await
        .unwrap_err();
    assert!(matches!(refused, SessionStartError::MissingSessionId));
    assert_eq!(
        refused.to_string(),
        "persistence is configured but the session has no id: call .session_id(..) so the \
         session knows which snapshot to load and save"
    );

    let refused = builder()
        .persistence(store.clone())
        .session_id("user/42")
        .spawn()
        .await
        .unwrap_err();
    assert_eq!(
        refused.to_string(),
        "invalid session id \"user/42\": it holds '/' at byte 4; use only ASCII letters, \
         digits, '-', '_' and '.'"
    );

    let mut gone = snapshot(1, json!({}));
    gone.phase = "checkout".into();
    store.save(ID, &gone).await.unwrap();
    let refused = builder()
        .phases(phases())
        .persistence(store.clone())
        .session_id(ID)
        .spawn()
        .await
        .unwrap_err();
    assert_eq!(
        refused.to_string(),
        "the snapshot of session \"caller-7\" is in phase `checkout`, which the session's \
         phases do not have; add the phase, or delete the snapshot to start afresh"
    );

    let root = scratch("builder");
    std::fs::create_dir_all(&root).unwrap();
    std::fs::write(root.join("caller-7.json"), "not json").unwrap();
    let refused = builder()
        .persistence(Arc::new(FsPersistence::new(&root)))
        .session_id(ID)
        .spawn()
        .await
        .unwrap_err();
    assert!(matches!(
        refused,
        SessionStartError::Persistence(PersistenceError::Corrupt { .. })
    ));
    std::fs::remove_dir_all(&root).unwrap();
}

/// A backend that tells owners apart, like SQLite and PostgreSQL: one claim per id at a
/// time, given up by `release` on the blocking pool (as closing a lock file is).
#[derive(Default)]
struct Exclusive {
    snapshots: MemoryPersistence,
    held: Arc<Mutex<std::collections::BTreeSet<String>>>,
}

struct ExclusiveClaim {
    backend: Arc<Exclusive>,
    id: String,
}

impl reel_actors::persistence::SessionClaim for ExclusiveClaim {
    fn save<'a>(
        &'a self,
        snapshot: &'a SessionSnapshot,
    ) -> BoxFuture<'a, Result<(), PersistenceError>> {
        self.backend.snapshots.save(&self.id, snapshot)
    }
    fn generation(&self) -> u64 {
        1
    }
    fn release(self: Box<Self>) -> BoxFuture<'static, ()> {
        Box::pin(async move {
            let held = Arc::clone(&self.backend.held);
            let id = self.id.clone();
            let _ = tokio::task::spawn_blocking(move || held.lock().unwrap().remove(&id)).await;
        })
    }
}

impl SessionPersistence for Exclusive {
    fn save<'a>(
        &'a self,
        session_id: &'a str,
        snapshot: &'a SessionSnapshot,
    ) -> BoxFuture<'a, Result<(), PersistenceError>> {
        self.snapshots.save(session_id, snapshot)
    }
    fn load<'a>(
        &'a self,
        session_id: &'a str,
    ) -> BoxFuture<'a, Result<Option<SessionSnapshot>, PersistenceError>> {
        self.snapshots.load(session_id)
    }
    fn delete<'a>(&'a self, session_id: &'a str) -> BoxFuture<'a, Result<(), PersistenceError>> {
        self.snapshots.delete(session_id)
    }
    fn claim(
        self: Arc<Self>,
        session_id: String,
    ) -> BoxFuture<'static, Result<Box<dyn reel_actors::persistence::SessionClaim>, PersistenceError>>
    {
        Box::pin(async move {
            if !self.held.lock().unwrap().insert(session_id.clone()) {
                return Err(PersistenceError::Claimed {
                    session_id,
                    holder: "a session of this test".into(),
                });
            }
            Ok(Box::new(ExclusiveClaim {
                backend: self,
                id: session_id,
            })
                as Box<dyn reel_actors::persistence::SessionClaim>)
        })
    }
}

/// Issue 26, promise 5: when `disconnect()` returns, and when a failed `connect()` returns,
/// the session's id is free: a new session with it is not refused `Claimed`.
#[tokio::test]
async fn the_id_is_free_when_disconnect_or_a_failed_connect_returns() {
    let backend = Arc::new(Exclusive::default());
    let mut server = ScriptedServer::bind().await;
    let endpoint = server.endpoint();
    let builder = || {
        LiveSessionBuilder::new(SessionConfig::default(), endpoint.clone())
            .persistence(Arc::clone(&backend) as Arc<dyn SessionPersistence>)
            .session_id(ID)
    };
    for round in 0..3 {
        let first = builder();
        let script = async {
            let mut conn = server.accept().await;
            conn.recv_json().await;
            conn.send_json(&json!({"setupComplete": {}})).await;
            conn
        };
        let (handle, mut conn) = tokio::join!(first.connect(), script);
        let handle = handle.unwrap();
        let (end, _) = tokio::join!(handle.disconnect(), conn.expect_closed());
        assert!(!end.failed, "round {round}: {end:?}");
        // At once: no wait, no retry.
        let claim = Arc::clone(&backend)
            .claim(ID.into())
            .await
            .unwrap_or_else(|e| panic!("round {round}, after disconnect: {e}"));
        claim.release().await;

        // A connect the server refuses: the setup is answered with a close.
        let refused = builder();
        let script = async {
            let mut conn = server.accept().await;
            conn.recv_json().await;
            conn.close(1008, "not allowed").await;
        };
        let (connected, ()) = tokio::join!(refused.connect(), script);
        assert!(connected.is_err(), "round {round}: the connect failed");
        let claim = Arc::clone(&backend)
            .claim(ID.into())
            .await
            .unwrap_or_else(|e| panic!("round {round}, after a failed connect: {e}"));
        claim.release().await;
    }
}
