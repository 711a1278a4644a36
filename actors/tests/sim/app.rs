//! The simulated application: callbacks on every lane, a tool, state writes, a wire log
//! and a journal, each of which fails exactly where the plan says, and writes down what it
//! was given.
//!
//! Panics raised on purpose say `sim fault:` (see `sim::quiet`). A callback that panics
//! writes the event down first, as attempted: the checks then see a re-delivered failed
//! event as a duplicate.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures_util::FutureExt;
use futures_util::future::BoxFuture;
use reel_actors::LiveHandle;
use reel_actors::LiveSessionBuilder;
use reel_actors::callbacks::{
    AsyncCallback, CallbackMode, ControlCallbacks, FastCallbacks, TelemetryCallbacks,
    ToolCallFuture,
};
use reel_actors::conversation::{PhaseDefaults, RepairConfig};
use reel_actors::phases::{Phase, PhaseMachine};
use reel_actors::state::State;
use reel_protocol::{FunctionCall, UsageMetadata, UserInput};
use reel_tools::{
    InputEvent, InputStreamingTool, SimpleTool, ToolContext, ToolDispatcher, ToolError, ToolInput,
    ToolStream,
};
use serde_json::{Value, json};

use super::faulty_io::{SimDisk, SimJournal, SimWireLog};
use super::frames::{self, LISTEN, LISTEN_CHUNKS, TOOL};
use super::hook::SimHook;
use super::plan::{Conversation, Fault, Plan};

/// How long a tool may run before the dispatcher answers with a timeout error.
pub const TOOL_TIMEOUT: Duration = Duration::from_secs(3);

/// What the application was given, as it happened.
#[derive(Debug, Clone, Default)]
pub struct Observed {
    /// Every `on_text` call: the delta numbers, in order (failed ones included).
    pub text: Vec<u32>,
    /// The deltas `on_text` panicked on.
    pub text_panicked: Vec<u32>,
    /// When (virtual time) each failure of the fast lane the run caused happened: its
    /// `on_text` panics and the fault hook's strikes. The supervisor's restart limit counts
    /// failures within a window, so whether a storm of them crosses it is a matter of time.
    pub fast_failed_at: Vec<tokio::time::Instant>,
    /// Every `on_audio` call: the chunk numbers.
    pub audio: Vec<u32>,
    /// Every `on_usage` call (telemetry): the usage numbers.
    pub usage: Vec<u32>,
    /// The usage reports `on_usage` panicked on.
    pub usage_panicked: Vec<u32>,
    /// `on_turn_complete` calls so far.
    pub turns: u32,
    /// The calls of `on_turn_complete` that panicked.
    pub turn_panicked: Vec<u32>,
    /// The calls of `on_turn_complete` whose `modify` closure panicked.
    pub modify_panicked: Vec<u32>,
    /// Every `on_tool_call` call: the first call id of each.
    pub tool_callback: Vec<String>,
    /// The `toolCall`s (by first id) `on_tool_call` panicked on.
    pub tool_callback_panicked: Vec<String>,
    /// Every run of the tool: the call ids.
    pub tool_runs: Vec<String>,
    /// The runs of the tool that returned without error: the call ids.
    pub tool_ok: Vec<String>,
    /// The calls a governed plan's tool gate refused: the call ids.
    pub refused: Vec<String>,
    /// Every run of the input-streaming tool: the call id and what it heard, in order.
    pub listen: Vec<(String, Vec<Heard>)>,
    /// The caller's audio chunks: when each was sent (virtual time), by number.
    pub caller: Vec<(tokio::time::Instant, u32)>,
    /// State writes of the application that failed: key and error.
    pub write_errors: Vec<(String, String)>,
    /// The faults the fault hook injected, in order.
    pub struck: Vec<super::hook::Struck>,
    /// The boundaries whose turn pipeline the `with_context` modifier failed (by
    /// `session:turn_count` + 1 then).
    pub context_panicked: Vec<u32>,
    /// The same, when the modifier failed the initial phase's entry instead (the control
    /// lane enters it on a `Connected`; late, at a reconnect's, when it failed on the
    /// first connect's): the lane reports the `connected` item, not a turn complete.
    pub entry_context_panicked: Vec<u32>,
    /// The initial phase's entry is under way: set by its enter hook, taken by the next
    /// render of the modifier (which the entry's context is).
    pub entering: bool,
}

