//! One seed, start to end: its plan, its run with faults, the fault-free baseline, the
//! checks, and the report a failing seed prints.

use std::fmt;

use super::check::check;
use super::generate;
use super::plan::{Plan, Seed};
use super::run::{Outcome, Wire, run};
use super::trace;
use super::violation::Violation;

/// What one seed came to.
#[derive(Debug, Clone)]
pub struct SeedReport {
    /// The plan.
    pub plan: Plan,
    /// The wire it ran over.
    pub wire: Wire,
    /// The run with faults.
    pub outcome: Outcome,
    /// Session runs made: with faults and the fault-free baseline (if it has faults), and
    /// on the in-memory wire both again.
    pub runs: u64,
    /// Every violation found.
    pub violations: Vec<Violation>,
}

/// Runs seed `seed` over `wire` and checks it.
pub fn run_seed(seed: Seed, wire: Wire) -> SeedReport {
    let plan = generate::plan(seed);
    run_plan(plan, wire)
}

/// The runs of one plan: with its faults, and the fault-free baseline (if it has faults).
#[derive(Debug, Clone)]
pub struct Runs {
    /// The run with faults.
    pub with_faults: Outcome,
    /// The fault-free run.
    pub baseline: Option<Outcome>,
}

impl Runs {
    /// Runs `plan` over `wire`, and its fault-free baseline if it has faults.
    pub fn of(plan: &Plan, wire: Wire) -> Self {
        let with_faults = run(plan, wire);
        let baseline = (!plan.faults.is_empty()).then(|| run(&plan.without_faults(), wire));
        Runs {
            with_faults,
            baseline,
        }
    }

    /// Session runs made.
    fn count(&self) -> u64 {
        1 + u64::from(self.baseline.is_some())
    }
}

/// Runs `plan` over `wire` (and its fault-free baseline, if it has faults), checks it, and,
/// on the in-memory wire, runs it all again: the second runs must repeat the first byte for
/// byte (see `sim::trace`). A loopback run goes through real sockets, whose timing is the
/// machine's: it is run once.
pub fn run_plan(plan: Plan, wire: Wire) -> SeedReport {
    super::quiet::silence_planned_panics();
    let first = Runs::of(&plan, wire);
    let mut violations = check(&plan, &first.with_faults, first.baseline.as_ref());
    let mut runs = first.count();
    if wire == Wire::Memory {
        let second = Runs::of(&plan, wire);
        runs += second.count();
        violations.extend(compare(&first, &second));
    }
    SeedReport {
        plan,
        wire,
        outcome: first.with_faults,
        runs,
        violations,
    }
}

/// Where `second`, a rerun of the same plan, did not repeat `first`: for each of the two
/// runs, the first line at which their traces differ.
pub fn compare(first: &Runs, second: &Runs) -> Vec<Violation> {
    let pairs = [
        (
            "with faults",
            Some(&first.with_faults),
            Some(&second.with_faults),
        ),
        (
            "fault-free",
            first.baseline.as_ref(),
            second.baseline.as_ref(),
        ),
    ];
    pairs
        .into_iter()
        .filter_map(|(run, a, b)| {
            let trace = |o: Option<&Outcome>| o.map(trace::of).unwrap_or_default();
            let (line, first, second) = trace::first_difference(&trace(a), &trace(b))?;
            Some(Violation::NotReproducible {
                run,
                line,
                first,
                second,
            })
        })
        .collect()
}

impl SeedReport {
    /// The one line that runs this seed again.
    pub fn reproducer(&self) -> String {
        let wire = match self.wire {
            Wire::Memory => "",
            Wire::Loopback => "REEL_SIM_WIRE=loopback ",
        };
        format!(
            "{wire}REEL_SIM_SEED={} cargo test -p reel-actors --test it simulation:: -- --nocapture",
            self.plan.seed
        )
    }
}

impl fmt::Display for SeedReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let verdict = if self.violations.is_empty() {
            "passed"
        } else {
            "FAILED"
        };
        writeln!(
            f,
            "seed {} {verdict} ({:?} wire); reproduce: {}",
            self.plan.seed,
            self.wire,
            self.reproducer()
        )?;
        write!(f, "{}", self.plan)?;
        let o = &self.outcome;
        let end = o.end.as_ref().map_or("did not end".to_owned(), |e| {
            format!("ended: {} (failed: {})", e.reason, e.failed)
        });
        writeln!(
            f,
            "  run: {} of {} steps sent, {} connections, {} goAways, {} drops, {} events published, {end}, {:?} virtual",
            o.model.sent.len(),
            self.plan.script.len(),
            o.model.setups.len(),
            o.model.go_aways,
            o.model.drops,
            o.events.len(),
            o.took
        )?;
        if o.journal_file_errors > 0 {
            writeln!(
                f,
                "  journal file: {} writes failed (the session went on)",
                o.journal_file_errors
            )?;
        }
        for note in o.model.notes.iter().take(10) {
            writeln!(f, "  model note: {note}")?;
        }
        if !self.violations.is_empty() {
            writeln!(f, "  violations:")?;
            for violation in &self.violations {
                writeln!(f, "    - {violation}")?;
            }
        }
        Ok(())
    }
}

impl SeedReport {
    /// Every event the session published, one a line (`REEL_SIM_TRACE=1` prints it for a
    /// single seed): lane, that lane's sequence number, and the event.
    pub fn trace(&self) -> String {
        let mut out = String::new();
        for e in &self.outcome.events {
            let event = match &e.event {
                reel_actors::LiveEvent::Session(reel_protocol::SessionEvent::AudioData(pcm)) => {
                    format!("audio a{:?}", super::frames::parse_audio(pcm))
                }
                other => format!("{other:?}"),
            };
            let event: String = event.chars().take(160).collect();
            out.push_str(&format!("  {:?} #{} {event}\n", e.lane, e.seq));
        }
        out
    }
}
