//! Spawning a session: the checks before anything starts, restoring a saved snapshot, and
//! the tree itself (supervisor, transport, router, lanes, state, recorder; telemetry when the
//! session has an `on_usage` callback).

use std::sync::Arc;

use reel_protocol::{DecodeLimits, SessionPhase};
use tokio::sync::watch;

use super::{LiveSessionBuilder, SessionStartError, claim_and_load, instruction_text};
use crate::audio::{ActivityGate, SharedJitterBuffer};
use crate::child::Child;
use crate::child_spec::{Children, once, once_with, restartable};
use crate::clock::{EventClock, ManualClock, SharedClock, TokioClock};
use crate::control_lane::{ControlData, ControlLaneArgs, ControlLaneState};
use crate::conversation::ContextDelivery;
use crate::extract::ExtractorSet;
use crate::fast_lane::{FastLane, FastLaneArgs, FastWork};
use crate::handle::LiveHandle;
use crate::llm::{LlmInterceptor, PassThrough};
use crate::mailbox::Door;
use crate::peers::Peers;
use crate::persistence::{RestoredSnapshot, SessionSnapshot, SnapshotSaver};
use crate::phases::PhaseMachine;
use crate::playback::PlaybackQueue;
use crate::recorder::{RecordQueue, Recorder, RecorderArgs};
use crate::router::{Router, RouterArgs};
use crate::state::{StateStore, StateStoreArgs};
use crate::supervisor::{SessionSupervisor, SupervisorArgs};
use crate::telemetry::{Telemetry, TelemetryArgs, TelemetryShared};
use crate::tools::ToolDispatcher;
use crate::transport::{TransportArgs, WebSocketConnector, WireTap};
use crate::writer::{Origin, SessionWriter};

