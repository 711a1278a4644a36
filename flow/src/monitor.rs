//! [`Monitor`]: the marking of a running (or recorded) session, tool admissibility,
//! verdicts, violations and the explanation.
//!
//! The monitor is a pure function of what it is fed, in order: state mutations
//! ([`Monitor::set_state`], [`Monitor::apply`]) and tool events ([`Monitor::call`],
//! [`Monitor::returned`]). Fed the same sequence — live, or read back from a recording's
//! journal and wire log — it reaches the same marking and the same violations.

use std::collections::{BTreeMap, BTreeSet};

use reel_recorder::journal::StateMutation;
use serde_json::{Map, Value, json};

use crate::compile::CompiledFlow;
use crate::ground;
use crate::guard::GuardContext;
use crate::report::{Denial, FlowExplanation, Posture, Verdict, Violation};

/// What the monitor does with a call it would refuse.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// The call is refused and never runs (`govern`).
    Govern,
    /// The call runs; the violation is recorded (`observe`, and scoring recordings).
    Observe,
}

/// A call that has started and not returned.
#[derive(Debug, Clone)]
struct InFlight {
    tool: String,
    seq: u64,
}

/// The flow's monitor over one session.
#[derive(Debug, Clone)]
pub struct Monitor {
    flow: CompiledFlow,
    mode: Mode,
    state: Map<String, Value>,
    done: Vec<bool>,
    returned_ok: BTreeSet<String>,
    /// `once` tools spent: by a call in flight or one that returned without error.
    spent: BTreeMap<String, (Option<String>, u64)>,
    in_flight: BTreeMap<String, InFlight>,
    violations: Vec<Violation>,
}

impl Monitor {
    /// A monitor at the start of a session: empty state, nothing done.
    pub fn new(flow: CompiledFlow, mode: Mode) -> Monitor {
        let steps = flow.flow().steps.len();
        let mut monitor = Monitor {
            flow,
            mode,
            state: Map::new(),
            done: vec![false; steps],
            returned_ok: BTreeSet::new(),
            spent: BTreeMap::new(),
            in_flight: BTreeMap::new(),
            violations: Vec::new(),
        };
        monitor.refresh();
        monitor
    }

    /// The compiled flow.
    pub fn flow(&self) -> &CompiledFlow {
        &self.flow
    }

    /// Whether the monitor governs (refuses calls) or observes.
    pub fn mode(&self) -> Mode {
        self.mode
    }

    /// The state as the monitor has been told it.
    pub fn state(&self) -> &Map<String, Value> {
        &self.state
    }

    /// Sets a state key (`null` removes it) and updates the marking.
    pub fn set_state(&mut self, key: &str, value: Value) {
        if value.is_null() {
            self.state.remove(key);
        } else {
            self.state.insert(key.to_owned(), value);
        }
        self.refresh();
    }

    /// Applies one journal mutation.
    pub fn apply(&mut self, mutation: &StateMutation) {
        self.set_state(&mutation.key, mutation.new.clone());
    }

