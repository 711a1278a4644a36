//! Plans written by hand, for the cases an issue describes in words.

use reel_actors::Child;

use reel_actors::conversation::{ContextDelivery, SteeringMode};

use super::plan::{Conversation, Fault, Pace, Plan, Step};

/// Issue 11's report: a fast-lane `on_text` callback fails 4 times while the server
/// streams 6,000 text frames at a steady pace (ten frames every 10 ms).
/// On the code the issue was filed against, 27–95 further deltas were lost after a restart.
pub fn issue_11_restart_under_load() -> Plan {
    steady_stream(
        6_000,
        [1_200, 2_400, 3_100, 4_800]
            .into_iter()
            .map(|delta| Fault::TextPanic { delta })
            .collect(),
    )
}

/// `texts` text deltas streamed at ten frames every 10 ms, a turn complete and a usage
/// report, with `faults`.
fn steady_stream(texts: u32, faults: Vec<Fault>) -> Plan {
    let mut script: Vec<Step> = (0..texts).map(Step::Text).collect();
    script.push(Step::TurnComplete);
    script.push(Step::Usage(0));
    Plan {
        seed: 0,
        pace: Pace {
            tick_ms: 10,
            burst: 10,
        },
        resumption: false,
        script,
        faults,
        disk_ms: 0,
        conversation: None,
        governed: false,
        usage_callback: true,
    }
}

/// The Recorder fails (the fault hook) on a frame while 2,000 text frames stream, and the
/// application's wire recorder panics when the Recorder's successor writes that frame
/// again. On the code before the fix the successor's failed start failed the supervisor:
/// the session stopped taking frames and never ended.
pub fn recorder_fails_twice_on_one_frame() -> Plan {
    steady_stream(
        2_000,
        vec![
            Fault::Internal {
                child: Child::Recorder,
                at: 300,
            },
            Fault::RecorderPanic { seq: 300 },
        ],
    )
}

/// The transport fails (the fault hook) on the tool response it is asked to send while
/// 2,000 text frames stream at a steady pace: its messages are the start (1), the first
/// connection's `setupComplete` (2) and the response to `c0`, the model's call after
/// delta 500 (3). The session must end, failed, saying the transport failed, with the
/// end published to the application and every frame recorded before it on the wire log.
pub fn transport_fails_while_frames_stream() -> Plan {
    let mut plan = steady_stream(
        2_000,
        vec![Fault::Internal {
            child: Child::Transport,
            at: 3,
        }],
    );
    plan.script.insert(
        501,
        Step::ToolCall {
            calls: vec!["c0".to_owned()],
            wait: false,
        },
    );
    plan
}

/// The journal's disk fills up after 3 writes, in the middle of the 4th, while 200 text
/// frames stream through two turns: the production journal writer (`FileJournalSink`) on
/// the simulated disk must count the refused writes, and the file must read back, with the
/// production reader, as exactly the mutations written before (the torn line skipped).
pub fn journal_disk_fills_up() -> Plan {
    let mut plan = steady_stream(100, vec![Fault::FailingJournal { after: 3 }]);
    let second = plan.script.clone();
    plan.script
        .extend(second.into_iter().map(|step| match step {
            Step::Text(n) => Step::Text(n + 100),
            Step::Usage(n) => Step::Usage(n + 1),
            other => other,
        }));
    plan.disk_ms = 5;
    plan
}

/// Conversation control under a failure of the turn pipeline (issue 29): three turns of
/// ten text deltas, context injection delivered at once, and the `open` phase's modifier
/// panicking in the pipeline of boundary 2, after repair counted the turn and queued its
/// nudge. The control lane restarts; that boundary's context is lost whole; the next
/// boundary escalates to `close` and sends its entry batch whole.
pub fn control_lane_fails_mid_pipeline_with_steering_and_repair() -> Plan {
    let mut script = Vec::new();
    for turn in 0..3u32 {
        script.extend((turn * 10..turn * 10 + 10).map(Step::Text));
        script.push(Step::TurnComplete);
        script.push(Step::Usage(turn));
    }
    Plan {
        seed: 0,
        pace: Pace {
            tick_ms: 10,
            burst: 5,
        },
        resumption: false,
        script,
        faults: Vec::new(),
        disk_ms: 0,
        conversation: Some(Conversation {
            steering: SteeringMode::ContextInjection,
            delivery: ContextDelivery::Immediate,
            context_panic: Some(2),
        }),
        governed: false,
        usage_callback: true,
    }
}

/// A governed plan (`sim::governed`: the tool may run once): the model calls the tool
/// (`c0`), and the control lane fails on its inbox item `at` — the finished call's result
/// when `at` is 4 — then calls it again (`c1`) on the next turn.
pub fn governed_lane_fails_between_a_call_and_its_response(at: u64) -> Plan {
    let script = vec![
        Step::Text(0),
        Step::ToolCall {
            calls: vec!["c0".to_owned()],
            wait: true,
        },
        Step::TurnComplete,
        Step::Text(1),
        Step::ToolCall {
            calls: vec!["c1".to_owned()],
            wait: true,
        },
        Step::TurnComplete,
    ];
    Plan {
        seed: 0,
        pace: Pace {
            tick_ms: 10,
            burst: 1,
        },
        resumption: false,
        script,
        faults: vec![Fault::Internal {
            child: reel_actors::Child::ControlLane,
            at,
        }],
        disk_ms: 0,
        conversation: None,
        governed: true,
        usage_callback: true,
    }
}
