//! The reactive seam: [`StateReactor`], what the control lane calls at each state commit
//! point and after the events it handles, so that rules reacting to the state (the
//! `reel-reactive` crate's watchers, computed values and temporal patterns, or your own)
//! live above the tree and run inside it on event time (decision 0049,
//! `docs/decisions/0049-reactive-leaves-the-tree.md`).
//!
//! # When the lane calls it
//!
//! A **commit point** ends a mutation cycle. There are two ([`CommitPoint`]):
//!
//! - **a tool commit**: the lane has committed tool writes (a `toolResponse` was answered)
//!   and run the `AfterToolCall` extractors; then [`recompute`](StateReactor::recompute),
//!   then [`on_commit`](StateReactor::on_commit) with the changes since the last commit
//!   point;
//! - **turn complete**: after the `turn:` keys are cleared, the transcript turn finalized and
//!   the turn's extractors committed, [`recompute`](StateReactor::recompute); then the
//!   phase transitions (whose guards see what it wrote) and the `OnPhaseChange`
//!   extractors; then [`on_commit`](StateReactor::on_commit); then the instruction step,
//!   `on_turn_boundary`, `on_turn_complete` and the turn count (see the control lane's turn
//!   pipeline in `docs/architecture.md`).
//!
//! Besides, [`on_event`](StateReactor::on_event) after each event the lane handles (at its
//! frame's time), [`on_batch`](StateReactor::on_batch) after the last event of each
//! frame (at the frame's time), and [`on_settled`](StateReactor::on_settled) once the
//! lane is done with an event (last of all).
//!
//! The [`Changes`] handed to `on_commit` are every change since the previous commit point,
//! read from the state's journal through a cursor the lane keeps: the tools' writes, the
//! `session:` keys, the `turn:` clearing, the phase, what `recompute` wrote, the previous
//! turn count, and what the reactor's own actions wrote after the previous commit point
//! (so a reactor cannot loop the lane). A key changed several times counts once, from the
//! value before its first change to the value after its last. If the journal's ring no
//! longer reaches back to the cursor, they are the net changes between the state then and
//! now ([`Changes::between`]), with a warning.
//!
//! # Restarts and replay
//!
//! The reactor is held in the control lane's data, which outlives every instance of the
//! lane: a restarted lane calls the same reactor, with the progress it kept (a pattern's
//! window, a streak, …) and the same change cursor. Every call is made on event time and
//! awaited in order, so a replay of the same frames makes the same calls at the same points:
//! what a reactor writes through the state or sends through the writer lands at the same
//! place of the journal and the wire log, as long as it awaits it (code it spawns runs when
//! its task gets to it). Application code a reactor awaits should go through
//! [`ReactorScope::guard`], which cuts it off at the session's callback timeout and reports
//! it as the lane's other callbacks are.
//!
//! Give a session a reactor with
//! [`LiveSessionBuilder::reactor`](crate::LiveSessionBuilder::reactor).
//!
//! ```
//! use futures_util::future::BoxFuture;
//! use reel_actors::reactor::{CommitPoint, ReactorScope, StateReactor};
//! use reel_actors::state::Changes;
//!
//! /// Counts the commit points at which the caller's name changed.
//! #[derive(Debug, Default)]
//! struct NameChanges(u32);
//!
//! impl StateReactor for NameChanges {
//!     fn on_commit<'a>(
//!         &'a mut self,
//!         _point: CommitPoint,
//!         changes: &'a Changes,
//!         scope: ReactorScope<'a>,
//!     ) -> BoxFuture<'a, ()> {
//!         Box::pin(async move {
//!             if changes.get("app:name").is_some() {
//!                 self.0 += 1;
//!                 let _ = scope.state.set("app:name_changes", self.0).await;
//!             }
//!         })
//!     }
//! }
//!
//! let reactor: Box<dyn StateReactor> = Box::new(NameChanges::default());
//! # let _ = reactor;
//! ```

mod cursor;

pub(crate) use cursor::ChangeCursor;

use std::fmt;

use futures_util::future::BoxFuture;
use reel_protocol::SessionEvent;

use crate::callback_guard::CallbackGuard;
use crate::state::{Changes, State};
use crate::writer::SessionWriter;

/// Which commit point the control lane has reached.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CommitPoint {
    /// Tool writes were committed (a `toolResponse` was answered).
    ToolCommit,
    /// A turn completed: its pipeline has run up to the phase transitions.
    TurnComplete,
}

/// What a reactor works with at a call: the session's state, a writer to the session, the
/// event time, and the guard for the application code it awaits.
#[derive(Clone, Copy)]
pub struct ReactorScope<'a> {
    /// The session state.
    pub state: &'a State,
    /// Sends to the session (as the runtime).
    pub writer: &'a SessionWriter,
    /// Event time now, in session milliseconds.
    pub now_ms: u64,
    /// Awaits application code for at most the session's callback timeout.
    pub guard: &'a CallbackGuard,
}

impl fmt::Debug for ReactorScope<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ReactorScope")
            .field("now_ms", &self.now_ms)
            .finish_non_exhaustive()
    }
}

/// Rules reacting to the session state, run by the control lane at each commit point and
/// after the events it handles (see the [module documentation](self) for when, in which
/// order, and what survives a restart).
///
/// Every method has a default that does nothing; a reactor implements the ones it needs.
/// The futures are awaited by the lane before it goes on, in order: a reactor holds the
/// lane up for as long as it takes, so what it awaits from the application should go
/// through [`ReactorScope::guard`].
pub trait StateReactor: Send + Sync + fmt::Debug + 'static {
    /// Whether [`on_commit`](Self::on_commit) looks at its [`Changes`]; when `false` the
    /// lane does not read the journal for it (and passes empty changes). Asked at each
    /// commit point.
    fn wants_changes(&self) -> bool {
        true
    }

    /// At each commit point, before the changes are gathered (at turn complete, before the
    /// phase transitions): values derived from the state (computed values) are written
    /// here, so the transitions' guards and [`on_commit`](Self::on_commit) see them.
    fn recompute<'a>(&'a mut self, state: &'a State) -> BoxFuture<'a, ()> {
        let _ = state;
        Box::pin(async {})
    }

    /// A commit point: `changes` holds every change since the previous one.
    fn on_commit<'a>(
        &'a mut self,
        point: CommitPoint,
        changes: &'a Changes,
        scope: ReactorScope<'a>,
    ) -> BoxFuture<'a, ()> {
        let _ = (point, changes, scope);
        Box::pin(async {})
    }

    /// After the lane handled `event` (at its frame's time, `scope.now_ms`).
    fn on_event<'a>(
        &'a mut self,
        event: &'a SessionEvent,
        scope: ReactorScope<'a>,
    ) -> BoxFuture<'a, ()> {
        let _ = (event, scope);
        Box::pin(async {})
    }

    /// After the lane handled the last event of a frame (at the frame's time).
    fn on_batch<'a>(&'a mut self, scope: ReactorScope<'a>) -> BoxFuture<'a, ()> {
        let _ = scope;
        Box::pin(async {})
    }

    /// The lane is done with an event: everything its handling does (the gate's refresh,
    /// [`on_event`](StateReactor::on_event), [`on_batch`](StateReactor::on_batch)) has
    /// run and the state's [`lane_mark`](State::lane_mark) is even again; nothing else
    /// happens before the lane's next item. The place where a write that landed between
    /// two events goes again in a replay.
    fn on_settled<'a>(&'a mut self, scope: ReactorScope<'a>) -> BoxFuture<'a, ()> {
        let _ = scope;
        Box::pin(async {})
    }
}