/// What a call of the input-streaming tool heard.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Heard {
    /// The caller's audio chunk of this number.
    Chunk(u32),
    /// This many pieces dropped: the tool did not keep up.
    Missed(u64),
}

/// How often the caller sends an audio chunk while the model may listen.
pub const CALLER_TICK: Duration = Duration::from_millis(20);

/// Shared handle on [`Observed`].
pub type Shared = Arc<Mutex<Observed>>;

/// Runs `f` on what `observed` holds.
pub fn with<R>(observed: &Shared, f: impl FnOnce(&mut Observed) -> R) -> R {
    f(&mut observed.lock().unwrap_or_else(|p| p.into_inner()))
}

/// The plan's faults, looked up by the callbacks.
#[derive(Debug, Default)]
struct Faults {
    text: BTreeSet<u32>,
    text_storm_from: Option<u32>,
    usage: BTreeSet<u32>,
    turn_panic: BTreeSet<u32>,
    turn_slow: BTreeMap<u32, u64>,
    turn_hang: BTreeSet<u32>,
    watch_hang: BTreeSet<u32>,
    modify_panic: BTreeSet<u32>,
    tool_callback: BTreeSet<String>,
    tool_panic: BTreeSet<String>,
    tool_slow: BTreeMap<String, u64>,
    tool_hang: BTreeSet<String>,
    /// Faults that fire once and have fired.
    fired: Mutex<BTreeSet<String>>,
}

impl Faults {
    fn of(plan: &Plan) -> Self {
        let mut faults = Faults::default();
        for fault in &plan.faults {
            match fault.clone() {
                Fault::TextPanic { delta } => {
                    faults.text.insert(delta);
                }
                Fault::TextPanicStorm { from } => faults.text_storm_from = Some(from),
                Fault::UsagePanic { usage } => {
                    faults.usage.insert(usage);
                }
                Fault::TurnCompletePanic { turn } => {
                    faults.turn_panic.insert(turn);
                }
                Fault::SlowCallback { turn, ms } => {
                    faults.turn_slow.insert(turn, ms);
                }
                Fault::HangingCallback { turn } => {
                    faults.turn_hang.insert(turn);
                }
                Fault::HangingWatcher { turn } => {
                    faults.watch_hang.insert(turn);
                }
                Fault::ModifyPanic { turn } => {
                    faults.modify_panic.insert(turn);
                }
                Fault::ToolCallbackPanic { call } => {
                    faults.tool_callback.insert(call);
                }
                Fault::ToolPanic { call } => {
                    faults.tool_panic.insert(call);
                }
                Fault::SlowTool { call, ms } => {
                    faults.tool_slow.insert(call, ms);
                }
                Fault::HangingTool { call } => {
                    faults.tool_hang.insert(call);
                }
                _ => {}
            }
        }
        faults
    }

    /// Whether the fault named `what` fires now: the first time only.
    fn once(&self, what: String) -> bool {
        self.fired
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .insert(what)
    }

    fn text_panics(&self, delta: u32) -> bool {
        let planned =
            self.text.contains(&delta) || self.text_storm_from.is_some_and(|from| delta >= from);
        planned && self.once(format!("t{delta}"))
    }
}

/// The application of one run.
pub struct App {
    /// What it was given.
    pub observed: Shared,
    /// The session state (handed to the session).
    pub state: State,
    /// The journal sink.
    pub journal: Arc<SimJournal>,
    /// The wire log.
    pub wire: Arc<SimWireLog>,
    /// The disk the wire log and the journal are written on.
    pub disk: Arc<SimDisk>,
    faults: Arc<Faults>,
    hook: Option<Arc<SimHook>>,
    /// The model calls the input-streaming tool: it is registered, and the caller speaks.
    pub listens: bool,
    /// Conversation control, if the plan has it.
    conversation: Option<Conversation>,
    /// A flow governs the session (`sim::governed`).
    governed: bool,
    /// The application sets `on_usage` (otherwise the session has no telemetry actor).
    usage_callback: bool,
}

