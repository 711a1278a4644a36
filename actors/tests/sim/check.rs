//! The invariants, checked on what a run saw; every violation comes back as data.
//!
//! What the faults imply is derived from the plan: a `TextPanicStorm` crosses the restart
//! limit, so the session must end, failed, naming the fast lane; every other plan keeps
//! the session up until the client disconnects. A run that hangs is reported as such, and
//! the checks that need a finished run (everything the control lane does, the journal,
//! the wire log) are skipped for it: the hang is the finding.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use reel_actors::conversation::{ContextDelivery, SteeringMode};
use reel_actors::{Child, EventEnvelope, Lane, LiveEvent};
use reel_protocol::{SessionError, SessionEvent};
use serde_json::Value;

use super::app::Heard;
use super::generate::RESTART_LIMIT;
use super::hook::Struck;
use super::plan::{Fault, Plan, Step};
use super::run::{Outcome, StalledRead};
use super::violation::{Violation, ranges};

/// How many events a never-read `EventStream` may hold (the "bounded buffers":
/// a lagging subscriber gets `Lagged(n)` instead of unbounded growth): the stream's
/// declared capacity.
pub const STALL_BOUND: usize = reel_actors::events::SUBSCRIBER_CAPACITY;

/// Every violation of `outcome`, a run of `plan`; `baseline` is the run of the same plan
/// without faults (its own violations are reported too, marked).
pub fn check(plan: &Plan, outcome: &Outcome, baseline: Option<&Outcome>) -> Vec<Violation> {
    let mut found = Checker::new(plan, outcome).all();
    if let Some(baseline) = baseline {
        let clean = plan.without_faults();
        found.extend(
            Checker::new(&clean, baseline)
                .all()
                .into_iter()
                .map(|v| Violation::InBaseline(Box::new(v))),
        );
        let checker = Checker::new(plan, outcome);
        if checker.control_complete()
            && outcome.end.is_some()
            && baseline.hang.is_none()
            && baseline.end.is_some()
        {
            found.extend(checker.journal(baseline));
        }
    }
    found
}

struct Checker<'a> {
    plan: &'a Plan,
    outcome: &'a Outcome,
    /// The script steps the model sent.
    sent: Vec<&'a Step>,
    /// The session must end on its own, failed (the plan crosses the restart limit, or
    /// the router failed).
    must_fail: bool,
    /// The children whose failure may have ended it (`fast_lane`, `router`).
    fatal: Vec<&'static str>,
    /// What the fault hook injected.
    struck: &'a [Struck],
}

/// Whether the fast lane's failures at `times` cross the session's restart limit
/// (`RestartPolicy::default()`: more than `max_restarts` within `within`): `Some(true)` if
/// some `max_restarts + 1` of them fall well inside one window, `Some(false)` if every such
/// run spans well beyond it, `None` between (the supervisor counts a failure when it hears
/// of it and restarts after a backoff, so the edge is not the application's to judge).
fn crosses_the_limit(times: &[tokio::time::Instant]) -> Option<bool> {
    let policy = reel_actors::RestartPolicy::default();
    let margin = policy.max_backoff * 2;
    let mut times = times.to_vec();
    times.sort();
    let over = policy.max_restarts as usize;
    let spans: Vec<std::time::Duration> = times
        .windows(over + 1)
        .map(|run| run[over] - run[0])
        .collect();
    if spans.iter().any(|span| *span + margin <= policy.within) {
        Some(true)
    } else if spans.iter().all(|span| *span >= policy.within + margin) {
        Some(false)
    } else {
        None
    }
}

impl<'a> Checker<'a> {
    fn new(plan: &'a Plan, outcome: &'a Outcome) -> Self {
        let sent = outcome
            .model
            .sent
            .iter()
            .map(|i| &plan.script[*i])
            .collect();
        let storm = plan.faults.iter().any(|f| match f {
            Fault::TextPanicStorm { from } => {
                plan.script
                    .iter()
                    .filter(|s| matches!(s, Step::Text(n) if n >= from))
                    .count()
                    > RESTART_LIMIT
            }
            _ => false,
        });
        let must_fail = storm
            && match crosses_the_limit(&outcome.observed.fast_failed_at) {
                Some(crossed) => crossed,
                // Too close to the window's edge to say: what the supervisor decided.
                None => outcome
                    .end
                    .as_ref()
                    .is_some_and(|end| end.failed && end.reason.contains(Child::FastLane.as_str())),
            };
        let struck = &outcome.observed.struck[..];
        let mut fatal = Vec::new();
        if must_fail {
            fatal.push(Child::FastLane.as_str());
        }
        // The router and the transport are not restarted: their failure ends the session.
        for child in [Child::Router, Child::Transport] {
            if struck.iter().any(|s| s.child == child) {
                fatal.push(child.as_str());
            }
        }
        Checker {
            plan,
            outcome,
            sent,
            must_fail: !fatal.is_empty(),
            fatal,
            struck,
        }
    }

    /// How many times the fault hook failed `child`.
    fn struck(&self, child: Child) -> usize {
        self.struck.iter().filter(|s| s.child == child).count()
    }

    /// For each fault-hook failure of `child`, the event of the kind `id` picks that the
    /// child was about to be handed, if the item it failed on was one: the first sent
    /// after the `seen(struck)` that its callback had been handed (a lane takes its items
    /// one at a time, in order). Failures in a row, with nothing handed between them, may
    /// each have lost one: the second the one after the first's, and so on.
    fn next_after(
        &self,
        child: Child,
        sent: &[u64],
        got: &[u64],
        seen: impl Fn(&Struck) -> usize,
    ) -> BTreeSet<u64> {
        let mut in_a_row = BTreeMap::<usize, usize>::new();
        self.struck
            .iter()
            .filter(|s| s.child == child)
            .filter_map(|s| {
                let seen = seen(s);
                let before = in_a_row.entry(seen).or_default();
                let skip = *before;
                *before += 1;
                let next = match seen {
                    0 => 0,
                    n => {
                        let last = got.get(n - 1)?;
                        sent.iter().position(|id| id == last)? + 1
                    }
                };
                sent.get(next + skip).copied()
            })
            .collect()
    }

