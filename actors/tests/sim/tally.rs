//! The figures over many seeds: runs, faults injected by kind, violations by kind, and
//! the seeds that failed — what goes into docs/RELIABILITY.md.

use std::collections::BTreeMap;
use std::fmt;
use std::time::Duration;

use super::hook;
use super::plan::{Fault, Plan, Seed};
use super::violation::Violation;

/// Counts over the seeds run.
#[derive(Debug, Default, Clone)]
pub struct Tally {
    /// Seeds run.
    pub seeds: u64,
    /// Session runs (a seed with faults runs twice: with them, and without as the baseline).
    pub runs: u64,
    /// Script frames the model sent, over all runs with faults.
    pub frames: u64,
    /// Faults planned, by kind.
    pub faults: BTreeMap<&'static str, u64>,
    /// Violations, by kind.
    pub violations: BTreeMap<String, u64>,
    /// Seeds with at least one violation, with their violation kinds.
    pub failing: Vec<(Seed, Vec<String>)>,
    /// Wall-clock time of the sweep.
    pub took: Duration,
}

impl Tally {
    /// Adds one seed.
    pub fn add(&mut self, plan: &Plan, runs: u64, frames: usize, violations: &[Violation]) {
        self.seeds += 1;
        self.runs += runs;
        self.frames += frames as u64;
        for fault in &plan.faults {
            *self.faults.entry(fault.kind()).or_default() += 1;
        }
        for violation in violations {
            *self.violations.entry(violation.kind()).or_default() += 1;
        }
        if !violations.is_empty() {
            let mut kinds: Vec<String> = violations.iter().map(Violation::kind).collect();
            kinds.dedup();
            self.failing.push((plan.seed, kinds));
        }
    }
}

impl fmt::Display for Tally {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "simulation tally")?;
        writeln!(
            f,
            "  seeds run: {} ({} session runs, {} script frames sent with faults) in {:.1?}",
            self.seeds, self.runs, self.frames, self.took
        )?;
        writeln!(f, "  faults injected, by kind:")?;
        for (kind, n) in &self.faults {
            writeln!(f, "    {n:>6}  {kind}")?;
        }
        if self
            .faults
            .contains_key(Fault::NeedsHook { child: "", at: 0 }.kind())
        {
            writeln!(f, "    (needs_hook faults wait for: {})", hook::NEEDED)?;
        }
        writeln!(f, "  violations, by kind:")?;
        if self.violations.is_empty() {
            writeln!(f, "    none")?;
        }
        for (kind, n) in &self.violations {
            writeln!(f, "    {n:>6}  {kind}")?;
        }
        writeln!(
            f,
            "  seeds with violations: {} of {}",
            self.failing.len(),
            self.seeds
        )?;
        for (seed, kinds) in self.failing.iter().take(40) {
            writeln!(f, "    seed {seed}: {}", kinds.join(", "))?;
        }
        if self.failing.len() > 40 {
            writeln!(f, "    … and {} more", self.failing.len() - 40)?;
        }
        Ok(())
    }
}
