//! The SessionSupervisor: spawns a session's actors, restarts the ones that fail, and ends
//! the session.
//!
//! Restarts are one-for-one: a failed fast lane, control lane, telemetry actor or state
//! store is replaced by a new instance (after a short backoff that doubles with each
//! restart), which continues from the shared data the failed one left and is fed again
//! whatever it had not finished — nothing is lost but the event whose handling failed,
//! which is reported. Past the restart intensity limit (by default more than 5 restarts of
//! one actor within 10 s) the session ends with a reason that says which actor failed and
//! why. A failure of the transport or the router ends the session at once.
//!
//! The session ends normally when the connection is over for good: the router tells every
//! lane, each lane finishes its backlog and reports drained, then the supervisor publishes
//! [`LiveEvent::SessionEnded`], closes the event streams and stops the tree.
//!
//! The supervisor is a ractor actor, the root of the tree. Its inbox-driven children (the
//! store, telemetry, the lanes, the recorder, the router) run on plain tasks and tell it of
//! their end by a message ([`SupervisorMsg::TaskEnded`]); the transport is a ractor actor
//! linked to it, whose end comes as ractor's supervision event (decision 0079). Either way
//! the same rules, reports and restarts follow. The tasks are the supervisor's: should it
//! fail, its state goes and with it every child task still running (aborted).

use std::collections::{BTreeMap, BTreeSet, HashMap, VecDeque};
use std::sync::Arc;
use std::time::Duration;

use ractor::{Actor, ActorCell, ActorId, ActorProcessingErr, ActorRef, SupervisionEvent};
use reel_recorder::wire_log::WireRecorder;
use tokio::sync::watch;

use crate::child::{Child, OnFailure};
use crate::child_spec::{Children, Started, TaskChild};
use crate::events::{Lane, LiveEvent};
use crate::mailbox::{SupervisorMsg, TransportMsg};
use crate::peers::Peers;
use crate::persistence::SnapshotSaver;
use crate::recorder::RecordQueue;
use crate::state::State;

/// How many restarts are too many.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RestartPolicy {
    /// Restarts of one actor allowed within `within`.
    pub max_restarts: u32,
    /// The window.
    pub within: Duration,
    /// Wait before the first restart; doubled for each restart in the window.
    pub backoff: Duration,
    /// Longest wait.
    pub max_backoff: Duration,
}

impl Default for RestartPolicy {
    fn default() -> Self {
        RestartPolicy {
            max_restarts: 5,
            within: Duration::from_secs(10),
            backoff: Duration::from_millis(10),
            max_backoff: Duration::from_secs(1),
        }
    }
}

/// How a session ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SessionEnd {
    /// What ended it, as the supervisor heard it: the close (`closed with code 1000: client
    /// disconnect`), the actor that failed past its restart limit, a transport that gave up.
    pub reason: String,
    /// Whether it ended because an actor failed past the restart limit (or the transport
    /// or router failed).
    pub failed: bool,
}

/// Everything the supervisor needs to start, and to restart, the session's actors.
pub struct SupervisorArgs {
    /// The session's mailboxes, whose slots the supervisor fills as it spawns.
    pub peers: Arc<Peers>,
    /// How each child is started (and started again), and its mailbox, by child; started in
    /// the order of [`Child::ALL`]. A session that does not record has no recorder.
    pub(crate) children: Children,
    /// Counters (restarts are counted here).
    pub telemetry_shared: Arc<crate::telemetry::TelemetryShared>,
    /// The session state (its journal is flushed at the end).
    pub state: State,
    /// The recorder's queue, when the session records its wire (drained at the end).
    pub record_queue: Option<Arc<RecordQueue>>,
    /// Saves snapshots, if the session persists (finished at the end).
    pub(crate) saver: Option<SnapshotSaver>,
    /// Restart limits.
    pub policy: RestartPolicy,
    /// How long the lanes may take to drain once the connection is over.
    pub shutdown_timeout: Duration,
    /// Where the end of the session is announced.
    pub ended: watch::Sender<Option<SessionEnd>>,
}

