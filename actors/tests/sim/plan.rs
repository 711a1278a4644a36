//! What one simulated run does: the model's side of the conversation (the script) and the
//! faults injected into the application's side, as plain data drawn from a seed.
//!
//! Every event the model sends carries a unique id (`t17` for a text delta, `a3` for an
//! audio chunk, `u2` for a usage report, `c5` for a tool call), so that a loss or a
//! duplicate anywhere in the tree shows up as a missing or repeated id.

use std::fmt;

use reel_actors::Child;
use reel_actors::conversation::{ContextDelivery, SteeringMode};

/// A run's seed: the plan, and so the whole run, is a function of it.
pub type Seed = u64;

/// One thing the model sends, in script order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Step {
    /// A text delta `t{n}` (fast lane: `on_text`).
    Text(u32),
    /// An output audio chunk whose four bytes are `n` (fast lane: `on_audio`).
    Audio(u32),
    /// A usage report with `totalTokenCount = n` (control lane and telemetry: `on_usage`).
    Usage(u32),
    /// A barge-in (`interrupted`): every lane.
    Interrupted,
    /// A `toolCall` with these call ids; with `wait`, the model sends nothing more until
    /// the client has answered every one of them (or a deadline passed).
    ToolCall {
        /// The call ids, `c{n}`.
        calls: Vec<String>,
        /// Hold the script until they are answered.
        wait: bool,
    },
    /// `turnComplete` (control lane: the turn pipeline and `on_turn_complete`).
    TurnComplete,
    /// A `sessionResumptionUpdate` with this handle.
    Resumption(String),
    /// A `goAway`: the client must reconnect; the script goes on on the next connection.
    GoAway,
}

/// How fast the model plays the script: `burst` frames every `tick_ms` of virtual time.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Pace {
    /// Virtual milliseconds between bursts.
    pub tick_ms: u64,
    /// Frames per burst.
    pub burst: usize,
}

/// A fault, and where it strikes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Fault {
    /// `on_text` panics on the first delivery of `t{delta}` (fast lane restart).
    TextPanic {
        /// The delta.
        delta: u32,
    },
    /// `on_text` panics on every delta from `t{from}` on: meant to cross the restart limit,
    /// so that the session ends, failed, naming the fast lane — unless the panics spread over
    /// more than the limit's window (a slow callback holding the script back), when the
    /// supervisor rightly restarts on; the checker judges which from when they happened.
    TextPanicStorm {
        /// The first delta that panics.
        from: u32,
    },
    /// `on_usage` panics on usage report `u{usage}` (telemetry actor restart).
    UsagePanic {
        /// The usage report.
        usage: u32,
    },
    /// `on_turn_complete` panics on its `turn`-th call (control lane restart).
    TurnCompletePanic {
        /// 1-based call of `on_turn_complete`.
        turn: u32,
    },
    /// `on_tool_call` panics on the `toolCall` holding `call` (control lane restart).
    ToolCallbackPanic {
        /// The first call id of that `toolCall`.
        call: String,
    },
    /// The tool panics on `call` (caught: an error response).
    ToolPanic {
        /// The call id.
        call: String,
    },
    /// The tool takes `ms` virtual milliseconds on `call`, then answers.
    SlowTool {
        /// The call id.
        call: String,
        /// How long.
        ms: u64,
    },
    /// The tool never returns on `call` (the dispatcher's timeout answers).
    HangingTool {
        /// The call id.
        call: String,
    },
    /// The `modify` closure of `on_turn_complete`'s write panics on its `turn`-th call:
    /// the StateStore fails and restarts.
    ModifyPanic {
        /// 1-based call of `on_turn_complete`.
        turn: u32,
    },
    /// `on_turn_complete` takes `ms` virtual milliseconds on its `turn`-th call.
    SlowCallback {
        /// 1-based call of `on_turn_complete`.
        turn: u32,
        /// How long.
        ms: u64,
    },
    /// `on_turn_complete` never returns on its `turn`-th call.
    HangingCallback {
        /// 1-based call of `on_turn_complete`.
        turn: u32,
    },
    /// A blocking watcher of `app:turn:{turn}` (written by `on_turn_complete`'s call
    /// `turn`) whose action never returns: the callback timeout cuts it off.
    HangingWatcher {
        /// 1-based call of `on_turn_complete` whose write it watches.
        turn: u32,
    },
    /// An `EventStream` subscribed before the start and read only after the session ended.
    StalledSubscriber,
    /// The wire log's writes fail for `count` entries from sequence number `from`.
    FailingWireLog {
        /// First failing entry.
        from: u64,
        /// How many fail.
        count: u64,
    },
    /// The journal file's writes fail after `after` successful writes (a full disk).
    FailingJournal {
        /// Writes that succeed first.
        after: u64,
    },
    /// The wire recorder panics once, on entry `seq` (Recorder actor restart).
    RecorderPanic {
        /// The entry's sequence number.
        seq: u64,
    },
    /// The link drops (no close frame) before script step `before_step`.
    LinkDrop {
        /// Index into the script.
        before_step: usize,
    },
    /// `count` goAways in a row (each on a fresh connection) before `before_step`.
    GoAwayStorm {
        /// Index into the script.
        before_step: usize,
        /// How many.
        count: u32,
    },
    /// A child fails inside the tree, where no application code runs, on the `at`-th item
    /// its inbox hands it (1-based, counted across restarts): injected through
    /// `reel_actors::fault::FaultHook` (see `sim::hook`). The router's and the transport's
    /// failures end the session; the lanes, telemetry, the state store and the recorder
    /// restart. The transport's items are the messages it handles.
    Internal {
        /// The child.
        child: Child,
        /// Which item of its inbox (1-based).
        at: u64,
    },
    /// Once the input-streaming call `call` has heard its first chunk of the caller's
    /// audio, the control lane fails on the `after`-th item it takes from then, through
    /// the fault hook: while input is in flight to the call (the item is a piece of input,
    /// the call's result, or whatever else came).
    ListenRestart {
        /// The call id, `l{n}`.
        call: String,
        /// Which item from then (1-based).
        after: u64,
    },
}

