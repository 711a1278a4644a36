//! # reel-flow
//!
//! Governed flows as data: a [`Flow`] describes a workflow as one DAG of [`Step`]s that
//! governs both conversation stages and tool calls, with cross-cutting tool constraints
//! (`once`, `before`, `never…until`, `commit`) and one predicate type, [`Guard`].
//!
//! - [`Flow::build`] checks referential integrity and acyclicity; [`Flow::compile`] and
//!   [`Flow::compile_with_tools`] add the load-time diagnostics and give a
//!   [`CompiledFlow`];
//! - [`Monitor`] keeps the marking (which steps are done, latching) from state mutations
//!   and tool events, admits or refuses tool calls ([`Denial`]), records [`Violation`]s,
//!   and answers [`Verdict`]s, postures, ground lines and a [`FlowExplanation`];
//! - flows are JSON ([`Flow::from_json`], [`Flow::to_json`]) and Mermaid
//!   ([`Flow::to_mermaid`]);
//! - [`score`] scores a recorded session (wire log and journal) against a flow, offline.
//!
//! The crate reads state through [`StateView`] and recordings through `reel-recorder`:
//! it needs no session tree, so the live wiring (`govern`, `observe`) sits above it.

// Library code never unwraps: bad input is an error value, never a panic.
#![cfg_attr(not(test), deny(clippy::unwrap_used, clippy::expect_used))]

mod checks;
mod compile;
mod error;
mod flow;
pub mod ground;
mod guard;
mod mermaid;
mod monitor;
mod report;
pub mod score;
mod state_view;

pub use compile::CompiledFlow;
pub use error::FlowError;
pub use flow::{Before, Commit, Flow, Never, NeverClause, Step};
pub use guard::{CustomGuard, Guard, GuardContext};
pub use monitor::{Mode, Monitor};
pub use report::{Denial, FlowExplanation, Posture, Verdict, Violation};
pub use state_view::StateView;

/// The README's example, compiled and run as a doc test.
#[doc = include_str!("../README.md")]
#[cfg(doctest)]
pub struct ReadmeDoctest;
