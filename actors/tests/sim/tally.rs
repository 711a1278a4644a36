//! The figures over many seeds: runs, faults injected by kind, violations by kind, and
//! the seeds that failed — what goes into docs/RELIABILITY.md.

use std::collections::BTreeMap;
use std::fmt;
use std::time::Duration;

use super::plan::{Fault, Plan, Seed};
use super::run::Outcome;
use super::violation::Violation;

/// Counts over the seeds run.
#[derive(Debug, Default, Clone)]
pub struct Tally {
    /// Seeds run.
    pub seeds: u64,
    /// Session runs (a seed with faults runs with them and without, as the baseline; on
    /// the in-memory wire, both twice: the rerun must repeat the first).
    pub runs: u64,
    /// Script frames the model sent, over all runs with faults.
    pub frames: u64,
    /// Faults planned, by kind.
    pub faults: BTreeMap<&'static str, u64>,
    /// Faults seen to strike, by kind (a planned fault may not: its event lost, its
    /// entry never written, its session over first).
    pub fired: BTreeMap<&'static str, u64>,
    /// Violations, by kind.
    pub violations: BTreeMap<String, u64>,
    /// Seeds with at least one violation, with their violation kinds.
    pub failing: Vec<(Seed, Vec<String>)>,
    /// Wall-clock time of the sweep.
    pub took: Duration,
}

impl Tally {
    /// Adds one seed: its plan, its run with faults and what was found.
    pub fn add(&mut self, plan: &Plan, runs: u64, outcome: &Outcome, violations: &[Violation]) {
        let o = &outcome.observed;
        let fired = [
            ("text_panic (fast lane)", o.text_panicked.len()),
            ("usage_panic (telemetry)", o.usage_panicked.len()),
            ("turn_complete_panic (control lane)", o.turn_panicked.len()),
            (
                "on_tool_call_panic (control lane)",
                o.tool_callback_panicked.len(),
            ),
            ("modify_panic (state store)", o.modify_panicked.len()),
            (
                "context_panic (control lane, mid-pipeline)",
                o.context_panicked.len() + o.entry_context_panicked.len(),
            ),
            (
                "context frames (conversation control)",
                outcome.model.contexts.len(),
            ),
            (
                "recorder_panic (recorder)",
                usize::from(outcome.recorder_panicked),
            ),
            (
                "failing_wire_log (failed writes)",
                outcome.wire_failed.len(),
            ),
            (
                "failing_journal (failed writes)",
                outcome.journal_file_errors as usize,
            ),
            ("link_drop", outcome.model.drops as usize),
            (
                "go_away (script and storms)",
                outcome.model.go_aways as usize,
            ),
        ];
        for struck in &o.struck {
            let fault = Fault::Internal {
                child: struck.child,
                at: struck.at,
            };
            *self.fired.entry(fault.kind()).or_default() += 1;
        }
        for (kind, n) in fired {
            if n > 0 {
                *self.fired.entry(kind).or_default() += n as u64;
            }
        }
        let frames = outcome.model.sent.len();
        self.seeds += 1;
        self.runs += runs;
        self.frames += frames as u64;
        for fault in &plan.faults {
            *self.faults.entry(fault.kind()).or_default() += 1;
        }
        if let Some(conversation) = &plan.conversation {
            *self
                .faults
                .entry("conversation control (steering, repair)")
                .or_default() += 1;
            if conversation.context_panic.is_some() {
                *self
                    .faults
                    .entry("context_panic (control lane, mid-pipeline)")
                    .or_default() += 1;
            }
        }
        if plan.governed {
            *self
                .faults
                .entry("governed (a flow's monitor at the tool gate)")
                .or_default() += 1;
        }
        if !plan.usage_callback {
            *self
                .faults
                .entry("no on_usage (no telemetry actor: the router counts)")
                .or_default() += 1;
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
            "  seeds run: {} ({} session runs, {} script frames sent in the first runs with faults) in {:.1?}",
            self.seeds, self.runs, self.frames, self.took
        )?;
        writeln!(f, "  faults injected, by kind:")?;
        for (kind, n) in &self.faults {
            writeln!(f, "    {n:>6}  {kind}")?;
        }
        writeln!(f, "  faults seen to strike, by kind:")?;
        for (kind, n) in &self.fired {
            writeln!(f, "    {n:>6}  {kind}")?;
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