impl Fault {
    /// Whether the fault holds the control lane until the callback timeout cuts it off (a
    /// hanging `on_turn_complete` or watcher, a slow one past the timeout): the lane
    /// publishes nothing meanwhile.
    pub fn holds_the_control_lane(&self) -> bool {
        match self {
            Fault::HangingCallback { .. } | Fault::HangingWatcher { .. } => true,
            Fault::SlowCallback { ms, .. } => {
                u128::from(*ms) >= reel_actors::session::DEFAULT_CALLBACK_TIMEOUT.as_millis()
            }
            _ => false,
        }
    }

    /// A short, stable name of the fault's kind, for the tally.
    pub fn kind(&self) -> &'static str {
        match self {
            Fault::TextPanic { .. } => "text_panic (fast lane)",
            Fault::TextPanicStorm { .. } => "text_panic_storm (fast lane, past the limit)",
            Fault::UsagePanic { .. } => "usage_panic (telemetry)",
            Fault::TurnCompletePanic { .. } => "turn_complete_panic (control lane)",
            Fault::ToolCallbackPanic { .. } => "on_tool_call_panic (control lane)",
            Fault::ToolPanic { .. } => "tool_panic",
            Fault::SlowTool { .. } => "slow_tool",
            Fault::HangingTool { .. } => "hanging_tool",
            Fault::ModifyPanic { .. } => "modify_panic (state store)",
            Fault::SlowCallback { .. } if self.holds_the_control_lane() => {
                "slow_callback (past the callback timeout)"
            }
            Fault::SlowCallback { .. } => "slow_callback",
            Fault::HangingCallback { .. } => "hanging_callback",
            Fault::HangingWatcher { .. } => "hanging_watcher",
            Fault::StalledSubscriber => "stalled_subscriber",
            Fault::FailingWireLog { .. } => "failing_wire_log",
            Fault::FailingJournal { .. } => "failing_journal",
            Fault::RecorderPanic { .. } => "recorder_panic (recorder)",
            Fault::LinkDrop { .. } => "link_drop",
            Fault::GoAwayStorm { .. } => "go_away_storm (100 in a row)",
            Fault::ListenRestart { .. } => "listen_restart (control lane)",
            Fault::Internal { child, .. } => match child {
                Child::Router => "internal (router)",
                Child::FastLane => "internal (fast lane)",
                Child::ControlLane => "internal (control lane)",
                Child::Telemetry => "internal (telemetry)",
                Child::StateStore => "internal (state store)",
                Child::Recorder => "internal (recorder)",
                Child::Transport => "internal (transport)",
            },
        }
    }
}

