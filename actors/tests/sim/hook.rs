//! The fault hook the simulator needs from the tree, and does not have yet.
//!
//! Most children can be failed from the outside through code the application hands them:
//! the fast lane (`on_text`), the control lane (`on_turn_complete`, `on_tool_call`),
//! telemetry (`on_usage`), the state store (a panicking `modify` closure) and the
//! recorder (a panicking `WireRecorder`). Some cannot: the router and the transport run
//! no application code; telemetry runs none on turns, tool calls and interruptions; the
//! store runs none on a plain `set`; the control lane runs none between the steps of its
//! turn pipeline. `Fault::NeedsHook` plans those faults; they are counted and skipped
//! until the tree has this hook:
//!
//! ```text
//! // reel_actors::testing::fault (public, documented as test-only)
//! pub trait FaultHook: Send + Sync + 'static {
//!     /// Called by `child` right before it handles input number `input` (1-based, per
//!     /// child, counted across restarts). Panicking here fails the child exactly as a
//!     /// bug in it would.
//!     fn before(&self, child: Child, input: u64);
//! }
//! impl LiveSessionBuilder {
//!     pub fn fault_hook(self, hook: Arc<dyn FaultHook>) -> Self;
//! }
//! ```
//!
//! called, with the new `Child` enum, at:
//! - Router: at the top of `handle`, for each `RouterMsg::Inbound` (before decoding);
//! - Transport: before each frame is written (`send_frame`) and for each `LinkEnded`;
//! - each lane (fast, control, telemetry): after `should_handle` accepts event `seq`
//!   and `begin(seq)` is called, with `input = seq`;
//! - StateStore: for each `Apply`, before the ops are applied;
//! - Recorder: for each entry, before it is handed to the `WireRecorder`;
//! - the control lane's turn pipeline: between steps (`input` = the step's number,
//!   its own counter) if that is cheap to add.
//!
//! Without a hook installed it must cost one branch on an `Option`.

/// What the skipped faults wait for, printed with the tally.
pub const NEEDED: &str = "FaultHook::before(child: Child, input: u64), installed with \
    LiveSessionBuilder::fault_hook(Arc<dyn FaultHook>), called by the router (each inbound \
    frame), the transport (each frame written), each lane (each event, after begin(seq)), \
    the state store (each Apply) and the recorder (each entry)";
