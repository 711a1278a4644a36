//! `Seed -> Plan`: draws a conversation and its faults from a seed.
//!
//! Most plans are short (a few turns of a few dozen frames) so that hundreds of seeds run
//! in a test; one in ten streams hundreds or thousands of text deltas at a steady pace,
//! which is where restarts under load go wrong, and a plan with a stalled subscriber ends
//! with an overload turn of 1,500 deltas. Faults land on ids that exist in the script. No
//! child is made to fail more than the restart limit allows (5), except by the one fault
//! kind meant to cross it (`TextPanicStorm`), so whether the session must survive is known
//! from the plan alone.

use std::collections::BTreeSet;

use reel_actors::Child;

use super::frames;
use reel_actors::conversation::{ContextDelivery, SteeringMode};

use super::plan::{Conversation, Fault, Pace, Plan, Seed, Step};
use super::rng::Rng;

/// The restart limit of the default `RestartPolicy`: more than this many failures of one
/// child within 10 s end the session.
pub const RESTART_LIMIT: usize = 5;

/// The plan of `seed`.
pub fn plan(seed: Seed) -> Plan {
    let mut rng = Rng::new(seed);
    let pace = Pace {
        tick_ms: rng.pick(&[1, 2, 5, 10, 20]),
        burst: rng.range(1, 9) as usize,
    };
    let resumption = rng.chance(70);
    let mut script = script(&mut rng, resumption);
    let mut faults = faults(&mut rng, &script);
    if faults.contains(&Fault::StalledSubscriber) {
        overload(&mut script);
    }
    // Drawn last, so that the script and the faults stay what they were for every seed.
    let disk_ms = rng.pick(&[0, 1, 5, 20, 80]);
    let conversation = conversation(&mut rng, &script, &faults);
    // Drawn after everything else, so every other draw stays what it was for every seed.
    let governed = rng.chance(30);
    // Drawn after that: one plan in four sets no `on_usage`, so its session runs without a
    // telemetry actor; the faults aimed at telemetry go (there is nothing to strike).
    let usage_callback = !rng.chance(25);
    if !usage_callback {
        faults.retain(|fault| !aims_at_telemetry(fault));
    }
    Plan {
        seed,
        pace,
        resumption,
        script,
        faults,
        disk_ms,
        conversation,
        governed,
        usage_callback,
    }
}

/// Whether `fault` strikes the telemetry actor (which a session without `on_usage` has not).
fn aims_at_telemetry(fault: &Fault) -> bool {
    matches!(
        fault,
        Fault::UsagePanic { .. }
            | Fault::Internal {
                child: Child::Telemetry,
                ..
            }
    )
}

/// Conversation control for two plans in five: the steering mode and delivery drawn, and
/// for half of them a failure of the turn pipeline at a boundary the script has (from the
/// second on), when the control lane's restart budget allows one more.
fn conversation(rng: &mut Rng, script: &[Step], faults: &[Fault]) -> Option<Conversation> {
    if !rng.chance(40) {
        return None;
    }
    let steering = rng.pick(&[
        SteeringMode::InstructionUpdate,
        SteeringMode::ContextInjection,
        SteeringMode::Hybrid,
    ]);
    let delivery = rng.pick(&[ContextDelivery::Immediate, ContextDelivery::Deferred]);
    let turns = Targets::of(script).turns;
    let control_failures = faults
        .iter()
        .filter(|f| {
            matches!(
                f,
                Fault::TurnCompletePanic { .. }
                    | Fault::ToolCallbackPanic { .. }
                    | Fault::ListenRestart { .. }
                    | Fault::Internal {
                        child: Child::ControlLane,
                        ..
                    }
            )
        })
        .count();
    // Boundaries 2 and 3 run in `open`, whose modifier can fail (the third moves on).
    let context_panic = (rng.chance(50) && turns >= 2 && control_failures < RESTART_LIMIT)
        .then(|| rng.range(2, u64::from(turns.min(3)) + 1) as u32);
    Some(Conversation {
        steering,
        delivery,
        context_panic,
    })
}

/// Counters that hand out the unique ids.
#[derive(Default)]
struct Ids {
    text: u32,
    audio: u32,
    usage: u32,
    call: u32,
    listen: u32,
    handle: u32,
}

