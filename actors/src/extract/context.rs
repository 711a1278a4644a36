//! [`ExtractionContext`]: what an extractor gets besides the transcript window.

use std::fmt;
use std::sync::Arc;

use serde_json::{Map, Value};

use super::trigger::ExtractionPoint;
use crate::llm::{BaseLlm, LlmInterceptor, PassThrough};
use crate::state::{State, StateSnapshot};

/// Handed to every extraction: where the session is, and the state as it was when the
/// extractors started (all extractors of one run see the same state: none sees another's
/// result).
#[derive(Clone)]
pub struct ExtractionContext {
    /// The turn: the one being completed, or (after a tool call) the one in progress.
    pub turn_number: u32,
    /// Where the control lane runs the extractors.
    pub point: ExtractionPoint,
    /// The conversation phase, if the session has phases.
    pub phase: Option<String>,
    /// The session state when the extractors started.
    pub state: StateSnapshot,
    interceptor: Arc<dyn LlmInterceptor>,
}

impl ExtractionContext {
    /// A context for turn `turn_number` at `point`, over `state`, with no phase and no
    /// interceptor (for running an extractor by hand, as in a unit test).
    pub fn new(turn_number: u32, point: ExtractionPoint, state: StateSnapshot) -> Self {
        ExtractionContext {
            turn_number,
            point,
            phase: None,
            state,
            interceptor: Arc::new(PassThrough),
        }
    }

    /// A context over the current state of `state`, for turn `turn_number` at turn complete.
    pub fn for_state(turn_number: u32, state: &State) -> Self {
        ExtractionContext::new(turn_number, ExtractionPoint::TurnComplete, state.snapshot())
    }

    /// Sets the phase.
    pub fn with_phase(mut self, phase: impl Into<String>) -> Self {
        self.phase = Some(phase.into());
        self
    }

    /// Sets the interceptor [`ExtractionContext::llm`] wraps models with.
    pub fn with_interceptor(mut self, interceptor: Arc<dyn LlmInterceptor>) -> Self {
        self.interceptor = interceptor;
        self
    }

    /// `llm` as the session hands models out: through its interceptor (recorded or replayed
    /// when the session records or replays). An extractor that calls a model it did not
    /// get at registration should call it through this.
    pub fn llm(&self, llm: Arc<dyn BaseLlm>) -> Arc<dyn BaseLlm> {
        self.interceptor.wrap(llm)
    }

    /// The object an extractor named `name` last wrote (its value in the state), or an
    /// empty object.
    pub fn existing(&self, name: &str) -> Map<String, Value> {
        match self.state.get_raw(name) {
            Some(Value::Object(map)) => map.clone(),
            _ => Map::new(),
        }
    }
}

impl fmt::Debug for ExtractionContext {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ExtractionContext")
            .field("turn_number", &self.turn_number)
            .field("point", &self.point)
            .field("phase", &self.phase)
            .field("state", &self.state)
            .finish_non_exhaustive()
    }
}
