//! [`Flow::compile`]: the load-time diagnostics on top of `build`'s checks, and
//! [`CompiledFlow`], the proof a flow passed them.

use std::collections::{BTreeSet, HashMap};

use serde_json::Map;

use crate::checks::find_cycle;
use crate::error::FlowError;
use crate::flow::Flow;
use crate::guard::{Guard, GuardContext};

/// A flow that passed [`Flow::compile`]: what the monitor runs. Governing many sessions
/// with it checks nothing again.
#[derive(Debug, Clone)]
pub struct CompiledFlow {
    flow: Flow,
    /// For each step (by index), the steps it waits for: `after` and `before` edges.
    waits: Vec<Vec<usize>>,
}

impl CompiledFlow {
    /// The flow.
    pub fn flow(&self) -> &Flow {
        &self.flow
    }

    /// The steps step `index` waits for (its `after(..)` and `before(.., it)` edges).
    pub(crate) fn waits(&self, index: usize) -> &[usize] {
        &self.waits[index]
    }

    /// The tools some step allows: they are admitted only while a step allowing them is
    /// active. Tools no step allows are not gated by step activity.
    pub fn step_gated_tools(&self) -> BTreeSet<&str> {
        self.flow
            .steps
            .iter()
            .flat_map(|s| s.allow.iter().map(String::as_str))
            .collect()
    }

    /// The tools that must be confirmed by the user before each call: the `commit(..)`
    /// tools. The live wiring marks them as needing the session's `ConfirmationProvider`.
    pub fn confirmed_tools(&self) -> Vec<&str> {
        self.flow.commit.iter().map(|c| c.tool.as_str()).collect()
    }

    /// Every tool the flow names, sorted.
    pub fn tools(&self) -> BTreeSet<&str> {
        tool_places(&self.flow)
            .into_iter()
            .map(|(_, t)| t)
            .collect()
    }
}

/// Every tool name in the flow with where it is named, in declaration order.
fn tool_places(flow: &Flow) -> Vec<(String, &str)> {
    let mut places = Vec::new();
    for step in &flow.steps {
        for (what, tools) in [("allow", &step.allow), ("deny", &step.deny)] {
            for tool in tools {
                places.push((format!("step \"{}\" ({what})", step.id), tool.as_str()));
            }
        }
        for guard in [&step.gate, &step.done].into_iter().flatten() {
            called_tools(guard, &format!("step \"{}\"", step.id), &mut places);
        }
    }
    for tool in &flow.once {
        places.push(("once".to_owned(), tool.as_str()));
    }
    for never in &flow.never {
        places.push(("never".to_owned(), never.tool.as_str()));
        called_tools(&never.until, "never", &mut places);
    }
    for commit in &flow.commit {
        places.push(("commit".to_owned(), commit.tool.as_str()));
        called_tools(&commit.until, "commit", &mut places);
    }
    places
}

fn called_tools<'a>(guard: &'a Guard, place: &str, places: &mut Vec<(String, &'a str)>) {
    match guard {
        Guard::CalledOk(tool) => places.push((format!("{place} called_ok"), tool.as_str())),
        Guard::All(guards) | Guard::Any(guards) => {
            guards.iter().for_each(|g| called_tools(g, place, places));
        }
        Guard::Not(inner) => called_tools(inner, place, places),
        _ => {}
    }
}

impl Flow {
    /// `build`'s checks, then the load-time diagnostics: `never…until` (and `commit`)
    /// guards waiting for a step that does not exist, ordering cycles closed by
    /// `before(..)`, unreachable steps, and commit tools whose guard holds before anything
    /// happened. The first problem found is returned.
    pub fn compile(&self) -> Result<CompiledFlow, FlowError> {
        self.check_structure()?;
        let ids: Vec<String> = self.steps.iter().map(|s| s.id.clone()).collect();
        let index: HashMap<&str, usize> = ids
            .iter()
            .enumerate()
            .map(|(i, s)| (s.as_str(), i))
            .collect();

        let untils = self
            .never
            .iter()
            .map(|n| (&n.tool, &n.until))
            .chain(self.commit.iter().map(|c| (&c.tool, &c.until)));
        for (tool, until) in untils {
            if let Some(step) = until
                .steps_named()
                .into_iter()
                .find(|s| !index.contains_key(s.as_str()))
            {
                return Err(FlowError::NeverOnMissingStep {
                    tool: tool.clone(),
                    step,
                });
            }
        }

        let mut waits: HashMap<&str, Vec<&str>> = self
            .steps
            .iter()
            .map(|s| (s.id.as_str(), s.after.iter().map(String::as_str).collect()))
            .collect();
        for before in &self.before {
            waits
                .entry(before.then.as_str())
                .or_default()
                .push(before.first.as_str());
        }
        if let Some(path) = find_cycle(&ids, &waits) {
            return Err(FlowError::BeforeCycle { path });
        }
        let waits: Vec<Vec<usize>> = ids
            .iter()
            .map(|id| {
                waits
                    .get(id.as_str())
                    .into_iter()
                    .flatten()
                    .filter_map(|w| index.get(w).copied())
                    .collect()
            })
            .collect();
        let compiled = CompiledFlow {
            flow: self.clone(),
            waits,
        };
        compiled.check_reachable()?;

        let nothing = Map::new();
        let context = GuardContext {
            state: &nothing,
            done: &|_| false,
            called_ok: &|_| false,
        };
        if let Some(commit) = self.commit.iter().find(|c| c.until.holds(&context)) {
            return Err(FlowError::UnguardedCommit {
                tool: commit.tool.clone(),
                until: commit.until.to_string(),
            });
        }
        Ok(compiled)
    }

