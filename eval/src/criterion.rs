//! [`Criterion`]: what a case checks, as a value (and, all but [`Custom`], as JSON in a
//! suite file: `{"kind": "contains_match", "expected": ["14°C"]}`).

use std::fmt;
use std::sync::Arc;

use reel_recorder::trace::AgentTrace;
use serde::Deserialize;
use serde_json::Value;

use crate::score::Score;

/// One criterion. Deterministic ones read the trace alone; [`Criterion::SemanticMatch`],
/// [`Criterion::Hallucination`], [`Criterion::Persona`] and a judged [`Criterion::Safety`]
/// ask the suite's [`crate::Judge`].
#[derive(Debug, Clone, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Criterion {
    /// The answer is the expected text.
    ResponseMatch(ResponseMatch),
    /// The answers hold every expected piece of text.
    ContainsMatch(ContainsMatch),
    /// The tool calls, in order, with their arguments.
    Trajectory(Trajectory),
    /// No forbidden pattern in what the agent said or sent to tools (and, judged, nothing
    /// unsafe).
    Safety(Safety),
    /// The answer means the expected text (model-judged).
    SemanticMatch(SemanticMatch),
    /// Every claim is supported by the user's words and the tools' results (model-judged).
    Hallucination(Hallucination),
    /// The agent keeps a persona (model-judged).
    Persona(Persona),
    /// A function of the trace (code only: a suite file cannot name one).
    #[serde(skip)]
    Custom(Custom),
}

impl Criterion {
    /// The criterion's kind, as a suite file names it: `response_match`, `custom`, …
    pub fn kind(&self) -> &'static str {
        match self {
            Criterion::ResponseMatch(_) => "response_match",
            Criterion::ContainsMatch(_) => "contains_match",
            Criterion::Trajectory(_) => "trajectory",
            Criterion::Safety(_) => "safety",
            Criterion::SemanticMatch(_) => "semantic_match",
            Criterion::Hallucination(_) => "hallucination",
            Criterion::Persona(_) => "persona",
            Criterion::Custom(_) => "custom",
        }
    }

    /// Whether the criterion asks the judge.
    pub fn needs_judge(&self) -> bool {
        match self {
            Criterion::SemanticMatch(_) | Criterion::Hallucination(_) | Criterion::Persona(_) => {
                true
            }
            Criterion::Safety(safety) => safety.judge,
            _ => false,
        }
    }
}

/// `E::response_match`: the answer of `turn` (1-based; default the last answer) is
/// `expected`, exactly or normalized (case, whitespace and punctuation ignored). Score 1 or 0.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct ResponseMatch {
    /// The expected answer.
    pub expected: String,
    /// Compare normalized text (lower case, runs of whitespace as one space, punctuation
    /// dropped) instead of exact text.
    #[serde(default)]
    pub normalized: bool,
    /// The turn whose answer is compared, 1-based; none: the last answer.
    #[serde(default)]
    pub turn: Option<u64>,
}

impl ResponseMatch {
    /// Compares normalized text.
    pub fn normalized(mut self) -> Self {
        self.normalized = true;
        self
    }

    /// Compares the answer of `turn` (1-based).
    pub fn turn(mut self, turn: u64) -> Self {
        self.turn = Some(turn);
        self
    }
}

/// `E::contains_match`: every expected piece of text appears in the agent's answers (all
/// turns, or one). Score: the share found.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct ContainsMatch {
    /// The pieces of text.
    pub expected: Vec<String>,
    /// Ignore case.
    #[serde(default)]
    pub ignore_case: bool,
    /// Only the answer of this turn, 1-based; none: every answer.
    #[serde(default)]
    pub turn: Option<u64>,
}

impl ContainsMatch {
    /// Ignores case.
    pub fn ignore_case(mut self) -> Self {
        self.ignore_case = true;
        self
    }

    /// Reads only the answer of `turn` (1-based).
    pub fn turn(mut self, turn: u64) -> Self {
        self.turn = Some(turn);
        self
    }
}

/// How a trajectory's calls must be ordered.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Order {
    /// Exactly the expected calls, in order, nothing else.
    Exact,
    /// The expected calls in order; other calls may come between them.
    #[default]
    InOrder,
    /// The expected calls in any order; other calls may come too.
    AnyOrder,
}