impl fmt::Display for Fault {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Fault::TextPanic { delta } => write!(f, "on_text panics on t{delta}"),
            Fault::TextPanicStorm { from } => {
                write!(f, "on_text panics on every delta from t{from}")
            }
            Fault::UsagePanic { usage } => write!(f, "on_usage panics on u{usage}"),
            Fault::TurnCompletePanic { turn } => {
                write!(f, "on_turn_complete panics on call {turn}")
            }
            Fault::ToolCallbackPanic { call } => {
                write!(f, "on_tool_call panics on the toolCall of {call}")
            }
            Fault::ToolPanic { call } => write!(f, "the tool panics on {call}"),
            Fault::SlowTool { call, ms } => write!(f, "the tool takes {ms} ms on {call}"),
            Fault::HangingTool { call } => write!(f, "the tool hangs on {call}"),
            Fault::ModifyPanic { turn } => write!(f, "the modify closure panics on turn {turn}"),
            Fault::SlowCallback { turn, ms } => {
                write!(f, "on_turn_complete takes {ms} ms on call {turn}")
            }
            Fault::HangingCallback { turn } => write!(f, "on_turn_complete hangs on call {turn}"),
            Fault::HangingWatcher { turn } => {
                write!(f, "a blocking watcher of app:turn:{turn} hangs")
            }
            Fault::StalledSubscriber => {
                write!(f, "an EventStream is read only after the session ended")
            }
            Fault::FailingWireLog { from, count } => write!(
                f,
                "wire log writes fail for entries {from}..{}",
                from + count
            ),
            Fault::FailingJournal { after } => {
                write!(f, "journal file writes fail after {after} writes")
            }
            Fault::RecorderPanic { seq } => write!(f, "the wire recorder panics on entry {seq}"),
            Fault::LinkDrop { before_step } => {
                write!(f, "the link drops before step {before_step}")
            }
            Fault::GoAwayStorm { before_step, count } => {
                write!(f, "{count} goAways in a row before step {before_step}")
            }
            Fault::Internal { child, at } => {
                write!(f, "the {child} fails on its inbox item {at} (fault hook)")
            }
            Fault::ListenRestart { call, after } => write!(
                f,
                "the control_lane fails on the {after}. item it takes after {call} heard its first chunk (fault hook)"
            ),
        }
    }
}

/// Conversation control in the application (`sim::app::conversation`): two phases,
/// `open` (needs `app:turn:2`, with repair) and `close` (an enter prompt), steered and
/// delivered as drawn; `context_panic`: the `open` phase's `with_context` modifier panics
/// once, in the turn pipeline of the boundary that finds `session:turn_count` at that
/// value minus one (≥ 2), after repair counted the turn and before its context is sent.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Conversation {
    /// How the phases steer.
    pub steering: SteeringMode,
    /// When context is sent.
    pub delivery: ContextDelivery,
    /// The boundary whose pipeline fails (control lane restart), if any.
    pub context_panic: Option<u32>,
}

/// A whole run: the script, its pace, and the faults.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Plan {
    /// The seed it was drawn from.
    pub seed: Seed,
    /// How fast the model plays.
    pub pace: Pace,
    /// Whether the session asks for resumption (the model then checks the handle each
    /// reconnect presents).
    pub resumption: bool,
    /// What the model sends, in order.
    pub script: Vec<Step>,
    /// What goes wrong.
    pub faults: Vec<Fault>,
    /// The simulated disk's slowest write (virtual ms): each piece of disk work takes a
    /// seeded time up to it (`sim::faulty_io::SimDisk`).
    pub disk_ms: u64,
    /// Conversation control, if the application uses it.
    pub conversation: Option<Conversation>,
    /// The session is governed by a flow (`sim::governed`): the simulation's tool may run
    /// once (`once`), so every call after one that ran is refused at the tool gate.
    pub governed: bool,
    /// The application sets `on_usage`. Without it the session has no telemetry actor
    /// (decision 0075): the router counts the usage reports into the telemetry snapshot,
    /// and no fault aims at telemetry.
    pub usage_callback: bool,
}

