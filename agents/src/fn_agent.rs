//! [`FnTextAgent`] and [`TapTextAgent`]: closures as agents, no model call.

use std::future::Future;

use futures_util::future::BoxFuture;
use reel_actors::state::State;

use crate::{AgentError, TextAgent};

type AgentFn = dyn Fn(&State) -> Result<String, AgentError> + Send + Sync;
type AsyncAgentFn = dyn Fn(State) -> BoxFuture<'static, Result<String, AgentError>> + Send + Sync;

enum Body {
    Sync(Box<AgentFn>),
    Async(Box<AsyncAgentFn>),
}

/// A closure as an agent: a transform, a check, a state edit. Its `Ok` is the output,
/// returned as it is. State writes are asynchronous in reel, so a closure that writes
/// state is built with [`FnTextAgent::new_async`].
pub struct FnTextAgent {
    name: String,
    f: Body,
}

impl FnTextAgent {
    /// An agent called `name` running `f`.
    pub fn new(
        name: impl Into<String>,
        f: impl Fn(&State) -> Result<String, AgentError> + Send + Sync + 'static,
    ) -> Self {
        FnTextAgent {
            name: name.into(),
            f: Body::Sync(Box::new(f)),
        }
    }

    /// An agent called `name` running the asynchronous `f` on a handle to the state
    /// (clones share the state, so `f` can write it).
    pub fn new_async<F, Fut>(name: impl Into<String>, f: F) -> Self
    where
        F: Fn(State) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<String, AgentError>> + Send + 'static,
    {
        FnTextAgent {
            name: name.into(),
            f: Body::Async(Box::new(move |state| Box::pin(f(state)))),
        }
    }
}

impl std::fmt::Debug for FnTextAgent {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FnTextAgent")
            .field("name", &self.name)
            .finish_non_exhaustive()
    }
}

impl TextAgent for FnTextAgent {
    fn name(&self) -> &str {
        &self.name
    }

    fn run<'a>(&'a self, state: &'a State) -> BoxFuture<'a, Result<String, AgentError>> {
        Box::pin(async move {
            match &self.f {
                Body::Sync(f) => f(state),
                Body::Async(f) => f(state.clone()).await,
            }
        })
    }
}

/// A read-only side effect (logging, metrics): runs its closure and returns an empty
/// string. It does not change the pipeline's flow: a
/// [`SequentialTextAgent`](crate::SequentialTextAgent) pipes nothing from it, so the agent
/// after a tap reads the output of the agent before it (see [`TextAgent::passes_through`]).
pub struct TapTextAgent {
    name: String,
    f: Box<dyn Fn(&State) + Send + Sync>,
}

impl TapTextAgent {
    /// A tap called `name` running `f`.
    pub fn new(name: impl Into<String>, f: impl Fn(&State) + Send + Sync + 'static) -> Self {
        TapTextAgent {
            name: name.into(),
            f: Box::new(f),
        }
    }
}

impl std::fmt::Debug for TapTextAgent {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TapTextAgent")
            .field("name", &self.name)
            .finish_non_exhaustive()
    }
}

impl TextAgent for TapTextAgent {
    fn name(&self) -> &str {
        &self.name
    }

    fn run<'a>(&'a self, state: &'a State) -> BoxFuture<'a, Result<String, AgentError>> {
        Box::pin(async move {
            (self.f)(state);
            Ok(String::new())
        })
    }

    fn passes_through(&self) -> bool {
        true
    }
}