    /// [`Flow::compile`], then every tool the flow names (allow, deny, once, never, commit,
    /// called_ok) checked against the session's tools.
    pub fn compile_with_tools(&self, tools: &[&str]) -> Result<CompiledFlow, FlowError> {
        let compiled = self.compile()?;
        let known: BTreeSet<&str> = tools.iter().copied().collect();
        if let Some((place, tool)) = tool_places(self)
            .into_iter()
            .find(|(_, tool)| !known.contains(tool))
        {
            return Err(FlowError::UnknownTool {
                place,
                tool: tool.to_owned(),
                known: known.iter().map(|t| (*t).to_owned()).collect(),
            });
        }
        Ok(compiled)
    }
}

impl CompiledFlow {
    /// The steps that wait, directly or not, for step `index`.
    fn descendants(&self, index: usize) -> BTreeSet<usize> {
        let mut found = BTreeSet::new();
        let mut grew = true;
        while grew {
            grew = false;
            for (i, waits) in self.waits.iter().enumerate() {
                if !found.contains(&i) && waits.iter().any(|w| *w == index || found.contains(w)) {
                    grew |= found.insert(i);
                }
            }
        }
        found
    }

    fn check_reachable(&self) -> Result<(), FlowError> {
        let steps = &self.flow.steps;
        let index_of = |id: &str| steps.iter().position(|s| s.id == id);
        let mut unreachable: Vec<Option<String>> = vec![None; steps.len()];
        for (i, step) in steps.iter().enumerate() {
            let Some(gate) = &step.gate else { continue };
            let (mut needs_steps, mut needs_tools) = (Vec::new(), Vec::new());
            gate.required_atoms(&mut needs_steps, &mut needs_tools);
            let later = self.descendants(i);
            if let Some(need) = needs_steps
                .iter()
                .find(|n| index_of(n).is_some_and(|n| n == i || later.contains(&n)))
            {
                unreachable[i] = Some(format!(
                    "its gate waits for done({need}), which can only happen after the step itself; gate it on an earlier step"
                ));
                continue;
            }
            for tool in &needs_tools {
                let allowing: Vec<usize> = steps
                    .iter()
                    .enumerate()
                    .filter(|(_, s)| s.allow.contains(tool))
                    .map(|(j, _)| j)
                    .collect();
                if !allowing.is_empty() && allowing.iter().all(|j| *j == i || later.contains(j)) {
                    unreachable[i] = Some(format!(
                        "its gate waits for called_ok({tool}), but only the step itself or steps after it allow \"{tool}\"; allow the tool in an earlier step"
                    ));
                    break;
                }
            }
        }
        // A step waiting for an unreachable step is unreachable too; report the first in
        // declaration order.
        let mut grew = true;
        while grew {
            grew = false;
            for i in 0..steps.len() {
                if unreachable[i].is_some() {
                    continue;
                }
                if let Some(w) = self.waits[i].iter().find(|w| unreachable[**w].is_some()) {
                    unreachable[i] = Some(format!(
                        "it waits for step \"{}\", which is unreachable",
                        steps[*w].id
                    ));
                    grew = true;
                }
            }
        }
        match unreachable
            .into_iter()
            .enumerate()
            .find_map(|(i, r)| r.map(|r| (i, r)))
        {
            Some((i, reason)) => Err(FlowError::Unreachable {
                step: steps[i].id.clone(),
                reason,
            }),
            None => Ok(()),
        }
    }
}