impl App {
    /// The application `plan` describes.
    pub fn new(plan: &Plan) -> Self {
        let state = State::new();
        let journal = SimJournal::new(plan);
        state.set_journal_sink(journal.clone());
        let observed = Shared::default();
        let hook = Arc::new(SimHook::new(plan, observed.clone()));
        App {
            hook: hook.is_needed().then_some(hook),
            observed,
            state,
            journal,
            wire: Arc::new(SimWireLog::new(plan)),
            disk: Arc::new(SimDisk::new(plan)),
            faults: Arc::new(Faults::of(plan)),
            listens: plan.listens(),
            conversation: plan.conversation,
            governed: plan.governed,
            usage_callback: plan.usage_callback,
        }
    }

    /// The caller: an audio chunk every [`CALLER_TICK`], numbered from 0 (its four bytes),
    /// until the session takes no more.
    pub async fn speak(observed: Shared, handle: LiveHandle) {
        for chunk in 0u32.. {
            let sent_at = tokio::time::Instant::now();
            if handle.send_audio(chunk.to_le_bytes().to_vec()).is_err() {
                return;
            }
            with(&observed, |o| o.caller.push((sent_at, chunk)));
            tokio::time::sleep(CALLER_TICK).await;
        }
    }

    /// `builder` with the application's callbacks, tool, state, journal and wire log.
    pub fn install(&self, builder: LiveSessionBuilder) -> LiveSessionBuilder {
        let builder = match &self.hook {
            Some(hook) => builder.fault_hook(hook.clone()),
            None => builder,
        };
        let builder = match self.watchers() {
            Some(reactive) => builder.reactor(Box::new(reactive)),
            None => builder,
        };
        let builder = match &self.conversation {
            Some(c) => builder
                .phases(conversation(c, self.observed.clone()))
                .steering_mode(c.steering)
                .context_delivery(c.delivery),
            None => builder,
        };
        let builder = if self.governed {
            builder.gate(Box::new(super::governed::SimGate::new(
                self.observed.clone(),
            )))
        } else {
            builder
        };
        builder
            .simulated_disk(self.disk.clone())
            .with_state(self.state.clone())
            .record_wire(self.wire.clone())
            .fast_callbacks(self.fast())
            .control_callbacks(self.control())
            .telemetry_callbacks(self.telemetry())
            .dispatcher(self.tools())
    }

    /// A blocking watcher that hangs, for each `Fault::HangingWatcher` (none without).
    fn watchers(&self) -> Option<reel_reactive::Reactive> {
        use reel_reactive::{ReactiveConfig, Watcher};
        if self.faults.watch_hang.is_empty() {
            return None;
        }
        let mut reactive = ReactiveConfig::new();
        for turn in &self.faults.watch_hang {
            reactive = reactive.watch(
                Watcher::on(format!("app:turn:{turn}"))
                    .blocking()
                    .then(|_old, _new, _state| std::future::pending::<()>()),
            );
        }
        Some(
            reactive
                .build()
                .expect("one watcher per key is a valid rule"),
        )
    }

    fn fast(&self) -> FastCallbacks {
        let (observed, faults) = (self.observed.clone(), self.faults.clone());
        let on_text = move |text: &str| {
            let Some(delta) = frames::parse_text(text) else {
                return;
            };
            with(&observed, |o| o.text.push(delta));
            if faults.text_panics(delta) {
                with(&observed, |o| {
                    o.text_panicked.push(delta);
                    o.fast_failed_at.push(tokio::time::Instant::now());
                });
                panic!("sim fault: on_text panics on t{delta}");
            }
        };
        let observed = self.observed.clone();
        let on_audio = move |pcm: &bytes::Bytes| {
            if let Some(chunk) = frames::parse_audio(pcm) {
                with(&observed, |o| o.audio.push(chunk));
            }
        };
        FastCallbacks {
            on_text: Some(Arc::new(on_text)),
            on_audio: Some(Arc::new(on_audio)),
            ..Default::default()
        }
    }

