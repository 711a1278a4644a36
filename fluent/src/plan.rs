//! From the chain to the runtime: [`Plan`] is the chain checked and resolved; it becomes
//! the runtime's [`LiveSessionBuilder`], the one every way to start spawns.
//!
//! This is the single place where the fluent parts meet the runtime. A part added later
//! (persistence and a session id, watchers, computed values, extractors) checks itself in
//! [`LiveBuilder::plan`] and hands itself over in [`Plan::session_builder`].

use reel_actors::LiveSessionBuilder;
use reel_actors::callbacks::{ControlCallbacks, FastCallbacks, TelemetryCallbacks};
use reel_actors::phases::PhaseMachine;
use reel_actors::state::State;
use reel_actors::tools::ToolDispatcher;
use reel_protocol::{ApiEndpoint, SessionConfig};

use crate::builder::{Customizer, LiveBuilder};
use crate::error::BuildError;
use crate::recording::Recorders;

/// A checked chain, ready to become a session.
pub(crate) struct Plan {
    /// The setup the session sends (declarations and initial instruction included).
    pub(crate) resolved: SessionConfig,
    config: SessionConfig,
    dispatcher: Option<ToolDispatcher>,
    phases: Option<PhaseMachine>,
    state: Option<State>,
    fast: FastCallbacks,
    control: ControlCallbacks,
    telemetry: TelemetryCallbacks,
    playback: Option<usize>,
    customizers: Vec<Customizer>,
}

impl LiveBuilder {
    /// Checks the chain: the tools assemble into a dispatcher, the phases into a machine,
    /// every tool a phase allows is registered, and no function is declared twice.
    pub(crate) fn plan(&self) -> Result<Plan, BuildError> {
        let dispatcher = self.tools.dispatcher()?;
        let phases = self.phases.machine()?;
        // The runtime's own check, on a builder that is never spawned: the same texts, and
        // the setup exactly as the session will send it.
        let mut probe = LiveSessionBuilder::new(self.config.clone(), ApiEndpoint::offline());
        if let Some(dispatcher) = &dispatcher {
            probe = probe.dispatcher(dispatcher.clone());
        }
        if let Some(phases) = &phases {
            probe = probe.phases(phases.clone());
        }
        if let Some(state) = &self.state {
            probe = probe.with_state(state.clone());
        }
        let resolved = probe.resolved_config()?;
        Ok(Plan {
            resolved,
            config: self.config.clone(),
            dispatcher,
            phases,
            state: self.state.clone(),
            fast: self.fast.clone(),
            control: self.control.clone(),
            telemetry: self.telemetry.clone(),
            playback: self.playback,
            customizers: self.customizers.clone(),
        })
    }
}

impl Plan {
    /// The runtime's builder for this plan at `endpoint`, recording into `recorders`.
    pub(crate) fn session_builder(
        self,
        endpoint: ApiEndpoint,
        recorders: Recorders,
    ) -> LiveSessionBuilder {
        let mut session = LiveSessionBuilder::new(self.config, endpoint)
            .fast_callbacks(self.fast)
            .control_callbacks(self.control)
            .telemetry_callbacks(self.telemetry);
        if let Some(dispatcher) = self.dispatcher {
            session = session.dispatcher(dispatcher);
        }
        if let Some(phases) = self.phases {
            session = session.phases(phases);
        }
        // Before the journal sink: the sink is set on the state the session runs on.
        if let Some(state) = self.state {
            session = session.with_state(state);
        }
        if let Some(chunks) = self.playback {
            session = session.playback_buffer(chunks);
        }
        if let Some(sink) = recorders.journal {
            session = session.journal_sink(sink);
        }
        if let Some(recorder) = recorders.wire {
            session = session.record_wire(recorder);
        }
        self.customizers
            .iter()
            .fold(session, |session, customize| customize(session))
    }
}
