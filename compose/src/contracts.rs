//! Build-time data contracts: [`check_contracts`], [`infer_data_flow`], [`diagnose`].
//!
//! Each agent declares the state keys it reads and writes (`.reads`, `.writes`,
//! `.output_key`, `C::from_state`, `A::` artifacts; an `S::` transform's keys). A tree is
//! walked in run order with the keys written so far:
//!
//! - a pipeline step sees what the steps before it wrote;
//! - a fan-out's or race's branch sees what was written before the fan-out, not its
//!   siblings' writes (they run at once); after it, every branch's writes;
//! - a fallback's alternative sees what was written before it; after it, every
//!   alternative's writes;
//! - a loop's body also sees its own writes (from the previous run: the seed's review
//!   loop reads its reviewer's feedback), and its `until` predicate reads the keys it
//!   declares (`S::eq(quality, good)` reads `quality`) after the body.
//!
//! The pipeline's input (`input`) and the keys given to [`check_contracts_with`] are
//! written before the tree runs.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;

use crate::Composable;
use reel_agents::INPUT_KEY;

/// A wiring mistake found at build time.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ContractViolation {
    /// An agent reads a key nothing before it writes.
    #[error("agent `{agent}` reads `{key}`, which nothing upstream writes")]
    UnsatisfiedRead {
        /// The reader.
        agent: String,
        /// The key.
        key: String,
    },
    /// An agent writes a key nothing after it reads, and it is not the tree's last step.
    #[error("agent `{agent}` writes `{key}`, which nothing downstream reads")]
    UnreadWrite {
        /// The writer.
        agent: String,
        /// The key.
        key: String,
    },
    /// Two branches that run at once write the same key: which value remains depends on
    /// timing.
    #[error("parallel branches `{first}` and `{second}` both write `{key}`")]
    ParallelWriteConflict {
        /// The key.
        key: String,
        /// The first branch's writer.
        first: String,
        /// The second branch's writer.
        second: String,
    },
    /// A branch reads a key a sibling branch writes at the same time: whether it sees the
    /// value depends on timing.
    #[error(
        "agent `{reader}` reads `{key}`, which its parallel sibling `{writer}` writes at the same time"
    )]
    SiblingRead {
        /// The reader.
        reader: String,
        /// The sibling writing it.
        writer: String,
        /// The key.
        key: String,
    },
}

impl ContractViolation {
    /// Whether the tree would run wrongly (`true`), or only does something unneeded (an
    /// unread write, `false`).
    pub fn is_error(&self) -> bool {
        !matches!(self, ContractViolation::UnreadWrite { .. })
    }
}

/// A key flowing from the agent that writes it to one that reads it.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct DataFlowEdge {
    /// The writer.
    pub from: String,
    /// The reader.
    pub to: String,
    /// The key.
    pub key: String,
}

impl fmt::Display for DataFlowEdge {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} -> {} ({})", self.from, self.to, self.key)
    }
}

/// One agent's contract, at its place in run order.
#[derive(Debug, Clone)]
struct Leaf {
    name: String,
    reads: Vec<String>,
    writes: Vec<String>,
    /// The loops it is inside.
    loops: Vec<usize>,
}

/// Keys written so far, each with its writers.
type Written = BTreeMap<String, Vec<String>>;

#[derive(Default)]
struct Walk {
    leaves: Vec<Leaf>,
    violations: Vec<ContractViolation>,
    edges: Vec<DataFlowEdge>,
    loops: Vec<usize>,
    next_loop: usize,
}

fn contract_of(node: &Composable) -> Option<(String, Vec<String>, Vec<String>)> {
    match node {
        Composable::Agent(builder) => Some((
            builder.name().to_owned(),
            builder.declared_reads(),
            builder.declared_writes(),
        )),
        Composable::Built(agent) => Some((
            agent.agent.name().to_owned(),
            agent.reads.clone(),
            agent.writes.clone(),
        )),
        Composable::Transform(t) => Some((t.label(), t.reads(), t.writes())),
        _ => None,
    }
}

/// Every key a subtree writes, with its writer.
fn writes_of(node: &Composable, out: &mut Vec<(String, String)>) {
    if let Some((name, _, writes)) = contract_of(node) {
        out.extend(writes.into_iter().map(|key| (key, name.clone())));
        return;
    }
    for child in children(node) {
        writes_of(child, out);
    }
}

fn children(node: &Composable) -> Vec<&Composable> {
    match node {
        Composable::Pipeline(p) => p.steps.iter().collect(),
        Composable::FanOut(f) => f.branches.iter().collect(),
        Composable::Race(r) => r.branches.iter().collect(),
        Composable::Loop(l) => vec![&*l.body],
        Composable::Fallback(f) => f.alternatives.iter().collect(),
        _ => Vec::new(),
    }
}

fn add(written: &mut Written, key: String, writer: String) {
    let writers = written.entry(key).or_default();
    if !writers.contains(&writer) {
        writers.push(writer);
    }
}

