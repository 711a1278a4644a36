//! [`LoopTextAgent`]: `while !done { A }`, bounded.

use futures_util::future::BoxFuture;
use reel_actors::state::State;

use crate::agent::{INPUT_KEY, write};
use crate::{AgentError, SharedAgent, TextAgent};

type Predicate = dyn Fn(&State) -> bool + Send + Sync;

/// Runs its body up to `max` times, stopping early once the [`LoopTextAgent::until`]
/// predicate holds (checked after each iteration). Each iteration's output becomes the
/// next one's [`INPUT_KEY`]; the last output is the result. Reaching `max` is not an
/// error: the loop returns its last output. `max` of 0 runs nothing and returns an
/// empty string.
pub struct LoopTextAgent {
    name: String,
    body: SharedAgent,
    max: usize,
    until: Option<Box<Predicate>>,
}

impl LoopTextAgent {
    /// A loop called `name` running `body` at most `max` times.
    pub fn new(name: impl Into<String>, body: SharedAgent, max: usize) -> Self {
        LoopTextAgent {
            name: name.into(),
            body,
            max,
            until: None,
        }
    }

    /// Stops once `done` holds on the state after an iteration.
    #[must_use]
    pub fn until(mut self, done: impl Fn(&State) -> bool + Send + Sync + 'static) -> Self {
        self.until = Some(Box::new(done));
        self
    }
}

impl TextAgent for LoopTextAgent {
    fn name(&self) -> &str {
        &self.name
    }

    fn run<'a>(&'a self, state: &'a State) -> BoxFuture<'a, Result<String, AgentError>> {
        Box::pin(async move {
            let mut last = String::new();
            for iteration in 0..self.max {
                last = self.body.run(state).await?;
                if self.until.as_ref().is_some_and(|done| done(state)) {
                    break;
                }
                if iteration + 1 < self.max {
                    write(state, &self.name, INPUT_KEY, &last).await?;
                }
            }
            Ok(last)
        })
    }
}
