//! The simulator's [`FaultHook`]: fails children where no application code runs.
//!
//! Most children can be failed from the outside through code the application hands them:
//! the fast lane (`on_text`), the control lane (`on_turn_complete`, `on_tool_call`),
//! telemetry (`on_usage`), the state store (a panicking `modify` closure) and the recorder
//! (a panicking `WireRecorder`). The rest cannot: the router runs no application code;
//! telemetry runs none on turns, tool calls and interruptions; the store runs none on a
//! plain `set`; the control lane runs none on a resumption update or a tool's result.
//! `Fault::Internal { child, at }` fails `child` on the `at`-th item its inbox hands it,
//! through the tree's hook (`reel_actors::fault`), called by every inbox on each take
//! after the item is marked in flight: the child fails on exactly that item.
//!
//! The hook writes down, as it strikes, how far the application's callbacks had got
//! (`Struck`): a lane handles its items one at a time, in order, so the item it failed on
//! is the first event of its kind after those — what the checks need to name the one
//! event a lane failure may lose. The transport has a mailbox, not an inbox: it calls the
//! hook before each message it handles (opening the connection, a command to send,
//! `setupComplete`, a connection's end, a reconnect), and its failure ends the session.
//!
//! `Fault::ListenRestart` is aimed at a moment rather than an item number: the
//! input-streaming tool arms the hook when its call hears its first chunk, and the
//! control lane fails a few items later, while the caller's audio flows to the call.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Mutex;

use reel_actors::Child;
use reel_actors::fault::FaultHook;

use super::app::{Shared, with};
use super::plan::{Fault, Plan};

/// One fault the hook injected, and what the callbacks had seen before it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Struck {
    /// The child failed.
    pub child: Child,
    /// The inbox item it failed on.
    pub at: u64,
    /// `on_text` calls made before (the failed item, if a text delta, is the next one sent).
    pub text_seen: usize,
    /// `on_audio` calls made before.
    pub audio_seen: usize,
    /// `on_usage` calls made before.
    pub usage_seen: usize,
}

/// The hook of one run: the plan's `Internal` and `ListenRestart` faults.
pub struct SimHook {
    planned: BTreeSet<(Child, u64)>,
    /// `ListenRestart`: the calls whose first chunk arms the hook, and after how many
    /// control-lane items it then strikes.
    listens: Mutex<BTreeMap<String, u64>>,
    /// Armed: the control lane fails when this count of its items runs out.
    armed: Mutex<Option<u64>>,
    observed: Shared,
}

impl SimHook {
    /// The hook `plan` asks for, writing what it does into `observed`.
    pub fn new(plan: &Plan, observed: Shared) -> Self {
        let planned = Child::ALL
            .into_iter()
            .flat_map(|child| plan.internal(child).map(move |at| (child, at)))
            .collect();
        let listens = plan
            .faults
            .iter()
            .filter_map(|fault| match fault {
                Fault::ListenRestart { call, after } => Some((call.clone(), *after)),
                _ => None,
            })
            .collect();
        SimHook {
            planned,
            listens: Mutex::new(listens),
            armed: Mutex::new(None),
            observed,
        }
    }

    /// Whether the plan has any fault for the hook.
    pub fn is_needed(&self) -> bool {
        !self.planned.is_empty() || !lock(&self.listens).is_empty()
    }

    /// The call `call` heard its first chunk: arms the hook if the plan says so (once).
    pub fn heard_first(&self, call: &str) {
        if let Some(after) = lock(&self.listens).remove(call) {
            *lock(&self.armed) = Some(after);
        }
    }

    /// Whether an armed countdown runs out on this control-lane item.
    fn armed_strikes(&self, child: Child) -> bool {
        if child != Child::ControlLane {
            return false;
        }
        let mut armed = lock(&self.armed);
        match armed.as_mut() {
            Some(1) => {
                *armed = None;
                true
            }
            Some(left) => {
                *left -= 1;
                false
            }
            None => false,
        }
    }
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|p| p.into_inner())
}

impl FaultHook for SimHook {
    fn before(&self, child: Child, input: u64) {
        if !self.planned.contains(&(child, input)) && !self.armed_strikes(child) {
            return;
        }
        with(&self.observed, |o| {
            let struck = Struck {
                child,
                at: input,
                text_seen: o.text.len(),
                audio_seen: o.audio.len(),
                usage_seen: o.usage.len(),
            };
            o.struck.push(struck);
            if child == Child::FastLane {
                o.fast_failed_at.push(tokio::time::Instant::now());
            }
        });
        panic!("sim fault: the {child} fails on its inbox item {input}");
    }
}