impl Walk {
    /// Walks `node` given what is `written` before it, with `siblings` the keys written by
    /// branches running at the same time; returns what is written after it.
    fn node(
        &mut self,
        node: &Composable,
        written: Written,
        siblings: &[(String, String)],
    ) -> Written {
        if let Some((name, reads, writes)) = contract_of(node) {
            return self.leaf(name, reads, writes, written, siblings);
        }
        match node {
            Composable::Pipeline(p) => p
                .steps
                .iter()
                .fold(written, |written, step| self.node(step, written, siblings)),
            Composable::FanOut(f) => self.branches(&f.branches, written, siblings, true),
            Composable::Race(r) => self.branches(&r.branches, written, siblings, true),
            Composable::Fallback(f) => self.branches(&f.alternatives, written, siblings, false),
            Composable::Loop(l) => {
                let id = self.next_loop;
                self.next_loop += 1;
                let mut own = Vec::new();
                writes_of(&l.body, &mut own);
                let mut before = written.clone();
                for (key, writer) in own {
                    add(&mut before, key, writer);
                }
                self.loops.push(id);
                let after = self.node(&l.body, before, siblings);
                // The loop's `until` reads the state after each run of the body.
                let after = match &l.until {
                    Some(p) if !p.reads().is_empty() => self.leaf(
                        p.label().to_owned(),
                        p.reads().to_vec(),
                        Vec::new(),
                        after,
                        siblings,
                    ),
                    _ => after,
                };
                self.loops.pop();
                after
            }
            _ => written,
        }
    }

    fn leaf(
        &mut self,
        name: String,
        reads: Vec<String>,
        writes: Vec<String>,
        mut written: Written,
        siblings: &[(String, String)],
    ) -> Written {
        for key in &reads {
            let sibling = siblings
                .iter()
                .find(|(k, writer)| k == key && *writer != name);
            if let Some((_, writer)) = sibling {
                self.violations.push(ContractViolation::SiblingRead {
                    reader: name.clone(),
                    writer: writer.clone(),
                    key: key.clone(),
                });
            }
            match written.get(key) {
                Some(writers) => {
                    for writer in writers.iter().filter(|w| **w != name && !w.is_empty()) {
                        let edge = DataFlowEdge {
                            from: writer.clone(),
                            to: name.clone(),
                            key: key.clone(),
                        };
                        if !self.edges.contains(&edge) {
                            self.edges.push(edge);
                        }
                    }
                }
                None if sibling.is_none() => {
                    self.violations.push(ContractViolation::UnsatisfiedRead {
                        agent: name.clone(),
                        key: key.clone(),
                    });
                }
                None => {}
            }
        }
        for key in &writes {
            add(&mut written, key.clone(), name.clone());
        }
        self.leaves.push(Leaf {
            name,
            reads,
            writes,
            loops: self.loops.clone(),
        });
        written
    }

    fn branches(
        &mut self,
        branches: &[Composable],
        written: Written,
        siblings: &[(String, String)],
        concurrent: bool,
    ) -> Written {
        let per_branch: Vec<Vec<(String, String)>> = branches
            .iter()
            .map(|branch| {
                let mut out = Vec::new();
                writes_of(branch, &mut out);
                out
            })
            .collect();
        if concurrent {
            for (i, first) in per_branch.iter().enumerate() {
                for second in &per_branch[i + 1..] {
                    for (key, a) in first {
                        for (other, b) in second {
                            if key == other {
                                let conflict = ContractViolation::ParallelWriteConflict {
                                    key: key.clone(),
                                    first: a.clone(),
                                    second: b.clone(),
                                };
                                if !self.violations.contains(&conflict) {
                                    self.violations.push(conflict);
                                }
                            }
                        }
                    }
                }
            }
        }
        let mut after = written.clone();
        for (i, branch) in branches.iter().enumerate() {
            let mut others: Vec<(String, String)> = siblings.to_vec();
            if concurrent {
                for (j, writes) in per_branch.iter().enumerate() {
                    if j != i {
                        others.extend(writes.iter().cloned());
                    }
                }
            }
            let out = self.node(branch, written.clone(), &others);
            for (key, writers) in out {
                for writer in writers {
                    add(&mut after, key.clone(), writer);
                }
            }
        }
        after
    }

    fn unread_writes(&mut self, terminal: &BTreeSet<String>) {
        for (i, leaf) in self.leaves.iter().enumerate() {
            if terminal.contains(&leaf.name) {
                continue;
            }
            for key in &leaf.writes {
                let read = self.leaves.iter().enumerate().any(|(j, other)| {
                    other.reads.contains(key)
                        && (j > i || other.loops.iter().any(|l| leaf.loops.contains(l)))
                });
                if !read {
                    self.violations.push(ContractViolation::UnreadWrite {
                        agent: leaf.name.clone(),
                        key: key.clone(),
                    });
                }
            }
        }
    }
}

