//! The session state: exact journals through the StateStore actor and without it, delta
//! views, atomic modify, the ring, snapshots, and surviving a failed store.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use reel_actors::clock::{ManualClock, SharedClock};
use reel_actors::mailbox::{Ended, Instance, NoMsg, spawn_consumer};
use reel_actors::state::{
    RECENT_MUTATIONS, State, StateError, StateKey, StateMutation, StateStore, StateStoreArgs,
    store_mailbox,
};
use reel_recorder::journal::{FileJournalSink, MemoryJournalSink, read_journal};
use serde_json::{Value, json};
use tokio::sync::mpsc;

const T0: u64 = 1_718_000_000_456;

fn entry(
    sequence: u64,
    key: &str,
    old: Value,
    new: Value,
    origin: &str,
    timestamp_ms: u64,
    delta: bool,
) -> StateMutation {
    StateMutation {
        sequence,
        key: key.to_owned(),
        old,
        new,
        origin: origin.to_owned(),
        timestamp_ms,
        delta,
    }
}

/// A state with a memory journal and a manual clock at [`T0`].
fn journaled_state() -> (State, Arc<MemoryJournalSink>, Arc<ManualClock>) {
    let state = State::new();
    let journal = Arc::new(MemoryJournalSink::new());
    state.set_journal_sink(journal.clone());
    let clock = Arc::new(ManualClock::new(T0));
    state.set_clock(clock.clone());
    (state, journal, clock)
}

async fn spawn_store(
    state: &State,
    clock: &Arc<ManualClock>,
) -> (Instance<NoMsg>, tokio::task::JoinHandle<()>) {
    let clock: SharedClock = clock.clone();
    StateStore::spawn(StateStoreArgs::standalone(state.clone(), clock))
        .await
        .unwrap()
}

/// The same writes, whoever applies them.
async fn script(state: &State, clock: &ManualClock) {
    state.set("app:last_city", "London").await.unwrap();
    assert_eq!(
        state
            .modify("session:turn_count", 0u32, |n| n + 1)
            .await
            .unwrap(),
        1
    );
    clock.advance(Duration::from_millis(100));
    assert_eq!(
        state
            .modify("session:turn_count", 0u32, |n| n + 1)
            .await
            .unwrap(),
        2
    );
    state.set("app:last_city", "London").await.unwrap(); // no change: not journaled
    state
        .set_many([("turn:b", json!(2)), ("turn:a", json!({"x": [1]}))])
        .await
        .unwrap();
    clock.advance(Duration::from_millis(44));
    assert_eq!(
        state.remove("app:last_city").await.unwrap(),
        Some(json!("London"))
    );
    assert_eq!(state.remove("app:last_city").await.unwrap(), None); // absent: not journaled
    assert_eq!(state.clear_prefix("turn:").await.unwrap(), 2);
}

fn script_journal() -> Vec<StateMutation> {
    vec![
        entry(
            1,
            "app:last_city",
            Value::Null,
            json!("London"),
            "set",
            T0,
            false,
        ),
        entry(
            2,
            "session:turn_count",
            Value::Null,
            json!(1),
            "modify",
            T0,
            false,
        ),
        entry(
            3,
            "session:turn_count",
            json!(1),
            json!(2),
            "modify",
            T0 + 100,
            false,
        ),
        entry(4, "turn:b", Value::Null, json!(2), "set", T0 + 100, false),
        entry(
            5,
            "turn:a",
            Value::Null,
            json!({"x": [1]}),
            "set",
            T0 + 100,
            false,
        ),
        entry(
            6,
            "app:last_city",
            json!("London"),
            Value::Null,
            "remove",
            T0 + 144,
            false,
        ),
        entry(
            7,
            "turn:a",
            json!({"x": [1]}),
            Value::Null,
            "clear_prefix",
            T0 + 144,
            false,
        ),
        entry(
            8,
            "turn:b",
            json!(2),
            Value::Null,
            "clear_prefix",
            T0 + 144,
            false,
        ),
    ]
}