impl LiveSessionBuilder {
    /// Starts the session's actors and returns at once; the connection opens in the
    /// background.
    pub async fn spawn(mut self) -> Result<LiveHandle, SessionStartError> {
        self.check_extractors()?;
        // Checked before anything is loaded or started.
        let jitter = self
            .options
            .jitter_buffer
            .map(SharedJitterBuffer::new)
            .transpose()?;
        let gate = self.options.client_vad.map(ActivityGate::new).transpose()?;
        // Owned arguments: the builder is not `Sync`, so no borrow of it may be held
        // across an await.
        let (claim, restored) =
            match claim_and_load(self.persistence.clone(), self.session_id.clone()).await? {
                Some((claim, restored)) => (Some(claim), restored),
                None => (None, None),
            };
        self.check_saved_phase(restored.as_ref())?;
        let mut config = self.config_starting_in(
            restored
                .as_ref()
                .map(|snapshot| snapshot.phase.as_str())
                .filter(|phase| !phase.is_empty()),
        )?;
        let saved_handle = restored.as_ref().and_then(|s| s.resume_handle.clone());
        if let Some(handle) = &saved_handle {
            config = config.session_resume_from(handle.clone());
        }
        let frame_clock: SharedClock = self
            .clock
            .clone()
            .unwrap_or_else(|| Arc::new(TokioClock::from_wall_clock()));
        let frame_clock_start = frame_clock.now_ms();
        // The restore's stamp: the session's start, or the recorded one in a replay (the
        // connect that follows takes however long it takes, so the setup frame's time
        // cannot be it).
        let restored_at_ms = self.restored_at.unwrap_or(frame_clock_start);
        if let (Some(snapshot), Some(hook)) = (&restored, self.on_restored.take()) {
            let restored = RestoredSnapshot {
                snapshot: snapshot.clone(),
                restored_at_ms,
            };
            hook(restored).await?;
        }
        let record_queue = self
            .recorder
            .clone()
            .map(|recorder| Arc::new(RecordQueue::new(recorder).on_disk(self.disk.clone())));
        self.state.set_disk(self.disk.clone());
        let tap = Arc::new(match &record_queue {
            Some(queue) => WireTap::with_queue(frame_clock, Arc::clone(queue)),
            None => WireTap::new(frame_clock, None),
        });
        // Inside the tree, time is event time: see `EventClock`.
        let clock = Arc::new(EventClock::new(frame_clock_start));
        // Restored before the control lane's data is made, so watchers take the restored
        // state as their starting point rather than as changes.
        if let Some(snapshot) = &restored {
            self.state
                .set_clock(Arc::new(ManualClock::new(restored_at_ms)) as SharedClock);
            self.state
                .set_many(snapshot.state.clone())
                .await
                .map_err(SessionStartError::RestoreState)?;
        }
        self.state.set_clock(Arc::clone(&clock) as SharedClock);
        let mut control_data = ControlData::new(self.options.session_budget, &self.state);
        control_data.reactor = self.reactor.take();
        let gate_view = self.gate.as_ref().and_then(|gate| gate.view());
        control_data.gate = self.gate.take();
        if let Some(snapshot) = restored {
            control_data.resume_from(snapshot);
        }
        // What the instruction hooks compare with and build on.
        control_data.last_instruction = instruction_text(&config);
        control_data.setup_instruction = control_data.last_instruction.clone();
        control_data.base_instruction = instruction_text(&self.config);
        control_data.converse(self.options.steering, self.options.context_delivery);
        let interceptor: Arc<dyn LlmInterceptor> =
            self.interceptor.unwrap_or_else(|| Arc::new(PassThrough));
        let extractors = Arc::new(ExtractorSet::new(
            self.extractors,
            interceptor.as_ref(),
            self.options.extraction_timeout,
        ));
        let saver = match (claim, self.session_id) {
            (Some(claim), Some(id)) => Some(SnapshotSaver::start(claim, id)),
            _ => None,
        };
        let (transcript_tx, transcript_rx) = watch::channel(Arc::from(Vec::new()));
        let peers = Arc::new(Peers::new(
            clock,
            Arc::clone(&self.hub),
            record_queue.as_ref().map(|queue| queue.mailbox().clone()),
        ));
        if self
            .dispatcher
            .as_ref()
            .is_some_and(ToolDispatcher::takes_input)
        {
            // Only then does the user's input go past the transport.
            peers.tool_input.forward();
        }
        let record_queue_for_handle = record_queue.clone();
        let telemetry = Arc::new(TelemetryShared::default());
        let (phase_tx, phase_rx) = watch::channel(SessionPhase::Disconnected);
        let (resume_tx, resume_rx) = watch::channel(saved_handle);
        let (ended_tx, ended_rx) = watch::channel(None);
        let writer = SessionWriter::new(Arc::clone(&peers.transport), Origin::Runtime);
        let mut app_writer = SessionWriter::new(Arc::clone(&peers.transport), Origin::App);
        if let Some(gate) = gate {
            app_writer = app_writer.with_gate(gate);
        }
        // Steering phases and a governing flow both send their first turn's steering when
        // the connection is up: `connect` waits for it, so the application's first line
        // follows it on the wire every time (decisions 0050, 0055).
        let governed = control_data.gate.is_some();
        if governed || self.phases.as_ref().is_some_and(PhaseMachine::converses) {
            peers.pending_context.gate_connect();
        }
        if self.options.context_delivery == ContextDelivery::Deferred {
            app_writer = app_writer.with_deferred(Arc::clone(&peers.pending_context));
        }
        let playback = self.options.playback_buffer.map(PlaybackQueue::new);
        let connector = self
            .connector
            .clone()
            .unwrap_or_else(|| Arc::new(WebSocketConnector::new()));

        let control = ControlLaneArgs {
            callback_timeout: self.options.callback_timeout,
            data: Arc::new(tokio::sync::Mutex::new(control_data)),
            callbacks: Arc::new(self.control),
            interceptors: Arc::new(self.interceptors),
            dispatcher: self.dispatcher.map(Arc::new),
            phases: self.phases.map(Arc::new),
            state: self.state.clone(),
            writer: writer.clone(),
            telemetry: Arc::clone(&telemetry),
            peers: Arc::clone(&peers),
            extractors,
            interceptor: Arc::clone(&interceptor),
            saver: saver.clone(),
            transcript_view: Arc::new(transcript_tx),
            timed_out: Default::default(),
        };
        let transport_args = TransportArgs {
            connector,
            endpoint: self.endpoint,
            config,
            options: self.options.transport,
            tap,
            resume_handle: resume_rx.clone(),
            telemetry: Arc::clone(&telemetry),
            peers: Arc::clone(&peers),
            fault: self.fault_hook.clone(),
        };
        // Without an `on_usage` callback, telemetry's events are only counted: the router
        // counts them as it routes, and the session has no Telemetry actor (decision 0075).
        // Its inbox is closed, so nothing waits there for a consumer that never comes.
        let counts_telemetry = self.telemetry.on_usage.is_none();
        if counts_telemetry {
            drop(peers.lanes.telemetry.inbox.close());
        }
        // The fast lane's work: its instance's, and the router's when it runs the lane's
        // items in place (decision 0086).
        let fast_work = FastWork::new(self.fast, playback.clone(), jitter.clone());
        let router = RouterArgs {
            peers: Arc::clone(&peers),
            fast: fast_work.clone(),
            limits: DecodeLimits {
                max_frame_bytes: self.options.transport.link.max_frame_bytes,
            },
            phase: phase_tx,
            resume_handle: resume_tx,
            telemetry: Arc::clone(&telemetry),
            counts_telemetry,
        };
        // One start per child: the supervisor holds the table, and knows no child's type.
        let factory = self.transport;
        let transport_slot = Arc::clone(&peers.transport);
        let mut children = Children::default();
        children.add(restartable::<StateStore>(StateStoreArgs {
            state: self.state.clone(),
            clock: peers.shared_clock(),
            mailbox: peers.store.clone(),
        }));
        if !counts_telemetry {
            children.add(restartable::<Telemetry>(TelemetryArgs {
                shared: Arc::clone(&telemetry),
                callbacks: Arc::new(self.telemetry),
                peers: Arc::clone(&peers),
            }));
        }
        children.add(restartable::<FastLane>(FastLaneArgs {
            work: fast_work,
            peers: Arc::clone(&peers),
        }));
        children.add(restartable::<ControlLaneState>(control));
        if let Some(queue) = &record_queue {
            children.add(restartable::<Recorder>(RecorderArgs {
                queue: Arc::clone(queue),
                telemetry: Arc::clone(&telemetry),
            }));
        }
        children.add(once::<Router>(router));
        children.add(once_with(
            Child::Transport,
            Arc::clone(&peers.transport) as Arc<dyn Door>,
            move |supervisor| {
                Box::pin(async move {
                    let actor = factory.spawn(transport_args, supervisor).await?;
                    transport_slot.set(actor.clone());
                    Ok(actor.get_cell())
                })
            },
        ));
        if let Some(hook) = &self.fault_hook {
            children.set_fault_hook(hook);
        }
        let args = SupervisorArgs {
            peers: Arc::clone(&peers),
            children,
            telemetry_shared: Arc::clone(&telemetry),
            state: self.state.clone(),
            record_queue,
            saver,
            policy: self.options.restart_policy,
            shutdown_timeout: self.options.shutdown_timeout,
            ended: ended_tx,
        };
        ractor::Actor::spawn(None, SessionSupervisor, Box::new(args))
            .await
            .map_err(|error| SessionStartError::Spawn {
                message: error.to_string(),
            })?;
        Ok(LiveHandle {
            writer: app_writer,
            hub: self.hub,
            state: self.state,
            phase: phase_rx,
            resume_handle: resume_rx,
            telemetry,
            ended: ended_rx,
            playback,
            jitter,
            interceptor,
            transcript: transcript_rx,
            peers,
            record_queue: record_queue_for_handle,
            gate_view,
        })
    }

    /// Extractor names are their state keys: each must be unique and not empty.
    fn check_extractors(&self) -> Result<(), SessionStartError> {
        let mut seen = std::collections::BTreeSet::new();
        for (index, extractor) in self.extractors.iter().enumerate() {
            let name = extractor.name();
            if name.is_empty() {
                return Err(SessionStartError::EmptyExtractorName {
                    position: index + 1,
                });
            }
            if !seen.insert(name) {
                return Err(SessionStartError::DuplicateExtractor {
                    name: name.to_owned(),
                });
            }
        }
        Ok(())
    }

    /// Checks that the phase a snapshot was saved in is one of the session's phases.
    fn check_saved_phase(
        &self,
        snapshot: Option<&SessionSnapshot>,
    ) -> Result<(), SessionStartError> {
        if let (Some(phases), Some(snapshot)) = (&self.phases, snapshot)
            && !snapshot.phase.is_empty()
            && phases.phase(&snapshot.phase).is_none()
        {
            return Err(SessionStartError::UnknownSavedPhase {
                session_id: self.session_id.clone().unwrap_or_default(),
                phase: snapshot.phase.clone(),
            });
        }
        Ok(())
    }
}
