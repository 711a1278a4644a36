//! Governed sessions: `govern(flow)` / `observe(flow)` (and their `_compiled` variants)
//! put a [`reel_flow::Monitor`] at the tree's governance seam
//! ([`reel_actors::govern::ToolGate`]), and [`GovernedHandle`] lets the application look
//! at it (decision 0055, `docs/decisions/0055-governed-sessions.md`).
//!
//! The monitor is fed what the control lane sees, in the lane's order: every state
//! mutation (journal order), each tool call with the sequence number of the frame that
//! carried it, each function response as it goes out on the wire (judged by
//! [`reel_flow::score::apply_response`], the scorer's own definition), each
//! cancellation. So a live session and `reel flow check` of its recording reach the same
//! violations and the same verdicts.

use std::any::Any;
use std::path::Path;
use std::sync::{Arc, Mutex, MutexGuard};

use reel_actors::LiveHandle;
use reel_actors::govern::{GateVerdict, ToolGate};
use reel_actors::state::{State, StateMutation};
use reel_flow::score::apply_response;
use reel_flow::{CompiledFlow, Flow, FlowExplanation, Mode, Monitor, Verdict, Violation};
use serde_json::Value;

use crate::builder::LiveBuilder;
use crate::error::{BuildError, ConnectError};

/// The flow a chain governs (or observes) its session with, as the chain was given it.
#[derive(Debug, Clone)]
enum FlowSource {
    /// Compiled when the chain is checked.
    Plain(Box<Flow>),
    /// Compiled already.
    Compiled(Box<CompiledFlow>),
}

/// The governance part of a [`LiveBuilder`].
#[derive(Debug, Clone, Default)]
pub(crate) struct GovernPart {
    flow: Option<(FlowSource, Mode)>,
}

impl GovernPart {
    /// The flow and mode the session runs, compiled, `None` when the chain governs nothing.
    pub(crate) fn checked(&self) -> Result<Option<(CompiledFlow, Mode)>, BuildError> {
        let Some((source, mode)) = &self.flow else {
            return Ok(None);
        };
        let compiled = match source {
            FlowSource::Plain(flow) => flow.compile()?,
            FlowSource::Compiled(compiled) => (**compiled).clone(),
        };
        Ok(Some((compiled, *mode)))
    }
}

impl LiveBuilder {
    /// Governs the session with `flow`: a tool call the flow does not admit is refused
    /// before it runs (the model reads why), the active steps' postures and ground lines
    /// steer the model at each turn boundary, unmet required steps are surfaced as
    /// repair, and `flow:active` / `flow:done` are kept in state. The flow is compiled
    /// when the chain is checked ([`BuildError::Flow`] names what is wrong). Replaces a
    /// flow given before.
    ///
    /// ```
    /// use reel_flow::{Flow, Guard};
    /// use reel_fluent::Live;
    ///
    /// let flow = Flow::new()
    ///     .step("verify")
    ///     .allow(["lookup_account"])
    ///     .done(Guard::is_true("identity_verified"))
    ///     .step("close")
    ///     .after("verify")
    ///     .terminal();
    /// assert!(Live::builder().govern(flow).validate().is_ok());
    /// ```
    pub fn govern(mut self, flow: Flow) -> Self {
        self.governing.flow = Some((FlowSource::Plain(Box::new(flow)), Mode::Govern));
        self
    }

    /// Observes the session with `flow`: everything [`govern`](Self::govern) does except
    /// refusing calls — a call the flow would refuse runs, and is recorded as a violation
    /// ([`FlowView::violations`]).
    pub fn observe(mut self, flow: Flow) -> Self {
        self.governing.flow = Some((FlowSource::Plain(Box::new(flow)), Mode::Observe));
        self
    }

    /// [`govern`](Self::govern) with a flow compiled already (nothing is checked again).
    pub fn govern_compiled(mut self, flow: CompiledFlow) -> Self {
        self.governing.flow = Some((FlowSource::Compiled(Box::new(flow)), Mode::Govern));
        self
    }

    /// [`observe`](Self::observe) with a flow compiled already.
    pub fn observe_compiled(mut self, flow: CompiledFlow) -> Self {
        self.governing.flow = Some((FlowSource::Compiled(Box::new(flow)), Mode::Observe));
        self
    }
}

/// Writes `flow` beside the wire log `X.wire.jsonl` as `X.flow.json` (its serde JSON), so
/// `reel flow check X.wire.jsonl` scores the recording without being given the flow, and
/// the studio can draw it. A flow holding a `custom` guard (code) cannot be written: it
/// is left out, and any `X.flow.json` an earlier recording left there is removed, so the
/// file beside a recording is always that recording's flow.
pub(crate) fn write_flow_beside(wire: &Path, flow: &CompiledFlow) -> Result<(), ConnectError> {
    let path = crate::beside::path_beside(wire, "flow.json");
    let written = match flow.flow().to_json() {
        Ok(json) => std::fs::write(&path, json),
        Err(_) => match std::fs::remove_file(&path) {
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => Ok(()),
            other => other,
        },
    };
    written.map_err(|source| ConnectError::Recording {
        what: "flow",
        source: reel_recorder::RecordError::Io {
            path: path.clone(),
            source,
        },
        path,
    })
}