/// The supervisor's state.
pub struct SupervisorState {
    args: SupervisorArgs,
    /// The children that are ractor actors (the transport), by actor.
    children: HashMap<ActorId, Child>,
    /// The children on tasks of their own, by child: dropped with the state, they are
    /// aborted.
    tasks: BTreeMap<Child, TaskChild>,
    restarts: BTreeMap<Child, VecDeque<tokio::time::Instant>>,
    drained: BTreeSet<Child>,
    end_reason: Option<String>,
    over: bool,
}

/// The SessionSupervisor actor.
pub struct SessionSupervisor;

impl Actor for SessionSupervisor {
    type Msg = SupervisorMsg;
    type State = SupervisorState;
    type Arguments = Box<SupervisorArgs>;

    async fn pre_start(
        &self,
        myself: ActorRef<SupervisorMsg>,
        args: Box<SupervisorArgs>,
    ) -> Result<SupervisorState, ActorProcessingErr> {
        let args = *args;
        let peers = Arc::clone(&args.peers);
        peers.supervisor.set(myself.clone());
        let mut state = SupervisorState {
            args,
            children: HashMap::new(),
            tasks: BTreeMap::new(),
            restarts: BTreeMap::new(),
            drained: BTreeSet::new(),
            end_reason: None,
            over: false,
        };
        for child in Child::ALL {
            if state.args.children.contains(child) {
                state.spawn(&myself, child).await?;
            }
        }
        Ok(state)
    }

    async fn post_start(
        &self,
        _myself: ActorRef<SupervisorMsg>,
        state: &mut SupervisorState,
    ) -> Result<(), ActorProcessingErr> {
        state.args.peers.transport.cast(TransportMsg::Start);
        Ok(())
    }

    async fn handle(
        &self,
        myself: ActorRef<SupervisorMsg>,
        message: SupervisorMsg,
        state: &mut SupervisorState,
    ) -> Result<(), ActorProcessingErr> {
        // Boxed, as every handler here: what it awaits (a child's spawn, the session's end)
        // would otherwise sit inline in the actor's task for the session's whole life. Its
        // messages are few (a restart, the end), so the allocation costs nothing that counts.
        Box::pin(async move {
            match message {
                SupervisorMsg::Ending(reason) => {
                    if state.end_reason.is_none() {
                        state.end_reason = Some(reason);
                        myself.send_after(state.args.shutdown_timeout, || {
                            SupervisorMsg::DrainTimedOut
                        });
                    }
                }
                SupervisorMsg::DrainTimedOut => {
                    let children = &state.args.children;
                    let busy: Vec<String> = state
                        .draining()
                        .filter(|c| !state.drained.contains(c))
                        .map(|c| {
                            let waiting = children.door(c).map_or(0, |door| door.waiting());
                            format!("{c} ({waiting} items unhandled)")
                        })
                        .collect();
                    if !busy.is_empty() && !state.over {
                        let reason = format!(
                            "{}; {} did not finish within {:?} and {} stopped",
                            state.end_reason.clone().unwrap_or_default(),
                            busy.join(", "),
                            state.args.shutdown_timeout,
                            if busy.len() == 1 { "was" } else { "were" },
                        );
                        tracing::warn!(%reason, "the session ended before its lanes drained");
                        state.end(&myself, reason, false).await;
                    }
                }
                SupervisorMsg::Drained(lane) => {
                    state.drained.insert(lane);
                    if state.draining().all(|lane| state.drained.contains(&lane)) {
                        let reason = state
                            .end_reason
                            .clone()
                            .unwrap_or_else(|| "the connection closed".to_owned());
                        state.end(&myself, reason, false).await;
                    }
                }
                SupervisorMsg::TaskEnded {
                    child,
                    instance,
                    failure,
                } => {
                    // The instance the supervisor holds for `child` (not an earlier one).
                    if state.tasks.get(&child).is_some_and(|t| t.id() == instance) {
                        state.tasks.remove(&child);
                        if !state.over {
                            // A child that stopped on its own while the session is live is
                            // a failure, so nothing silently goes missing.
                            let why = failure.unwrap_or_else(|| "stopped".to_owned());
                            state.clear_slot(child);
                            state.restart_or_end(&myself, child, why).await;
                        }
                    }
                }
                SupervisorMsg::Respawn(child) => {
                    if !state.over {
                        // The new instance recovers from its inbox on start: nothing to re-send.
                        // A start that fails (it failed again on what its predecessor left,
                        // say) is one more failure of the child: restarted again, or the
                        // session ends past the limit. Never the supervisor's own failure,
                        // which would leave the session without its child and without an end.
                        if let Err(error) = state.spawn(&myself, child).await {
                            let error = format!("its replacement failed to start: {error}");
                            state.restart_or_end(&myself, child, error).await;
                        }
                    }
                }
            }
            Ok(())
        })
        .await
    }