const SCRIPT_JSONL: &str = concat!(
    r#"{"sequence":1,"key":"app:last_city","old":null,"new":"London","origin":"set","timestamp_ms":1718000000456,"delta":false}"#,
    "\n",
    r#"{"sequence":2,"key":"session:turn_count","old":null,"new":1,"origin":"modify","timestamp_ms":1718000000456,"delta":false}"#,
    "\n",
    r#"{"sequence":3,"key":"session:turn_count","old":1,"new":2,"origin":"modify","timestamp_ms":1718000000556,"delta":false}"#,
    "\n",
    r#"{"sequence":4,"key":"turn:b","old":null,"new":2,"origin":"set","timestamp_ms":1718000000556,"delta":false}"#,
    "\n",
    r#"{"sequence":5,"key":"turn:a","old":null,"new":{"x":[1]},"origin":"set","timestamp_ms":1718000000556,"delta":false}"#,
    "\n",
    r#"{"sequence":6,"key":"app:last_city","old":"London","new":null,"origin":"remove","timestamp_ms":1718000000600,"delta":false}"#,
    "\n",
    r#"{"sequence":7,"key":"turn:a","old":{"x":[1]},"new":null,"origin":"clear_prefix","timestamp_ms":1718000000600,"delta":false}"#,
    "\n",
    r#"{"sequence":8,"key":"turn:b","old":2,"new":null,"origin":"clear_prefix","timestamp_ms":1718000000600,"delta":false}"#,
    "\n",
);

#[tokio::test]
async fn the_store_actor_journals_exact_entries() {
    let (state, journal, clock) = journaled_state();
    let (store, join) = spawn_store(&state, &clock).await;
    assert!(state.is_attached());

    script(&state, &clock).await;

    assert_eq!(journal.entries(), script_journal());
    assert_eq!(state.recent_mutations(), script_journal());
    assert_eq!(state.mutation_cursor(), 8);
    assert_eq!(state.mutations_since(6), script_journal()[6..].to_vec());
    assert_eq!(state.snapshot().to_json(), json!({"session:turn_count": 2}));

    store.stop();
    join.await.unwrap();
    assert!(!state.is_attached(), "a cleanly stopped store detaches");
    assert_eq!(journal.flush_count(), 1, "and flushes the journal");
}

#[tokio::test]
async fn a_standalone_state_journals_the_same_entries_as_the_actor() {
    let (state, journal, clock) = journaled_state();
    assert!(!state.is_attached());
    script(&state, &clock).await;
    assert_eq!(journal.entries(), script_journal());
}

/// A journal file under the temp dir, removed when dropped.
struct TempJournal(PathBuf);

impl TempJournal {
    fn new(name: &str) -> Self {
        let path = std::env::temp_dir().join(format!(
            "reel-actors-{}-{name}.journal.jsonl",
            std::process::id()
        ));
        let _ = std::fs::remove_file(&path);
        TempJournal(path)
    }
}

