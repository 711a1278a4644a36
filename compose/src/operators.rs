//! The operators: `>>` (sequence), `|` (fan-out), `* n` and `* until(p)` (loop), `/`
//! (fallback), on builders, built agents and trees.

use std::ops::{BitOr, Div, Mul, Shr};

use crate::composable::{Fallback, FanOut, Loop, Pipeline, Until};
use crate::{AgentBuilder, Composable, ComposedAgent, StateTransform};

fn sequence(a: Composable, b: Composable) -> Composable {
    let mut steps = match a {
        Composable::Pipeline(p) => p.steps,
        other => vec![other],
    };
    match b {
        Composable::Pipeline(p) => steps.extend(p.steps),
        other => steps.push(other),
    }
    Composable::Pipeline(Pipeline { steps })
}

fn fan_out(a: Composable, b: Composable) -> Composable {
    let mut branches = match a {
        Composable::FanOut(f) => f.branches,
        other => vec![other],
    };
    match b {
        Composable::FanOut(f) => branches.extend(f.branches),
        other => branches.push(other),
    }
    Composable::FanOut(FanOut { branches })
}

fn fallback(a: Composable, b: Composable) -> Composable {
    let mut alternatives = match a {
        Composable::Fallback(f) => f.alternatives,
        other => vec![other],
    };
    match b {
        Composable::Fallback(f) => alternatives.extend(f.alternatives),
        other => alternatives.push(other),
    }
    Composable::Fallback(Fallback { alternatives })
}

fn repeat(body: Composable, max: usize, until: Option<Until>) -> Composable {
    Composable::Loop(Loop {
        body: Box::new(body),
        max: until.as_ref().map_or(max, |u| u.max_runs()),
        until: until.map(Until::into_predicate),
    })
}

macro_rules! operators {
    ($($ty:ty),*) => {$(
        impl<R: Into<Composable>> Shr<R> for $ty {
            type Output = Composable;
            /// In sequence: `self`, then `rhs`.
            fn shr(self, rhs: R) -> Composable {
                sequence(self.into(), rhs.into())
            }
        }

        impl<R: Into<Composable>> BitOr<R> for $ty {
            type Output = Composable;
            /// At once: `self` and `rhs`, outputs joined in this order.
            fn bitor(self, rhs: R) -> Composable {
                fan_out(self.into(), rhs.into())
            }
        }

        impl<R: Into<Composable>> Div<R> for $ty {
            type Output = Composable;
            /// `self`, or `rhs` if it fails.
            fn div(self, rhs: R) -> Composable {
                fallback(self.into(), rhs.into())
            }
        }

        impl Mul<u32> for $ty {
            type Output = Composable;
            /// `self` run `n` times, each output the next run's input.
            fn mul(self, n: u32) -> Composable {
                repeat(self.into(), n as usize, None)
            }
        }

        impl Mul<Until> for $ty {
            type Output = Composable;
            /// `self` run until the predicate holds (at most its bound).
            fn mul(self, until: Until) -> Composable {
                repeat(self.into(), 0, Some(until))
            }
        }
    )*};
}

operators!(AgentBuilder, Composable, ComposedAgent);

impl Shr<AgentBuilder> for StateTransform {
    type Output = Composable;
    /// The transform, then the agent.
    fn shr(self, rhs: AgentBuilder) -> Composable {
        sequence(self.into(), rhs.into())
    }
}

impl Shr<Composable> for StateTransform {
    type Output = Composable;
    /// The transform, then the tree.
    fn shr(self, rhs: Composable) -> Composable {
        sequence(self.into(), rhs)
    }
}

impl Shr<ComposedAgent> for StateTransform {
    type Output = Composable;
    /// The transform, then the agent.
    fn shr(self, rhs: ComposedAgent) -> Composable {
        sequence(self.into(), rhs.into())
    }
}
