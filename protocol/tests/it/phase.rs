//! The session phase: the exact transitions of the lifecycle, of tool calls answered,
//! cancelled and left open while the model speaks, and of disconnects from every phase; then
//! the tracker's guarantees over random sequences of inputs.

use std::collections::BTreeSet;

use bytes::Bytes;
use proptest::prelude::*;
use proptest::strategy::ValueTree;
use proptest::test_runner::TestRunner;
use reel_protocol::{
    FunctionCall, FunctionResponse, PhaseInput, PhaseTracker, SessionCommand, SessionEvent,
    SessionPhase,
};
use serde_json::json;

use SessionPhase::{
    Active, Connecting, Disconnected, Disconnecting, Interrupted, ModelSpeaking, SetupSent,
    ToolCallPending, UserSpeaking,
};

type Change = Option<(SessionPhase, SessionPhase)>;

/// An input to the tracker, owned (a [`PhaseInput`] borrows its event or command).
#[derive(Debug, Clone)]
#[allow(
    clippy::large_enum_variant,
    reason = "a test input; size does not matter"
)]
enum Step {
    ConnectStarted,
    SetupSent,
    Event(SessionEvent),
    Command(SessionCommand),
}

impl Step {
    fn apply(&self, tracker: &mut PhaseTracker) -> Change {
        match self {
            Step::ConnectStarted => tracker.apply(PhaseInput::ConnectStarted),
            Step::SetupSent => tracker.apply(PhaseInput::SetupSent),
            Step::Event(event) => tracker.apply(PhaseInput::Event(event)),
            Step::Command(command) => tracker.apply(PhaseInput::Command(command)),
        }
    }
}

fn call(id: Option<&str>) -> FunctionCall {
    FunctionCall {
        id: id.map(str::to_owned),
        name: Some("get_weather".into()),
        args: Some(json!({"city": "London"}).into()),
        ..FunctionCall::default()
    }
}

fn tool_call(ids: &[&str]) -> Step {
    Step::Event(SessionEvent::ToolCall(
        ids.iter().map(|id| call(Some(id))).collect(),
    ))
}

fn cancelled(ids: &[&str]) -> Step {
    Step::Event(SessionEvent::ToolCallCancelled(
        ids.iter().map(|id| (*id).to_owned()).collect(),
    ))
}

fn response(ids: &[&str]) -> Step {
    Step::Command(SessionCommand::SendToolResponse(
        ids.iter()
            .map(|id| FunctionResponse::new(*id, "get_weather", json!({"temp_c": 21})))
            .collect(),
    ))
}

fn connected() -> Step {
    Step::Event(SessionEvent::Connected { session_id: None })
}

fn disconnected() -> Step {
    Step::Event(SessionEvent::Disconnected {
        code: Some(1000),
        reason: None,
    })
}

fn text(delta: &str) -> Step {
    Step::Event(SessionEvent::TextDelta(delta.into()))
}

fn turn_complete() -> Step {
    Step::Event(SessionEvent::TurnComplete {
        reason: None,
        waiting_for_input: false,
    })
}

fn pending(tracker: &PhaseTracker) -> Vec<&str> {
    tracker.pending_calls().collect()
}

/// A tracker that went through connect, setup and `setupComplete`.
fn live() -> PhaseTracker {
    let mut tracker = PhaseTracker::new();
    for step in [Step::ConnectStarted, Step::SetupSent, connected()] {
        step.apply(&mut tracker);
    }
    assert_eq!(tracker.phase(), Active);
    tracker
}

// ---------------------------------------------------------------------------------------------
// Exact sequences
// ---------------------------------------------------------------------------------------------

