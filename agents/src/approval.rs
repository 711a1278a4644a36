//! [`ApprovalTextAgent`]: a human's approval in a pipeline. The pipeline stops at it until
//! the approver decides, then goes on (approved) or fails (rejected).

use std::future::Future;
use std::sync::Arc;

use futures_util::future::BoxFuture;
use reel_actors::state::State;
use serde::{Deserialize, Serialize};

use crate::agent::INPUT_KEY;
use crate::decisions::{Choice, DecisionMode, Decisions};
use crate::{AgentError, TextAgent};

/// What an approver decided.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Approval {
    /// Whether the pipeline goes on.
    pub approved: bool,
    /// Who decided (a name, a role).
    pub by: String,
    /// Why, or what they said.
    pub note: String,
}

impl Approval {
    /// `by` approves, saying `note`.
    pub fn approve(by: impl Into<String>, note: impl Into<String>) -> Self {
        Approval {
            approved: true,
            by: by.into(),
            note: note.into(),
        }
    }

    /// `by` rejects, saying why.
    pub fn reject(by: impl Into<String>, reason: impl Into<String>) -> Self {
        Approval {
            approved: false,
            by: by.into(),
            note: reason.into(),
        }
    }
}

type Approver = Arc<dyn Fn(String) -> BoxFuture<'static, Approval> + Send + Sync>;

/// Asks an approver (a person, through whatever channel the application has) about the
/// state's `input` (the output of the agent before it, in a
/// [`SequentialTextAgent`](crate::SequentialTextAgent)) and waits for the answer: the
/// pipeline is blocked until then. Approved, it returns its input unchanged, so the next
/// agent reads what was approved; rejected, the run fails with
/// [`AgentError::Rejected`] naming who rejected it and why. Each decision is also written
/// to the state at `{name}:approval` (`{"approved", "by", "note"}`).
///
/// A person's decision is no recorded byte of any model call, so with
/// [`ApprovalTextAgent::decisions`] a recording run writes each decision into the
/// [`Decisions`] log (`{"kind": "approval", "approved": true, "by": …, "note": …}`), and a
/// replaying run reads it back and asks nobody: the replay decides as the person did.
pub struct ApprovalTextAgent {
    name: String,
    approver: Approver,
    decisions: Option<Decisions>,
}

impl ApprovalTextAgent {
    /// The approval step `name`, asking `approver` with the text to approve.
    pub fn new<F, Fut>(name: impl Into<String>, approver: F) -> Self
    where
        F: Fn(String) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Approval> + Send + 'static,
    {
        ApprovalTextAgent {
            name: name.into(),
            approver: Arc::new(move |text| Box::pin(approver(text))),
            decisions: None,
        }
    }

    /// Records each decision into `decisions`, or, replaying, reads it from there and asks
    /// nobody.
    #[must_use]
    pub fn decisions(mut self, decisions: Decisions) -> Self {
        self.decisions = Some(decisions);
        self
    }

    async fn decide(&self, text: String) -> Result<Approval, AgentError> {
        if let Some(decisions) = &self.decisions
            && decisions.mode() == DecisionMode::Replay
        {
            return match decisions.next(&self.name)? {
                Choice::Approval { approved, by, note } => Ok(Approval { approved, by, note }),
                other => Err(AgentError::Decision {
                    agent: self.name.clone(),
                    problem: format!("expected an approval, found {other:?}"),
                }),
            };
        }
        let approval = (self.approver)(text).await;
        if let Some(decisions) = &self.decisions {
            decisions.note(
                &self.name,
                Choice::Approval {
                    approved: approval.approved,
                    by: approval.by.clone(),
                    note: approval.note.clone(),
                },
            );
        }
        Ok(approval)
    }
}

impl std::fmt::Debug for ApprovalTextAgent {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ApprovalTextAgent")
            .field("name", &self.name)
            .finish_non_exhaustive()
    }
}

impl TextAgent for ApprovalTextAgent {
    fn name(&self) -> &str {
        &self.name
    }

    fn run<'a>(&'a self, state: &'a State) -> BoxFuture<'a, Result<String, AgentError>> {
        Box::pin(async move {
            let text = state.get::<String>(INPUT_KEY).unwrap_or_default();
            let approval = self.decide(text.clone()).await?;
            let key = format!("{}:approval", self.name);
            // Serializing two strings and a boolean cannot fail.
            let value = serde_json::to_value(&approval).unwrap_or_default();
            state
                .set(&key, value)
                .await
                .map_err(|source| AgentError::State {
                    agent: self.name.clone(),
                    key,
                    source,
                })?;
            if approval.approved {
                Ok(text)
            } else {
                Err(AgentError::Rejected {
                    agent: self.name.clone(),
                    by: approval.by,
                    reason: approval.note,
                })
            }
        })
    }
}