/// Locks the monitor; a poisoned lock still holds a monitor that was only ever changed
/// by whole method calls, so it is used as it is.
fn lock(monitor: &Mutex<Monitor>) -> MutexGuard<'_, Monitor> {
    monitor
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// The [`ToolGate`] of a governed (or observed) session: its flow's monitor.
#[derive(Debug)]
pub(crate) struct FlowGate {
    monitor: Arc<Mutex<Monitor>>,
    /// What was published last (`flow:done`, `flow:active`), to publish only changes.
    published: Vec<(String, Value)>,
}

impl FlowGate {
    /// A gate running `flow` in `mode`, from an empty marking.
    pub(crate) fn new(flow: CompiledFlow, mode: Mode) -> Self {
        FlowGate {
            monitor: Arc::new(Mutex::new(Monitor::new(flow, mode))),
            published: Vec::new(),
        }
    }
}

impl ToolGate for FlowGate {
    fn observe(&mut self, mutations: &[StateMutation]) {
        let mut monitor = lock(&self.monitor);
        for mutation in mutations {
            monitor.apply(mutation);
        }
    }

    fn resync(&mut self, state: &State) {
        let mut monitor = lock(&self.monitor);
        let gone: Vec<String> = monitor
            .state()
            .keys()
            .filter(|key| !state.contains(key))
            .cloned()
            .collect();
        for key in gone {
            monitor.set_state(&key, Value::Null);
        }
        for key in state.keys() {
            let value = state.get_raw(&key).unwrap_or(Value::Null);
            monitor.set_state(&key, value);
        }
    }

    fn call(&mut self, seq: u64, call_id: &str, tool: &str) -> GateVerdict {
        let id = Some(call_id).filter(|id| !id.is_empty());
        let mut monitor = lock(&self.monitor);
        match monitor.call(seq, id, tool) {
            Err(denial) if monitor.mode() == Mode::Govern => GateVerdict::Deny {
                reason: denial.to_string(),
            },
            // Observing: the violation is recorded, the call runs.
            _ => GateVerdict::Admit,
        }
    }

    fn returned(&mut self, response: &Value) {
        apply_response(&mut lock(&self.monitor), response);
    }

    fn cancelled(&mut self, call_id: &str) {
        lock(&self.monitor).returned(call_id, false);
    }

    fn published(&mut self) -> Vec<(String, Value)> {
        let now: Vec<(String, Value)> = lock(&self.monitor)
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

    fn steering(&self) -> Option<String> {
        let monitor = lock(&self.monitor);
        let lines: Vec<String> = monitor
            .postures()
            .into_iter()
            .map(|posture| posture.text)
            .chain(monitor.ground_lines())
            .collect();
        (!lines.is_empty()).then(|| lines.join("\n"))
    }

    fn unmet(&self) -> Vec<String> {
        let monitor = lock(&self.monitor);
        monitor
            .unmet_requirements()
            .into_iter()
            .filter(|step| monitor.verdict(step) == Some(Verdict::Active))
            .collect()
    }

    fn view(&self) -> Option<Arc<dyn Any + Send + Sync>> {
        Some(Arc::new(FlowView {
            monitor: Arc::clone(&self.monitor),
        }))
    }
}

/// A governed session's flow as the application sees it: cheap, synchronous snapshots of
/// the monitor the control lane keeps. Given by [`GovernedHandle::flow`].
#[derive(Debug, Clone)]
pub struct FlowView {
    monitor: Arc<Mutex<Monitor>>,
}

impl FlowView {
    /// The monitor's state in one serializable snapshot: active and done steps, the tools
    /// refused now with why, the requirements missing.
    pub fn explain(&self) -> FlowExplanation {
        lock(&self.monitor).explain()
    }

    /// Where step `step` stands; `None` for a step the flow does not have.
    pub fn verdict(&self, step: &str) -> Option<Verdict> {
        lock(&self.monitor).verdict(step)
    }

    /// The required steps not done yet.
    pub fn unmet_requirements(&self) -> Vec<String> {
        lock(&self.monitor).unmet_requirements()
    }

    /// Whether the flow is complete.
    pub fn is_complete(&self) -> bool {
        lock(&self.monitor).is_complete()
    }

    /// The calls the flow refused (governing) or would have (observing), in order.
    pub fn violations(&self) -> Vec<Violation> {
        lock(&self.monitor).violations().to_vec()
    }

    /// Whether the flow governs (refuses calls) or observes.
    pub fn mode(&self) -> Mode {
        lock(&self.monitor).mode()
    }
}

/// What a governed session's [`LiveHandle`] answers about its flow. `None` for a session
/// without a flow.
pub trait GovernedHandle {
    /// The session's flow, if it is governed or observed.
    fn flow(&self) -> Option<FlowView>;

    /// Why tools are blocked now: active steps, blocked tools with reasons, missing
    /// requirements ([`FlowView::explain`]).
    fn why_blocked(&self) -> Option<FlowExplanation> {
        self.flow().map(|flow| flow.explain())
    }

    /// The same as [`why_blocked`](Self::why_blocked), under its descriptive name.
    fn explain(&self) -> Option<FlowExplanation> {
        self.why_blocked()
    }
}

impl GovernedHandle for LiveHandle {
    fn flow(&self) -> Option<FlowView> {
        let view = self.gate_view()?;
        let view: &FlowView = view.downcast_ref()?;
        Some(view.clone())
    }
}