#[test]
fn the_normal_lifecycle_changes_phase_in_order() {
    let mut tracker = PhaseTracker::new();
    assert_eq!(tracker.phase(), Disconnected);
    let steps = [
        Step::ConnectStarted,
        Step::SetupSent,
        connected(),
        text("Hel"),
        text("lo!"),
        Step::Event(SessionEvent::TextComplete("Hello!".into())),
        turn_complete(),
    ];
    let changes: Vec<Change> = steps.iter().map(|step| step.apply(&mut tracker)).collect();
    assert_eq!(
        changes,
        [
            Some((Disconnected, Connecting)),
            Some((Connecting, SetupSent)),
            Some((SetupSent, Active)),
            Some((Active, ModelSpeaking)),
            None,
            None,
            Some((ModelSpeaking, Active)),
        ]
    );
    assert_eq!(tracker.phase(), Active);
    assert_eq!(pending(&tracker), Vec::<&str>::new());
}

#[test]
fn a_tool_call_is_pending_until_every_call_is_answered() {
    let mut tracker = live();
    assert_eq!(
        tool_call(&["c1", "c2"]).apply(&mut tracker),
        Some((Active, ToolCallPending))
    );
    assert_eq!(pending(&tracker), ["c1", "c2"]);

    assert_eq!(response(&["c1"]).apply(&mut tracker), None);
    assert_eq!(tracker.phase(), ToolCallPending);
    assert_eq!(pending(&tracker), ["c2"]);

    assert_eq!(
        response(&["c2"]).apply(&mut tracker),
        Some((ToolCallPending, Active))
    );
    assert_eq!(pending(&tracker), Vec::<&str>::new());

    // A second answer to the same call is stale: nothing changes.
    assert_eq!(response(&["c2"]).apply(&mut tracker), None);
    assert_eq!(tracker.phase(), Active);
}

#[test]
fn one_response_frame_can_answer_several_calls() {
    let mut tracker = live();
    tool_call(&["c1", "c2"]).apply(&mut tracker);
    assert_eq!(
        response(&["c2", "c1"]).apply(&mut tracker),
        Some((ToolCallPending, Active))
    );
    assert_eq!(pending(&tracker), Vec::<&str>::new());
}

#[test]
fn cancelling_the_pending_calls_returns_to_active() {
    let mut tracker = live();
    tool_call(&["c1", "c2"]).apply(&mut tracker);
    assert_eq!(
        cancelled(&["c1", "c2"]).apply(&mut tracker),
        Some((ToolCallPending, Active))
    );
    assert_eq!(pending(&tracker), Vec::<&str>::new());
}

#[test]
fn cancelling_some_calls_waits_for_the_rest() {
    let mut tracker = live();
    tool_call(&["c1", "c2"]).apply(&mut tracker);
    assert_eq!(cancelled(&["c1", "unknown"]).apply(&mut tracker), None);
    assert_eq!(tracker.phase(), ToolCallPending);
    assert_eq!(pending(&tracker), ["c2"]);
    assert_eq!(
        response(&["c2"]).apply(&mut tracker),
        Some((ToolCallPending, Active))
    );
}

#[test]
fn the_model_may_speak_while_a_non_blocking_call_is_pending() {
    let mut tracker = live();
    let steps = [
        tool_call(&["c1"]),
        text("Let me check."),
        turn_complete(),
        response(&["c1"]),
    ];
    let changes: Vec<Change> = steps.iter().map(|step| step.apply(&mut tracker)).collect();
    assert_eq!(
        changes,
        [
            Some((Active, ToolCallPending)),
            Some((ToolCallPending, ModelSpeaking)),
            // The turn is over but a call is still open.
            Some((ModelSpeaking, ToolCallPending)),
            Some((ToolCallPending, Active)),
        ]
    );
    assert_eq!(pending(&tracker), Vec::<&str>::new());
}

#[test]
fn a_response_while_the_model_speaks_settles_at_turn_complete() {
    let mut tracker = live();
    let steps = [
        tool_call(&["c1"]),
        text("Checking"),
        response(&["c1"]),
        turn_complete(),
    ];
    let changes: Vec<Change> = steps.iter().map(|step| step.apply(&mut tracker)).collect();
    assert_eq!(
        changes,
        [
            Some((Active, ToolCallPending)),
            Some((ToolCallPending, ModelSpeaking)),
            None,
            Some((ModelSpeaking, Active)),
        ]
    );
    assert_eq!(pending(&tracker), Vec::<&str>::new());
}