    fn context<'a>(
        &'a self,
        done: &'a dyn Fn(&str) -> bool,
        called_ok: &'a dyn Fn(&str) -> bool,
    ) -> GuardContext<'a> {
        GuardContext {
            state: &self.state,
            done,
            called_ok,
        }
    }

    fn index(&self, step: &str) -> Option<usize> {
        self.flow.flow().steps.iter().position(|s| s.id == step)
    }

    /// Whether every step `i` waits for is done and its gate holds.
    fn eligible(&self, i: usize) -> bool {
        if !self.flow.waits(i).iter().all(|w| self.done[*w]) {
            return false;
        }
        self.gate_holds(i)
    }

    fn gate_holds(&self, i: usize) -> bool {
        let done = |s: &str| self.index(s).is_some_and(|j| self.done[j]);
        let ok = |t: &str| self.returned_ok.contains(t);
        let context = self.context(&done, &ok);
        self.flow.flow().steps[i]
            .gate
            .as_ref()
            .is_none_or(|g| g.holds(&context))
    }

    /// Latches every step that has become done, until nothing changes.
    fn refresh(&mut self) {
        loop {
            let mut latched = None;
            for (i, step) in self.flow.flow().steps.iter().enumerate() {
                if self.done[i] || !self.eligible(i) {
                    continue;
                }
                let done = |s: &str| self.index(s).is_some_and(|j| self.done[j]);
                let ok = |t: &str| self.returned_ok.contains(t);
                let context = self.context(&done, &ok);
                if step.terminal || step.done.as_ref().is_some_and(|g| g.holds(&context)) {
                    latched = Some(i);
                    break;
                }
            }
            match latched {
                Some(i) => self.done[i] = true,
                None => return,
            }
        }
    }

    /// Where step `step` stands; `None` for a step the flow does not have.
    pub fn verdict(&self, step: &str) -> Option<Verdict> {
        let i = self.index(step)?;
        Some(if self.done[i] {
            Verdict::Done
        } else if self.eligible(i) {
            Verdict::Active
        } else if self.is_complete() {
            Verdict::Skipped
        } else {
            Verdict::Pending
        })
    }

    /// Every step's verdict, in declaration order.
    pub fn verdicts(&self) -> Vec<(String, Verdict)> {
        self.flow
            .flow()
            .steps
            .iter()
            .filter_map(|s| Some((s.id.clone(), self.verdict(&s.id)?)))
            .collect()
    }

    fn steps_where(&self, keep: impl Fn(usize) -> bool) -> Vec<String> {
        let steps = &self.flow.flow().steps;
        (0..steps.len())
            .filter(|i| keep(*i))
            .map(|i| steps[i].id.clone())
            .collect()
    }

    /// The active steps, in declaration order.
    pub fn active(&self) -> Vec<String> {
        self.steps_where(|i| !self.done[i] && self.eligible(i))
    }

    /// The steps done, in declaration order.
    pub fn done_steps(&self) -> Vec<String> {
        self.steps_where(|i| self.done[i])
    }

    /// The required steps not done yet, in the order `require` names them.
    pub fn unmet_requirements(&self) -> Vec<String> {
        self.flow
            .flow()
            .require
            .iter()
            .filter(|s| self.index(s).is_some_and(|i| !self.done[i]))
            .cloned()
            .collect()
    }

    /// Whether the flow is complete: every `require`d step done; without `require`, a
    /// terminal step done; without terminal steps either, every step done.
    pub fn is_complete(&self) -> bool {
        let flow = self.flow.flow();
        if !flow.require.is_empty() {
            return self.unmet_requirements().is_empty();
        }
        let terminals: Vec<usize> = (0..flow.steps.len())
            .filter(|i| flow.steps[*i].terminal)
            .collect();
        if terminals.is_empty() {
            self.done.iter().all(|d| *d)
        } else {
            terminals.iter().any(|i| self.done[*i])
        }
    }

    /// Whether a call of `tool` would be admitted now, or why not.
    pub fn admit(&self, tool: &str) -> Result<(), Denial> {
        let flow = self.flow.flow();
        let active: Vec<usize> = (0..flow.steps.len())
            .filter(|i| !self.done[*i] && self.eligible(*i))
            .collect();
        if let Some(i) = active
            .iter()
            .find(|i| flow.steps[**i].deny.iter().any(|t| t == tool))
        {
            return Err(Denial::DeniedByStep {
                tool: tool.to_owned(),
                step: flow.steps[*i].id.clone(),
            });
        }
        let done = |s: &str| self.index(s).is_some_and(|j| self.done[j]);
        let ok = |t: &str| self.returned_ok.contains(t);
        let context = self.context(&done, &ok);
        let untils = flow
            .never
            .iter()
            .map(|n| (&n.tool, &n.until))
            .chain(flow.commit.iter().map(|c| (&c.tool, &c.until)));
        for (_, until) in untils.filter(|(t, _)| *t == tool) {
            if !until.holds(&context) {
                return Err(Denial::Never {
                    tool: tool.to_owned(),
                    until: until.to_string(),
                });
            }
        }
        let once = flow.once.iter().chain(flow.commit.iter().map(|c| &c.tool));
        if once.into_iter().any(|t| t == tool)
            && let Some((_, seq)) = self.spent.get(tool)
        {
            return Err(Denial::OnceSpent {
                tool: tool.to_owned(),
                seq: *seq,
            });
        }
        if !self.flow.step_gated_tools().contains(tool)
            || active
                .iter()
                .any(|i| flow.steps[*i].allow.iter().any(|t| t == tool))
        {
            return Ok(());
        }
        // Held back only by a `before` edge?
        for before in &flow.before {
            let (Some(then), Some(first)) = (self.index(&before.then), self.index(&before.first))
            else {
                continue;
            };
            let allows = flow.steps[then].allow.iter().any(|t| t == tool);
            let deps_done = flow.steps[then].after.iter().all(|d| done(d));
            if allows && !self.done[then] && !self.done[first] && deps_done && self.gate_holds(then)
            {
                return Err(Denial::Before {
                    tool: tool.to_owned(),
                    step: before.then.clone(),
                    first: before.first.clone(),
                });
            }
        }
        Err(Denial::NotAllowed {
            tool: tool.to_owned(),
            active: active.iter().map(|i| flow.steps[*i].id.clone()).collect(),
        })
    }

    /// A call of `tool` carried by frame `seq`. Admitted: it is in flight. Refused: the
    /// violation is recorded; in [`Mode::Observe`] the call still runs (is in flight), in
    /// [`Mode::Govern`] it does not.
    pub fn call(&mut self, seq: u64, call_id: Option<&str>, tool: &str) -> Result<(), Denial> {
        let verdict = self.admit(tool);
        if let Err(denial) = &verdict {
            self.violations.push(Violation {
                seq,
                call_id: call_id.map(str::to_owned),
                tool: tool.to_owned(),
                reason: denial.to_string(),
                denial: denial.clone(),
            });
            if self.mode == Mode::Govern {
                return verdict;
            }
        }
        let id = call_id.map_or_else(|| format!("#{seq}:{tool}"), str::to_owned);
        self.spent
            .entry(tool.to_owned())
            .or_insert((Some(id.clone()), seq));
        self.in_flight.insert(
            id,
            InFlight {
                tool: tool.to_owned(),
                seq,
            },
        );
        verdict
    }

    /// The call `call_id` returned: `ok` without error. A failed (or cancelled) call does
    /// not spend a `once` tool.
    pub fn returned(&mut self, call_id: &str, ok: bool) {
        let Some(call) = self.in_flight.remove(call_id) else {
            return;
        };
        if ok {
            self.returned_ok.insert(call.tool);
            self.refresh();
        } else if self
            .spent
            .get(&call.tool)
            .is_some_and(|(id, seq)| id.as_deref() == Some(call_id) && *seq == call.seq)
        {
            self.spent.remove(&call.tool);
        }
    }

    /// The call `call_id` may have run but its result was lost (the runtime answered it
    /// with an error after a failure of its own): it is no longer in flight, it does not
    /// count as `called_ok`, and a `once` tool it spent stays spent — the tool may have
    /// done its work, so it must not run again.
    pub fn lost(&mut self, call_id: &str) {
        self.in_flight.remove(call_id);
    }

    /// The calls the flow refused (or, observing, would have), in order.
    pub fn violations(&self) -> &[Violation] {
        &self.violations
    }

    /// The active steps' postures.
    pub fn postures(&self) -> Vec<Posture> {
        let flow = self.flow.flow();
        self.active()
            .into_iter()
            .filter_map(|id| {
                let step = flow.step_named(&id)?;
                Some(Posture {
                    step: id.clone(),
                    text: step.posture.clone()?,
                })
            })
            .collect()
    }

    /// The active steps' ground lines, filled from state.
    pub fn ground_lines(&self) -> Vec<String> {
        let flow = self.flow.flow();
        self.active()
            .iter()
            .filter_map(|id| flow.step_named(id))
            .flat_map(|step| step.ground.iter())
            .map(|template| ground::render(template, &self.state))
            .collect()
    }

    /// What the monitor publishes into state: `flow:done` and `flow:active`, each the
    /// list of step ids.
    pub fn published(&self) -> Vec<(&'static str, Value)> {
        vec![
            ("flow:done", json!(self.done_steps())),
            ("flow:active", json!(self.active())),
        ]
    }

    /// The monitor's state in one snapshot: active and done steps, the tools refused now
    /// with why, the requirements missing.
    pub fn explain(&self) -> FlowExplanation {
        let blocked_tools = self
            .flow
            .tools()
            .into_iter()
            .filter_map(|tool| Some((tool.to_owned(), self.admit(tool).err()?.to_string())))
            .collect();
        FlowExplanation {
            active: self.active(),
            done: self.done_steps(),
            blocked_tools,
            missing_requirements: self.unmet_requirements(),
            complete: self.is_complete(),
        }
    }
}
