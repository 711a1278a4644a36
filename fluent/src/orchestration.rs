//! Orchestration in the chain: `.on_enter(step, agent, mode)` runs an agent (or a
//! resolver) when a flow step becomes active, and every outside result a session's
//! resolvers use is on its recording (`X.resolved.jsonl`), so a replay takes it from there
//! and calls nothing (decision 0056).
//!
//! A step is active when the session's `flow:active` state key (a JSON array of step ids,
//! published by the governing flow's monitor) holds it. The control lane runs the
//! session's [`Orchestrator`] after each event and at each commit point; it runs a step's
//! work once each time the step joins `flow:active`.

use std::fmt;
use std::path::Path;

use futures_util::future::BoxFuture;
use reel_actors::reactor::{CommitPoint, ReactorScope, StateReactor};
use reel_actors::state::{Changes, State};
use reel_agents::{AgentMode, ResolutionMode, Resolutions, Resolver, TextAgent, read_resolutions};
use reel_protocol::{Content, SessionEvent};

use crate::builder::LiveBuilder;
use crate::error::{ConnectError, ReplayError};
use crate::record_orchestration::{RecordResolve, RecordWork, values_of};

/// The state key the governing flow publishes its active steps in.
pub const FLOW_ACTIVE_KEY: &str = "flow:active";

/// One step's work.
#[derive(Debug, Clone)]
struct OnEnter {
    step: String,
    resolver: Resolver,
    mode: AgentMode,
}

/// The orchestration part of a [`LiveBuilder`].
#[derive(Debug, Clone, Default)]
pub(crate) struct OrchestrationPart {
    steps: Vec<OnEnter>,
    /// The extract records' work (`field_resolve`, `on_complete`).
    records: Vec<RecordWork>,
    /// The chain's resolutions log, when the chain named one or has steps.
    log: Option<Resolutions>,
}

impl OrchestrationPart {
    fn log(&mut self) -> Resolutions {
        self.log.get_or_insert_with(Resolutions::new).clone()
    }

    /// An extract record's `field_resolve`s and `on_complete`, run by the orchestrator.
    pub(crate) fn add_record(&mut self, work: RecordWork) {
        let _ = self.log();
        self.records.push(work);
    }

    /// A live session records its resolutions: into the file beside the wire log when
    /// the chain's log keeps nothing yet, else as the log given says.
    pub(crate) fn bind_live(&self, wire_log: Option<&Path>) -> Result<(), ConnectError> {
        if let (Some(log), Some(wire_log)) = (&self.log, wire_log)
            && log.mode() == ResolutionMode::Pass
        {
            log.record_into(Resolutions::path_beside(wire_log))?;
        }
        Ok(())
    }

    /// A replay calls nothing: the chain's log replays the one it was given, else the file
    /// beside the replayed wire log, else nothing (every resolution is then reported as
    /// not recorded).
    pub(crate) fn bind_replay(&self, wire_log: Option<&Path>) -> Result<(), ReplayError> {
        let Some(log) = &self.log else {
            return Ok(());
        };
        if log.mode() != ResolutionMode::Replay {
            let beside = wire_log
                .map(Resolutions::path_beside)
                .filter(|path| path.exists());
            let recorded = match beside {
                Some(path) => read_resolutions(path)?,
                None => Vec::new(),
            };
            log.replay_from(recorded);
        }
        log.drive();
        Ok(())
    }

    /// The chain's log, if it has one (a replay reports its drift).
    pub(crate) fn resolutions(&self) -> Option<Resolutions> {
        self.log.clone()
    }

    /// The session's reactor: `inner` (the reactive rules), with the steps' work after it.
    pub(crate) fn reactor(
        &self,
        inner: Option<Box<dyn StateReactor>>,
    ) -> Option<Box<dyn StateReactor>> {
        let Some(log) = &self.log else {
            return inner;
        };
        Some(Box::new(Orchestrator {
            inner,
            steps: self
                .steps
                .iter()
                .map(|on| OnEnter {
                    resolver: on.resolver.clone().recorded_in(log),
                    ..on.clone()
                })
                .collect(),
            records: self
                .records
                .iter()
                .map(|work| RecordRun::new(work, log))
                .collect(),
            active: Vec::new(),
            seen: None,
            log: log.clone(),
        }))
    }
}

/// Runs the steps' work as they become active, and releases replayed detached results at
/// their recorded places; the reactive rules first.
struct Orchestrator {
    inner: Option<Box<dyn StateReactor>>,
    steps: Vec<OnEnter>,
    records: Vec<RecordRun>,
    active: Vec<String>,
    /// `flow:active` as last seen.
    seen: Option<serde_json::Value>,
    log: Resolutions,
}

impl fmt::Debug for Orchestrator {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Orchestrator")
            .field("inner", &self.inner)
            .field("steps", &self.steps)
            .field("active", &self.active)
            .finish_non_exhaustive()
    }
}