#[test]
fn a_call_without_an_id_is_not_waited_for() {
    let mut tracker = live();
    let step = Step::Event(SessionEvent::ToolCall(vec![call(None)]));
    assert_eq!(step.apply(&mut tracker), None);
    assert_eq!(tracker.phase(), Active);
    assert_eq!(pending(&tracker), Vec::<&str>::new());
}

#[test]
fn voice_activity_and_barge_in_come_back_to_where_the_calls_say() {
    let mut tracker = live();
    let vad_start = Step::Event(SessionEvent::VoiceActivityStart);
    let vad_end = Step::Event(SessionEvent::VoiceActivityEnd);
    let steps = [
        vad_start.clone(),
        vad_end.clone(),
        Step::Event(SessionEvent::InputTranscription {
            text: "what's the".into(),
            is_final: false,
        }),
        text("It is"),
        Step::Event(SessionEvent::Interrupted),
        turn_complete(),
        tool_call(&["c1"]),
        vad_start,
        vad_end,
        response(&["c1"]),
    ];
    let changes: Vec<Change> = steps.iter().map(|step| step.apply(&mut tracker)).collect();
    assert_eq!(
        changes,
        [
            Some((Active, UserSpeaking)),
            Some((UserSpeaking, Active)),
            Some((Active, UserSpeaking)),
            Some((UserSpeaking, ModelSpeaking)),
            Some((ModelSpeaking, Interrupted)),
            Some((Interrupted, Active)),
            Some((Active, ToolCallPending)),
            Some((ToolCallPending, UserSpeaking)),
            // The user stopped speaking, but the call is still open.
            Some((UserSpeaking, ToolCallPending)),
            Some((ToolCallPending, Active)),
        ]
    );
}

/// A tracker in `phase`, with the call `c1` pending wherever a call can be pending.
fn tracker_in(phase: SessionPhase) -> PhaseTracker {
    let lifecycle = |steps: &[Step]| {
        let mut tracker = PhaseTracker::new();
        for step in steps {
            step.apply(&mut tracker);
        }
        tracker
    };
    let live_with_call = |then: Option<Step>| {
        let mut tracker = live();
        tool_call(&["c1"]).apply(&mut tracker);
        if let Some(step) = then {
            step.apply(&mut tracker);
        }
        tracker
    };
    let tracker = match phase {
        Disconnected => PhaseTracker::new(),
        Connecting => lifecycle(&[Step::ConnectStarted]),
        SetupSent => lifecycle(&[Step::ConnectStarted, Step::SetupSent]),
        Active => live(),
        ToolCallPending => live_with_call(None),
        UserSpeaking => live_with_call(Some(Step::Event(SessionEvent::VoiceActivityStart))),
        ModelSpeaking => live_with_call(Some(text("Hi"))),
        Interrupted => live_with_call(Some(Step::Event(SessionEvent::Interrupted))),
        Disconnecting => live_with_call(Some(Step::Command(SessionCommand::Disconnect))),
    };
    assert_eq!(tracker.phase(), phase);
    tracker
}

