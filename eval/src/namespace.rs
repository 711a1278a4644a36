//! [`E`]: the seed's evaluation namespace, one constructor per criterion.

use reel_recorder::trace::AgentTrace;

use crate::criterion::{
    ContainsMatch, Criterion, Custom, ExpectedCall, Hallucination, Persona, ResponseMatch, Safety,
    SemanticMatch, Trajectory,
};
use crate::score::Score;
use crate::suite::{Case, Suite};

/// The evaluation namespace: `E::suite("weather").case(E::case("answers",
/// E::contains_match(["14°C"])))`.
#[derive(Debug, Clone, Copy)]
pub struct E;

impl E {
    /// A suite with no cases yet.
    pub fn suite(name: impl Into<String>) -> Suite {
        Suite::new(name)
    }

    /// A case: `criterion` under `name`, threshold 1, over every recording.
    pub fn case(name: impl Into<String>, criterion: impl Into<Criterion>) -> Case {
        Case::new(name, criterion)
    }

    /// The last answer (or [`ResponseMatch::turn`]'s) is `expected`.
    pub fn response_match(expected: impl Into<String>) -> ResponseMatch {
        ResponseMatch {
            expected: expected.into(),
            normalized: false,
            turn: None,
        }
    }

    /// The answers hold every piece of `expected`.
    pub fn contains_match<S: Into<String>>(expected: impl IntoIterator<Item = S>) -> ContainsMatch {
        ContainsMatch {
            expected: expected.into_iter().map(Into::into).collect(),
            ignore_case: false,
            turn: None,
        }
    }

    /// The tool calls made, against `calls` (in order, arguments exact, unless set).
    pub fn trajectory(calls: impl IntoIterator<Item = ExpectedCall>) -> Trajectory {
        Trajectory {
            calls: calls.into_iter().collect(),
            order: Default::default(),
            args: Default::default(),
        }
    }

    /// An expected call to `name` (arguments unchecked until [`ExpectedCall::args`]).
    pub fn call(name: impl Into<String>) -> ExpectedCall {
        ExpectedCall {
            name: name.into(),
            args: None,
        }
    }

    /// None of `forbidden` in what the agent said or sent ([`Safety::judged`]: the judge too).
    pub fn safety<S: Into<String>>(forbidden: impl IntoIterator<Item = S>) -> Safety {
        Safety {
            forbidden: forbidden.into_iter().map(Into::into).collect(),
            judge: false,
        }
    }

    /// The judge scores how far the last answer means `expected`.
    pub fn semantic_match(expected: impl Into<String>) -> SemanticMatch {
        SemanticMatch {
            expected: expected.into(),
            turn: None,
        }
    }

    /// The judge scores whether every claim is supported by the user and the tools.
    pub fn hallucination() -> Hallucination {
        Hallucination {}
    }

    /// The judge scores how well the agent keeps `persona`.
    pub fn persona(persona: impl Into<String>) -> Persona {
        Persona {
            persona: persona.into(),
        }
    }

    /// `check`, a function of the trace, called `name`.
    pub fn custom(
        name: impl Into<String>,
        check: impl Fn(&AgentTrace) -> Score + Send + Sync + 'static,
    ) -> Custom {
        Custom::new(name, check)
    }
}