impl Orchestrator {
    async fn react(&mut self, scope: ReactorScope<'_>) {
        self.log.release_due(scope.state, scope.now_ms).await;
        if self.steps.is_empty() {
            return;
        }
        // Called after every event: `flow:active` unchanged is the common case, seen
        // without copying it.
        let unchanged = scope
            .state
            .with(FLOW_ACTIVE_KEY, |now| now == self.seen.as_ref());
        if unchanged {
            return;
        }
        self.seen = scope.state.get_raw(FLOW_ACTIVE_KEY);
        let active: Vec<String> = scope.state.get(FLOW_ACTIVE_KEY).unwrap_or_default();
        let entered: Vec<String> = active
            .iter()
            .filter(|step| !self.active.contains(step))
            .cloned()
            .collect();
        self.active = active;
        if entered.is_empty() {
            return;
        }
        for on in self.steps.iter().filter(|on| entered.contains(&on.step)) {
            run(on, scope).await;
        }
        // A detached result recorded as landing at once lands here, as it did.
        self.log.release_due(scope.state, scope.now_ms).await;
    }
}

/// An extract record's work as the orchestrator runs it, with what it last ran on.
#[derive(Debug)]
struct RecordRun {
    fields: Vec<String>,
    /// Each field resolver, its argument keys, and the arguments it last ran with.
    resolves: Vec<(RecordResolve, Option<Vec<serde_json::Value>>)>,
    /// The agent run on the complete record (as a step named after the record), and the
    /// record it last ran on.
    complete: Option<(OnEnter, Option<Vec<serde_json::Value>>)>,
}

impl RecordRun {
    fn new(work: &RecordWork, log: &Resolutions) -> Self {
        RecordRun {
            fields: work.fields.clone(),
            resolves: work
                .resolves
                .iter()
                .map(|resolve| {
                    let resolve = RecordResolve {
                        resolver: resolve.resolver.clone().recorded_in(log),
                        keys: resolve.keys.clone(),
                    };
                    (resolve, None)
                })
                .collect(),
            complete: work.complete.as_ref().map(|(resolver, mode)| {
                let on = OnEnter {
                    step: resolver.name().to_owned(),
                    resolver: resolver.clone().recorded_in(log),
                    mode: *mode,
                };
                (on, None)
            }),
        }
    }

    /// At a commit point (the record is written by the extractors before it): each
    /// field resolver whose arguments are all set and changed runs, inline; then the
    /// agent on a complete record that changed, in its mode.
    async fn react(&mut self, scope: ReactorScope<'_>) {
        for (resolve, last) in &mut self.resolves {
            let Some(now) = values_of(scope.state, &resolve.keys) else {
                continue;
            };
            if last.as_ref() == Some(&now) {
                continue;
            }
            *last = Some(now);
            let name = resolve.resolver.name().to_owned();
            let resolved = scope
                .guard
                .within(
                    "field_resolve",
                    &name,
                    resolve.resolver.resolve(scope.state),
                )
                .await;
            if let Some(Err(error)) = resolved {
                tracing::warn!(resolver = %name, %error, "a field resolver failed");
            }
        }
        if let Some((on, last)) = &mut self.complete {
            let Some(now) = values_of(scope.state, &self.fields) else {
                return;
            };
            if last.as_ref() == Some(&now) {
                return;
            }
            *last = Some(now);
            run(on, scope).await;
        }
    }
}

/// Runs one step's work in its mode.
async fn run(on: &OnEnter, scope: ReactorScope<'_>) {
    match on.mode {
        AgentMode::Call => {
            let resolved = scope
                .guard
                .within("on_enter", &on.step, on.resolver.resolve(scope.state))
                .await;
            if let Some(Err(error)) = resolved {
                tracing::warn!(step = %on.step, %error, "a step's work failed");
            }
        }
        AgentMode::Dispatch => {
            // Detached: its result lands in state when it is ready.
            drop(on.resolver.dispatch(scope.state.clone()));
        }
        AgentMode::Background => {
            let task = on.resolver.dispatch(scope.state.clone());
            let (writer, step) = (scope.writer.clone(), on.step.clone());
            tokio::spawn(async move {
                let told = match task.await {
                    Ok(Ok(value)) => format!("[{step} finished] {}", text_of(&value)),
                    Ok(Err(error)) => format!("[{step} failed] {error}"),
                    Err(_) => return,
                };
                // A session that ended has nobody to tell.
                let _ = writer.send_client_content(vec![Content::user_text(told)], false);
            });
        }
    }
}

/// A result as the model is told it: a string as is, anything else as JSON.
fn text_of(value: &serde_json::Value) -> String {
    match value {
        serde_json::Value::String(text) => text.clone(),
        other => other.to_string(),
    }
}

impl StateReactor for Orchestrator {
    fn wants_changes(&self) -> bool {
        self.inner
            .as_ref()
            .is_some_and(|inner| inner.wants_changes())
    }

    fn recompute<'a>(&'a mut self, state: &'a State) -> BoxFuture<'a, ()> {
        Box::pin(async move {
            if let Some(inner) = self.inner.as_mut() {
                inner.recompute(state).await;
            }
        })
    }

