//! Session state: one actor owns a persistent map of JSON values; everyone else reads
//! snapshots and sends writes.
//!
//! - **Reads** ([`State::get`], [`State::snapshot`], …) load the current version of an
//!   [`imbl::OrdMap`] from an `ArcSwap`: no lock, no message, no copy of the map.
//! - **Writes** ([`State::set`], [`State::modify`], …) are batches of [`StateOp`]s applied
//!   by one pure function. In a session they go to the [`StateStore`] actor, the single
//!   writer; a `State` with no store attached (a unit test of a tool, before connect)
//!   applies them itself under a small lock. Both paths journal identically.
//! - **Rules**: JSON `null` is absence (setting a key to `null` removes it; the map never
//!   holds `null`, so the journal's `null` always means "absent"). A write that changes
//!   nothing (same value, or removing an absent key) is not journaled and takes no
//!   sequence number. All mutations of one batch share one timestamp, read once from the
//!   session clock. `clear_prefix` journals one entry per key removed, in key order.
//! - **Journal**: every mutation is a [`StateMutation`] with a sequence number from 1 and
//!   the session clock's time; the last [`RECENT_MUTATIONS`] stay in a ring
//!   ([`State::recent_mutations`], [`State::mutations_since`]) and all of them go to the
//!   [`JournalSink`], if one is set, synchronously, in order.
//! - The data lives in the `State`, not in the actor, so it survives a restart of the
//!   store.
//!
//! ```
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), reel_actors::state::StateError> {
//! use std::sync::Arc;
//! use reel_actors::state::State;
//! use reel_recorder::journal::MemoryJournalSink;
//!
//! let state = State::new();
//! let journal = Arc::new(MemoryJournalSink::new());
//! state.set_journal_sink(journal.clone());
//! state.set("app:last_city", "London").await?;
//! let count = state.modify("session:turn_count", 0u32, |n| n + 1).await?;
//! assert_eq!(count, 1);
//! assert_eq!(journal.entries().len(), 2);
//! # Ok(())
//! # }
//! ```

mod changes;
mod data;
mod delta;
mod error;
mod journal_writer;
mod key;
mod scope;
mod shared;
mod snapshot;
mod store;

use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

pub use changes::{Change, Changes};
pub use data::{RECENT_MUTATIONS, StateOp};
pub use delta::DeltaState;
pub use error::StateError;
pub use journal_writer::{JOURNAL_CAPACITY, JOURNAL_FLUSH_INTERVAL, JournalWriter};
pub use key::StateKey;
pub use reel_recorder::journal::{JournalSink, StateMutation};
pub use scope::{ReadOnlyScope, Scope, prefix};
pub use snapshot::StateSnapshot;
pub use store::{
    STORE_BOUND, STORE_CAPACITY, StateStore, StateStoreArgs, StoreInbox, StoreMailbox, StoreWrite,
    store_mailbox,
};

use crate::clock::SharedClock;
use crate::inbox::Closed;
use shared::StateShared;

/// How long a write waits for the state store before giving up.
pub const WRITE_TIMEOUT: Duration = Duration::from_secs(5);

/// A handle on the session state. Cheap to clone; all clones see the same state.
#[derive(Clone)]
pub struct State {
    shared: Arc<StateShared>,
}

impl Default for State {
    fn default() -> Self {
        State::new()
    }
}

impl std::fmt::Debug for State {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let data = self.shared.load();
        f.debug_struct("State")
            .field("keys", &data.map.len())
            .field("cursor", &data.cursor())
            .field("attached", &self.is_attached())
            .finish_non_exhaustive()
    }
}

impl State {
    /// A fresh, empty state, not yet attached to a session. Its clock is the wall clock
    /// until a session (or [`State::set_clock`]) gives it the session's.
    pub fn new() -> Self {
        State {
            shared: Arc::new(StateShared::new()),
        }
    }

    pub(crate) fn shared(&self) -> &StateShared {
        &self.shared
    }

    // ---- reads: a load of the current version, no lock ----

    /// The value at `key`, if any (a snapshot read: no lock, no copy of the map).
    ///
    /// For an unprefixed key (no `:`) that is absent, this reads `derived:{key}`: a
    /// computed value stands in for a missing plain one, and a plain one always wins.
    pub fn get_raw(&self, key: &str) -> Option<Value> {
        self.shared.load().lookup(key).cloned()
    }

    /// The value at `key` as `T`, if present and of that shape.
    pub fn get<T: DeserializeOwned>(&self, key: &str) -> Option<T> {
        T::deserialize(self.shared.load().lookup(key)?).ok()
    }

    /// Calls `f` with the value at `key`, borrowed from the current version (no clone).
    pub fn with<R>(&self, key: &str, f: impl FnOnce(Option<&Value>) -> R) -> R {
        f(self.shared.load().lookup(key))
    }

