//! [`Composable`]: the tree the operators build, and its lowering to `reel-agents`'
//! combinators.

use std::sync::Arc;

use futures_util::future::BoxFuture;
use reel_actors::state::State;
use reel_agents::{
    AgentError, Decisions, FallbackTextAgent, LoopTextAgent, ParallelTextAgent, RaceTextAgent,
    SequentialTextAgent, SharedAgent, TextAgent,
};
use reel_llm::BaseLlm;
use serde_json::Value;

use crate::{AgentBuilder, ComposedAgent, StatePredicate, StateTransform};

/// How many times `* until(pred)` runs its body at most, unless [`Until::max`] says.
pub const DEFAULT_UNTIL_MAX: usize = 10;

/// A composition: an agent, a state transform, or a combinator over compositions. The
/// operators build it and flatten as they go (`a >> b >> c` is one [`Pipeline`] of three
/// steps); [`Composable::compile`] lowers it to `reel-agents`' combinators.
///
/// ```
/// use reel_compose::{AgentBuilder, Composable};
///
/// let pipeline = AgentBuilder::new("a") >> AgentBuilder::new("b") >> AgentBuilder::new("c");
/// let Composable::Pipeline(p) = &pipeline else { unreachable!() };
/// assert_eq!(p.steps.len(), 3);
/// assert_eq!(pipeline.label(), "a >> b >> c");
/// ```
#[derive(Debug, Clone)]
pub enum Composable {
    /// An agent to build.
    Agent(Box<AgentBuilder>),
    /// An agent already built.
    Built(BuiltAgent),
    /// A state transform between agents (the previous output passes through it).
    Transform(StateTransform),
    /// `a >> b`: in order ([`SequentialTextAgent`]).
    Pipeline(Pipeline),
    /// `a | b`: all at once, outputs joined in order ([`ParallelTextAgent`]).
    FanOut(FanOut),
    /// [`race`]: the first success ([`RaceTextAgent`], its winner recorded).
    Race(Race),
    /// `a * n`, `a * until(p)`: repeated ([`LoopTextAgent`]).
    Loop(Loop),
    /// `a / b`: the first success, in order ([`FallbackTextAgent`]).
    Fallback(Fallback),
}

/// An agent built elsewhere, in a tree, with the keys it reads and writes when known (a
/// [`ComposedAgent`]'s, from its builder).
#[derive(Clone)]
pub struct BuiltAgent {
    /// The agent.
    pub agent: SharedAgent,
    pub(crate) reads: Vec<String>,
    pub(crate) writes: Vec<String>,
}

impl BuiltAgent {
    fn opaque(agent: SharedAgent) -> Self {
        BuiltAgent {
            agent,
            reads: Vec::new(),
            writes: Vec::new(),
        }
    }
}

impl std::fmt::Debug for BuiltAgent {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("BuiltAgent")
            .field(&self.agent.name())
            .finish()
    }
}

/// Steps run in order.
#[derive(Debug, Clone)]
pub struct Pipeline {
    /// The steps.
    pub steps: Vec<Composable>,
}

/// Branches run at once.
#[derive(Debug, Clone)]
pub struct FanOut {
    /// The branches.
    pub branches: Vec<Composable>,
}

/// Branches raced.
#[derive(Debug, Clone)]
pub struct Race {
    /// The branches.
    pub branches: Vec<Composable>,
}

/// A body repeated.
#[derive(Debug, Clone)]
pub struct Loop {
    /// The body.
    pub body: Box<Composable>,
    /// At most this many runs.
    pub max: usize,
    /// Stops once this holds after a run.
    pub until: Option<StatePredicate>,
}

/// Alternatives tried in order.
#[derive(Debug, Clone)]
pub struct Fallback {
    /// The alternatives.
    pub alternatives: Vec<Composable>,
}

/// `* until(pred)`'s right-hand side: the predicate and the bound.
#[derive(Debug, Clone)]
pub struct Until {
    predicate: StatePredicate,
    max: usize,
}

impl Until {
    /// At most `max` runs (default [`DEFAULT_UNTIL_MAX`]).
    #[must_use]
    pub fn max(mut self, max: usize) -> Self {
        self.max = max;
        self
    }

    pub(crate) fn max_runs(&self) -> usize {
        self.max
    }

    pub(crate) fn into_predicate(self) -> StatePredicate {
        self.predicate
    }
}

/// Stop repeating once `done` holds on the state (its keys as a JSON object), the seed's
/// `* until(|v| ..)`. It declares no keys to the contracts; [`until_state`] with an `S::`
/// predicate does.
///
/// ```
/// use reel_compose::{AgentBuilder, Composable, S, until, until_state};
///
/// let converge = AgentBuilder::new("iterate").instruction("Improve")
///     * until(|v| v["quality"].as_str() == Some("good"));
/// let bounded = AgentBuilder::new("iterate") * until_state(S::eq("quality", "good")).max(3);
/// let Composable::Loop(l) = bounded else { unreachable!() };
/// assert_eq!(l.max, 3);
/// # let _ = converge;
/// ```
pub fn until(done: impl Fn(&Value) -> bool + Send + Sync + 'static) -> Until {
    until_state(StatePredicate::new("fn", done))
}

/// Stop repeating once `predicate` (`S::eq`, `S::is_true`, `S::one_of`) holds; the keys it
/// reads count as read by the loop in [`check_contracts`](crate::check_contracts).
pub fn until_state(predicate: StatePredicate) -> Until {
    Until {
        predicate,
        max: DEFAULT_UNTIL_MAX,
    }
}