    /// `CallbackPanicked` reports the application's own panics explain, by (lane, kind).
    fn callback_reports(&self) -> BTreeMap<(String, String), usize> {
        let o = &self.outcome.observed;
        let mut expected = BTreeMap::<(String, String), usize>::new();
        let mut expect = |lane: &str, event: &str, n: usize| {
            if n > 0 {
                *expected
                    .entry((lane.to_owned(), event.to_owned()))
                    .or_default() += n;
            }
        };
        expect("fast_lane", "text", o.text_panicked.len());
        expect("telemetry", "usage", o.usage_panicked.len());
        expect("control_lane", "turn_complete", o.turn_panicked.len());
        expect("control_lane", "turn_complete", o.context_panicked.len());
        expect("control_lane", "connected", o.entry_context_panicked.len());
        expect("control_lane", "tool_call", o.tool_callback_panicked.len());
        expected
    }

    /// `CallbackPanicked` reports published, by (lane, kind).
    fn published_reports(&self) -> BTreeMap<(String, String), usize> {
        let mut reported = BTreeMap::<(String, String), usize>::new();
        for event in self.published(Lane::Control) {
            if let SessionEvent::Error(SessionError::CallbackPanicked { lane, event, .. }) = event {
                *reported
                    .entry((lane_name(lane), (*event).to_owned()))
                    .or_default() += 1;
            }
        }
        reported
    }

    /// Reports of `lane` and `kind` beyond what the application's panics explain: the
    /// fault hook's failures of the lane on an item of that kind.
    fn hook_reports(&self, lane: Child, kind: &str) -> usize {
        let key = (lane.as_str().to_owned(), kind.to_owned());
        let got = self.published_reports().get(&key).copied().unwrap_or(0);
        let explained = self.callback_reports().get(&key).copied().unwrap_or(0);
        got.saturating_sub(explained)
    }