    /// Whether [`State::get_raw`] finds a value.
    pub fn contains(&self, key: &str) -> bool {
        self.shared.load().lookup(key).is_some()
    }

    /// Every key, in order.
    pub fn keys(&self) -> Vec<String> {
        self.shared.load().map.keys().cloned().collect()
    }

    /// How many keys are set.
    pub fn len(&self) -> usize {
        self.shared.load().map.len()
    }

    /// Whether no key is set.
    pub fn is_empty(&self) -> bool {
        self.shared.load().map.is_empty()
    }

    /// The whole state now, in O(1); later writes do not show through it.
    pub fn snapshot(&self) -> StateSnapshot {
        StateSnapshot::new(self.shared.load_full())
    }

    /// The value of a typed key.
    pub fn get_key<T: DeserializeOwned>(&self, key: &StateKey<T>) -> Option<T> {
        self.get(key.name())
    }

    // ---- writes: batches through the store, or applied here when none is attached ----

    /// Sets `key` to `value`. Setting `null` (e.g. `None`) removes the key.
    pub async fn set(&self, key: &str, value: impl Serialize) -> Result<(), StateError> {
        let value = to_json(key, &value)?;
        self.apply_batch(
            vec![StateOp::Set {
                key: key.to_owned(),
                value,
            }],
            false,
        )
        .await?;
        Ok(())
    }

    /// Sets a typed key.
    pub async fn set_key<T: Serialize>(
        &self,
        key: &StateKey<T>,
        value: T,
    ) -> Result<(), StateError> {
        self.set(key.name(), value).await
    }

    /// Sets several keys as one batch: applied together, journaled in the given order.
    pub async fn set_many<K, V, I>(&self, entries: I) -> Result<(), StateError>
    where
        I: IntoIterator<Item = (K, V)>,
        K: Into<String>,
        V: Serialize,
    {
        let ops = entries
            .into_iter()
            .map(|(key, value)| {
                let key = key.into();
                let value = to_json(&key, &value)?;
                Ok(StateOp::Set { key, value })
            })
            .collect::<Result<Vec<_>, StateError>>()?;
        self.apply_batch(ops, false).await?;
        Ok(())
    }

    /// Removes `key`, returning the old value.
    pub async fn remove(&self, key: &str) -> Result<Option<Value>, StateError> {
        let olds = self
            .apply_batch(
                vec![StateOp::Remove {
                    key: key.to_owned(),
                }],
                false,
            )
            .await?;
        Ok(olds.into_iter().next().filter(|old| !old.is_null()))
    }

    /// Replaces the value at `key` with `f` of it (of `default` if absent) and returns the
    /// new value. Atomic: `f` runs on the store's write path, so no other write to the state
    /// comes between the read and the write. It is journaled with origin `modify` (not at
    /// all if `f` returns the value unchanged).
    ///
    /// A value of another shape at `key` is not replaced: the result is
    /// [`StateError::WrongType`] and nothing is written. `f` should be quick and must not
    /// panic: a panic fails the store (the supervisor restarts it), leaves the state as it
    /// was, and this call returns [`StateError::StoreUnavailable`].
    pub async fn modify<T, F>(&self, key: &str, default: T, f: F) -> Result<T, StateError>
    where
        T: Serialize + DeserializeOwned + Send + 'static,
        F: FnOnce(T) -> T + Send + 'static,
    {
        let outcome: Arc<Mutex<Option<Result<T, StateError>>>> = Arc::default();
        let report = Arc::clone(&outcome);
        let name = key.to_owned();
        // `null` is absence, so `Value::Null` as the default means "absent", and the typed
        // default is applied here, where a failure can leave the value as it was.
        let modify = move |current: Value| -> Value {
            let (result, new) = typed_modify(&name, current, default, f);
            *report.lock().unwrap_or_else(PoisonError::into_inner) = Some(result);
            new
        };
        self.apply_batch(
            vec![StateOp::Modify {
                key: key.to_owned(),
                default: Value::Null,
                f: Box::new(modify),
            }],
            false,
        )
        .await?;
        let result = outcome
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take();
        result.unwrap_or_else(|| {
            Err(StateError::StoreUnavailable {
                reason: "the store answered without running the modification".to_owned(),
            })
        })
    }

    /// [`State::modify`] on a typed key.
    pub async fn modify_key<T, F>(
        &self,
        key: &StateKey<T>,
        default: T,
        f: F,
    ) -> Result<T, StateError>
    where
        T: Serialize + DeserializeOwned + Send + 'static,
        F: FnOnce(T) -> T + Send + 'static,
    {
        self.modify(key.name(), default, f).await
    }