/// Races `branches`: the first success wins, recorded in the decisions log so a replay runs
/// the same winner (`|` is a fan-out, as in the seed; a race is asked for by name).
pub fn race(branches: Vec<Composable>) -> Composable {
    Composable::Race(Race { branches })
}

impl From<AgentBuilder> for Composable {
    fn from(builder: AgentBuilder) -> Self {
        Composable::Agent(Box::new(builder))
    }
}

impl From<ComposedAgent> for Composable {
    fn from(agent: ComposedAgent) -> Self {
        let builder = AgentBuilder {
            config: agent.config().clone(),
        };
        Composable::Built(BuiltAgent {
            reads: builder.declared_reads(),
            writes: builder.declared_writes(),
            agent: Arc::new(agent),
        })
    }
}

impl From<SharedAgent> for Composable {
    fn from(agent: SharedAgent) -> Self {
        Composable::Built(BuiltAgent::opaque(agent))
    }
}

impl From<StateTransform> for Composable {
    fn from(transform: StateTransform) -> Self {
        Composable::Transform(transform)
    }
}

fn join(items: &[Composable], separator: &str) -> String {
    items
        .iter()
        .map(|item| match item {
            Composable::Pipeline(_) | Composable::FanOut(_) | Composable::Fallback(_) => {
                format!("({})", item.label())
            }
            _ => item.label(),
        })
        .collect::<Vec<_>>()
        .join(separator)
}

impl Composable {
    /// An agent built elsewhere (any [`TextAgent`]).
    pub fn agent(agent: impl TextAgent) -> Self {
        Composable::Built(BuiltAgent::opaque(Arc::new(agent)))
    }

    /// The tree as written: `research >> (tech | biz) >> merge`; also the compiled
    /// combinators' names.
    pub fn label(&self) -> String {
        match self {
            Composable::Agent(builder) => builder.name().to_owned(),
            Composable::Built(agent) => agent.agent.name().to_owned(),
            Composable::Transform(transform) => transform.label(),
            Composable::Pipeline(p) => join(&p.steps, " >> "),
            Composable::FanOut(f) => join(&f.branches, " | "),
            Composable::Race(r) => format!("race({})", join(&r.branches, ", ")),
            Composable::Loop(l) => {
                let body = match &*l.body {
                    Composable::Agent(_) | Composable::Built(_) => l.body.label(),
                    other => format!("({})", other.label()),
                };
                match &l.until {
                    Some(p) => format!("{body} * until({}, max {})", p.label(), l.max),
                    None => format!("{body} * {}", l.max),
                }
            }
            Composable::Fallback(f) => join(&f.alternatives, " / "),
        }
    }

    /// The executable agent, every agent asking `llm`; races and timing-dependent
    /// middleware decide live and record nothing.
    pub fn compile(self, llm: Arc<dyn BaseLlm>) -> SharedAgent {
        self.lower(&llm, None)
    }

    /// The executable agent, every agent asking `llm`, with races and timing-dependent
    /// middleware recording into (or replaying from) `decisions`.
    pub fn compile_with(self, llm: Arc<dyn BaseLlm>, decisions: &Decisions) -> SharedAgent {
        self.lower(&llm, Some(decisions))
    }

    fn lower(self, llm: &Arc<dyn BaseLlm>, decisions: Option<&Decisions>) -> SharedAgent {
        let name = self.label();
        let all = |items: Vec<Composable>| -> Vec<SharedAgent> {
            items
                .into_iter()
                .map(|item| item.lower(llm, decisions))
                .collect()
        };
        match self {
            Composable::Agent(builder) => Arc::new(ComposedAgent::new(
                builder.config,
                Arc::clone(llm),
                decisions.cloned(),
            )),
            Composable::Built(agent) => agent.agent,
            Composable::Transform(transform) => Arc::new(TransformAgent { name, transform }),
            Composable::Pipeline(p) => Arc::new(SequentialTextAgent::new(name, all(p.steps))),
            Composable::FanOut(f) => Arc::new(ParallelTextAgent::new(name, all(f.branches))),
            Composable::Race(r) => {
                let race = RaceTextAgent::new(name, all(r.branches));
                Arc::new(match decisions {
                    Some(decisions) => race.decisions(decisions.clone()),
                    None => race,
                })
            }
            Composable::Loop(l) => {
                let body = l.body.lower(llm, decisions);
                let lowered = LoopTextAgent::new(name, body, l.max);
                Arc::new(match l.until {
                    Some(predicate) => {
                        lowered.until(move |state: &State| predicate.check_state(state))
                    }
                    None => lowered,
                })
            }
            Composable::Fallback(f) => Arc::new(FallbackTextAgent::new(name, all(f.alternatives))),
        }
    }
}

/// A state transform as a pipeline step: it rewrites the state and passes the previous
/// output through.
struct TransformAgent {
    name: String,
    transform: StateTransform,
}

impl TextAgent for TransformAgent {
    fn name(&self) -> &str {
        &self.name
    }

    fn run<'a>(&'a self, state: &'a State) -> BoxFuture<'a, Result<String, AgentError>> {
        Box::pin(async move {
            self.transform
                .apply_to(state)
                .await
                .map_err(|error| AgentError::failed(&self.name, error))?;
            Ok(String::new())
        })
    }

    fn passes_through(&self) -> bool {
        true
    }
}
