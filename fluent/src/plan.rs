//! From the chain to the runtime: [`Plan`] is the chain checked and resolved; it becomes
//! the runtime's [`LiveSessionBuilder`], the one every way to start spawns.
//!
//! This is the single place where the fluent parts meet the runtime. Each part of the
//! chain checks itself in [`LiveBuilder::plan`] and hands itself over in
//! [`Plan::session_builder`]: tools, phases, callbacks (`on_extracted`,
//! `on_extraction_error` and `on_resumed` among the control lane's), the control lane's
//! interceptors (`before_tool_response`, `on_turn_boundary`, the instruction hooks), reactive state
//! (watchers, computed values, temporal patterns) with the flow steps' orchestration, extractors, persistence, the model-call
//! interceptors, recording. The tree-level settings go over as one
//! [`SessionOptions`](reel_actors::SessionOptions), written by the chain's setters.
//!
//! Parts that check each other: extractors flatten their results into `derived:{field}`
//! keys, so the fields a typed extractor writes join the `derived:` keys
//! [`crate::reactive`] accepts watchers and computed values on (an extractor whose fields
//! are not known before it runs lifts that check); a cassette kept next to the wire log
//! needs a wire log file; persistence and a session id come together.
//!
//! What depends on how the session starts is set after the plan: the cassette (opened by
//! [`crate::connect`] for a live session, read in replay mode by [`crate::replay`]) and,
//! in a replay, an in-memory persistence backend in place of the chain's.

use std::path::PathBuf;
use std::sync::Arc;

use reel_actors::callbacks::{ControlCallbacks, FastCallbacks, Interceptors, TelemetryCallbacks};
use reel_actors::events::EventHub;
use reel_actors::llm::{CassetteMode, LlmInterceptor};
use reel_actors::phases::PhaseMachine;
use reel_actors::reactor::StateReactor;
use reel_actors::state::State;
use reel_actors::tools::ToolDispatcher;
use reel_actors::{LiveSessionBuilder, SessionOptions};
use reel_protocol::{ApiEndpoint, SessionConfig};
use reel_reactive::Reactive;

use crate::audio::check_audio;
use crate::builder::{Customizer, LiveBuilder};
use crate::error::BuildError;
use crate::extraction::Extractors;
use crate::llm::layered;
use crate::mcp::Discovered;
use crate::orchestration::OrchestrationPart;
use crate::persistence::Persisting;
use crate::recording::Recorders;
use crate::resume_file;

/// A checked chain, ready to become a session.
pub(crate) struct Plan {
    /// The setup the session sends (declarations and initial instruction included).
    pub(crate) resolved: SessionConfig,
    config: SessionConfig,
    pub(crate) dispatcher: Option<ToolDispatcher>,
    phases: Option<PhaseMachine>,
    reactive: Option<Reactive>,
    orchestration: OrchestrationPart,
    /// The flow the session is governed (or observed) with, compiled.
    pub(crate) gate: Option<(reel_flow::CompiledFlow, reel_flow::Mode)>,
    state: Option<State>,
    fast: FastCallbacks,
    control: ControlCallbacks,
    /// The control lane's hooks on what the runtime sends.
    outbound: Interceptors,
    telemetry: TelemetryCallbacks,
    /// The tree-level settings, as the chain wrote them.
    options: SessionOptions,
    customizers: Vec<Customizer>,
    /// The chain's event hub, which the session publishes on.
    hub: Arc<EventHub>,
    extractors: Extractors,
    /// The chain's persistence; a replay puts an in-memory backend here.
    pub(crate) persistence: Option<Persisting>,
    /// The cassette a live session opens, and its mode.
    pub(crate) live_cassette: Option<(PathBuf, CassetteMode)>,
    /// The outermost interceptor: the cassette, once opened.
    pub(crate) cassette: Option<Arc<dyn LlmInterceptor>>,
    interceptors: Vec<Arc<dyn LlmInterceptor>>,
}

impl LiveBuilder {
    /// Checks the chain: the tools assemble into a dispatcher, the phases into a machine,
    /// every tool a phase allows is registered, no function is declared twice, the
    /// reactive rules hold together (with the extractors' fields), extractor names are
    /// unique, persistence has its id, and a cassette beside the wire log has one.
    pub(crate) fn plan(&self) -> Result<Plan, BuildError> {
        self.plan_with(&[], !self.mcp.is_empty())
    }

