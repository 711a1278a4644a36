//! [`Flow::build`]'s checks: referential integrity and acyclicity.

use std::collections::{BTreeSet, HashMap};

use crate::error::FlowError;
use crate::flow::Flow;
use crate::ground;

/// The first cycle of "waits for" edges among `steps`, as a path whose first step is
/// repeated at its end, or `None`. `waits` lists, for each step, the steps it waits for.
pub(crate) fn find_cycle(
    steps: &[String],
    waits: &HashMap<&str, Vec<&str>>,
) -> Option<Vec<String>> {
    // 0 unvisited, 1 on the path, 2 finished.
    fn visit<'a>(
        step: &'a str,
        waits: &HashMap<&'a str, Vec<&'a str>>,
        mark: &mut HashMap<&'a str, u8>,
        path: &mut Vec<&'a str>,
    ) -> Option<Vec<String>> {
        match mark.get(step).copied().unwrap_or(0) {
            2 => return None,
            1 => {
                let start = path.iter().position(|s| *s == step).unwrap_or(0);
                let mut cycle: Vec<String> =
                    path[start..].iter().map(|s| (*s).to_owned()).collect();
                cycle.push(step.to_owned());
                return Some(cycle);
            }
            _ => {}
        }
        mark.insert(step, 1);
        path.push(step);
        for next in waits.get(step).into_iter().flatten() {
            if let Some(cycle) = visit(next, waits, mark, path) {
                return Some(cycle);
            }
        }
        path.pop();
        mark.insert(step, 2);
        None
    }
    let mut mark = HashMap::new();
    for step in steps {
        let mut path = Vec::new();
        if let Some(cycle) = visit(step, waits, &mut mark, &mut path) {
            return Some(cycle);
        }
    }
    None
}

impl Flow {
    /// Checks referential integrity (every step named exists, no name twice, every
    /// non-terminal step has a `done`, ground templates parse) and acyclicity of the
    /// `after(..)` edges, and returns the flow. [`Flow::compile`] checks more.
    pub fn build(self) -> Result<Flow, FlowError> {
        self.check_structure()?;
        Ok(self)
    }

    pub(crate) fn check_structure(&self) -> Result<(), FlowError> {
        if let Some(verb) = self.stray_verb() {
            return Err(FlowError::StrayVerb { verb });
        }
        if self.steps.is_empty() {
            return Err(FlowError::NoSteps);
        }
        let mut seen = BTreeSet::new();
        for step in &self.steps {
            if !seen.insert(step.id.as_str()) {
                return Err(FlowError::DuplicateStep {
                    step: step.id.clone(),
                });
            }
        }
        let unknown = |place: String, step: &str| -> Result<(), FlowError> {
            if seen.contains(step) {
                Ok(())
            } else {
                Err(FlowError::UnknownStep {
                    place,
                    step: step.to_owned(),
                })
            }
        };
        for step in &self.steps {
            if let Some(dep) = step.after.iter().find(|d| !seen.contains(d.as_str())) {
                return Err(FlowError::UnknownDependency {
                    step: step.id.clone(),
                    dep: dep.clone(),
                });
            }
            if !step.terminal && step.done.is_none() {
                return Err(FlowError::MissingDone {
                    step: step.id.clone(),
                });
            }
            for (what, guard) in [("gate", &step.gate), ("done", &step.done)] {
                for named in guard.iter().flat_map(|g| g.steps_named()) {
                    unknown(format!("step \"{}\" ({what})", step.id), &named)?;
                }
            }
            for template in &step.ground {
                ground::check(template).map_err(|reason| FlowError::BadGround {
                    step: step.id.clone(),
                    template: template.clone(),
                    reason,
                })?;
            }
        }
        for step in &self.require {
            unknown("require".to_owned(), step)?;
        }
        for before in &self.before {
            let place = format!("before(\"{}\", \"{}\")", before.first, before.then);
            unknown(place.clone(), &before.first)?;
            unknown(place, &before.then)?;
        }
        let ids: Vec<String> = self.steps.iter().map(|s| s.id.clone()).collect();
        let waits: HashMap<&str, Vec<&str>> = self
            .steps
            .iter()
            .map(|s| (s.id.as_str(), s.after.iter().map(String::as_str).collect()))
            .collect();
        match find_cycle(&ids, &waits) {
            Some(path) => Err(FlowError::Cycle { path }),
            None => Ok(()),
        }
    }
}