impl Drop for TempJournal {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

#[tokio::test]
async fn a_file_journal_holds_the_expected_lines() {
    let file = TempJournal::new("script");
    let state = State::new();
    state.set_journal_sink(Arc::new(FileJournalSink::create(&file.0).unwrap()));
    let clock = Arc::new(ManualClock::new(T0));
    let (store, join) = spawn_store(&state, &clock).await;

    script(&state, &clock).await;
    store.stop();
    join.await.unwrap(); // post_stop flushes the sink

    assert_eq!(std::fs::read_to_string(&file.0).unwrap(), SCRIPT_JSONL);
    assert_eq!(read_journal(&file.0).unwrap(), script_journal());
}

#[tokio::test]
async fn a_delta_commit_journals_delta_entries_in_write_order() {
    let (state, journal, clock) = journaled_state();
    let (_store, _join) = spawn_store(&state, &clock).await;
    state.set("app:city", "London").await.unwrap();

    let delta = state.with_delta();
    let other_handle = delta.clone();
    delta.set("app:city", "Paris").unwrap();
    other_handle.set("temp:tries", 1).unwrap();
    delta.remove("app:city");
    delta.set("app:city", "Rome").unwrap();
    assert!(delta.is_dirty());
    assert_eq!(delta.get::<String>("app:city").as_deref(), Some("Rome"));
    assert_eq!(other_handle.get::<u32>("temp:tries"), Some(1));
    assert_eq!(state.get::<String>("app:city").as_deref(), Some("London"));
    assert_eq!(state.get_raw("temp:tries"), None);

    clock.set(T0 + 7);
    other_handle.commit().await.unwrap();
    assert!(!delta.is_dirty(), "clones share one buffer");
    assert_eq!(state.get::<String>("app:city").as_deref(), Some("Rome"));
    assert_eq!(
        journal.entries(),
        vec![
            entry(
                1,
                "app:city",
                Value::Null,
                json!("London"),
                "set",
                T0,
                false
            ),
            entry(
                2,
                "app:city",
                json!("London"),
                json!("Paris"),
                "set",
                T0 + 7,
                true
            ),
            entry(3, "temp:tries", Value::Null, json!(1), "set", T0 + 7, true),
            entry(
                4,
                "app:city",
                json!("Paris"),
                Value::Null,
                "remove",
                T0 + 7,
                true
            ),
            entry(
                5,
                "app:city",
                Value::Null,
                json!("Rome"),
                "set",
                T0 + 7,
                true
            ),
        ]
    );
}

#[tokio::test]
async fn a_delta_removal_is_a_tombstone_for_reads() {
    let (state, _journal, _clock) = journaled_state();
    state.set("app:city", "London").await.unwrap();
    let delta = state.with_delta();
    delta.remove("app:city");
    assert_eq!(delta.get_raw("app:city"), None);
    assert!(!delta.contains("app:city"));
    assert!(state.contains("app:city"));
}

#[tokio::test]
async fn a_delta_rollback_journals_nothing() {
    let (state, journal, clock) = journaled_state();
    let (_store, _join) = spawn_store(&state, &clock).await;
    let delta = state.with_delta();
    delta.set("app:city", "Paris").unwrap();
    delta.remove("app:other");
    delta.rollback();
    assert!(!delta.is_dirty());
    assert_eq!(delta.get_raw("app:city"), None);
    delta.commit().await.unwrap(); // nothing to commit
    assert_eq!(journal.entries(), vec![]);
    assert!(state.is_empty());
}

async fn hundred_concurrent_increments(state: &State) {
    let tasks: Vec<_> = (0..100)
        .map(|_| {
            let state = state.clone();
            tokio::spawn(async move { state.modify("app:n", 0u64, |n| n + 1).await })
        })
        .collect();
    let mut results = Vec::new();
    for task in tasks {
        results.push(task.await.unwrap().unwrap());
    }
    results.sort_unstable();
    assert_eq!(results, (1..=100).collect::<Vec<u64>>());
    assert_eq!(state.get::<u64>("app:n"), Some(100));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn modify_is_atomic_under_concurrency_through_the_store() {
    let (state, journal, clock) = journaled_state();
    let (_store, _join) = spawn_store(&state, &clock).await;
    hundred_concurrent_increments(&state).await;
    let news: Vec<Value> = journal.entries().into_iter().map(|m| m.new).collect();
    assert_eq!(news, (1..=100).map(|n| json!(n)).collect::<Vec<_>>());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn modify_is_atomic_under_concurrency_without_a_store() {
    let (state, journal, _clock) = journaled_state();
    hundred_concurrent_increments(&state).await;
    let sequences: Vec<u64> = journal.entries().iter().map(|m| m.sequence).collect();
    assert_eq!(sequences, (1..=100).collect::<Vec<u64>>());
}

#[tokio::test]
async fn the_ring_keeps_the_last_1024_mutations() {
    let (state, journal, clock) = journaled_state();
    let (_store, _join) = spawn_store(&state, &clock).await;
    let total = RECENT_MUTATIONS as u64 + 76;
    for i in 1..=total {
        state.set("app:i", i).await.unwrap();
    }
    let recent = state.recent_mutations();
    assert_eq!(recent.len(), 1024);
    assert_eq!(recent.first().unwrap().sequence, 77);
    assert_eq!(recent.last().unwrap().sequence, total);
    assert_eq!(
        recent.last().unwrap(),
        &entry(
            total,
            "app:i",
            json!(total - 1),
            json!(total),
            "set",
            T0,
            false
        )
    );
    assert_eq!(
        journal.entries().len() as u64,
        total,
        "the sink keeps them all"
    );
    assert_eq!(state.mutation_cursor(), total);
    assert_eq!(state.mutations_since(total), vec![]);
    assert_eq!(
        state
            .mutations_since(total - 2)
            .iter()
            .map(|m| m.sequence)
            .collect::<Vec<_>>(),
        vec![total - 1, total]
    );
    assert_eq!(state.mutations_since(0).len(), 1024, "older ones are gone");
}

#[tokio::test]
async fn a_snapshot_taken_before_a_write_does_not_see_it() {
    let (state, _journal, clock) = journaled_state();
    let (_store, _join) = spawn_store(&state, &clock).await;
    state.set("app:city", "London").await.unwrap();
    let before = state.snapshot();
    state.set("app:city", "Paris").await.unwrap();
    state.set("app:new", true).await.unwrap();
    assert_eq!(before.get::<String>("app:city").as_deref(), Some("London"));
    assert!(!before.contains("app:new"));
    assert_eq!(before.cursor(), 1);
    assert_eq!(before.keys().collect::<Vec<_>>(), vec!["app:city"]);
    assert_eq!(
        state.snapshot().to_json(),
        json!({"app:city": "Paris", "app:new": true})
    );
}

#[tokio::test]
async fn writes_after_the_store_stopped_apply_directly() {
    let (state, journal, clock) = journaled_state();
    let (store, join) = spawn_store(&state, &clock).await;
    state.set("a", 1).await.unwrap();
    store.stop();
    join.await.unwrap();
    state.set("a", 2).await.unwrap();
    assert_eq!(
        journal.entries(),
        vec![
            entry(1, "a", Value::Null, json!(1), "set", T0, false),
            entry(2, "a", json!(1), json!(2), "set", T0, false),
        ]
    );
}

// ---- a failing store, restarted by a supervisor ----

/// What the test supervisor reports.
#[derive(Debug)]
enum Report {
    Failed(String),
    Restarted(Instance<NoMsg>),
}

/// A task that respawns a StateStore, on the same state and mailbox, when it fails (as the
/// session's supervisor does, without its backoff and limits); stopped, it stops the store
/// and ends once the store has.
struct TestSupervisor {
    stop: tokio::sync::oneshot::Sender<()>,
}

impl TestSupervisor {
    fn stop(self) {
        let _ = self.stop.send(());
    }
}

/// Starts a store whose end is sent to `ends`.
async fn spawn_reporting(
    args: &StateStoreArgs,
    ends: &mpsc::UnboundedSender<Ended>,
) -> Instance<NoMsg> {
    let ends = ends.clone();
    let (store, _task) = spawn_consumer::<StateStore, _>(args.clone(), move |ended| {
        let _ = ends.send(ended);
    })
    .await
    .unwrap();
    store
}

/// A store under a test supervisor that restarts it on the same inbox: the supervisor, its
/// task, its reports and the first store.
async fn supervised(
    state: &State,
    clock: &Arc<ManualClock>,
) -> (
    TestSupervisor,
    tokio::task::JoinHandle<()>,
    mpsc::UnboundedReceiver<Report>,
    Instance<NoMsg>,
) {
    let (reports_tx, reports) = mpsc::unbounded_channel();
    let (ends_tx, mut ends) = mpsc::unbounded_channel();
    let (stop_tx, mut stop_rx) = tokio::sync::oneshot::channel();
    let clock: SharedClock = clock.clone();
    let args = StateStoreArgs {
        state: state.clone(),
        clock,
        mailbox: store_mailbox(),
    };
    let first = spawn_reporting(&args, &ends_tx).await;
    let mut current = first.clone();
    let join = tokio::spawn(async move {
        loop {
            tokio::select! {
                _ = &mut stop_rx => {
                    current.stop();
                    while let Some(ended) = ends.recv().await {
                        if ended.instance == current.id() {
                            return;
                        }
                    }
                    return;
                }
                Some(ended) = ends.recv() => {
                    if let Some(failure) = ended.failure {
                        let _ = reports_tx.send(Report::Failed(failure));
                        current = spawn_reporting(&args, &ends_tx).await;
                        let _ = reports_tx.send(Report::Restarted(current.clone()));
                    }
                }
            }
        }
    });
    (TestSupervisor { stop: stop_tx }, join, reports, first)
}

#[tokio::test]
async fn a_panicking_modify_fails_the_store_and_a_restarted_store_continues() {
    let (state, journal, clock) = journaled_state();
    let (supervisor, supervisor_join, mut reports, first) = supervised(&state, &clock).await;

    state.set("app:city", "London").await.unwrap();
    state.set("session:turn_count", 1).await.unwrap();

    let failed = state
        .modify("session:turn_count", 0u32, |_| {
            panic!("a bug in a modify closure")
        })
        .await;
    assert!(
        matches!(failed, Err(StateError::StoreUnavailable { .. })),
        "{failed:?}"
    );

    match reports.recv().await.unwrap() {
        Report::Failed(reason) => assert!(reason.contains("a bug in a modify closure"), "{reason}"),
        other => panic!("expected a failure, got {other:?}"),
    }
    let second = match reports.recv().await.unwrap() {
        Report::Restarted(store) => store,
        other => panic!("expected a restart, got {other:?}"),
    };
    assert_ne!(first.id(), second.id());
    assert!(state.is_attached());

    // The state from before the failed write is intact, and nothing was journaled for it.
    assert_eq!(state.get::<String>("app:city").as_deref(), Some("London"));
    assert_eq!(state.get::<u32>("session:turn_count"), Some(1));
    assert_eq!(state.mutation_cursor(), 2);

    // The restarted store continues the same journal.
    clock.advance(Duration::from_millis(1));
    assert_eq!(
        state
            .modify("session:turn_count", 0u32, |n| n + 1)
            .await
            .unwrap(),
        2
    );
    assert_eq!(
        journal.entries(),
        vec![
            entry(
                1,
                "app:city",
                Value::Null,
                json!("London"),
                "set",
                T0,
                false
            ),
            entry(
                2,
                "session:turn_count",
                Value::Null,
                json!(1),
                "set",
                T0,
                false
            ),
            entry(
                3,
                "session:turn_count",
                json!(1),
                json!(2),
                "modify",
                T0 + 1,
                false
            ),
        ]
    );

    supervisor.stop();
    supervisor_join.await.unwrap();
}

#[tokio::test]
async fn a_panicking_modify_without_a_store_leaves_the_state_intact() {
    let (state, journal, _clock) = journaled_state();
    state.set("n", 1).await.unwrap();
    let failed = state.modify("n", 0u32, |_| panic!("boom")).await;
    assert!(matches!(failed, Err(StateError::StoreUnavailable { .. })));
    assert_eq!(state.get::<u32>("n"), Some(1));
    state.set("n", 2).await.unwrap();
    assert_eq!(journal.entries().len(), 2);
}

// ---- the typed and scoped API ----

#[tokio::test]
async fn modify_on_a_value_of_another_shape_writes_nothing() {
    let (state, journal, _clock) = journaled_state();
    state.set("app:n", "not a number").await.unwrap();
    let result = state.modify("app:n", 0u64, |n| n + 1).await;
    assert_eq!(
        result,
        Err(StateError::WrongType {
            key: "app:n".to_owned(),
            found: "string",
            expected: "u64",
        })
    );
    assert_eq!(
        state.get::<String>("app:n").as_deref(),
        Some("not a number")
    );
    assert_eq!(journal.entries().len(), 1);
}

#[tokio::test]
async fn setting_null_removes_the_key() {
    let (state, journal, _clock) = journaled_state();
    state.set("app:x", 1).await.unwrap();
    state.set("app:x", None::<u32>).await.unwrap();
    assert!(!state.contains("app:x"));
    assert_eq!(
        journal.entries()[1],
        entry(2, "app:x", json!(1), Value::Null, "set", T0, false)
    );
}

#[tokio::test]
async fn scopes_prefix_their_keys_and_strip_them_in_keys() {
    let state = State::new();
    state.app().set("city", "London").await.unwrap();
    state.app().set("zone", 1).await.unwrap();
    state.user().set("name", "Ada").await.unwrap();
    state.turn().set("said", "hi").await.unwrap();
    state.set("apple", 1).await.unwrap(); // not under `app:`
    assert_eq!(state.app().keys(), vec!["city", "zone"]);
    assert_eq!(state.user().get::<String>("name").as_deref(), Some("Ada"));
    assert_eq!(state.get::<String>("app:city").as_deref(), Some("London"));
    assert_eq!(
        state.keys(),
        vec!["app:city", "app:zone", "apple", "turn:said", "user:name"]
    );
    assert_eq!(state.turn().clear().await.unwrap(), 1);
    assert_eq!(state.turn().keys(), Vec::<String>::new());
    assert_eq!(
        state.app().remove("city").await.unwrap(),
        Some(json!("London"))
    );
    assert_eq!(
        state.session().modify("n", 1u8, |n| n * 2).await.unwrap(),
        2
    );
    assert_eq!(state.get::<u8>("session:n"), Some(2));
    for (scope, prefix) in [
        (state.temp(), "temp:"),
        (state.bg(), "bg:"),
        (state.session(), "session:"),
    ] {
        assert_eq!(scope.prefix(), prefix);
    }
}

#[tokio::test]
async fn derived_values_stand_in_for_missing_unprefixed_keys() {
    let state = State::new();
    state.set("derived:risk", "high").await.unwrap();
    assert_eq!(
        state.derived().get::<String>("risk").as_deref(),
        Some("high")
    );
    assert_eq!(state.derived().keys(), vec!["risk"]);
    assert_eq!(state.get::<String>("risk").as_deref(), Some("high"));
    assert!(state.contains("risk"));
    assert_eq!(
        state.get_raw("app:risk"),
        None,
        "prefixed keys do not fall back"
    );
    state.set("risk", "low").await.unwrap();
    assert_eq!(
        state.get::<String>("risk").as_deref(),
        Some("low"),
        "direct key wins"
    );
}

#[tokio::test]
async fn typed_keys_read_and_write_their_type() {
    const TURN_COUNT: StateKey<u32> = StateKey::new("session:turn_count");
    let state = State::new();
    assert_eq!(state.get_key(&TURN_COUNT), None);
    state.set_key(&TURN_COUNT, 3).await.unwrap();
    assert_eq!(state.get_key(&TURN_COUNT), Some(3));
    assert_eq!(
        state.modify_key(&TURN_COUNT, 0, |n| n + 1).await.unwrap(),
        4
    );
    assert_eq!(state.get_raw("session:turn_count"), Some(json!(4)));
    assert_eq!(TURN_COUNT.name(), "session:turn_count");
}

#[tokio::test]
async fn state_with_borrows_without_cloning() {
    let state = State::new();
    state.set("app:list", [1, 2, 3]).await.unwrap();
    let len = state.with("app:list", |v| v.and_then(Value::as_array).map(Vec::len));
    assert_eq!(len, Some(3));
}

/// Writes queued behind the one that fails the store must not be lost with it (they wait
/// in the inbox, which outlives the failed instance). Three writers queue at once behind a panicking modify; the
/// modify's writer gets the error, the other three writes are applied, in order, by the
/// restarted store.
#[tokio::test]
async fn a_store_failure_loses_no_other_writers_write() {
    let (state, journal, clock) = journaled_state();
    let (supervisor, supervisor_join, mut reports, _first) = supervised(&state, &clock).await;

    let (failed, a, b, c) = tokio::join!(
        state.modify("n", 0u32, |_| panic!("a bug in a modify closure")),
        state.set("app:a", 1),
        state.set("app:b", 2),
        state.modify("app:c", 10u32, |n| n + 1),
    );
    assert!(
        matches!(failed, Err(StateError::StoreUnavailable { .. })),
        "{failed:?}"
    );
    assert_eq!((a, b, c), (Ok(()), Ok(()), Ok(11)));
    assert!(matches!(reports.recv().await, Some(Report::Failed(_))));
    assert!(matches!(reports.recv().await, Some(Report::Restarted(_))));
    let keys: Vec<(u64, String)> = journal
        .entries()
        .into_iter()
        .map(|m| (m.sequence, m.key))
        .collect();
    assert_eq!(
        keys,
        [
            (1, "app:a".to_owned()),
            (2, "app:b".to_owned()),
            (3, "app:c".to_owned())
        ]
    );
    supervisor.stop();
    supervisor_join.await.unwrap();
}