fn script(rng: &mut Rng, resumption: bool) -> Vec<Step> {
    // Short, medium or long turns.
    let per_turn = match rng.range(0, 100) {
        0..=59 => (3, 30),
        60..=89 => (40, 160),
        _ => (300, 1000),
    };
    let turns = rng.range(1, 7);
    let mut ids = Ids::default();
    let mut script = Vec::new();
    for _ in 0..turns {
        let deltas = rng.range(per_turn.0, per_turn.1);
        let tool_at = rng.chance(45).then(|| rng.range(0, deltas));
        let interrupt_at = rng.chance(10).then(|| rng.range(0, deltas));
        for i in 0..deltas {
            script.push(Step::Text(ids.text));
            ids.text += 1;
            if rng.chance(20) {
                script.push(Step::Audio(ids.audio));
                ids.audio += 1;
            }
            if rng.chance(3) {
                script.push(Step::Usage(ids.usage));
                ids.usage += 1;
            }
            if tool_at == Some(i) {
                let mut calls: Vec<String> = (0..rng.range(1, 4))
                    .map(|_| {
                        ids.call += 1;
                        format!("c{}", ids.call - 1)
                    })
                    .collect();
                // A call that listens to the caller's audio while it runs.
                if rng.chance(30) {
                    calls.push(format!("l{}", ids.listen));
                    ids.listen += 1;
                }
                script.push(Step::ToolCall {
                    calls,
                    wait: rng.chance(70),
                });
            }
            if interrupt_at == Some(i) {
                script.push(Step::Interrupted);
            }
        }
        script.push(Step::TurnComplete);
        script.push(Step::Usage(ids.usage));
        ids.usage += 1;
        if resumption && rng.chance(80) {
            script.push(Step::Resumption(format!("h{}", ids.handle)));
            ids.handle += 1;
        }
        if rng.chance(15) {
            script.push(Step::GoAway);
        }
    }
    script
}

/// Deltas of the overload turn a plan with a stalled subscriber ends with: enough that an
/// unbounded subscriber queue shows (see `check::STALL_BOUND`).
pub const OVERLOAD_DELTAS: u32 = 1_500;

/// Appends a turn of [`OVERLOAD_DELTAS`] text deltas (ids after the script's), so that a
/// subscriber that never reads is overloaded. Faults aimed at earlier steps stay valid.
fn overload(script: &mut Vec<Step>) {
    let next = |f: fn(&Step) -> Option<u32>| script.iter().filter_map(f).max().map_or(0, |n| n + 1);
    let text = next(|s| match s {
        Step::Text(n) => Some(*n),
        _ => None,
    });
    let usage = next(|s| match s {
        Step::Usage(n) => Some(*n),
        _ => None,
    });
    script.extend((text..text + OVERLOAD_DELTAS).map(Step::Text));
    script.push(Step::TurnComplete);
    script.push(Step::Usage(usage));
}

/// What a plan's faults can aim at.
struct Targets {
    texts: Vec<u32>,
    usages: Vec<u32>,
    calls: Vec<String>,
    /// The input-streaming tool's calls.
    listens: Vec<String>,
    /// The first call id of each `toolCall`.
    call_frames: Vec<String>,
    turns: u32,
    steps: usize,
    audio: u64,
    resumptions: u64,
    go_aways: u64,
}

impl Targets {
    fn of(script: &[Step]) -> Targets {
        let mut targets = Targets {
            texts: Vec::new(),
            usages: Vec::new(),
            calls: Vec::new(),
            listens: Vec::new(),
            call_frames: Vec::new(),
            turns: 0,
            steps: script.len(),
            audio: 0,
            resumptions: 0,
            go_aways: 0,
        };
        for step in script {
            match step {
                Step::Text(n) => targets.texts.push(*n),
                Step::Usage(n) => targets.usages.push(*n),
                Step::ToolCall { calls, .. } => {
                    targets.call_frames.push(calls[0].clone());
                    // The faults of tools are the plain tool's.
                    let (listens, plain): (Vec<_>, Vec<_>) =
                        calls.iter().cloned().partition(|id| frames::is_listen(id));
                    targets.calls.extend(plain);
                    targets.listens.extend(listens);
                }
                Step::TurnComplete => targets.turns += 1,
                Step::Audio(_) => targets.audio += 1,
                Step::Resumption(_) => targets.resumptions += 1,
                Step::GoAway => targets.go_aways += 1,
                _ => {}
            }
        }
        targets
    }

