//! [`StateKey`]: a state key that knows the type of its value.

use std::marker::PhantomData;

/// A key with its value type, declared once and used everywhere:
///
/// ```
/// use reel_actors::state::{State, StateKey};
///
/// const TURN_COUNT: StateKey<u32> = StateKey::new("session:turn_count");
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> Result<(), reel_actors::state::StateError> {
/// let state = State::new();
/// state.set_key(&TURN_COUNT, 3).await?;
/// assert_eq!(state.get_key(&TURN_COUNT), Some(3));
/// # Ok(())
/// # }
/// ```
pub struct StateKey<T> {
    name: &'static str,
    value: PhantomData<fn() -> T>,
}

impl<T> StateKey<T> {
    /// The key named `name` (prefix included, e.g. `session:turn_count`).
    pub const fn new(name: &'static str) -> Self {
        StateKey {
            name,
            value: PhantomData,
        }
    }

    /// The key's name.
    pub const fn name(&self) -> &'static str {
        self.name
    }
}

// Written by hand: derives would require `T: Clone`/`T: Debug` for a key that holds no `T`.
impl<T> Clone for StateKey<T> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<T> Copy for StateKey<T> {}

impl<T> std::fmt::Debug for StateKey<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "StateKey<{}>({:?})",
            std::any::type_name::<T>(),
            self.name
        )
    }
}

impl<T> PartialEq for StateKey<T> {
    fn eq(&self, other: &Self) -> bool {
        self.name == other.name
    }
}

impl<T> Eq for StateKey<T> {}