    /// Removes every key starting with `prefix` (one journal entry per key, in key order)
    /// and returns how many there were.
    pub async fn clear_prefix(&self, prefix: &str) -> Result<usize, StateError> {
        let olds = self
            .apply_batch(
                vec![StateOp::ClearPrefix {
                    prefix: prefix.to_owned(),
                }],
                false,
            )
            .await?;
        Ok(olds
            .first()
            .and_then(Value::as_object)
            .map_or(0, serde_json::Map::len))
    }

    /// A view whose writes are kept apart until `commit`.
    pub fn with_delta(&self) -> DeltaState {
        DeltaState::new(self.clone())
    }

    /// Applies `ops` as one batch: through the attached store, or here if there is none.
    /// Returns the old value of each op.
    pub(crate) async fn apply_batch(
        &self,
        ops: Vec<StateOp>,
        delta: bool,
    ) -> Result<Vec<Value>, StateError> {
        let Some(inbox) = self.shared.store() else {
            return self.apply_here(ops, delta);
        };
        let (reply, answer) = tokio::sync::oneshot::channel();
        let write = StoreWrite {
            ops,
            delta,
            reply: Some(reply),
        };
        if let Err(Closed(write)) = inbox.push_wait(write).await {
            // The store stopped for good: the data does not live in the actor, so apply
            // the write here, in the order it would have had.
            self.shared.detach_if(&inbox);
            return self.apply_here(write.ops, write.delta);
        }
        match tokio::time::timeout(WRITE_TIMEOUT, answer).await {
            Ok(Ok(olds)) => Ok(olds),
            Ok(Err(_)) => Err(StateError::StoreUnavailable {
                reason: "the state store failed while applying this write (a modify closure \
                         panicked); it was not applied"
                    .to_owned(),
            }),
            Err(_) => Err(StateError::StoreUnavailable {
                reason: format!(
                    "no answer within {} s; the write may still be applied",
                    WRITE_TIMEOUT.as_secs()
                ),
            }),
        }
    }