    /// How many items `child`'s inbox takes at least, once the whole script is sent (so a
    /// `Fault::Internal` at or below it strikes): one per frame for the router and the
    /// recorder (which also gets the client's frames), and for each lane one per script
    /// event routed to it (it also gets phase changes, connects, reports and its end).
    fn items(&self, child: Child) -> u64 {
        let texts = self.texts.len() as u64;
        let usages = self.usages.len() as u64;
        let calls = self.call_frames.len() as u64;
        let turns = u64::from(self.turns);
        let n = match child {
            Child::Router | Child::Recorder => self.steps as u64,
            // Its messages: the start and each connection's `setupComplete` and end (a
            // goAway opens a new one), and the commands it sends (a tool response per
            // call; the caller's audio comes on top).
            Child::Transport => 2 + 3 * self.go_aways + self.calls.len() as u64,
            Child::FastLane => texts + self.audio,
            Child::ControlLane => usages + calls + turns + self.resumptions,
            Child::Telemetry => usages + calls + turns,
            // The application's own writes: a usage key per `on_usage`, a turn key per
            // `on_turn_complete` (the tool's and the session's writes come on top).
            Child::StateStore => usages + turns,
        };
        n.max(1)
    }
}

fn faults(rng: &mut Rng, script: &[Step]) -> Vec<Fault> {
    let targets = Targets::of(script);
    let wanted = if rng.chance(10) { 0 } else { rng.range(1, 5) };
    let mut faults = Vec::new();
    // Ids already aimed at (a call cannot both hang and panic) and failures per child.
    let mut taken = BTreeSet::new();
    let mut failures = std::collections::BTreeMap::<&str, usize>::new();
    let mut budget = |child: &'static str, n: usize| {
        let used = failures.entry(child).or_default();
        let ok = *used + n <= RESTART_LIMIT;
        if ok {
            *used += n;
        }
        ok
    };
    for _ in 0..wanted {
        let roll = rng.range(0, 100);
        let fault = match roll {
            // Fast lane: one panic, or four spread over the stream (the case).
            0..=21 => {
                let n = if rng.chance(35) { 4 } else { 1 };
                if !budget("fast_lane", n) {
                    continue;
                }
                for _ in 0..n {
                    let delta = rng.pick(&targets.texts);
                    if taken.insert(format!("t{delta}")) {
                        faults.push(Fault::TextPanic { delta });
                    }
                }
                continue;
            }
            22..=29 if !targets.usages.is_empty() && budget("telemetry", 1) => Fault::UsagePanic {
                usage: rng.pick(&targets.usages),
            },
            30..=37 if budget("control_lane", 1) => Fault::TurnCompletePanic {
                turn: rng.range(1, u64::from(targets.turns) + 1) as u32,
            },
            38..=42 if !targets.call_frames.is_empty() && budget("control_lane", 1) => {
                let call = targets.call_frames
                    [rng.range(0, targets.call_frames.len() as u64) as usize]
                    .clone();
                Fault::ToolCallbackPanic { call }
            }
            43..=55 if !targets.calls.is_empty() => {
                let call = targets.calls[rng.range(0, targets.calls.len() as u64) as usize].clone();
                match rng.range(0, 3) {
                    0 => Fault::ToolPanic { call },
                    1 => Fault::SlowTool {
                        call,
                        ms: rng.range(100, 2_500),
                    },
                    _ => Fault::HangingTool { call },
                }
            }
            56..=61 if budget("state_store", 1) => Fault::ModifyPanic {
                turn: rng.range(1, u64::from(targets.turns) + 1) as u32,
            },
            62..=66 => Fault::SlowCallback {
                turn: rng.range(1, u64::from(targets.turns) + 1) as u32,
                ms: rng.range(100, 2_000),
            },
            67..=68 => Fault::HangingCallback {
                turn: rng.range(1, u64::from(targets.turns) + 1) as u32,
            },
            69..=72 => Fault::StalledSubscriber,
            73..=76 => Fault::FailingWireLog {
                from: rng.range(2, 60),
                count: rng.range(1, 20),
            },
            77..=80 => Fault::FailingJournal {
                after: rng.range(0, 10),
            },
            81..=84 if budget("recorder", 1) => Fault::RecorderPanic {
                seq: rng.range(2, 60),
            },
            85..=92 => Fault::LinkDrop {
                before_step: rng.range(1, targets.steps as u64) as usize,
            },
            93..=94 => Fault::GoAwayStorm {
                before_step: rng.range(0, targets.steps as u64) as usize,
                count: 100,
            },
            // Meant to cross the limit: not counted against it when it does on its own. A
            // storm too short to (the script has few texts after it) counts against it like
            // any other fast-lane failure, so that the plan alone still says whether the
            // session must survive.
            95..=96 => {
                let from = rng.pick(&targets.texts);
                let storm = targets.texts.iter().filter(|t| **t >= from).count();
                if storm <= RESTART_LIMIT && !budget("fast_lane", storm) {
                    continue;
                }
                Fault::TextPanicStorm { from }
            }
            97..=99 => {
                let child = rng.pick(&INTERNAL);
                if !budget(child.as_str(), 1) {
                    continue;
                }
                Fault::Internal {
                    child,
                    at: rng.range(1, targets.items(child) + 1),
                }
            }
            _ => continue,
        };
        let target = match &fault {
            Fault::ToolCallbackPanic { call } => format!("cb:{call}"),
            Fault::ToolPanic { call }
            | Fault::SlowTool { call, .. }
            | Fault::HangingTool { call } => {
                format!("tool:{call}")
            }
            Fault::TurnCompletePanic { turn }
            | Fault::ModifyPanic { turn }
            | Fault::SlowCallback { turn, .. }
            | Fault::HangingCallback { turn } => format!("turn:{turn}"),
            Fault::UsagePanic { usage } => format!("u{usage}"),
            Fault::LinkDrop { before_step } => format!("drop:{before_step}"),
            Fault::Internal { child, at } => format!("internal:{child}:{at}"),
            other => other.kind().to_owned(),
        };
        if taken.insert(target) {
            faults.push(fault);
        }
    }
    // The control lane fails while the caller's audio flows to a listening call.
    for call in &targets.listens {
        if rng.chance(60) && budget("control_lane", 1) {
            faults.push(Fault::ListenRestart {
                call: call.clone(),
                after: rng.range(1, 5),
            });
        }
    }
    // Faults inside the tree, through the fault hook: in half the plans, one or two more,
    // so that each child gets a fair number over a few hundred seeds.
    if rng.chance(50) {
        for _ in 0..rng.range(1, 3) {
            let child = rng.pick(&INTERNAL);
            let at = rng.range(1, targets.items(child) + 1);
            if budget(child.as_str(), 1) && taken.insert(format!("internal:{child}:{at}")) {
                faults.push(Fault::Internal { child, at });
            }
        }
    }
    // Issue 26's shapes, drawn last so that the faults above stay what they were for every
    // seed: `on_turn_complete` slower than the callback timeout (cut off, reported), and a
    // blocking watcher whose action hangs.
    let turns = u64::from(targets.turns) + 1;
    if rng.chance(6) {
        let turn = rng.range(1, turns) as u32;
        let timeout = reel_actors::session::DEFAULT_CALLBACK_TIMEOUT.as_millis() as u64;
        let ms = rng.range(timeout + 500, timeout + 5_000);
        if taken.insert(format!("turn:{turn}")) {
            faults.push(Fault::SlowCallback { turn, ms });
        }
    }
    if rng.chance(6) {
        let turn = rng.range(1, turns) as u32;
        if taken.insert(format!("watch:{turn}")) {
            faults.push(Fault::HangingWatcher { turn });
        }
    }
    faults
}

/// The children a `Fault::Internal` aims at.
const INTERNAL: [Child; 7] = [
    Child::Router,
    Child::FastLane,
    Child::ControlLane,
    Child::Telemetry,
    Child::StateStore,
    Child::Recorder,
    Child::Transport,
];

#[cfg(test)]
mod tests {
    use super::plan;

    #[test]
    fn a_seed_names_one_plan() {
        assert_eq!(plan(42), plan(42));
        assert_ne!(plan(42), plan(43));
    }
}
