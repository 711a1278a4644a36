//! # reel-reactive
//!
//! Reactive state: watchers, computed values and temporal patterns, run by the session's
//! control lane on event time, so that a replay of the same frames fires the same rules at
//! the same points and writes the same journal.
//!
//! - [`Watcher`]s ([`WatcherRegistry`]) run an action when a key changes in a way their
//!   [`Predicate`] accepts (`crossed_above`, `crossed_below`, `became_true`,
//!   `became_false`, `changed`, `changed_to`).
//! - Computed values ([`ComputedRegistry`]) write `derived:{name}` from the state, in
//!   dependency order; a cycle is refused with a [`ReactiveError::Cycle`] naming it.
//! - Temporal patterns ([`TemporalRegistry`]) fire when a condition lasts
//!   (`when_sustained`), events repeat (`when_rate`) or a condition persists over turns
//!   (`when_turns`).
//!
//! They live above the session tree (`reel-actors`), which runs them through one trait,
//! [`StateReactor`], at each state commit point and
//! after the events the control lane handles (decision 0049). [`ReactiveConfig::build`]
//! checks the rules into a [`Reactive`], that reactor: give it to a session with
//! [`LiveSessionBuilder::reactor`](reel_actors::LiveSessionBuilder::reactor), or declare the
//! rules in `Live::builder()` (`.watch(..)`, `.computed(..)`, `.when_turns(..)`: the
//! `reel-fluent` crate), which builds it. The seam's types a rule's code meets are
//! re-exported here: [`State`], [`SessionWriter`], [`CallbackMode`], [`Changes`].
//!
//! # When they run
//!
//! A **mutation cycle** ends at two points, the *commit points*, and the computed values
//! and the watchers run at both, computed values first: when the control lane has
//! committed tool writes (a `toolResponse` was answered), and at turn complete. At a tool
//! commit, in order: the `AfterToolCall` extractors, **every computed value** (in
//! dependency order), the **watchers**, the sustained temporal patterns. So a computed
//! value is never a turn behind the tools' writes it depends on, and a watcher of a
//! `derived:` key sees it change in the same cycle as its inputs (the seed's order:
//! "computed variables recompute in dependency order, watchers evaluate against the
//! diff"). An evaluation of the watchers reads the journal since the last one
//! ([`State::mutations_since`](reel_actors::state::State::mutations_since) from a cursor the
//! lane keeps across restarts), so it sees *every* change since then — the tools', the
//! `session:` keys', the `turn:` clearing, the phase, the computed values, the turn count
//! of the previous turn, and what earlier actions wrote. A key changed several times in one
//! cycle counts once, from the value before its first change to the value after its last
//! (one changed and changed back has not changed). Matching watchers fire in registration
//! order. What an action writes is seen by the *next* evaluation, so watchers cannot loop
//! the lane.
//!
//! The turn-complete pipeline, in order:
//!
//! 1. clear the `turn:` keys;
//! 2. recompute **every computed value**, in dependency order (each written, if it
//!    changed, before the next is computed);
//! 3. evaluate the phase transitions (guards see this turn's computed values);
//! 4. **watchers**, over everything since the last evaluation (steps 1–3 included: a
//!    watcher of `session:active_phase` sees this turn's transition);
//! 5. **temporal patterns**, in registration order: sustained conditions checked at the
//!    turn's time, turn streaks counted;
//! 6. the instruction step, `on_turn_boundary`, `on_turn_complete`;
//! 7. `session:turn_count` + 1 (last, so guards and rules see the current turn's number;
//!    watchers see the increment at the next evaluation).
//!
//! This is the order of the seed's own pipeline (computed, transitions, watchers, temporal,
//! `on_turn_complete`, turn count); the seed's prose ("extractors → computed → watchers →
//! temporal → transitions") disagrees with it, and the pipeline wins: transitions are
//! decisions on the turn's state, and reactions see their outcome.
//!
//! Temporal patterns are also checked outside turn complete: each event the control lane
//! handles is counted by the rate patterns (at its frame's time), and the sustained
//! conditions are checked after every event batch (at the batch's time) and after tool
//! commits (at the time of the event being handled).
//!
//! # Actions and replay
//!
//! Blocking watcher actions and temporal actions are awaited by the control lane, so what
//! they write has a fixed place in the journal and a replay reproduces it. A concurrent
//! (spawned) watcher action's writes land wherever its task gets to them — like a
//! background tool's, their position is timing-dependent.
//!
//! ```no_run
//! # async fn example() -> Result<(), Box<dyn std::error::Error>> {
//! use reel_actors::LiveSessionBuilder;
//! use reel_reactive::{ReactiveConfig, Watcher};
//! use reel_protocol::{ApiEndpoint, SessionConfig};
//! use serde_json::json;
//!
//! let reactive = ReactiveConfig::new()
//!     .computed("basket_total", &["app:basket"], |s| {
//!         let basket = s.get::<Vec<f64>>("app:basket")?;
//!         Some(json!(basket.iter().sum::<f64>()))
//!     })
//!     .watch(Watcher::on("derived:basket_total").crossed_above(100.0).then(
//!         |_old, new, _state| async move { println!("big basket: {new}") },
//!     ));
//! let handle = LiveSessionBuilder::new(SessionConfig::default(), ApiEndpoint::from_env()?)
//!     .reactor(Box::new(reactive.build()?))
//!     .connect()
//!     .await?;
//! # let _ = handle;
//! # Ok(())
//! # }
//! ```

// Library code never unwraps: a bad rule is an error value, never a panic.
#![cfg_attr(not(test), deny(clippy::unwrap_used, clippy::expect_used))]

mod computed;
mod config;
mod error;
mod order;
mod predicate;
mod runtime;
mod temporal;
mod watcher;

pub use computed::{ComputeFn, ComputedRegistry};
pub use config::{Reactive, ReactiveConfig};
pub use error::ReactiveError;
pub use predicate::Predicate;
pub use temporal::{EventCondition, StateCondition, TemporalAction, TemporalRegistry};
pub use watcher::{WatchAction, WatchBuilder, Watcher, WatcherRegistry};

/// Whether the control lane awaits a watcher's action or spawns it.
pub use reel_actors::callbacks::CallbackMode;
/// The seam the control lane calls.
pub use reel_actors::reactor::{CommitPoint, ReactorScope, StateReactor};
/// The session state the rules read and write.
pub use reel_actors::state::State;
/// The net changes of a mutation cycle, as the control lane hands them to a reactor.
pub use reel_actors::state::{Change, Changes};
/// What a temporal action sends to the session with.
pub use reel_actors::writer::SessionWriter;
