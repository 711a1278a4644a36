//! Prefix scopes: `state.app().set("city", …)` writes `app:city`.
//!
//! The prefixes are conventions, not walls: a scope is only a shorter way to name keys of
//! one lifecycle, and the same keys are reachable by their full names on the `State`.

use std::ops::Bound;

use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

use super::{State, StateError};

/// The key prefixes of the session state and what they are for.
pub mod prefix {
    /// Application data for the whole session.
    pub const APP: &str = "app:";
    /// Facts about the user.
    pub const USER: &str = "user:";
    /// Signals the runtime tracks about the session (`session:turn_count`, …).
    pub const SESSION: &str = "session:";
    /// Cleared at the end of every turn.
    pub const TURN: &str = "turn:";
    /// Scratch data with no automatic lifecycle.
    pub const TEMP: &str = "temp:";
    /// Written by background tasks.
    pub const BG: &str = "bg:";
    /// Computed values, recomputed each turn; read-only through [`super::ReadOnlyScope`].
    pub const DERIVED: &str = "derived:";
}

/// The keys under one prefix, read-only (what [`State::derived`] returns).
#[derive(Clone, Debug)]
pub struct ReadOnlyScope {
    state: State,
    prefix: &'static str,
}

impl ReadOnlyScope {
    pub(crate) fn new(state: State, prefix: &'static str) -> Self {
        ReadOnlyScope { state, prefix }
    }

    /// The prefix, e.g. `derived:`.
    pub fn prefix(&self) -> &'static str {
        self.prefix
    }

    /// The full name of `key` in this scope.
    pub fn full_key(&self, key: &str) -> String {
        format!("{}{key}", self.prefix)
    }

    /// The value at `key` in this scope.
    pub fn get_raw(&self, key: &str) -> Option<Value> {
        self.state.get_raw(&self.full_key(key))
    }

    /// The value at `key` in this scope, as `T`.
    pub fn get<T: DeserializeOwned>(&self, key: &str) -> Option<T> {
        self.state.get(&self.full_key(key))
    }

    /// Whether `key` is set in this scope.
    pub fn contains(&self, key: &str) -> bool {
        self.state.contains(&self.full_key(key))
    }

    /// The keys of this scope, in order, without the prefix.
    pub fn keys(&self) -> Vec<String> {
        let data = self.state.shared().load();
        data.map
            .range::<_, str>((Bound::Included(self.prefix), Bound::Unbounded))
            .map_while(|(key, _)| key.strip_prefix(self.prefix).map(str::to_owned))
            .collect()
    }
}

/// The keys under one prefix: `get`, `set`, `remove`, `keys` with short names.
///
/// ```
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> Result<(), reel_actors::state::StateError> {
/// use reel_actors::state::State;
///
/// let state = State::new();
/// state.app().set("city", "London").await?;
/// assert_eq!(state.get::<String>("app:city").as_deref(), Some("London"));
/// assert_eq!(state.app().keys(), vec!["city".to_owned()]);
/// # Ok(())
/// # }
/// ```
#[derive(Clone, Debug)]
pub struct Scope {
    read: ReadOnlyScope,
}

impl Scope {
    pub(crate) fn new(state: State, prefix: &'static str) -> Self {
        Scope {
            read: ReadOnlyScope::new(state, prefix),
        }
    }

    /// The prefix, e.g. `app:`.
    pub fn prefix(&self) -> &'static str {
        self.read.prefix()
    }

    /// The full name of `key` in this scope.
    pub fn full_key(&self, key: &str) -> String {
        self.read.full_key(key)
    }

    /// The value at `key` in this scope.
    pub fn get_raw(&self, key: &str) -> Option<Value> {
        self.read.get_raw(key)
    }

    /// The value at `key` in this scope, as `T`.
    pub fn get<T: DeserializeOwned>(&self, key: &str) -> Option<T> {
        self.read.get(key)
    }

    /// Whether `key` is set in this scope.
    pub fn contains(&self, key: &str) -> bool {
        self.read.contains(key)
    }

    /// The keys of this scope, in order, without the prefix.
    pub fn keys(&self) -> Vec<String> {
        self.read.keys()
    }

    /// Sets `key` in this scope.
    pub async fn set(&self, key: &str, value: impl Serialize) -> Result<(), StateError> {
        self.read.state.set(&self.full_key(key), value).await
    }

    /// Removes `key` from this scope, returning its value.
    pub async fn remove(&self, key: &str) -> Result<Option<Value>, StateError> {
        self.read.state.remove(&self.full_key(key)).await
    }

    /// The atomic read-modify-write of [`State::modify`], on `key` in this scope.
    pub async fn modify<T, F>(&self, key: &str, default: T, f: F) -> Result<T, StateError>
    where
        T: Serialize + DeserializeOwned + Send + 'static,
        F: FnOnce(T) -> T + Send + 'static,
    {
        self.read
            .state
            .modify(&self.full_key(key), default, f)
            .await
    }

    /// Removes every key of this scope, returning how many there were.
    pub async fn clear(&self) -> Result<usize, StateError> {
        self.read.state.clear_prefix(self.prefix()).await
    }
}