impl Plan {
    /// The same plan with no fault at all: the baseline a faulted run is compared with.
    pub fn without_faults(&self) -> Plan {
        Plan {
            faults: Vec::new(),
            conversation: self.conversation.map(|c| Conversation {
                context_panic: None,
                ..c
            }),
            ..self.clone()
        }
    }

    /// The boundary whose turn pipeline the application's modifier fails, if any.
    pub fn context_panic(&self) -> Option<u32> {
        self.conversation.and_then(|c| c.context_panic)
    }

    /// Whether the model calls the input-streaming tool (the caller then speaks).
    pub fn listens(&self) -> bool {
        self.script.iter().any(|step| {
            matches!(step, Step::ToolCall { calls, .. } if calls.iter().any(|id| super::frames::is_listen(id)))
        })
    }

    /// Whether any fault is of the kind `matches` accepts.
    pub fn has(&self, matches: impl Fn(&Fault) -> bool) -> bool {
        self.faults.iter().any(matches)
    }

    /// The items at which `child` is planned to fail through the fault hook.
    pub fn internal(&self, child: Child) -> impl Iterator<Item = u64> + '_ {
        self.faults.iter().filter_map(move |f| match f {
            Fault::Internal { child: c, at } if *c == child => Some(*at),
            _ => None,
        })
    }

    /// How many steps of each kind the script has: text, audio, usage, tool calls,
    /// turns, resumption updates, goAways, interruptions.
    fn counts(&self) -> [usize; 8] {
        let mut counts = [0; 8];
        for step in &self.script {
            let index = match step {
                Step::Text(_) => 0,
                Step::Audio(_) => 1,
                Step::Usage(_) => 2,
                Step::ToolCall { calls, .. } => {
                    counts[3] += calls.len() - 1;
                    3
                }
                Step::TurnComplete => 4,
                Step::Resumption(_) => 5,
                Step::GoAway => 6,
                Step::Interrupted => 7,
            };
            counts[index] += 1;
        }
        counts
    }
}

impl fmt::Display for Plan {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let [
            text,
            audio,
            usage,
            calls,
            turns,
            handles,
            go_aways,
            interruptions,
        ] = self.counts();
        writeln!(
            f,
            "plan of seed {}: {} frames every {} ms, resumption {}, disk writes take up to {} ms",
            self.seed,
            self.pace.burst,
            self.pace.tick_ms,
            if self.resumption { "on" } else { "off" },
            self.disk_ms,
        )?;
        writeln!(
            f,
            "  script: {} steps: {text} text deltas, {audio} audio chunks, {usage} usage reports, \
             {calls} tool calls, {turns} turn completes, {handles} resumption updates, \
             {go_aways} goAways, {interruptions} interruptions",
            self.script.len()
        )?;
        if let Some(c) = &self.conversation {
            writeln!(
                f,
                "  conversation control: {:?}, {:?} delivery{}",
                c.steering,
                c.delivery,
                match c.context_panic {
                    Some(turn) => format!(
                        ", the modifier panics in the pipeline of boundary {turn} (control lane)"
                    ),
                    None => String::new(),
                }
            )?;
        }
        if self.governed {
            writeln!(
                f,
                "  governed: a flow's monitor gates the tool (once), through the tool gate"
            )?;
        }
        if !self.usage_callback {
            writeln!(
                f,
                "  no on_usage: no telemetry actor, the router counts the usage reports"
            )?;
        }
        if self.faults.is_empty() {
            return writeln!(f, "  faults: none");
        }
        writeln!(f, "  faults:")?;
        for fault in &self.faults {
            writeln!(f, "    - {fault}")?;
        }
        Ok(())
    }
}