    async fn handle_supervisor_evt(
        &self,
        myself: ActorRef<SupervisorMsg>,
        event: SupervisionEvent,
        state: &mut SupervisorState,
    ) -> Result<(), ActorProcessingErr> {
        Box::pin(async move {
            match event {
                SupervisionEvent::ActorFailed(cell, error) => {
                    state.child_failed(&myself, &cell, error.to_string()).await;
                }
                SupervisionEvent::ActorTerminated(cell, _, reason) => {
                    let child = state.children.remove(&cell.get_id());
                    if let Some(child) = child
                        && !state.over
                    {
                        // A child stopped on its own while the session is live: treat it as
                        // a failure, so nothing silently goes missing.
                        let why = reason.unwrap_or_else(|| "stopped".to_owned());
                        state.children.insert(cell.get_id(), child);
                        state.child_failed(&myself, &cell, why).await;
                    }
                }
                _ => {}
            }
            Ok(())
        })
        .await
    }
}

impl SupervisorState {
    /// The session's children that report `Drained` at its end (a child the session does
    /// not have, telemetry without an `on_usage` callback say, is not waited for).
    fn draining(&self) -> impl Iterator<Item = Child> + '_ {
        Child::ALL
            .into_iter()
            .filter(|c| c.spec().drains && self.args.children.contains(*c))
    }

    async fn spawn(
        &mut self,
        myself: &ActorRef<SupervisorMsg>,
        child: Child,
    ) -> Result<(), ActorProcessingErr> {
        let start = self
            .args
            .children
            .get_mut(child)
            .ok_or_else(|| format!("the session has no {child} to start"))?;
        match start.start(myself).await? {
            Started::Actor(cell) => {
                self.children.insert(cell.get_id(), child);
            }
            Started::Task(task) => {
                self.tasks.insert(child, task);
            }
        }
        Ok(())
    }

    /// Empties the slot of a child that failed, so nothing is sent to the dead instance.
    fn clear_slot(&self, child: Child) {
        if let Some(door) = self.args.children.door(child) {
            door.clear();
        }
    }

    async fn child_failed(
        &mut self,
        myself: &ActorRef<SupervisorMsg>,
        cell: &ActorCell,
        error: String,
    ) {
        let Some(child) = self.children.remove(&cell.get_id()) else {
            return;
        };
        if self.over {
            return;
        }
        self.clear_slot(child);
        self.restart_or_end(myself, child, error).await;
    }

    /// `child` failed (or its replacement failed to start): restarts it after its backoff,
    /// or ends the session if it may not be restarted or failed too often.
    async fn restart_or_end(
        &mut self,
        myself: &ActorRef<SupervisorMsg>,
        child: Child,
        error: String,
    ) {
        let peers = Arc::clone(&self.args.peers);
        if child.spec().on_failure == OnFailure::EndSession {
            let reason = format!("the {child} failed: {error}");
            self.end(myself, reason, true).await;
            return;
        }
        let policy = self.args.policy;
        let now = tokio::time::Instant::now();
        let history = self.restarts.entry(child).or_default();
        while history
            .front()
            .is_some_and(|at| now.saturating_duration_since(*at) > policy.within)
        {
            history.pop_front();
        }
        history.push_back(now);
        let restarts = history.len() as u32;
        if restarts > policy.max_restarts {
            let failures = match restarts {
                1 => "once".to_owned(),
                n => format!("{n} times"),
            };
            let reason = format!(
                "the {child} failed {failures} within {:?}, over the limit of {}; last failure: {error}",
                policy.within, policy.max_restarts
            );
            self.end(myself, reason, true).await;
            return;
        }
        self.args.telemetry_shared.restarted();
        peers.hub.publish(
            Lane::Supervisor,
            LiveEvent::Restarted {
                actor: child,
                restarts,
                reason: error,
            },
        );
        let factor = 1u32.checked_shl(restarts - 1).unwrap_or(u32::MAX);
        let delay = policy
            .backoff
            .saturating_mul(factor)
            .min(policy.max_backoff);
        myself.send_after(delay, move || SupervisorMsg::Respawn(child));
    }

    /// Ends the session: announces it, closes the event streams, stops the tree.
    async fn end(&mut self, myself: &ActorRef<SupervisorMsg>, reason: String, failed: bool) {
        if self.over {
            return;
        }
        self.over = true;
        let peers = &self.args.peers;
        peers.hub.publish(
            Lane::Supervisor,
            LiveEvent::SessionEnded {
                reason: reason.clone(),
            },
        );
        peers.hub.close();
        // Everything recorded is written before the end is announced — on the session's
        // disk, not on this worker: file writes never run on tokio's workers.
        let state = self.args.state.clone();
        let queue = self.args.record_queue.clone();
        let disk = state.disk();
        // Nothing to write (no wire log, a journal in memory or none, as in a replay): no
        // thread hand-over (a replay farm paid two context switches a session for it).
        let blocks = queue.is_some() || state.journal_flush_blocks();
        let written = disk
            .run_if(crate::disk::DiskWork::FinalFlush, blocks, move || {
                state.flush_journal();
                queue.map(|queue| {
                    queue.drain_and_flush();
                    queue.error_count()
                })
            })
            .await;
        match written {
            Ok(Some(errors)) => self.args.telemetry_shared.set_recording_errors(errors),
            Ok(None) => {}
            Err(error) => tracing::warn!(%error, "the recording could not be finished"),
        }
        // The session's id is given up before the end is announced: when `disconnect` (or
        // a failed `connect`) returns, a new session may claim it at once.
        if let Some(saver) = &self.args.saver {
            saver.finish(self.args.shutdown_timeout).await;
        }
        self.args
            .ended
            .send_replace(Some(SessionEnd { reason, failed }));
        // Nothing is routed any more: the router's inbox refuses what is pushed from now on
        // and drops what still waits, so that nobody waits on a router that is gone (a
        // replay's last barrier, pushed after the recording's final close, waited for a
        // reply for ever when the tree had stopped first).
        drop(self.args.peers.router.close());
        // A lane that did not drain is killed, not stopped: stuck in a hung callback it
        // would never see a stop message, and nothing that must outlive it (state, inboxes,
        // recording) lives in it. The others stop and finish what they hold, on a task of
        // their own that outlives the supervisor by the shutdown timeout at most: past it,
        // whatever has not ended (stuck where no stop reaches it) is aborted.
        let mut stopping = Vec::new();
        for (child, task) in std::mem::take(&mut self.tasks) {
            if child.spec().drains && !self.drained.contains(&child) {
                task.kill();
            } else {
                task.stop();
                stopping.push(task);
            }
        }
        if !stopping.is_empty() {
            let deadline = tokio::time::Instant::now() + self.args.shutdown_timeout;
            tokio::spawn(async move {
                for task in stopping {
                    task.ended_by(deadline).await;
                }
            });
        }
        for cell in myself.get_children() {
            match self.children.get(&cell.get_id()) {
                Some(child) if child.spec().drains && !self.drained.contains(child) => cell.kill(),
                _ => cell.stop(None),
            }
        }
        myself.stop(None);
    }
}
