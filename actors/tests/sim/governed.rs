//! Governed plans: the session's tool gate holds a flow's real monitor
//! (`reel_flow::Monitor`, governing), fed exactly as `reel-fluent`'s `govern` feeds it —
//! state mutations, calls with their frames, responses as they go out (judged by
//! `reel_flow::score::apply_response`), cancellations — and the flow says the simulation's
//! tool may run once. The checks (`sim::check`) then hold the gate to its word through
//! every fault: a refused call never ran, and the tool never ran to completion twice, even
//! when the control lane fails between a call and its response.

use reel_actors::govern::{GateVerdict, ToolGate};
use reel_actors::state::{State, StateMutation};
use reel_flow::score::apply_response;
use reel_flow::{Flow, Guard, Mode, Monitor};
use serde_json::Value;

use super::app::{Shared, with};
use super::frames::TOOL;

/// The flow of a governed plan: one step done once the tool returned without error, and
/// the tool `once`.
pub fn flow() -> Flow {
    Flow::new()
        .step("work")
        .done(Guard::called_ok(TOOL))
        .once(TOOL)
}

/// The gate: the monitor, and where it writes down the calls it refused.
#[derive(Debug)]
pub struct SimGate {
    monitor: Monitor,
    observed: Shared,
    published: Vec<(String, Value)>,
}

impl SimGate {
    /// A gate governing with [`flow`], writing its refusals into `observed`.
    pub fn new(observed: Shared) -> SimGate {
        let compiled = match flow().compile() {
            Ok(compiled) => compiled,
            Err(error) => panic!("the simulation's flow does not compile: {error}"),
        };
        SimGate {
            monitor: Monitor::new(compiled, Mode::Govern),
            observed,
            published: Vec::new(),
        }
    }
}

impl ToolGate for SimGate {
    fn observe(&mut self, mutations: &[StateMutation]) {
        for mutation in mutations {
            self.monitor.apply(mutation);
        }
    }

    fn resync(&mut self, state: &State) {
        for key in state.keys() {
            self.monitor
                .set_state(&key, state.get_raw(&key).unwrap_or(Value::Null));
        }
    }

    fn call(&mut self, seq: u64, call_id: &str, tool: &str) -> GateVerdict {
        match self.monitor.call(seq, Some(call_id), tool) {
            Ok(()) => GateVerdict::Admit,
            Err(denial) => {
                with(&self.observed, |o| o.refused.push(call_id.to_owned()));
                GateVerdict::Deny {
                    reason: denial.to_string(),
                }
            }
        }
    }

    fn returned(&mut self, response: &Value) {
        apply_response(&mut self.monitor, response);
    }

    fn cancelled(&mut self, call_id: &str) {
        self.monitor.returned(call_id, false);
    }

    fn published(&mut self) -> Vec<(String, Value)> {
        let now: Vec<(String, Value)> = self
            .monitor
            .published()
            .into_iter()
            .map(|(key, value)| (key.to_owned(), value))
            .collect();
        let changed = now
            .iter()
            .filter(|entry| !self.published.contains(entry))
            .cloned()
            .collect();
        self.published = now;
        changed
    }
}