    /// [`plan`](Self::plan) with the tools found when the session starts (MCP tools, or
    /// their recorded stand-ins) registered after the chain's own; `pending` when MCP
    /// servers are named but not connected yet.
    pub(crate) fn plan_with(
        &self,
        discovered: &[Discovered],
        pending: bool,
    ) -> Result<Plan, BuildError> {
        let gate = self.governing.checked()?;
        let confirmed: Vec<String> = gate.as_ref().map_or_else(Vec::new, |(flow, _)| {
            flow.confirmed_tools()
                .into_iter()
                .map(str::to_owned)
                .collect()
        });
        let dispatcher = self.tools.dispatcher(discovered, pending, &confirmed)?;
        let phases = self.phases.machine()?;
        let extractors = self.extractors.checked()?;
        let reactive = self.reactive.checked(&self.extractors.fields())?;
        let persistence = self.persistence.checked(self.recording.wire_path())?;
        let live_cassette = self.llm.live_cassette(self.recording.wire_path())?;
        check_audio(&self.options, &self.config)?;
        // The runtime's own check, on a builder that is never spawned: the same texts, and
        // the setup exactly as the session will send it.
        let mut probe = LiveSessionBuilder::new(self.config.clone(), ApiEndpoint::offline())
            .steering_mode(self.options.steering);
        if let Some(dispatcher) = &dispatcher {
            probe = probe.dispatcher(dispatcher.clone());
        }
        // With MCP servers not connected yet, a phase may allow a tool only they declare:
        // the phases' tools are checked at the connect; here only the initial phase's
        // instruction is taken, as the runtime would.
        let phases_checked_later = pending && phases.is_some();
        if let Some(phases) = phases.as_ref().filter(|_| !phases_checked_later) {
            probe = probe.phases(phases.clone());
        }
        if let Some(state) = &self.state {
            probe = probe.with_state(state.clone());
        }
        let mut resolved = probe.resolved_config()?;
        if let Some(phases) = phases
            .as_ref()
            .filter(|_| phases_checked_later && self.options.steering.updates_instruction())
        {
            let state = self.state.clone().unwrap_or_default();
            if let Some(instruction) = phases
                .phase(phases.initial())
                .and_then(|phase| phase.instruction_for(&state))
            {
                resolved = resolved.system_instruction(instruction);
            }
        }
        Ok(Plan {
            resolved,
            config: self.config.clone(),
            dispatcher,
            phases,
            reactive,
            orchestration: self.orchestration.clone(),
            gate,
            state: self.state.clone(),
            fast: self.fast.clone(),
            control: self.control.clone(),
            outbound: self.interceptors.clone(),
            telemetry: self.telemetry.clone(),
            options: self.options,
            customizers: self.customizers.clone(),
            hub: Arc::clone(&self.hub),
            extractors,
            persistence,
            live_cassette,
            cassette: None,
            interceptors: self.llm.interceptors(),
        })
    }
}

impl LiveBuilder {
    /// The functions the chain declares itself: its tools (without MCP tools) and the
    /// declarations set through `configure`.
    pub(crate) fn native_function_names(&self) -> Result<Vec<String>, BuildError> {
        let mut names: Vec<String> = self
            .config
            .function_names()
            .into_iter()
            .map(str::to_owned)
            .collect();
        if let Some(dispatcher) = self.tools.dispatcher(&[], true, &[])? {
            names.extend(dispatcher.names());
        }
        Ok(names)
    }
}

impl Plan {
    /// Whether the phases steer the conversation (`PhaseMachine::converses`), or a flow
    /// does (`govern`/`observe`): the greeting then goes after the first steering.
    pub(crate) fn steers(&self) -> bool {
        self.phases.as_ref().is_some_and(PhaseMachine::converses) || self.gate.is_some()
    }

    /// The runtime's builder for this plan at `endpoint`, recording into `recorders`.
    pub(crate) fn session_builder(
        self,
        endpoint: ApiEndpoint,
        recorders: Recorders,
    ) -> LiveSessionBuilder {
        let mut session = LiveSessionBuilder::new(self.config, endpoint)
            .options(self.options)
            .event_hub(self.hub)
            .fast_callbacks(self.fast)
            .control_callbacks(self.control)
            .interceptors(self.outbound)
            .telemetry_callbacks(self.telemetry);
        if let Some(dispatcher) = self.dispatcher {
            session = session.dispatcher(dispatcher);
        }
        if let Some(phases) = self.phases {
            session = session.phases(phases);
        }
        let reactive = self
            .reactive
            .map(|reactive| Box::new(reactive) as Box<dyn StateReactor>);
        if let Some(reactor) = self.orchestration.reactor(reactive) {
            session = session.reactor(reactor);
        }
        if let Some((flow, mode)) = self.gate {
            session = session.gate(Box::new(crate::govern::FlowGate::new(flow, mode)));
        }
        // Before the journal sink: the sink is set on the state the session runs on.
        if let Some(state) = self.state {
            session = session.with_state(state);
        }
        for extractor in self.extractors.extractors {
            session = session.extractor(extractor);
        }
        let layers = self.cassette.into_iter().chain(self.interceptors).collect();
        if let Some(interceptor) = layered(layers) {
            session = session.llm_interceptor(interceptor);
        }
        if let Some(persisting) = self.persistence {
            if let Some(path) = recorders.resume {
                session = session
                    .on_snapshot_restored(resume_file::writer(path, persisting.session_id.clone()));
            }
            session = session
                .persistence(persisting.backend)
                .session_id(persisting.session_id);
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
