//! [`DeltaState`]: a view whose writes wait for `commit` or `rollback`.
//!
//! A tool writes through one: if it fails, its half-done writes are rolled back instead of
//! leaking into the session. The buffer is a list of writes in order (a removal is a
//! tombstone), so the commit replays them as one batch and the journal shows them in the
//! order they were made, each marked `delta: true`.

use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

use super::data::StateOp;
use super::{State, StateError, to_json};

/// A view of the state whose writes are buffered until [`DeltaState::commit`] (applied
/// atomically, journaled with `delta: true`) or [`DeltaState::rollback`] (discarded).
/// Reads see the view's own writes first.
///
/// Clones share one buffer: a write through any clone is committed or rolled back by any
/// other.
///
/// ```
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> Result<(), reel_actors::state::StateError> {
/// use reel_actors::state::State;
///
/// let state = State::new();
/// let delta = state.with_delta();
/// delta.set("app:city", "Paris")?;
/// assert_eq!(delta.get::<String>("app:city").as_deref(), Some("Paris"));
/// assert_eq!(state.get_raw("app:city"), None); // not yet
/// delta.commit().await?;
/// assert_eq!(state.get::<String>("app:city").as_deref(), Some("Paris"));
/// # Ok(())
/// # }
/// ```
#[derive(Clone)]
pub struct DeltaState {
    state: State,
    shared: Arc<DeltaShared>,
}

struct DeltaShared {
    buffer: Mutex<Buffer>,
    /// One commit at a time, so that two clones committing at once do not both send the
    /// same writes.
    committing: tokio::sync::Mutex<()>,
}

#[derive(Default)]
struct Buffer {
    next_id: u64,
    writes: Vec<Buffered>,
}

struct Buffered {
    /// Position in the view's history, to tell a commit's writes from later ones.
    id: u64,
    key: String,
    /// `None`: a removal (tombstone). `Some(null)` is a set to null, which also removes.
    /// For a modification: what the view reads until the commit.
    value: Option<Value>,
    /// A read-modify-write, run again on the store's write path at commit.
    modify: Option<JsonModify>,
}

/// A modification of a JSON value (absent: `null`), callable at every commit attempt.
type JsonModify = Arc<dyn Fn(Value) -> Value + Send + Sync>;

impl Buffered {
    fn to_op(&self) -> StateOp {
        if let Some(modify) = &self.modify {
            let modify = Arc::clone(modify);
            return StateOp::Modify {
                key: self.key.clone(),
                default: Value::Null,
                f: Box::new(move |current| modify(current)),
            };
        }
        match &self.value {
            Some(value) => StateOp::Set {
                key: self.key.clone(),
                value: value.clone(),
            },
            None => StateOp::Remove {
                key: self.key.clone(),
            },
        }
    }
}

impl DeltaState {
    pub(crate) fn new(state: State) -> Self {
        DeltaState {
            state,
            shared: Arc::new(DeltaShared {
                buffer: Mutex::new(Buffer::default()),
                committing: tokio::sync::Mutex::new(()),
            }),
        }
    }

    fn buffer(&self) -> MutexGuard<'_, Buffer> {
        // Nothing panics while holding the lock.
        self.shared
            .buffer
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }

    fn push(&self, key: &str, value: Option<Value>) {
        let mut buffer = self.buffer();
        push_into(&mut buffer, key, value, None);
    }

    /// The shared state this view writes to.
    pub fn state(&self) -> &State {
        &self.state
    }

    /// The value at `key`: this view's write if any, else the shared state's (with its
    /// derived fallback).
    pub fn get_raw(&self, key: &str) -> Option<Value> {
        view_value(&self.buffer(), &self.state, key)
    }

    /// The value at `key` as `T`.
    pub fn get<T: DeserializeOwned>(&self, key: &str) -> Option<T> {
        serde_json::from_value(self.get_raw(key)?).ok()
    }

    /// Whether [`DeltaState::get_raw`] finds a value.
    pub fn contains(&self, key: &str) -> bool {
        self.get_raw(key).is_some()
    }

    /// Buffers a write of `key` (`null` buffers a removal).
    pub fn set(&self, key: &str, value: impl Serialize) -> Result<(), StateError> {
        let value = to_json(key, &value)?;
        self.push(key, Some(value));
        Ok(())
    }

    /// Buffers a removal of `key`.
    pub fn remove(&self, key: &str) {
        self.push(key, None);
    }

    /// Replaces the value at `key` with `f` of it (of `default` if absent) and returns the
    /// new value as this view now reads it. Atomic twice over: the view's read and write
    /// happen under its lock, so no other write through this view (or a clone of it)
    /// comes between them; and the commit does not write the value computed now but runs
    /// `f` again on the store's write path, on the shared value as it is then — so ten
    /// tools each adding one to a counter through their own views add ten, whatever order
    /// they commit in. That is why `f` is `Fn`: it runs at least twice.
    ///
    /// A value of another shape at `key` is [`StateError::WrongType`] and nothing is
    /// buffered; at commit, a value that has become of another shape is left as it is.
    pub fn modify<T, F>(&self, key: &str, default: T, f: F) -> Result<T, StateError>
    where
        T: Serialize + DeserializeOwned + Clone + Send + Sync + 'static,
        F: Fn(T) -> T + Send + Sync + 'static,
    {
        let mut buffer = self.buffer();
        let current = view_value(&buffer, &self.state, key).unwrap_or(Value::Null);
        let (result, preview) = super::typed_modify(key, current, default.clone(), &f);
        let new = result?;
        let name = key.to_owned();
        let modify: JsonModify = Arc::new(move |current: Value| {
            super::typed_modify(&name, current, default.clone(), &f).1
        });
        push_into(&mut buffer, key, Some(preview), Some(modify));
        Ok(new)
    }

    /// Whether the view holds buffered writes.
    pub fn is_dirty(&self) -> bool {
        !self.buffer().writes.is_empty()
    }

    /// Applies the buffered writes to the shared state, atomically and in write order, as
    /// one batch journaled with `delta: true`. Writes buffered while the commit is under
    /// way stay buffered for the next one.
    ///
    /// If the store does not answer, the writes stay buffered (the view stays dirty):
    /// commit again or roll back.
    pub async fn commit(&self) -> Result<(), StateError> {
        let _one_at_a_time = self.shared.committing.lock().await;
        let (ops, last_id) = {
            let buffer = self.buffer();
            let ops: Vec<StateOp> = buffer.writes.iter().map(Buffered::to_op).collect();
            (ops, buffer.writes.last().map(|write| write.id))
        };
        let Some(last_id) = last_id else {
            return Ok(());
        };
        // Until the store answers, reads keep seeing the buffered values (they are about to
        // be the shared state's); then the committed writes leave the buffer.
        self.state.apply_batch(ops, true).await?;
        self.buffer().writes.retain(|write| write.id > last_id);
        Ok(())
    }

    /// Discards the buffered writes.
    pub fn rollback(&self) {
        self.buffer().writes.clear();
    }
}

impl std::fmt::Debug for DeltaState {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DeltaState")
            .field("buffered", &self.buffer().writes.len())
            .finish_non_exhaustive()
    }
}

/// Appends a write to the view's buffer.
fn push_into(buffer: &mut Buffer, key: &str, value: Option<Value>, modify: Option<JsonModify>) {
    let id = buffer.next_id;
    buffer.next_id += 1;
    buffer.writes.push(Buffered {
        id,
        key: key.to_owned(),
        value,
        modify,
    });
}

/// The value at `key` through a view: its own last write if any, else the shared state's.
fn view_value(buffer: &Buffer, state: &State, key: &str) -> Option<Value> {
    let buffered = buffer
        .writes
        .iter()
        .rev()
        .find(|write| write.key == key)
        .map(|write| write.value.clone().filter(|value| !value.is_null()));
    match buffered {
        Some(value) => value,
        None => state.get_raw(key),
    }
}
