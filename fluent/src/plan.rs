//! From the chain to the runtime: [`Plan`] is the chain checked and resolved; it becomes
//! the runtime's [`LiveSessionBuilder`], the one every way to start spawns.
//!
//! This is the single place where the fluent parts meet the runtime. Each part of the
//! chain checks itself in [`LiveBuilder::plan`] and hands itself over in
//! [`Plan::session_builder`]: tools, phases, callbacks, reactive state (watchers, computed
//! values, temporal patterns), recording.
//!
//! A part added later slots in the same way:
//! - persistence and a session id: a `PersistencePart` (the backend and the id, checked
//!   together: an id without a backend is a mistake), given to the runtime builder before
//!   the state, so a resumed snapshot's state is the one the journal sink is set on;
//! - extractors and the transcript buffer: an `ExtractorsPart`. Extractors flatten their
//!   results into `derived:{field}` keys, so the fields they write join the `derived:`
//!   keys [`crate::reactive`] accepts watchers on (an extractor whose fields are not known
//!   before it runs — an LLM extractor without a schema — lifts that check for watchers);
//! - `on_resumed`, `on_extracted`, `on_extraction_error`: more fields of the callback
//!   parts, once the runtime's callback sets have them.

use reel_actors::LiveSessionBuilder;
use reel_actors::callbacks::{ControlCallbacks, FastCallbacks, TelemetryCallbacks};
use reel_actors::phases::PhaseMachine;
use reel_actors::reactive::ReactiveConfig;
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
    reactive: Option<ReactiveConfig>,
    state: Option<State>,
    fast: FastCallbacks,
    control: ControlCallbacks,
    telemetry: TelemetryCallbacks,
    playback: Option<usize>,
    customizers: Vec<Customizer>,
}

impl LiveBuilder {
    /// Checks the chain: the tools assemble into a dispatcher, the phases into a machine,
    /// every tool a phase allows is registered, no function is declared twice, and the
    /// reactive rules hold together.
    pub(crate) fn plan(&self) -> Result<Plan, BuildError> {
        let dispatcher = self.tools.dispatcher()?;
        let phases = self.phases.machine()?;
        let reactive = self.reactive.config()?;
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
            reactive,
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
        if let Some(reactive) = self.reactive {
            session = session.reactive(reactive);
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