    /// Applies a batch on the caller's task. A panicking `Modify` closure is caught so that
    /// the caller sees the same error as through the store.
    fn apply_here(&self, ops: Vec<StateOp>, delta: bool) -> Result<Vec<Value>, StateError> {
        let shared = &self.shared;
        std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| shared.apply(ops, delta))).map_err(
            |_| StateError::StoreUnavailable {
                reason: "a modify closure panicked; the write was not applied".to_owned(),
            },
        )
    }

    // ---- prefix scopes ----

    /// The `app:` keys.
    pub fn app(&self) -> Scope {
        Scope::new(self.clone(), prefix::APP)
    }

    /// The `user:` keys.
    pub fn user(&self) -> Scope {
        Scope::new(self.clone(), prefix::USER)
    }

    /// The `session:` keys.
    pub fn session(&self) -> Scope {
        Scope::new(self.clone(), prefix::SESSION)
    }

    /// The `turn:` keys.
    pub fn turn(&self) -> Scope {
        Scope::new(self.clone(), prefix::TURN)
    }

    /// The `temp:` keys.
    pub fn temp(&self) -> Scope {
        Scope::new(self.clone(), prefix::TEMP)
    }

    /// The `bg:` keys.
    pub fn bg(&self) -> Scope {
        Scope::new(self.clone(), prefix::BG)
    }

    /// The `derived:` keys, read-only.
    pub fn derived(&self) -> ReadOnlyScope {
        ReadOnlyScope::new(self.clone(), prefix::DERIVED)
    }

    // ---- journal ----

    /// Sends every mutation from now on to `sink` as well. Shared by all clones and delta
    /// views of this state; replaces any previous sink.
    pub fn set_journal_sink(&self, sink: Arc<dyn JournalSink>) {
        self.shared.set_sink(Some(sink));
    }

    /// Stops sending mutations to the sink.
    pub fn clear_journal_sink(&self) {
        self.shared.set_sink(None);
    }

    /// Flushes the journal sink, if any.
    pub fn flush_journal(&self) {
        if let Some(sink) = self.shared.sink() {
            sink.flush();
        }
    }

    /// Sets where the session's disk work runs (the journal's flushes among it).
    pub(crate) fn set_disk(&self, disk: crate::disk::Disk) {
        self.shared.set_disk(disk);
    }

    /// Where the session's disk work runs.
    pub(crate) fn disk(&self) -> crate::disk::Disk {
        self.shared.disk()
    }

    /// Flushes the journal sink on the session's disk ([`crate::disk::Disk`]): the process's
    /// writer threads, never a worker, or a simulator's disk — or right here when the sink's
    /// flush cannot block ([`Self::journal_flush_blocks`]).
    pub(crate) async fn flush_journal_on_disk(&self) -> Result<(), crate::disk::DiskFailed> {
        let state = self.clone();
        self.disk()
            .run_if(
                crate::disk::DiskWork::JournalFlush,
                self.journal_flush_blocks(),
                move || state.flush_journal(),
            )
            .await
    }

    /// Whether flushing the journal sink may block ([`JournalSink::flush_blocks`]): `false`
    /// without a sink, or with one in memory.
    pub(crate) fn journal_flush_blocks(&self) -> bool {
        self.shared.sink().is_some_and(|sink| sink.flush_blocks())
    }

    /// The last mutations (at most [`RECENT_MUTATIONS`]), oldest first.
    pub fn recent_mutations(&self) -> Vec<StateMutation> {
        let data = self.shared.load();
        data.recent
            .iter()
            .map(|m| StateMutation::clone(m))
            .collect()
    }

    /// Where the session's control lane is in its stream of events: twice the events it
    /// has finished handling, plus one while it handles the next. A write made from
    /// outside the lane (a dispatched resolver's result) is placed by it: an even mark
    /// says the write landed between two events, an odd one inside the handling of one.
    /// Journal sequence numbers alone cannot tell these apart when the events in between
    /// wrote nothing. 0 for a state no session has handled an event on.
    pub fn lane_mark(&self) -> u64 {
        self.shared.lane_mark()
    }

    /// The control lane starts handling an event (see [`State::lane_mark`]).
    pub(crate) fn lane_event_started(&self) {
        self.shared.lane_event_started();
    }

    /// The control lane finished handling an event (see [`State::lane_mark`]).
    pub(crate) fn lane_event_finished(&self) {
        self.shared.lane_event_finished();
    }

    /// The sequence number of the last mutation so far (0 before the first): pass it to
    /// [`State::mutations_since`] later to get what happened in between.
    pub fn mutation_cursor(&self) -> u64 {
        self.shared.load().cursor()
    }

    /// The mutations after `cursor`, oldest first, as far as the ring still holds them (a
    /// cursor more than [`RECENT_MUTATIONS`] behind gets only the last ones).
    pub fn mutations_since(&self, cursor: u64) -> Vec<StateMutation> {
        let data = self.shared.load();
        let Some(oldest) = data.recent.front().map(|m| m.sequence) else {
            return Vec::new();
        };
        // The ring's sequence numbers are consecutive, so the first wanted is at an offset.
        let skip =
            usize::try_from(cursor.saturating_add(1).saturating_sub(oldest)).unwrap_or(usize::MAX);
        data.recent
            .iter()
            .skip(skip)
            .map(|m| StateMutation::clone(m))
            .collect()
    }

    // ---- session plumbing ----

    /// Sets the clock that timestamps mutations (the session's, in a session).
    pub fn set_clock(&self, clock: SharedClock) {
        self.shared.set_clock(clock);
    }

    /// The clock that timestamps mutations.
    pub fn clock(&self) -> SharedClock {
        self.shared.clock()
    }

    /// Whether a [`StateStore`] is attached (writes go through it).
    pub fn is_attached(&self) -> bool {
        self.shared.store().is_some()
    }

    /// Plugs a store in: writes from every clone queue in `inbox` from now on,
    /// timestamped by `clock`. A [`StateStore`] does this itself when it starts.
    pub(crate) fn attach(&self, inbox: Arc<StoreInbox>, clock: SharedClock) {
        self.shared.set_clock(clock);
        self.shared.attach(inbox);
    }

    /// Unplugs the store: writes are applied directly from now on.
    #[allow(dead_code)] // for the session supervisor
    pub(crate) fn detach(&self) {
        self.shared.detach();
    }
}

/// `value` as JSON, or the error naming `key`.
pub(crate) fn to_json(key: &str, value: &impl Serialize) -> Result<Value, StateError> {
    serde_json::to_value(value).map_err(|error| StateError::Serialize {
        key: key.to_owned(),
        message: error.to_string(),
    })
}

/// The typed step of [`State::modify`]: the outcome for the caller, and the value to store
/// (`current` unchanged when there is nothing to write).
pub(crate) fn typed_modify<T, F>(
    key: &str,
    current: Value,
    default: T,
    f: F,
) -> (Result<T, StateError>, Value)
where
    T: Serialize + DeserializeOwned,
    F: FnOnce(T) -> T,
{
    let typed = if current.is_null() {
        default
    } else {
        match T::deserialize(&current) {
            Ok(typed) => typed,
            Err(_) => {
                let error = StateError::WrongType {
                    key: key.to_owned(),
                    found: json_kind(&current),
                    expected: std::any::type_name::<T>(),
                };
                return (Err(error), current);
            }
        }
    };
    let new = f(typed);
    match to_json(key, &new) {
        Ok(value) => (Ok(new), value),
        Err(error) => (Err(error), current),
    }
}

/// The kind of a JSON value, for messages.
fn json_kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}
