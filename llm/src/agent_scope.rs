//! Which text agent a model call belongs to: a task-local name that the agent sets around
//! its call and [`TraceRecorder`](crate::TraceRecorder) writes into the call's request
//! entry (`agent`), so a pipeline's trace reads step by step.

use std::future::Future;

tokio::task_local! {
    static AGENT: String;
}

/// Runs `future` as the work of the agent `agent`: model calls made in it (on this task)
/// are attributed to `agent`. Scopes nest; the innermost name wins.
pub async fn in_agent<F: Future>(agent: impl Into<String>, future: F) -> F::Output {
    AGENT.scope(agent.into(), future).await
}

/// The agent the current task's work belongs to, if [`in_agent`] set one.
pub fn current_agent() -> Option<String> {
    AGENT.try_with(Clone::clone).ok()
}