    fn on_commit<'a>(
        &'a mut self,
        point: CommitPoint,
        changes: &'a Changes,
        scope: ReactorScope<'a>,
    ) -> BoxFuture<'a, ()> {
        Box::pin(async move {
            if let Some(inner) = self.inner.as_mut() {
                inner.on_commit(point, changes, scope).await;
            }
            self.react(scope).await;
            for record in &mut self.records {
                record.react(scope).await;
            }
            // A detached result recorded as landing at once lands here, as it did.
            if !self.records.is_empty() {
                self.log.release_due(scope.state, scope.now_ms).await;
            }
        })
    }

    fn on_event<'a>(
        &'a mut self,
        event: &'a SessionEvent,
        scope: ReactorScope<'a>,
    ) -> BoxFuture<'a, ()> {
        Box::pin(async move {
            if let Some(inner) = self.inner.as_mut() {
                inner.on_event(event, scope).await;
            }
            self.react(scope).await;
        })
    }

    fn on_batch<'a>(&'a mut self, scope: ReactorScope<'a>) -> BoxFuture<'a, ()> {
        Box::pin(async move {
            if let Some(inner) = self.inner.as_mut() {
                inner.on_batch(scope).await;
            }
            self.react(scope).await;
        })
    }

    fn on_settled<'a>(&'a mut self, scope: ReactorScope<'a>) -> BoxFuture<'a, ()> {
        Box::pin(async move {
            if let Some(inner) = self.inner.as_mut() {
                inner.on_settled(scope).await;
            }
            // A detached result that landed between two events lands here, after
            // everything the first of them did (the gate's refresh among it), as it did.
            self.log.release_due(scope.state, scope.now_ms).await;
        })
    }
}

impl LiveBuilder {
    /// Runs `agent` when flow step `step` becomes active (joins the session's
    /// `flow:active`); its output lands in `{step}:result`, its error's message in
    /// `{step}:error`, so a later step can complete on `Guard::resolved(step)`.
    ///
    /// - [`AgentMode::Call`]: the control lane runs it inline where the step became
    ///   active, and waits (at most the session's callback timeout);
    /// - [`AgentMode::Dispatch`]: detached; the conversation does not wait;
    /// - [`AgentMode::Background`]: detached, and its result is also sent to the model as
    ///   a user turn (`[step finished] …`) without asking for an answer.
    ///
    /// The agent runs over a copy of the state; its result is on the session's recording
    /// (`X.resolved.jsonl` beside `X.wire.jsonl`), and a replay writes it from there — a
    /// detached one at the place in the journal it landed — without running the agent.
    ///
    /// ```
    /// use reel_agents::{AgentMode, FnTextAgent};
    /// use reel_fluent::Live;
    ///
    /// let availability = FnTextAgent::new("availability", |_| Ok("free at 3pm".to_owned()));
    /// let builder = Live::builder().on_enter("check", availability, AgentMode::Call);
    /// assert!(builder.validate().is_ok());
    /// ```
    pub fn on_enter(self, step: impl Into<String>, agent: impl TextAgent, mode: AgentMode) -> Self {
        let step = step.into();
        let resolver = Resolver::agent(step.clone(), agent);
        self.on_enter_resolver(step, resolver, mode)
    }

    /// [`on_enter`](LiveBuilder::on_enter) with a [`Resolver`] (a fetch, a model call, an
    /// agent): its result lands in `{resolver's name}:result`. The chain's resolutions log
    /// replaces the resolver's own.
    ///
    /// ```
    /// use reel_actors::state::State;
    /// use reel_agents::{AgentMode, Resolver};
    /// use reel_fluent::Live;
    ///
    /// let availability = Resolver::fetch("availability", |s: State| async move {
    ///     Ok(serde_json::json!({"open": s.get::<String>("slot").as_deref() == Some("afternoon")}))
    /// })
    /// .inputs(["slot"]);
    /// let builder = Live::builder().on_enter_resolver("check", availability, AgentMode::Dispatch);
    /// assert!(builder.validate().is_ok());
    /// ```
    pub fn on_enter_resolver(
        mut self,
        step: impl Into<String>,
        resolver: Resolver,
        mode: AgentMode,
    ) -> Self {
        let _ = self.orchestration.log();
        self.orchestration.steps.push(OnEnter {
            step: step.into(),
            resolver,
            mode,
        });
        self
    }

    /// The session's resolutions log: give the same log to the resolvers your tools and
    /// callbacks use (`Resolver::recorded_in`), and the session records their results
    /// with its own. A log that keeps nothing yet records into `X.resolved.jsonl` beside
    /// the wire log `X.wire.jsonl` when the session starts; a log made with
    /// `Resolutions::record()` keeps them in memory; a replay replays the log given in
    /// replay mode, else the file beside the replayed wire log.
    ///
    /// ```
    /// use reel_agents::Resolutions;
    /// use reel_fluent::Live;
    ///
    /// let log = Resolutions::new();
    /// let builder = Live::builder().record_wire("call.wire.jsonl").resolutions(&log);
    /// assert!(builder.validate().is_ok());
    /// ```
    pub fn resolutions(mut self, log: &Resolutions) -> Self {
        self.orchestration.log = Some(log.clone());
        self
    }
}