#[test]
fn disconnected_from_every_phase_is_disconnected_with_no_pending_calls() {
    for phase in SessionPhase::ALL {
        let mut tracker = tracker_in(phase);
        let had_call = pending(&tracker) == ["c1"];
        assert_eq!(
            had_call,
            !matches!(phase, Disconnected | Connecting | SetupSent | Active),
            "{phase}"
        );

        let expected = (phase != Disconnected).then_some((phase, Disconnected));
        assert_eq!(disconnected().apply(&mut tracker), expected, "{phase}");
        assert_eq!(tracker.phase(), Disconnected, "{phase}");
        assert_eq!(pending(&tracker), Vec::<&str>::new(), "{phase}");
        assert_eq!(disconnected().apply(&mut tracker), None, "{phase}");

        // A new connection starts clean: the old call is not waited for.
        let changes: Vec<Change> = [Step::ConnectStarted, Step::SetupSent, connected()]
            .iter()
            .map(|step| step.apply(&mut tracker))
            .collect();
        assert_eq!(
            changes,
            [
                Some((Disconnected, Connecting)),
                Some((Connecting, SetupSent)),
                Some((SetupSent, Active)),
            ],
            "{phase}"
        );
    }
}

// ---------------------------------------------------------------------------------------------
// Properties over random inputs
// ---------------------------------------------------------------------------------------------

const IDS: &[&str] = &["c0", "c1", "c2", "c3"];

/// The kinds of input the random sequences are made of; a kind listed twice comes twice as
/// often.
#[derive(Debug, Clone, Copy)]
enum Kind {
    ConnectStarted,
    SetupSent,
    Connected,
    Disconnected,
    Disconnect,
    ToolCall,
    ToolCallCancelled,
    SendToolResponse,
    TurnComplete,
    Interrupted,
    GenerationComplete,
    VoiceActivityStart,
    VoiceActivityEnd,
    Audio,
    Text,
    TextComplete,
    Thought,
    InputTranscription,
    OutputTranscription,
    GoAway,
    SendText,
    SendAudio,
    ActivityStart,
}

const MENU: &[Kind] = {
    use Kind::*;
    &[
        ConnectStarted,
        ConnectStarted,
        SetupSent,
        SetupSent,
        Connected,
        Connected,
        Disconnected,
        Disconnect,
        ToolCall,
        ToolCall,
        ToolCall,
        ToolCall,
        ToolCallCancelled,
        ToolCallCancelled,
        SendToolResponse,
        SendToolResponse,
        SendToolResponse,
        SendToolResponse,
        TurnComplete,
        TurnComplete,
        TurnComplete,
        Interrupted,
        GenerationComplete,
        VoiceActivityStart,
        VoiceActivityEnd,
        Audio,
        Audio,
        Text,
        TextComplete,
        Thought,
        InputTranscription,
        OutputTranscription,
        GoAway,
        SendText,
        SendAudio,
        ActivityStart,
    ]
};

/// One input of `kind`. `ids` are indices into [`IDS`], where an index past its end stands
/// for a call or response without an id; `flag` is any boolean the input has.
fn make_step(kind: Kind, ids: &[usize], flag: bool) -> Step {
    let id = |i: &usize| IDS.get(*i).copied();
    let event = Step::Event;
    match kind {
        Kind::ConnectStarted => Step::ConnectStarted,
        Kind::SetupSent => Step::SetupSent,
        Kind::Connected => connected(),
        Kind::Disconnected => event(SessionEvent::Disconnected {
            code: flag.then_some(1011),
            reason: None,
        }),
        Kind::Disconnect => Step::Command(SessionCommand::Disconnect),
        Kind::ToolCall => event(SessionEvent::ToolCall(
            ids.iter().map(|i| call(id(i))).collect(),
        )),
        Kind::ToolCallCancelled => event(SessionEvent::ToolCallCancelled(
            ids.iter().filter_map(id).map(str::to_owned).collect(),
        )),
        Kind::SendToolResponse => Step::Command(SessionCommand::SendToolResponse(
            ids.iter()
                .map(|i| FunctionResponse {
                    id: id(i).map(str::to_owned),
                    ..FunctionResponse::default()
                })
                .collect(),
        )),
        Kind::TurnComplete => event(SessionEvent::TurnComplete {
            reason: None,
            waiting_for_input: flag,
        }),
        Kind::Interrupted => event(SessionEvent::Interrupted),
        Kind::GenerationComplete => event(SessionEvent::GenerationComplete),
        Kind::VoiceActivityStart => event(SessionEvent::VoiceActivityStart),
        Kind::VoiceActivityEnd => event(SessionEvent::VoiceActivityEnd),
        Kind::Audio => event(SessionEvent::AudioData(Bytes::from_static(&[0, 0, 1, 0]))),
        Kind::Text => text("Hi"),
        Kind::TextComplete => event(SessionEvent::TextComplete("Hi".into())),
        Kind::Thought => event(SessionEvent::Thought("hmm".into())),
        Kind::InputTranscription => event(SessionEvent::InputTranscription {
            text: "hello".into(),
            is_final: flag,
        }),
        Kind::OutputTranscription => event(SessionEvent::OutputTranscription {
            text: "hi".into(),
            is_final: flag,
        }),
        Kind::GoAway => event(SessionEvent::GoAway { time_left: None }),
        Kind::SendText => Step::Command(SessionCommand::SendText("hi".into())),
        Kind::SendAudio => Step::Command(SessionCommand::SendAudio(Bytes::from_static(&[0, 0]))),
        Kind::ActivityStart => Step::Command(SessionCommand::ActivityStart),
    }
}