/// The names of the agents a tree ends with (whose writes are its results).
fn terminal(node: &Composable, out: &mut BTreeSet<String>) {
    if let Some((name, _, _)) = contract_of(node) {
        out.insert(name);
        return;
    }
    match node {
        Composable::Pipeline(p) => {
            // The last step that is not a transform ends the pipeline (with the
            // transforms after it).
            for step in p.steps.iter().rev() {
                terminal(step, out);
                if !matches!(step, Composable::Transform(_)) {
                    break;
                }
            }
        }
        other => {
            for child in children(other) {
                terminal(child, out);
            }
        }
    }
}

fn walk(tree: &Composable, given: &[&str]) -> Walk {
    let mut written = Written::new();
    for key in std::iter::once(INPUT_KEY).chain(given.iter().copied()) {
        written.insert(key.to_owned(), vec![String::new()]);
    }
    let mut walk = Walk::default();
    walk.node(tree, written, &[]);
    let mut ends = BTreeSet::new();
    terminal(tree, &mut ends);
    walk.unread_writes(&ends);
    walk
}

/// The tree's wiring mistakes, in run order (reads first, then unread writes), with only
/// `input` written before it runs.
///
/// ```
/// use reel_compose::{AgentBuilder, ContractViolation, check_contracts};
///
/// let tree = AgentBuilder::new("writer").output_key("draft")
///     >> AgentBuilder::new("editor").reads(["notes"]);
/// assert_eq!(check_contracts(&tree), [
///     ContractViolation::UnsatisfiedRead { agent: "editor".into(), key: "notes".into() },
///     ContractViolation::UnreadWrite { agent: "writer".into(), key: "draft".into() },
/// ]);
/// ```
pub fn check_contracts(tree: &Composable) -> Vec<ContractViolation> {
    check_contracts_with(tree, &[])
}

/// [`check_contracts`], with `given` keys also written before the tree runs (the state the
/// caller sets up).
pub fn check_contracts_with(tree: &Composable, given: &[&str]) -> Vec<ContractViolation> {
    walk(tree, given).violations
}

/// Where each read key comes from: an edge per (writer, reader, key), in run order.
pub fn infer_data_flow(tree: &Composable) -> Vec<DataFlowEdge> {
    walk(tree, &[]).edges
}

/// A report of the tree for a person: its shape, its data flow, its violations and, when
/// any agent's `C::` policy calls a model (`C::summarize`), those calls.
///
/// ```
/// use reel_compose::{AgentBuilder, diagnose};
///
/// let tree = AgentBuilder::new("writer").output_key("draft")
///     >> AgentBuilder::new("editor").reads(["draft"]);
/// assert_eq!(diagnose(&tree), "tree: writer >> editor\ndata flow:\n  writer -> editor (draft)\ncontracts: ok\n");
/// ```
pub fn diagnose(tree: &Composable) -> String {
    diagnose_with(tree, &[])
}

/// [`diagnose`], with `given` keys also written before the tree runs (the state the caller
/// sets up), as [`check_contracts_with`] judges it: a read of a given key is satisfied.
///
/// ```
/// use reel_compose::{AgentBuilder, Composable, diagnose_with};
///
/// let tree: Composable = AgentBuilder::new("editor").reads(["notes"]).into();
/// assert_eq!(diagnose_with(&tree, &["notes"]), "tree: editor\ndata flow:\n  (none)\ncontracts: ok\n");
/// ```
pub fn diagnose_with(tree: &Composable, given: &[&str]) -> String {
    let walk = walk(tree, given);
    let mut report = format!("tree: {}\ndata flow:\n", tree.label());
    if walk.edges.is_empty() {
        report.push_str("  (none)\n");
    }
    for edge in &walk.edges {
        report.push_str(&format!("  {edge}\n"));
    }
    if walk.violations.is_empty() {
        report.push_str("contracts: ok\n");
    } else {
        report.push_str("contracts:\n");
        for violation in &walk.violations {
            let level = if violation.is_error() {
                "error"
            } else {
                "warning"
            };
            report.push_str(&format!("  {level}: {violation}\n"));
        }
    }
    let mut calls = Vec::new();
    context_model_calls(tree, &mut calls);
    if !calls.is_empty() {
        report.push_str("context policies calling a model (before the agent's own call):\n");
        for (agent, step) in calls {
            report.push_str(&format!("  {agent}: {step}\n"));
        }
    }
    report
}

/// Each agent of the tree whose `C::` policy calls a model, with the step, in tree order.
fn context_model_calls(node: &Composable, out: &mut Vec<(String, String)>) {
    if let Composable::Agent(builder) = node {
        let steps = builder.config().context.model_steps();
        out.extend(
            steps
                .into_iter()
                .map(|step| (builder.name().to_owned(), step)),
        );
        return;
    }
    for child in children(node) {
        context_model_calls(child, out);
    }
}

impl Composable {
    /// [`check_contracts`] on this tree.
    pub fn check_contracts(&self) -> Vec<ContractViolation> {
        check_contracts(self)
    }
}