    fn telemetry(&self) -> TelemetryCallbacks {
        let (observed, faults, state) = (
            self.observed.clone(),
            self.faults.clone(),
            self.state.clone(),
        );
        let on_usage = move |usage: &UsageMetadata| {
            let Some(n) = usage.total_token_count.and_then(|n| u32::try_from(n).ok()) else {
                return;
            };
            with(&observed, |o| o.usage.push(n));
            if faults.usage.contains(&n) && faults.once(format!("u{n}")) {
                with(&observed, |o| o.usage_panicked.push(n));
                panic!("sim fault: on_usage panics on u{n}");
            }
            // A writer of its own, racing the control lane's writes.
            let (state, observed) = (state.clone(), observed.clone());
            tokio::spawn(async move {
                let key = format!("app:usage:{n}");
                if let Err(error) = state.set(&key, n).await {
                    with(&observed, |o| o.write_errors.push((key, error.to_string())));
                }
            });
        };
        TelemetryCallbacks {
            on_usage: self.usage_callback.then(|| Arc::new(on_usage) as _),
        }
    }

    fn control(&self) -> ControlCallbacks {
        let (observed, faults, state) = (
            self.observed.clone(),
            self.faults.clone(),
            self.state.clone(),
        );
        let on_turn_complete = AsyncCallback::new(CallbackMode::Blocking, move |()| {
            let (observed, faults, state) = (observed.clone(), faults.clone(), state.clone());
            async move {
                let turn = with(&observed, |o| {
                    o.turns += 1;
                    o.turns
                });
                if faults.turn_hang.contains(&turn) {
                    std::future::pending::<()>().await;
                }
                if let Some(ms) = faults.turn_slow.get(&turn) {
                    tokio::time::sleep(Duration::from_millis(*ms)).await;
                }
                if faults.turn_panic.contains(&turn) {
                    with(&observed, |o| o.turn_panicked.push(turn));
                    panic!("sim fault: on_turn_complete panics on call {turn}");
                }
                let fail = faults.modify_panic.contains(&turn);
                let record = observed.clone();
                let key = format!("app:turn:{turn}");
                let written = state
                    .modify(&key, 0u32, move |_| {
                        if fail {
                            with(&record, |o| o.modify_panicked.push(turn));
                            panic!("sim fault: the modify closure panics on turn {turn}");
                        }
                        turn
                    })
                    .await;
                if let Err(error) = written {
                    with(&observed, |o| o.write_errors.push((key, error.to_string())));
                }
            }
        });
        let (observed, faults) = (self.observed.clone(), self.faults.clone());
        let on_tool_call = move |calls: Vec<FunctionCall>, _state: State| -> ToolCallFuture {
            let (observed, faults) = (observed.clone(), faults.clone());
            Box::pin(async move {
                let first = calls.first().and_then(|c| c.id.clone()).unwrap_or_default();
                with(&observed, |o| o.tool_callback.push(first.clone()));
                if faults.tool_callback.contains(&first) && faults.once(format!("cb:{first}")) {
                    with(&observed, |o| o.tool_callback_panicked.push(first.clone()));
                    panic!("sim fault: on_tool_call panics on the toolCall of {first}");
                }
                None // the dispatcher answers
            })
        };
        ControlCallbacks {
            on_turn_complete: Some(on_turn_complete),
            on_tool_call: Some(Arc::new(on_tool_call)),
            ..Default::default()
        }
    }

    fn tools(&self) -> ToolDispatcher {
        let (observed, faults) = (self.observed.clone(), self.faults.clone());
        let body = move |args: Value, ctx: ToolContext| {
            let (observed, faults) = (observed.clone(), faults.clone());
            async move {
                let id = ctx.call_id.clone();
                with(&observed, |o| o.tool_runs.push(id.clone()));
                if faults.tool_hang.contains(&id) {
                    std::future::pending::<()>().await;
                }
                if let Some(ms) = faults.tool_slow.get(&id) {
                    tokio::time::sleep(Duration::from_millis(*ms)).await;
                }
                if faults.tool_panic.contains(&id) {
                    panic!("sim fault: the tool panics on {id}");
                }
                let n = args.get("n").cloned().unwrap_or(Value::Null);
                ctx.state
                    .set(&format!("app:tool:{id}"), &n)
                    .map_err(|error| ctx.fail(error))?;
                with(&observed, |o| o.tool_ok.push(id.clone()));
                Ok(json!({ "n": n }))
            }
        };
        let schema = json!({"type": "object", "properties": {"n": {"type": "integer"}}});
        let mut tools = ToolDispatcher::new().with_timeout(TOOL_TIMEOUT);
        if let Err(error) = tools.register(SimpleTool::new(
            TOOL,
            "The simulation's tool.",
            Some(schema),
            body,
        )) {
            panic!("the simulation's tool does not register: {error}");
        }
        let listen = Listen {
            observed: self.observed.clone(),
            hook: self.hook.clone(),
        };
        if self.listens
            && let Err(error) = tools.register_input_streaming(Arc::new(listen))
        {
            panic!("the simulation's input-streaming tool does not register: {error}");
        }
        tools
    }
}