/// A random input. Call ids come from a small set, so calls, answers and cancellations
/// meet; one index in five means "no id".
fn step() -> impl Strategy<Value = Step> {
    (
        prop::sample::select(MENU),
        prop::collection::vec(0..IDS.len() + 1, 0..4),
        any::<bool>(),
    )
        .prop_map(|(kind, ids, flag)| make_step(kind, &ids, flag))
}

/// Random inputs, half of the time after a completed connect so that most of the run is live.
fn steps() -> impl Strategy<Value = Vec<Step>> {
    (any::<bool>(), prop::collection::vec(step(), 0..48)).prop_map(|(connect_first, rest)| {
        let start = if connect_first {
            vec![Step::ConnectStarted, Step::SetupSent, connected()]
        } else {
            Vec::new()
        };
        start.into_iter().chain(rest).collect()
    })
}

/// Applies `step` and checks that what `apply` reports is the change that happened and that
/// the table allows it.
fn checked_apply(tracker: &mut PhaseTracker, step: &Step) -> Result<Change, TestCaseError> {
    let before = tracker.phase();
    let change = step.apply(tracker);
    let after = tracker.phase();
    match change {
        Some((from, to)) => {
            prop_assert_eq!((from, to), (before, after), "reported {:?}", change);
            prop_assert!(
                from.can_transition(to),
                "{} -> {} is not in the transition table (on {:?})",
                from,
                to,
                step
            );
        }
        None => prop_assert_eq!(after, before, "a change was not reported (on {:?})", step),
    }
    Ok(change)
}

/// The pending call ids the tracker should hold after `step`, tracked independently: calls
/// count while live, a disconnect forgets them all.
fn expected_pending(pending: &mut BTreeSet<String>, step: &Step, was_live: bool) {
    match step {
        Step::Event(SessionEvent::Disconnected { .. }) => pending.clear(),
        Step::Event(SessionEvent::ToolCall(calls)) if was_live => {
            pending.extend(calls.iter().filter_map(|call| call.id.clone()));
        }
        Step::Event(SessionEvent::ToolCallCancelled(ids)) if was_live => {
            for id in ids {
                pending.remove(id);
            }
        }
        Step::Command(SessionCommand::SendToolResponse(responses)) if was_live => {
            for response in responses {
                if let Some(id) = &response.id {
                    pending.remove(id);
                }
            }
        }
        _ => {}
    }
}