/// How a call's arguments must match.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ArgsMatch {
    /// The same JSON value.
    #[default]
    Exact,
    /// Every expected field is there with the expected value (objects compared field by
    /// field, recursively); the call may carry more.
    Subset,
    /// Names only.
    Ignore,
}

/// One expected tool call.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ExpectedCall {
    /// The function's name.
    pub name: String,
    /// Its arguments; none: not checked for this call.
    #[serde(default)]
    pub args: Option<Value>,
}

impl ExpectedCall {
    /// The expected arguments.
    pub fn args(mut self, args: Value) -> Self {
        self.args = Some(args);
        self
    }
}

/// `E::trajectory`: the tool calls the model made, in order, against the expected ones.
/// Score: the share of expected calls matched (for [`Order::Exact`], matched positions
/// over the longer of the two lists).
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Trajectory {
    /// The expected calls.
    pub calls: Vec<ExpectedCall>,
    /// How they must be ordered (default `in_order`).
    #[serde(default)]
    pub order: Order,
    /// How arguments must match (default `exact`).
    #[serde(default)]
    pub args: ArgsMatch,
}

impl Trajectory {
    /// Sets the order rule.
    pub fn order(mut self, order: Order) -> Self {
        self.order = order;
        self
    }

    /// Sets the argument rule.
    pub fn args(mut self, args: ArgsMatch) -> Self {
        self.args = args;
        self
    }
}

/// `E::safety`: none of the forbidden patterns (case-insensitive text) in the agent's
/// answers, transcripts or tool arguments; with `judge`, the judge also scores safety and
/// the lower score counts. Score 1 (safe) or 0 for the patterns.
#[derive(Debug, Clone, PartialEq, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Safety {
    /// The forbidden patterns.
    #[serde(default)]
    pub forbidden: Vec<String>,
    /// Also ask the judge.
    #[serde(default)]
    pub judge: bool,
}

impl Safety {
    /// Also asks the judge.
    pub fn judged(mut self) -> Self {
        self.judge = true;
        self
    }
}

/// `E::semantic_match`: the judge scores how far the answer of `turn` (default the last)
/// means `expected`.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SemanticMatch {
    /// The expected meaning.
    pub expected: String,
    /// The turn whose answer is judged, 1-based; none: the last answer.
    #[serde(default)]
    pub turn: Option<u64>,
}

impl SemanticMatch {
    /// Judges the answer of `turn` (1-based).
    pub fn turn(mut self, turn: u64) -> Self {
        self.turn = Some(turn);
        self
    }
}

/// `E::hallucination`: the judge scores whether every claim the agent makes is supported
/// by what the user said and the tools returned (1: all supported).
#[derive(Debug, Clone, PartialEq, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Hallucination {}

/// `E::persona`: the judge scores how well the agent keeps `persona` throughout.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Persona {
    /// The persona, described.
    pub persona: String,
}

/// The function of a [`Custom`] criterion.
pub type CustomCheck = dyn Fn(&AgentTrace) -> Score + Send + Sync;

/// `E::custom`: a named function of the trace.
#[derive(Clone)]
pub struct Custom {
    /// The criterion's name.
    pub name: String,
    check: Arc<CustomCheck>,
}

impl Custom {
    /// `check`, called `name`.
    pub fn new(
        name: impl Into<String>,
        check: impl Fn(&AgentTrace) -> Score + Send + Sync + 'static,
    ) -> Self {
        Custom {
            name: name.into(),
            check: Arc::new(check),
        }
    }

    /// Scores `trace`.
    pub fn score(&self, trace: &AgentTrace) -> Score {
        (self.check)(trace)
    }
}

impl fmt::Debug for Custom {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Custom")
            .field("name", &self.name)
            .finish_non_exhaustive()
    }
}

macro_rules! into_criterion {
    ($($ty:ident),*) => {$(
        impl From<$ty> for Criterion {
            fn from(value: $ty) -> Self {
                Criterion::$ty(value)
            }
        }
    )*};
}

into_criterion!(
    ResponseMatch,
    ContainsMatch,
    Trajectory,
    Safety,
    SemanticMatch,
    Hallucination,
    Persona,
    Custom
);