/// The input-streaming tool: hears [`LISTEN_CHUNKS`] of the caller's audio chunks, sending
/// a result for each, and writes down everything it heard. Its first chunk arms the fault
/// hook for the call, if the plan says so.
struct Listen {
    observed: Shared,
    hook: Option<Arc<SimHook>>,
}

impl InputStreamingTool for Listen {
    fn name(&self) -> &str {
        LISTEN
    }

    fn description(&self) -> &str {
        "Listens to the caller."
    }

    fn parameters(&self) -> Option<Value> {
        None
    }

    fn run(
        &self,
        _args: Value,
        ctx: ToolContext,
        mut input: ToolInput,
        results: ToolStream,
    ) -> BoxFuture<'static, Result<(), ToolError>> {
        let (observed, hook) = (self.observed.clone(), self.hook.clone());
        async move {
            let run = with(&observed, |o| {
                o.listen.push((ctx.call_id.clone(), Vec::new()));
                o.listen.len() - 1
            });
            let mut chunks = 0;
            while chunks < LISTEN_CHUNKS {
                let heard = match input.recv().await {
                    None => break,
                    Some(InputEvent::Missed { count }) => Heard::Missed(count),
                    Some(InputEvent::Input(piece)) => match piece.input {
                        UserInput::Audio(pcm) => match frames::parse_audio(&pcm) {
                            Some(chunk) => Heard::Chunk(chunk),
                            None => continue,
                        },
                        _ => continue,
                    },
                    Some(_) => continue,
                };
                with(&observed, |o| o.listen[run].1.push(heard));
                if let Heard::Chunk(chunk) = heard {
                    chunks += 1;
                    if chunks == 1
                        && let Some(hook) = &hook
                    {
                        hook.heard_first(&ctx.call_id);
                    }
                    results.send(json!({ "chunk": chunk }));
                }
            }
            Ok(())
        }
        .boxed()
    }
}

/// The phases of a plan with conversation control: `open` (needs `app:turn:2`, which the
/// second `on_turn_complete` writes; the defaults append `app:turn:1`, a `with_context`
/// line and the navigation block) moves to `close` once `app:turn:2` is written, or by
/// repair's escalation after 3 unmet turns (a nudge from the first); `close` has an
/// enter prompt. The `with_context` modifier panics where the plan says, once.
pub fn conversation(plan: &Conversation, observed: Shared) -> PhaseMachine {
    let fired = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let panic_at = plan.context_panic;
    let entry = Arc::clone(&observed);
    let modifier = move |s: &State| {
        let boundary = s.get::<u32>("session:turn_count").unwrap_or(0) + 1;
        let entering = with(&observed, |o| std::mem::take(&mut o.entering));
        if panic_at == Some(boundary) && !fired.swap(true, std::sync::atomic::Ordering::SeqCst) {
            with(&observed, |o| {
                if entering {
                    o.entry_context_panicked.push(boundary);
                } else {
                    o.context_panicked.push(boundary);
                }
            });
            panic!("sim fault: the with_context modifier panics at boundary {boundary}");
        }
        format!("ctx {boundary}")
    };
    let built = PhaseMachine::builder("open")
        .defaults(
            PhaseDefaults::default()
                .with_state(&["app:turn:1"])
                .navigation(),
        )
        .repair(RepairConfig::new(1, 3).escalate_to("close"))
        .phase(
            Phase::new("open")
                .instruction("Open.")
                .on_enter(move |_state, _writer| {
                    with(&entry, |o| o.entering = true);
                    async {}
                })
                .needs(&["app:turn:2"])
                .with_context(modifier)
                .transition_with("close", |s| s.contains("app:turn:2"), "after two turns"),
        )
        .phase(
            Phase::new("close")
                .instruction("Close.")
                .enter_prompt("Closing.")
                .terminal(),
        )
        .build();
    match built {
        Ok(machine) => machine,
        Err(error) => panic!("the simulation's phases are invalid: {error}"),
    }
}