/// From any state the session can get back to `Active`: when live, by answering every
/// pending call and finishing the turn; otherwise through disconnect and a new connect.
fn check_not_stuck(tracker: &PhaseTracker) -> Result<(), TestCaseError> {
    let mut tracker = tracker.clone();
    let ids: Vec<String> = tracker.pending_calls().map(str::to_owned).collect();
    let ids: Vec<&str> = ids.iter().map(String::as_str).collect();
    let route = if tracker.phase().is_live() {
        vec![response(&ids), turn_complete()]
    } else {
        vec![
            disconnected(),
            Step::ConnectStarted,
            Step::SetupSent,
            connected(),
        ]
    };
    for step in &route {
        checked_apply(&mut tracker, step)?;
        if matches!(step, Step::Event(SessionEvent::Disconnected { .. })) {
            prop_assert_eq!(tracker.phase(), Disconnected);
        }
    }
    prop_assert_eq!(tracker.phase(), Active, "stuck after {:?}", route);
    prop_assert_eq!(pending(&tracker), Vec::<&str>::new());
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: 2048,
        failure_persistence: None,
        ..ProptestConfig::default()
    })]

    /// Over random inputs: every change is reported as it happened and is allowed by
    /// `can_transition`; the pending ids are exactly those of calls made while live and not
    /// answered, cancelled or disconnected; `Active` and `ToolCallPending` agree with them;
    /// a turn complete while live settles on `ToolCallPending` exactly when a call is open;
    /// a disconnect always gives `Disconnected`; and no state is one the session cannot get
    /// out of.
    #[test]
    fn random_inputs_keep_the_phase_consistent(steps in steps()) {
        let mut tracker = PhaseTracker::new();
        let mut model = BTreeSet::new();
        for step in &steps {
            let was_live = tracker.phase().is_live();
            let before = tracker.phase();
            checked_apply(&mut tracker, step)?;
            let phase = tracker.phase();

            expected_pending(&mut model, step, was_live);
            let model_ids: Vec<&str> = model.iter().map(String::as_str).collect();
            prop_assert_eq!(pending(&tracker), model_ids, "pending calls after {:?}", step);
            let open = !model.is_empty();

            // Phases that speak about calls agree with the calls.
            if phase == ToolCallPending {
                prop_assert!(open, "ToolCallPending with no call open");
            }
            if phase == Active {
                prop_assert!(!open, "Active with calls {:?} open", model);
            }
            if matches!(phase, Disconnected | Connecting | SetupSent) {
                prop_assert!(!open, "{} with calls {:?} open", phase, model);
            }

            match step {
                Step::Event(SessionEvent::Disconnected { .. }) => {
                    prop_assert_eq!(phase, Disconnected);
                }
                Step::Event(SessionEvent::TurnComplete { .. }) => {
                    prop_assert_eq!(phase == ToolCallPending, phase.is_live() && open);
                    if was_live {
                        prop_assert_eq!(phase, if open { ToolCallPending } else { Active });
                    } else {
                        prop_assert_eq!(phase, before);
                    }
                }
                _ => {}
            }

            check_not_stuck(&tracker)?;
        }
    }
}

/// The random sequences are worth their cases: they visit every phase, and reach turn
/// completes with calls open and with none.
#[test]
fn random_sequences_visit_every_phase() {
    let mut runner = TestRunner::deterministic();
    let mut visited = BTreeSet::new();
    let (mut settled_open, mut settled_idle) = (0, 0);
    for _ in 0..200 {
        let Ok(tree) = steps().new_tree(&mut runner) else {
            panic!("strategy failed to generate a value");
        };
        let mut tracker = PhaseTracker::new();
        for step in tree.current() {
            let was_live = tracker.phase().is_live();
            step.apply(&mut tracker);
            visited.insert(tracker.phase());
            if was_live && matches!(step, Step::Event(SessionEvent::TurnComplete { .. })) {
                match tracker.phase() {
                    ToolCallPending => settled_open += 1,
                    _ => settled_idle += 1,
                }
            }
        }
    }
    assert_eq!(visited, BTreeSet::from(SessionPhase::ALL));
    assert!(
        settled_open >= 50 && settled_idle >= 50,
        "turn completes: {settled_open} with calls open, {settled_idle} without"
    );
}