    /// The `toolCall`s sent (by their first id) that never reached `on_tool_call`, but
    /// those a governed plan's gate refused whole (the callback is handed only the calls
    /// the flow admits; a refused call is answered with its refusal).
    fn tool_calls_not_handled(&self) -> Vec<&'a Vec<String>> {
        let observed = &self.outcome.observed;
        let handled: BTreeSet<&String> = observed.tool_callback.iter().collect();
        self.sent
            .iter()
            .filter_map(|s| match s {
                Step::ToolCall { calls, .. }
                    if !calls.iter().any(|id| handled.contains(id))
                        && !calls.iter().all(|id| observed.refused.contains(id)) =>
                {
                    Some(calls)
                }
                _ => None,
            })
            .collect()
    }

    /// Every event the model sent must have reached the fast lane and telemetry.
    fn fast_complete(&self) -> bool {
        !self.must_fail && self.outcome.model.finished
    }

    /// … and the control lane, and the run finished.
    fn control_complete(&self) -> bool {
        self.fast_complete() && self.outcome.hang.is_none()
    }

    fn all(&self) -> Vec<Violation> {
        let o = self.outcome;
        let mut found = Vec::new();
        if let Some(error) = &o.start_error {
            // The router or the transport failed before the session was live (on the
            // start, the setup's answer): the session ends, failed, before `connect`
            // returns, which says so. Nothing else can be checked.
            let fatal = [Child::Router, Child::Transport].into_iter().any(|child| {
                self.fatal.contains(&child.as_str())
                    && error.contains(&format!("the {child} failed"))
            });
            if !fatal {
                found.push(Violation::StartFailed {
                    error: error.clone(),
                });
            }
            found.extend(self.id_reclaimed());
            return found;
        }
        if let Some(hang) = &o.hang {
            found.push(Violation::Hang {
                stage: hang.stage,
                waited: hang.waited,
            });
        }
        found.extend(self.session_end());
        found.extend(self.context_frames());
        let texts = self.sent_ids(|s| match s {
            Step::Text(n) => Some(u64::from(*n)),
            _ => None,
        });
        let audio = self.sent_ids(|s| match s {
            Step::Audio(n) => Some(u64::from(*n)),
            _ => None,
        });
        let usage = self.sent_ids(|s| match s {
            Step::Usage(n) => Some(u64::from(*n)),
            _ => None,
        });
        let fast = self.fast_complete();
        // A lane the fault hook failed on an event lost that one event: each is named (the
        // next after what its callback had seen), and must be reported (see `reports`).
        let (text_got, audio_got, usage_got) = (
            widen(&o.observed.text),
            widen(&o.observed.audio),
            widen(&o.observed.usage),
        );
        let mut hook_lost = BTreeMap::<(String, String), usize>::new();
        let mut lose = |lane: Child, kind: &str, lost: Vec<u64>| {
            hook_lost.insert((lane.as_str().to_owned(), kind.to_owned()), lost.len());
        };
        let excused = self.next_after(Child::FastLane, &texts, &text_got, |s| s.text_seen);
        let (violations, lost) = ledger_excusing(
            "on_text (fast lane)",
            "t",
            &texts,
            &text_got,
            fast,
            Excuse::Ids(excused),
        );
        found.extend(violations);
        lose(Child::FastLane, "text", lost);
        let excused = self.next_after(Child::FastLane, &audio, &audio_got, |s| s.audio_seen);
        let (violations, lost) = ledger_excusing(
            "on_audio (fast lane)",
            "a",
            &audio,
            &audio_got,
            fast,
            Excuse::Ids(excused),
        );
        found.extend(violations);
        lose(Child::FastLane, "audio", lost);
        if self.plan.usage_callback {
            let excused = self.next_after(Child::Telemetry, &usage, &usage_got, |s| s.usage_seen);
            let (violations, lost) = ledger_excusing(
                "on_usage (telemetry)",
                "u",
                &usage,
                &usage_got,
                fast,
                Excuse::Ids(excused),
            );
            found.extend(violations);
            lose(Child::Telemetry, "usage", lost);
        } else if fast && o.end.is_some() {
            found.extend(self.router_counted());
        }
        let control = self.control_complete();
        let control_usage: Vec<u64> = self
            .published(Lane::Control)
            .filter_map(|e| match e {
                SessionEvent::Usage(u) => u.total_token_count.and_then(|n| u64::try_from(n).ok()),
                _ => None,
            })
            .collect();
        // The control lane publishes an event as it handles it: one it failed on is not
        // published; which usage report that was, the checks cannot name. Its report goes
        // through the router and the control lane's successor; in a run that did not
        // complete (a fatal failure ended it), that report may still have been on its way
        // when the tree stopped (seed 97608: the transport failed right after the lane's
        // restart), so there each of the lane's fault-hook failures excuses one loss (each
        // is announced by its `Restarted`).
        let reported = self.hook_reports(Child::ControlLane, "usage");
        let excused = if control {
            reported
        } else {
            reported.max(self.struck(Child::ControlLane))
        };
        let (violations, lost) = ledger_excusing(
            "usage events (control lane)",
            "u",
            &usage,
            &control_usage,
            control,
            Excuse::Count(excused),
        );
        found.extend(violations);
        lose(Child::ControlLane, "usage", lost);
        found.extend(self.tool_calls(control));
        found.extend(self.governed());
        found.extend(self.tool_input());
        if control {
            found.extend(self.turn_completes());
            found.extend(self.tool_callbacks());
            found.extend(self.reports(&hook_lost));
            found.extend(self.restarts());
        }
        found.extend(self.resume_handles());
        if o.end.is_some() && o.hang.is_none() {
            found.extend(self.wire_log());
            found.extend(self.journal_file());
        }
        if let Some(backlog) = o.stalled_backlog
            && backlog > STALL_BOUND
        {
            found.push(Violation::UnboundedBuffer {
                what: "a never-read EventStream",
                buffered: backlog,
                bound: STALL_BOUND,
            });
        }
        found.extend(self.stream_read_after_the_end());
        found.extend(self.id_reclaimed());
        if control {
            found.extend(self.timeouts());
        }
        found
    }

    /// A stream read only after the end accounts for every event published — held, or
    /// counted by a `Lagged` notice — and ends with `SessionEnded`.
    fn stream_read_after_the_end(&self) -> Option<Violation> {
        let o = self.outcome;
        let read = o.stalled_read?;
        if o.end.is_none() || o.hang.is_some() {
            return None;
        }
        let published = StalledRead::published(&o.events);
        (read.held + read.lagged != published || !read.ended).then_some(Violation::StreamCutShort {
            held: read.held,
            lagged: read.lagged,
            published,
            ended: read.ended,
        })
    }

    /// The session's id could be claimed again the moment its end was announced.
    fn id_reclaimed(&self) -> Option<Violation> {
        match &self.outcome.id_reclaimed {
            Some(Err(error)) => Some(Violation::IdStillClaimed {
                error: error.clone(),
            }),
            _ => None,
        }
    }

    /// Each `on_turn_complete` call that ran past the callback timeout (hanging, or slower
    /// than it) is reported once as a `CallbackTimeout`; each hanging watcher whose key was
    /// written before a later turn's watcher step is reported once, and no more than were
    /// planned.
    fn timeouts(&self) -> Vec<Violation> {
        let o = self.outcome;
        let timeout_ms = reel_actors::session::DEFAULT_CALLBACK_TIMEOUT.as_millis() as u64;
        let reported = |name: &str| {
            self.published(Lane::Control)
                .filter(|e| {
                    matches!(e, SessionEvent::Error(SessionError::CallbackTimeout { callback, .. }) if *callback == name)
                })
                .count()
        };
        let mut found = Vec::new();
        let turn_timeouts = self
            .plan
            .faults
            .iter()
            .filter(|f| match f {
                Fault::HangingCallback { turn } => *turn <= o.observed.turns,
                Fault::SlowCallback { turn, ms } => *ms >= timeout_ms && *turn <= o.observed.turns,
                _ => false,
            })
            .count();
        let got = reported("on_turn_complete");
        if got != turn_timeouts {
            found.push(Violation::TimeoutNotReported {
                callback: "on_turn_complete",
                expected: turn_timeouts,
                reported: got,
            });
        }
        let written: BTreeSet<&str> = o.journal.iter().map(|m| m.key.as_str()).collect();
        let (mut due, mut planned) = (0, 0);
        for fault in &self.plan.faults {
            if let Fault::HangingWatcher { turn } = fault {
                planned += 1;
                if written.contains(format!("app:turn:{turn}").as_str()) && o.observed.turns > *turn
                {
                    due += 1;
                }
            }
        }
        let got = reported("watch action");
        if got < due || got > planned {
            found.push(Violation::TimeoutNotReported {
                callback: "watch action",
                expected: due,
                reported: got,
            });
        }
        found
    }

    fn sent_ids(&self, id: impl Fn(&Step) -> Option<u64>) -> Vec<u64> {
        self.sent.iter().filter_map(|s| id(s)).collect()
    }

    fn published(&self, lane: Lane) -> impl Iterator<Item = &SessionEvent> {
        self.outcome.events.iter().filter_map(move |e| match e {
            EventEnvelope {
                lane: l,
                event: LiveEvent::Session(event),
                ..
            } if *l == lane => Some(event),
            _ => None,
        })
    }

    fn session_end(&self) -> Option<Violation> {
        let o = self.outcome;
        if o.hang.is_some() {
            return None;
        }
        let actual = match &o.end {
            None => "no end".to_owned(),
            Some(end) => format!("{} (failed: {})", end.reason, end.failed),
        };
        // The application is told: its stream's last event is the end, with the reason.
        let told = |reason: &str| {
            o.events.iter().rev().find_map(|e| match &e.event {
                LiveEvent::SessionEnded { reason } => Some(reason.as_str()),
                _ => None,
            }) == Some(reason)
        };
        let ok = match &o.end {
            None => false,
            Some(end) if self.must_fail => {
                end.failed
                    && self.fatal.iter().any(|child| end.reason.contains(child))
                    && told(&end.reason)
            }
            Some(end) => !end.failed,
        };
        let expected = if self.must_fail {
            format!(
                "a failed end naming the {}, published as SessionEnded (past the restart \
                 limit, or the router or the transport failed)",
                self.fatal.join(" or the ")
            )
        } else {
            "a clean end when the client disconnects".to_owned()
        };
        (!ok).then_some(Violation::SessionEnd { expected, actual })
    }

    /// Each call of the input-streaming tool heard the caller's chunks in order, each
    /// once, none sent before the model made the call, and none skipped without a `Missed`
    /// notice saying how many — across every restart of the control lane.
    fn tool_input(&self) -> Vec<Violation> {
        let o = self.outcome;
        let mut found = Vec::new();
        for (call, heard) in &o.observed.listen {
            let mut fail = |what: String| {
                found.push(Violation::ToolInput {
                    call: call.clone(),
                    what,
                })
            };
            // The last chunk the caller sent before the model sent the call.
            let before_call = o
                .model
                .listen_sent
                .iter()
                .find(|(id, _)| id == call)
                .and_then(|(_, sent)| {
                    o.observed
                        .caller
                        .iter()
                        .filter(|(at, _)| at < sent)
                        .map(|(_, chunk)| *chunk)
                        .max()
                });
            let (mut previous, mut missed) = (None::<u32>, 0u64);
            for heard in heard {
                let chunk = match heard {
                    Heard::Missed(count) => {
                        missed += count;
                        continue;
                    }
                    Heard::Chunk(chunk) => *chunk,
                };
                if let Some(before) = before_call
                    && chunk <= before
                {
                    fail(format!(
                        "heard chunk {chunk}, sent before the call (the model called after chunk {before})"
                    ));
                }
                if let Some(previous) = previous {
                    let expected = u64::from(previous) + 1 + missed;
                    if chunk <= previous {
                        fail(format!("heard chunk {chunk} after chunk {previous}"));
                    } else if u64::from(chunk) != expected {
                        fail(format!(
                            "heard chunk {chunk} after chunk {previous}: {} lost without notice (missed {missed})",
                            u64::from(chunk) - expected
                        ));
                    }
                }
                previous = Some(chunk);
                missed = 0;
            }
        }
        found
    }

    /// A governed plan's tool gate held through every fault: no call it refused ran, and
    /// the `once` tool ran to completion at most once — a call whose result a failed
    /// control lane lost keeps the `once` spent, since the tool may have done its work.
    fn governed(&self) -> Vec<Violation> {
        if !self.plan.governed {
            return Vec::new();
        }
        let o = &self.outcome.observed;
        let mut found: Vec<Violation> = o
            .refused
            .iter()
            .filter(|id| o.tool_runs.contains(id))
            .map(|id| Violation::RefusedCallRan { id: id.clone() })
            .collect();
        if o.tool_ok.len() > 1 {
            found.push(Violation::OnceRanTwice {
                calls: o.tool_ok.clone(),
            });
        }
        found
    }

    /// Every call id sent answered exactly once, nothing else answered.
    fn tool_calls(&self, complete: bool) -> Vec<Violation> {
        let mut found = Vec::new();
        let sent: Vec<&String> = self
            .sent
            .iter()
            .flat_map(|s| match s {
                Step::ToolCall { calls, .. } => calls.iter().collect(),
                _ => Vec::new(),
            })
            .collect();
        let mut answers = BTreeMap::<&String, usize>::new();
        for id in &self.outcome.model.tool_responses {
            *answers.entry(id).or_default() += 1;
        }
        for id in &sent {
            match answers.get(id).copied().unwrap_or(0) {
                0 if complete => found.push(Violation::ToolCallUnanswered { id: (*id).clone() }),
                0 | 1 => {}
                times => found.push(Violation::ToolCallAnsweredTwice {
                    id: (*id).clone(),
                    times,
                }),
            }
        }
        for id in answers.keys() {
            if !sent.contains(id) {
                found.push(Violation::UnknownToolResponse { id: (*id).clone() });
            }
        }
        found
    }

    /// The control lane publishes each turn complete once its pipeline ran: every one sent,
    /// but those whose `on_turn_complete` failed.
    fn turn_completes(&self) -> Vec<Violation> {
        let sent = self
            .sent
            .iter()
            .filter(|s| matches!(s, Step::TurnComplete))
            .count();
        let failed = self.outcome.observed.turn_panicked.len()
            + self.outcome.observed.context_panicked.len();
        let published = self
            .published(Lane::Control)
            .filter(|e| matches!(e, SessionEvent::TurnComplete { .. }))
            .count();
        let hooked = self.hook_reports(Child::ControlLane, "turn_complete");
        let expected = sent - (failed + hooked).min(sent);
        let handler = "turn_complete (control lane)";
        let detail = format!(
            "{sent} sent, {failed} failed in on_turn_complete, {hooked} in the control lane \
             (fault hook), {published} published (turn completes carry no id)"
        );
        match published.cmp(&expected) {
            std::cmp::Ordering::Less => vec![Violation::Lost {
                handler,
                count: expected - published,
                ids: detail,
            }],
            std::cmp::Ordering::Greater => vec![Violation::Duplicated {
                handler,
                count: published - expected,
                ids: detail,
            }],
            std::cmp::Ordering::Equal => Vec::new(),
        }
    }

    /// `on_tool_call` got every `toolCall` sent, but those the control lane failed on
    /// (fault hook), which are reported (and answered with errors: see `tool_calls`).
    fn tool_callbacks(&self) -> Vec<Violation> {
        let missed = self.tool_calls_not_handled();
        let hooked = self.hook_reports(Child::ControlLane, "tool_call");
        if missed.len() == hooked {
            return Vec::new();
        }
        vec![Violation::Lost {
            handler: "on_tool_call (control lane)",
            count: missed.len(),
            ids: format!(
                "{} ({hooked} reported failed in the control lane)",
                missed
                    .iter()
                    .map(|calls| calls[0].as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        }]
    }

    /// Each failed event reported once as `CallbackPanicked`, by lane and event kind: the
    /// application's panics, and one report for each item the fault hook failed a lane on
    /// (whose event, if the application sees that kind, is the one lost: `hook_lost`).
    /// A control lane failed on an error event loses that report (it was the event).
    fn reports(&self, hook_lost: &BTreeMap<(String, String), usize>) -> Vec<Violation> {
        let expected = self.callback_reports();
        let reported = self.published_reports();
        let keys: BTreeSet<_> = expected
            .keys()
            .chain(reported.keys())
            .chain(hook_lost.keys())
            .cloned()
            .collect();
        let mut found = Vec::new();
        let mut surplus = BTreeMap::<String, usize>::new();
        let mut missing = Vec::new();
        for key in keys {
            let failed = expected.get(&key).copied().unwrap_or(0);
            let got = reported.get(&key).copied().unwrap_or(0);
            let lost = hook_lost.get(&key).copied().unwrap_or(0);
            if got < failed {
                missing.push((key, failed, got));
                continue;
            }
            *surplus.entry(key.0.clone()).or_default() += got - failed;
            if hook_lost.contains_key(&key) && got - failed != lost {
                found.push(Violation::FailureNotReported {
                    lane: key.0.clone(),
                    event: key.1.clone(),
                    failed: failed + lost,
                    reported: got,
                });
            }
        }
        let mut unreported = 0;
        for lane in [Child::FastLane, Child::ControlLane, Child::Telemetry] {
            let struck = self.struck(lane);
            let extra = surplus.get(lane.as_str()).copied().unwrap_or(0);
            if extra > struck {
                found.push(Violation::FailureNotReported {
                    lane: lane.as_str().to_owned(),
                    event: "any (more reports than failures)".to_owned(),
                    failed: struck,
                    reported: extra,
                });
            }
            unreported += struck.saturating_sub(extra);
        }
        let swallowed = self.hook_reports(Child::ControlLane, "error");
        let short: usize = missing.iter().map(|(_, failed, got)| failed - got).sum();
        if short + unreported > swallowed {
            for (key, failed, got) in missing {
                found.push(Violation::FailureNotReported {
                    lane: key.0,
                    event: key.1,
                    failed,
                    reported: got,
                });
            }
            if unreported > 0 {
                found.push(Violation::FailureNotReported {
                    lane: "fault hook".to_owned(),
                    event: "any".to_owned(),
                    failed: self.struck.len(),
                    reported: self.struck.len() - unreported,
                });
            }
        }
        found
    }

    /// Each child restarted once per failure.
    fn restarts(&self) -> Vec<Violation> {
        let o = self.outcome;
        let failed = [
            (
                "fast_lane",
                o.observed.text_panicked.len() + self.struck(Child::FastLane),
            ),
            (
                "control_lane",
                o.observed.turn_panicked.len()
                    + o.observed.tool_callback_panicked.len()
                    + o.observed.context_panicked.len()
                    + o.observed.entry_context_panicked.len()
                    + self.struck(Child::ControlLane),
            ),
            (
                "telemetry",
                o.observed.usage_panicked.len() + self.struck(Child::Telemetry),
            ),
            (
                "state_store",
                o.observed.modify_panicked.len() + self.struck(Child::StateStore),
            ),
            (
                "recorder",
                usize::from(o.recorder_panicked) + self.struck(Child::Recorder),
            ),
        ];
        let mut restarts = BTreeMap::<&str, usize>::new();
        for event in &o.events {
            if let LiveEvent::Restarted { actor, .. } = &event.event {
                *restarts.entry(actor.as_str()).or_default() += 1;
            }
        }
        failed
            .iter()
            .filter_map(|(actor, failed)| {
                let got = restarts.get(actor).copied().unwrap_or(0);
                // The wire recorder's panic may come in the supervisor's final drain, after
                // the session ended, where nothing is restarted (it depends on when the
                // blocking pool runs the last writes: the two-thread sweep found it).
                let at_end = *actor == "recorder" && o.recorder_panicked && got + 1 == *failed;
                (got != *failed && !at_end).then(|| Violation::RestartCount {
                    actor: (*actor).to_owned(),
                    failed: *failed,
                    restarts: got,
                })
            })
            .collect()
    }

    /// Conversation control's context frames (`sim::app::conversation`): a boundary's
    /// context is one frame, sent whole — under immediate delivery each frame is one batch
    /// in the pipeline's order (nudge, modifiers, instruction, navigation, enter prompt);
    /// the entry into `close` is one prompting batch that ends its frame, whole (under
    /// context injection: its instruction and navigation block before the enter prompt),
    /// and is sent at most once; a frame asks the model to answer only for a nudge or the
    /// enter prompt.
    fn context_frames(&self) -> Vec<Violation> {
        let Some(plan) = self.plan.conversation else {
            return Vec::new();
        };
        let rank = |turn: &str| -> u8 {
            match turn {
                t if t.starts_with("I still need to collect:") => 0,
                t if t.starts_with("[Context:") || t.starts_with("ctx ") => 1,
                "Open." | "Close." => 2,
                t if t.starts_with("[Navigation]") => 3,
                "Closing." => 4,
                _ => 9,
            }
        };
        let mut found = Vec::new();
        let mut entries = 0;
        for (turns, prompt) in &self.outcome.model.contexts {
            let ranks: Vec<u8> = turns.iter().map(|t| rank(t)).collect();
            let one_batch = ranks.windows(2).all(|w| w[0] < w[1]);
            let entered = turns.iter().any(|t| t == "Closing.");
            let entry_whole = !entered
                || (*prompt
                    && turns.last().map(String::as_str) == Some("Closing.")
                    && (plan.steering != SteeringMode::ContextInjection
                        || (turns.len() >= 3
                            && turns[turns.len() - 3] == "Close."
                            && turns[turns.len() - 2]
                                .starts_with("[Navigation]\nCurrent phase: close"))));
            let prompt_reason = !*prompt || entered || ranks.contains(&0);
            let whole = !ranks.contains(&9)
                && entry_whole
                && prompt_reason
                && (plan.delivery == ContextDelivery::Deferred || one_batch);
            if !whole {
                found.push(Violation::ContextFrame {
                    turns: turns.clone(),
                    prompt: *prompt,
                });
            }
            entries += usize::from(entered);
        }
        if entries > 1 {
            found.push(Violation::Duplicated {
                handler: "the entry context of `close`",
                count: entries - 1,
                ids: format!("{entries} frames with the enter prompt"),
            });
        }
        found
    }

    /// Each reconnect presents the latest handle the model sent.
    fn resume_handles(&self) -> Vec<Violation> {
        if !self.plan.resumption {
            return Vec::new();
        }
        self.outcome
            .model
            .setups
            .iter()
            .filter(|s| s.presented != s.latest)
            .map(|s| Violation::StaleResumeHandle {
                connection: s.connection,
                presented: s.presented.clone(),
                latest: s.latest.clone(),
            })
            .collect()
    }

    /// Every wire-log entry reached the recorder exactly once (stored or failed), and
    /// failed writes are reported in telemetry.
    fn wire_log(&self) -> Vec<Violation> {
        let o = self.outcome;
        let mut found = Vec::new();
        let mut counts = BTreeMap::<u64, usize>::new();
        for seq in o.wire_stored.iter().chain(&o.wire_failed) {
            *counts.entry(*seq).or_default() += 1;
        }
        for (seq, times) in &counts {
            if *times > 1 {
                found.push(Violation::WireLogDuplicated {
                    seq: *seq,
                    times: *times,
                });
            }
        }
        let max = counts.keys().next_back().copied().unwrap_or(0);
        let lost: Vec<u64> = (1..=max).filter(|seq| !counts.contains_key(seq)).collect();
        if !lost.is_empty() {
            found.push(Violation::WireLogLost {
                count: lost.len(),
                seqs: ranges("#", &lost),
            });
        }
        let failed = o.wire_failed.len() as u64;
        let reported = o.telemetry.as_ref().map_or(0, |t| t.recording_errors);
        if failed != reported {
            found.push(Violation::RecordingErrorsNotReported { failed, reported });
        }
        found
    }

    /// The journal file, read back with the production reader once the session ended and
    /// the journal was flushed: every mutation in it, in order, is the journal's (a torn
    /// last line, cut by a full disk, is skipped); a file that holds fewer mutations than
    /// the journal had its loss counted by its writer (an application reading the count
    /// knows its file is incomplete); and a disk that refused a write was counted.
    fn journal_file(&self) -> Vec<Violation> {
        use reel_recorder::jsonl::JsonlReader;
        let o = self.outcome;
        let mut found = Vec::new();
        let mut fail = |what: String| found.push(Violation::JournalFile { what });
        let reader = JsonlReader::<reel_recorder::journal::StateMutation, _>::new(
            &o.journal_file[..],
            super::faulty_io::JOURNAL_FILE,
        );
        let mut read = Vec::new();
        for entry in reader {
            match entry {
                Ok(mutation) => read.push(mutation),
                Err(error) => {
                    fail(format!(
                        "unreadable after {} mutations: {error}",
                        read.len()
                    ));
                    break;
                }
            }
        }
        if let Some((at, (got, want))) = read
            .iter()
            .zip(&o.journal)
            .enumerate()
            .find(|(_, (got, want))| got != want)
        {
            fail(format!(
                "mutation {} reads {got:?}, the journal had {want:?}",
                at + 1
            ));
        }
        if read.len() > o.journal.len() {
            fail(format!(
                "holds {} mutations, the journal had {}",
                read.len(),
                o.journal.len()
            ));
        }
        if read.len() < o.journal.len() && o.journal_file_errors == 0 {
            fail(format!(
                "holds {} of {} mutations, and its writer counted no failed write",
                read.len(),
                o.journal.len()
            ));
        }
        if o.journal_refused > 0 && o.journal_file_errors == 0 {
            fail(format!(
                "the disk refused {} writes, its writer counted none",
                o.journal_refused
            ));
        }
        found
    }

    /// The application's state writes (`app:` keys) equal the fault-free run's, as a
    /// multiset of (key, value), but for the writes a fault declares missing. Timestamps
    /// and order are not compared: slow faults move them, and order is the lanes' checks'.
    fn journal(&self, baseline: &Outcome) -> Vec<Violation> {
        let declared = self.declared_missing();
        // In a governed plan, which call runs the `once` tool depends on the faults (a
        // call that failed releases it for the next): its writes are the gate's check.
        let compared = |key: &str| {
            key.starts_with("app:") && !(self.plan.governed && key.starts_with("app:tool:"))
        };
        let count = |outcome: &Outcome| {
            let mut counts = BTreeMap::<(String, String), (usize, Value)>::new();
            for m in outcome.journal.iter().filter(|m| compared(&m.key)) {
                let entry = counts
                    .entry((m.key.clone(), m.new.to_string()))
                    .or_insert((0, m.new.clone()));
                entry.0 += 1;
            }
            counts
        };
        let (want, got) = (count(baseline), count(self.outcome));
        // What the fault hook's failures may lose: the writes of the events a lane failed
        // on (a `toolCall` never run, a usage report `on_usage` never saw, a turn complete
        // `on_turn_complete` never saw — which shifts its call count, so the last turn's
        // key is the one missing —, a finished tool call whose result was dropped), and
        // one write per state store failure, whose writer was told (an error).
        let mut allowed = BTreeMap::<&str, usize>::from([
            (
                "app:turn:",
                self.hook_reports(Child::ControlLane, "turn_complete"),
            ),
            (
                "app:tool:",
                self.hook_reports(Child::ControlLane, "tool_done"),
            ),
        ]);
        let mut store_lost = self.struck(Child::StateStore);
        let told: BTreeSet<&String> = self
            .outcome
            .observed
            .write_errors
            .iter()
            .map(|(key, _)| key)
            .collect();
        let mut found = Vec::new();
        for (key, (n, value)) in &want {
            let have = got.get(key).map_or(0, |(n, _)| *n);
            if have >= *n || declared.contains(&key.0) {
                continue;
            }
            if let Some(left) = allowed
                .iter_mut()
                .find(|(prefix, left)| key.0.starts_with(**prefix) && **left > 0)
                .map(|(_, left)| left)
            {
                *left -= 1;
                continue;
            }
            if store_lost > 0 && told.contains(&key.0) {
                store_lost -= 1;
                continue;
            }
            found.push(Violation::JournalMissing {
                key: key.0.clone(),
                new: value.clone(),
            });
        }
        for (key, (n, value)) in &got {
            let had = want.get(key).map_or(0, |(n, _)| *n);
            if *n > had {
                found.push(Violation::JournalExtra {
                    key: key.0.clone(),
                    new: value.clone(),
                });
            }
        }
        found
    }

    /// A session without `on_usage` has no telemetry actor: the router counts what telemetry
    /// counts as it routes (decision 0075). Once the whole script was sent, the session's
    /// telemetry holds every usage report (the last one's total: reports are cumulative),
    /// every turn, tool call and interruption the model sent.
    fn router_counted(&self) -> Vec<Violation> {
        let Some(telemetry) = &self.outcome.telemetry else {
            return Vec::new();
        };
        let sent = &self.plan.script;
        let count = |matches: fn(&Step) -> bool| sent.iter().filter(|s| matches(s)).count() as u64;
        let last_usage = sent.iter().rev().find_map(|s| match s {
            Step::Usage(n) => Some(u64::from(*n)),
            _ => None,
        });
        let calls: u64 = sent
            .iter()
            .map(|s| match s {
                Step::ToolCall { calls, .. } => calls.len() as u64,
                _ => 0,
            })
            .sum();
        let wanted = [
            (
                "tokens.total",
                last_usage.unwrap_or(0),
                telemetry.tokens.total,
            ),
            (
                "turns",
                count(|s| matches!(s, Step::TurnComplete)),
                telemetry.turns,
            ),
            ("tool_calls", calls, telemetry.tool_calls),
            (
                "interruptions",
                count(|s| matches!(s, Step::Interrupted)),
                telemetry.interruptions,
            ),
        ];
        wanted
            .into_iter()
            .filter(|(_, want, got)| want != got)
            .map(|(what, want, got)| Violation::TelemetryCount { what, want, got })
            .collect()
    }

    /// The `app:` keys the faults declare may be missing.
    fn declared_missing(&self) -> BTreeSet<String> {
        let mut keys = BTreeSet::new();
        for fault in &self.plan.faults {
            match fault {
                Fault::ToolPanic { call } | Fault::HangingTool { call } => {
                    keys.insert(format!("app:tool:{call}"));
                }
                Fault::ToolCallbackPanic { call } => {
                    for step in &self.plan.script {
                        if let Step::ToolCall { calls, .. } = step
                            && calls.first() == Some(call)
                        {
                            keys.extend(calls.iter().map(|c| format!("app:tool:{c}")));
                        }
                    }
                }
                Fault::TurnCompletePanic { turn }
                | Fault::ModifyPanic { turn }
                | Fault::HangingCallback { turn } => {
                    keys.insert(format!("app:turn:{turn}"));
                }
                // Past the callback timeout: dropped before its write.
                Fault::SlowCallback { turn, ms }
                    if *ms >= reel_actors::session::DEFAULT_CALLBACK_TIMEOUT.as_millis() as u64 =>
                {
                    keys.insert(format!("app:turn:{turn}"));
                }
                Fault::UsagePanic { usage } => {
                    keys.insert(format!("app:usage:{usage}"));
                }
                _ => {}
            }
        }
        // The fault hook's: the calls of a `toolCall` the control lane failed on, and the
        // usage report telemetry failed on.
        if self.hook_reports(Child::ControlLane, "tool_call") > 0 {
            for calls in self.tool_calls_not_handled() {
                keys.extend(calls.iter().map(|c| format!("app:tool:{c}")));
            }
        }
        // A turn complete the control lane failed on never reached `on_turn_complete`,
        // whose calls are numbered as they come: the last numbers were never written.
        // So does one whose pipeline the application's modifier failed.
        if self.hook_reports(Child::ControlLane, "turn_complete") > 0
            || !self.outcome.observed.context_panicked.is_empty()
        {
            let sent = self
                .sent
                .iter()
                .filter(|s| matches!(s, Step::TurnComplete))
                .count() as u32;
            let called = self.outcome.observed.turns;
            keys.extend((called + 1..=sent).map(|turn| format!("app:turn:{turn}")));
        }
        // A tool's writes the state store failed to commit (the store failed while
        // applying them): reported as a `StateWrite` error naming the call.
        for event in self.published(Lane::Control) {
            if let SessionEvent::Error(SessionError::StateWrite { what, .. }) = event
                && let Some(call) = what
                    .split("(call ")
                    .nth(1)
                    .and_then(|rest| rest.strip_suffix(')'))
            {
                keys.insert(format!("app:tool:{call}"));
            }
        }
        let usage: Vec<u64> = self
            .sent
            .iter()
            .filter_map(|s| match s {
                Step::Usage(n) => Some(u64::from(*n)),
                _ => None,
            })
            .collect();
        let got = widen(&self.outcome.observed.usage);
        for n in self.next_after(Child::Telemetry, &usage, &got, |s| s.usage_seen) {
            if !got.contains(&n) {
                keys.insert(format!("app:usage:{n}"));
            }
        }
        keys
    }
}

/// A lane as `CallbackPanicked` names it, in the child's name (`fast` and `control`,
/// before `Child` named every report, are `fast_lane` and `control_lane`).
fn lane_name(lane: &str) -> String {
    match lane {
        "fast" => "fast_lane".to_owned(),
        "control" => "control_lane".to_owned(),
        other => other.to_owned(),
    }
}

fn widen(ids: &[u32]) -> Vec<u64> {
    ids.iter().map(|n| u64::from(*n)).collect()
}

/// Checks what `handler` got against what was `sent` (both in order): nothing twice,
/// nothing out of order, nothing never sent, and nothing missing — before the last event
/// it got, or at all if the run was `complete`. An event whose handling failed counts as
/// got (the handler was called); that it was reported is checked apart.
#[cfg(test)]
fn ledger(
    handler: &'static str,
    prefix: &str,
    sent: &[u64],
    got: &[u64],
    complete: bool,
) -> Vec<Violation> {
    ledger_excusing(
        handler,
        prefix,
        sent,
        got,
        complete,
        Excuse::Ids(BTreeSet::new()),
    )
    .0
}

/// Events a ledger may find missing because a fault declared them lost.
#[derive(Debug, Clone)]
pub enum Excuse {
    /// These ids.
    Ids(BTreeSet<u64>),
    /// Up to this many, whichever.
    Count(usize),
}

/// [`ledger`], but the losses `excuse` declares are not violations: they come back, so
/// that the caller can check they were reported.
fn ledger_excusing(
    handler: &'static str,
    prefix: &str,
    sent: &[u64],
    got: &[u64],
    complete: bool,
    excuse: Excuse,
) -> (Vec<Violation>, Vec<u64>) {
    let mut found = Vec::new();
    let position: HashMap<u64, usize> = sent.iter().enumerate().map(|(i, id)| (*id, i)).collect();
    let mut counts = BTreeMap::<u64, usize>::new();
    for id in got {
        *counts.entry(*id).or_default() += 1;
    }
    let twice: Vec<u64> = counts
        .iter()
        .filter(|(_, n)| **n > 1)
        .map(|(id, _)| *id)
        .collect();
    if !twice.is_empty() {
        found.push(Violation::Duplicated {
            handler,
            count: twice.len(),
            ids: ranges(prefix, &twice),
        });
    }
    let mut furthest: Option<(usize, u64)> = None;
    let mut out_of_order = None;
    for id in got {
        let Some(at) = position.get(id).copied() else {
            found.push(Violation::Unexpected {
                handler,
                id: format!("{prefix}{id}"),
            });
            continue;
        };
        match furthest {
            Some((far, far_id)) if at < far => {
                out_of_order.get_or_insert(Violation::OutOfOrder {
                    handler,
                    id: format!("{prefix}{id}"),
                    after: format!("{prefix}{far_id}"),
                });
            }
            Some((far, _)) if at == far => {}
            _ => furthest = Some((at, *id)),
        }
    }
    found.extend(out_of_order);
    let until = if complete {
        sent.len()
    } else {
        furthest.map_or(0, |(far, _)| far + 1)
    };
    let lost: Vec<u64> = sent[..until]
        .iter()
        .filter(|id| !counts.contains_key(id))
        .copied()
        .collect();
    let (excused, lost): (Vec<u64>, Vec<u64>) = match excuse {
        Excuse::Ids(ids) => lost.into_iter().partition(|id| ids.contains(id)),
        Excuse::Count(n) if lost.len() <= n => (lost, Vec::new()),
        Excuse::Count(_) => (Vec::new(), lost),
    };
    if !lost.is_empty() {
        let mut sorted = lost.clone();
        sorted.sort_unstable();
        found.push(Violation::Lost {
            handler,
            count: lost.len(),
            ids: ranges(prefix, &sorted),
        });
    }
    (found, excused)
}

#[cfg(test)]
mod tests {
    use super::{Violation, ledger};

    #[test]
    fn the_ledger_names_losses_duplicates_and_reordering_exactly() {
        let sent = [1, 2, 3, 4, 5, 6];
        assert_eq!(ledger("h", "t", &sent, &[1, 2, 3, 4, 5, 6], true), vec![]);
        assert_eq!(
            ledger("h", "t", &sent, &[1, 2, 6], true),
            vec![Violation::Lost {
                handler: "h",
                count: 3,
                ids: "t3..=t5".to_owned()
            }]
        );
        // An unfinished run: only the gaps before the last event got count.
        assert_eq!(
            ledger("h", "t", &sent, &[1, 3], false),
            vec![Violation::Lost {
                handler: "h",
                count: 1,
                ids: "t2".to_owned()
            }]
        );
        assert_eq!(
            ledger("h", "t", &sent, &[1, 2, 4, 3, 5, 6, 6], true),
            vec![
                Violation::Duplicated {
                    handler: "h",
                    count: 1,
                    ids: "t6".to_owned()
                },
                Violation::OutOfOrder {
                    handler: "h",
                    id: "t3".to_owned(),
                    after: "t4".to_owned()
                },
            ]
        );
        assert_eq!(
            ledger("h", "t", &sent, &[1, 2, 3, 4, 5, 6, 9], true),
            vec![Violation::Unexpected {
                handler: "h",
                id: "t9".to_owned()
            }]
        );
    }
}
