//! `.on_enter(step, agent, mode)` in a whole session on a loopback WebSocket: the agent
//! runs when the step joins `flow:active` (written here by a tool, as the governing flow's
//! monitor would), its result lands in `{step}:result`, and the same chain replaying the
//! recording writes the same journal entry by entry — a dispatched result at the place it
//! landed — with the agent never called.

use crate::support;

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use reel_actors::clock::TokioClock;
use reel_actors::state::State;
use reel_actors::testing::ScriptedServer;
use reel_agents::{
    AgentMode, FnTextAgent, Resolution, Resolutions, Resolver, SourceKind, read_resolutions,
};
use reel_fluent::{Live, LiveBuilder};
use reel_recorder::journal::StateMutation;
use reel_recorder::wire_log::WireEntry;
use reel_tools::SimpleTool;
use serde_json::json;
use support::{T0, TempFolder, recording, text, turn_complete, until_turn_complete};
use tokio::sync::Notify;

/// A booking line: a tool takes the slot and enters step `check` (as a flow's monitor
/// publishes `flow:active`); `check` runs the availability agent in `mode`. The agent
/// counts its runs and, given a gate, waits for it.
fn booking(
    mode: AgentMode,
    runs: &Arc<AtomicUsize>,
    gate: Option<Arc<Notify>>,
    log: &Resolutions,
) -> LiveBuilder {
    line(log).on_enter("check", availability(runs, gate), mode)
}

/// The availability agent: counts its runs and, given a gate, waits for it.
fn availability(runs: &Arc<AtomicUsize>, gate: Option<Arc<Notify>>) -> FnTextAgent {
    let runs = Arc::clone(runs);
    FnTextAgent::new_async("availability", move |s: State| {
        runs.fetch_add(1, Ordering::SeqCst);
        let gate = gate.clone();
        async move {
            if let Some(gate) = gate {
                gate.notified().await;
            }
            Ok(format!(
                "free at {}",
                s.get::<String>("app:slot").unwrap_or_default()
            ))
        }
    })
}

/// The line without its step's work: a tool takes the slot and enters `check`.
fn line(log: &Resolutions) -> LiveBuilder {
    Live::builder()
        .model("gemini-live-2.5-flash-preview")
        .text_only()
        .tool(SimpleTool::new(
            "take_slot",
            "Takes the caller's slot.",
            Some(json!({"type": "object", "properties": {"slot": {"type": "string"}}})),
            |args, ctx| async move {
                let slot = args["slot"].as_str().unwrap_or_default().to_owned();
                ctx.state.set("app:slot", &slot).map_err(|e| ctx.fail(e))?;
                ctx.state
                    .set("flow:active", json!(["check"]))
                    .map_err(|e| ctx.fail(e))?;
                Ok(json!({"slot": slot}))
            },
        ))
        .resolutions(log)
}

struct Recorded {
    wire: Vec<WireEntry>,
    journal: Vec<StateMutation>,
    resolutions: Vec<Resolution>,
}

/// The same chain replaying `recorded` (in `mode`, from its resolutions): the agent never
/// runs, nothing diverges or drifts, and the journal is the recorded one entry by entry.
async fn replays_clean_running_nothing(mode: AgentMode, recorded: &Recorded) {
    let runs = Arc::new(AtomicUsize::new(0));
    let outcome = booking(
        mode,
        &runs,
        None,
        &Resolutions::replay(recorded.resolutions.clone()),
    )
    .replay(recorded.wire.clone())
    .await
    .unwrap()
    .finish()
    .await
    .with_recorded_journal(recorded.journal.clone());
    assert_eq!(runs.load(Ordering::SeqCst), 0, "the agent is never run");
    assert_eq!(outcome.divergences, vec![]);
    assert_eq!(outcome.resolver_drift, vec![]);
    assert_eq!(outcome.journal, recorded.journal, "journal, entry by entry");
    assert!(outcome.is_clean(), "{}", outcome.verdict());
}

/// Records a session: a tool call entering `check`, a turn; then (with a gate) the agent
/// finishes between that turn and the next; then a second turn.
async fn record(mode: AgentMode, gate: Option<Arc<Notify>>) -> Recorded {
    record_telling(mode, gate, None).await
}

/// [`record`], the model expecting `told` once the result lands.
async fn record_telling(
    mode: AgentMode,
    gate: Option<Arc<Notify>>,
    told: Option<serde_json::Value>,
) -> Recorded {
    let runs = Arc::new(AtomicUsize::new(0));
    let log = Resolutions::record();
    let (builder, memory) = recording(booking(mode, &runs, gate.clone(), &log));
    play(builder, gate, told).await;
    assert_eq!(runs.load(Ordering::SeqCst), 1);
    Recorded {
        wire: memory.wire.entries(),
        journal: memory.journal.entries(),
        resolutions: log.entries(),
    }
}

/// The session's script against `builder`, on a loopback WebSocket.
async fn play(builder: LiveBuilder, gate: Option<Arc<Notify>>, told: Option<serde_json::Value>) {
    let mut server = ScriptedServer::bind().await;
    let mut events = builder.subscribe();
    let endpoint = server.endpoint();
    let script = async {
        let mut conn = server.accept().await;
        conn.recv().await.unwrap();
        conn.send_json(&json!({"setupComplete": {}})).await;
        conn
    };
    let (handle, mut conn) = tokio::join!(builder.connect(endpoint), script);
    let handle = handle.unwrap();

    tokio::time::advance(Duration::from_millis(500)).await;
    conn.send_json(&json!({"toolCall": {"functionCalls": [
        {"id": "c-1", "name": "take_slot", "args": {"slot": "3pm"}}
    ]}}))
    .await;
    conn.recv_json().await;
    conn.send_json(&text("Let me check.")).await;
    conn.send_json(&turn_complete()).await;
    until_turn_complete(&mut events).await;

    if let Some(gate) = gate {
        assert_eq!(
            handle.state().get_raw("check:result"),
            None,
            "still running"
        );
        gate.notify_one();
        // Synchronised on the write itself.
        while !handle.state().contains("check:result") {
            tokio::task::yield_now().await;
        }
    }
    if let Some(told) = told {
        assert_eq!(conn.recv_json().await, told);
    }

    tokio::time::advance(Duration::from_millis(500)).await;
    conn.send_json(&text("3pm is free.")).await;
    conn.send_json(&turn_complete()).await;
    until_turn_complete(&mut events).await;

    let (end, _) = tokio::join!(handle.disconnect(), conn.expect_closed());
    assert_eq!(end.reason, "closed with code 1000: client disconnect");
}

/// The journal's keys, in order, without the runtime's `session:` keys.
fn keys(journal: &[StateMutation]) -> Vec<String> {
    journal
        .iter()
        .filter(|m| !m.key.starts_with("session:"))
        .map(|m| m.key.clone())
        .collect()
}

#[tokio::test(start_paused = true)]
async fn a_called_agent_lands_its_result_at_the_tool_commit_and_replays_without_running() {
    let recorded = record(AgentMode::Call, None).await;
    assert_eq!(
        keys(&recorded.journal),
        [
            "app:slot",
            "flow:active",
            "check:result",
            "state_meta:check:result",
        ]
    );
    let result = recorded
        .journal
        .iter()
        .find(|m| m.key == "check:result")
        .unwrap();
    assert_eq!(result.new, json!("free at 3pm"));
    assert_eq!(
        recorded.resolutions,
        [Resolution {
            resolver: "check".into(),
            call: 1,
            source: SourceKind::Agent,
            inputs: Default::default(),
            result: Some(json!("free at 3pm")),
            error: None,
            landed_after: None,
            landed_at_ms: None,
            landed_at_mark: None,
        }]
    );

    replays_clean_running_nothing(AgentMode::Call, &recorded).await;
}

#[tokio::test(start_paused = true)]
async fn a_dispatched_result_lands_between_two_frames_and_the_replay_puts_it_there() {
    let recorded = record(AgentMode::Dispatch, Some(Arc::new(Notify::new()))).await;
    // Live: the result landed after the first turn's writes and before the second's.
    let position =
        |journal: &[StateMutation], key: &str| journal.iter().position(|m| m.key == key).unwrap();
    let turns: Vec<usize> = recorded
        .journal
        .iter()
        .enumerate()
        .filter(|(_, m)| m.key == "session:turn_count")
        .map(|(i, _)| i)
        .collect();
    assert_eq!(turns.len(), 2, "{:?}", keys(&recorded.journal));
    let landed = position(&recorded.journal, "check:result");
    assert!(turns[0] < landed && landed < turns[1], "{turns:?} {landed}");
    let resolution = &recorded.resolutions[0];
    assert_eq!(resolution.result, Some(json!("free at 3pm")));
    assert_eq!(
        resolution.landed_after,
        Some(recorded.journal[landed].sequence - 1)
    );
    assert_eq!(
        resolution.landed_at_ms,
        Some(recorded.journal[landed].timestamp_ms)
    );
    // Between two events (an even lane mark): after the lane was done with the first.
    assert_eq!(resolution.landed_at_mark, Some(22));

    replays_clean_running_nothing(AgentMode::Dispatch, &recorded).await;
}

#[tokio::test(start_paused = true)]
async fn a_resolver_reading_other_inputs_in_the_replay_is_named_in_the_verdict() {
    let recorded = record(AgentMode::Call, None).await;
    // The same agent, now declared to read the slot: the recorded inputs were none.
    let runs = Arc::new(AtomicUsize::new(0));
    let changed = Resolver::agent("check", availability(&runs, None)).inputs(["app:slot"]);
    let outcome = line(&Resolutions::replay(recorded.resolutions.clone()))
        .on_enter_resolver("check", changed, AgentMode::Call)
        .replay(recorded.wire.clone())
        .await
        .unwrap()
        .finish()
        .await;
    let drift: Vec<String> = outcome
        .resolver_drift
        .iter()
        .map(ToString::to_string)
        .collect();
    assert_eq!(
        drift,
        [r#"resolver `check` call 1: inputs {} recorded, {"app:slot":"3pm"} in the replay"#]
    );
    assert_eq!(
        runs.load(Ordering::SeqCst),
        0,
        "the recorded result is used"
    );
    assert!(!outcome.is_clean());
    assert!(
        outcome
            .verdict()
            .to_string()
            .ends_with("1 resolution of `check`."),
        "{}",
        outcome.verdict()
    );
}

#[tokio::test(start_paused = true)]
async fn a_recording_on_file_keeps_its_resolutions_beside_the_wire_log() {
    let folder = TempFolder::new("orchestration-files");
    let wire = folder.join("call.wire.jsonl");
    let runs = Arc::new(AtomicUsize::new(0));
    let gate = Arc::new(Notify::new());
    let builder = booking(
        AgentMode::Dispatch,
        &runs,
        Some(gate.clone()),
        &Resolutions::new(),
    )
    .record_wire(&wire)
    .journal(folder.join("call.journal.jsonl"))
    .customize(|session| session.clock(Arc::new(TokioClock::anchored_at(T0))));
    play(builder, Some(gate), None).await;
    let recorded = read_resolutions(folder.join("call.resolved.jsonl")).unwrap();
    assert_eq!(recorded.len(), 1);
    assert_eq!(recorded[0].resolver, "check");
    assert_eq!(recorded[0].result, Some(json!("free at 3pm")));
    assert!(recorded[0].landed_after.is_some());

    // The replay finds the file (and the journal) beside the wire log: nothing is run.
    let replay_runs = Arc::new(AtomicUsize::new(0));
    let outcome = booking(AgentMode::Dispatch, &replay_runs, None, &Resolutions::new())
        .replay(&wire)
        .await
        .unwrap()
        .finish()
        .await;
    assert_eq!(replay_runs.load(Ordering::SeqCst), 0);
    assert!(outcome.recorded_journal.is_some());
    assert!(outcome.is_clean(), "{}", outcome.verdict());

    // Without the file, the replay still calls nothing: the step's result is missing,
    // and the verdict names the resolver.
    std::fs::remove_file(folder.join("call.resolved.jsonl")).unwrap();
    let outcome = booking(AgentMode::Dispatch, &replay_runs, None, &Resolutions::new())
        .replay(&wire)
        .await
        .unwrap()
        .finish()
        .await;
    assert_eq!(replay_runs.load(Ordering::SeqCst), 0);
    assert!(
        outcome
            .verdict()
            .to_string()
            .ends_with("1 resolution of `check`."),
        "{}",
        outcome.verdict()
    );
}

#[tokio::test(start_paused = true)]
async fn a_background_result_is_told_to_the_model_and_replays_clean() {
    let told = json!({"clientContent": {
        "turns": [{"role": "user", "parts": [{"text": "[check finished] free at 3pm"}]}],
        "turnComplete": false
    }});
    let recorded = record_telling(
        AgentMode::Background,
        Some(Arc::new(Notify::new())),
        Some(told),
    )
    .await;
    replays_clean_running_nothing(AgentMode::Background, &recorded).await;
}

/// A chain whose watcher on the slot fetches a quote through a resolver recorded in the
/// chain's log; the fetch counts its calls.
fn quoting(log: &Resolutions, calls: &Arc<AtomicUsize>) -> LiveBuilder {
    let calls = Arc::clone(calls);
    let quote = Resolver::fetch("quote", move |s: State| {
        calls.fetch_add(1, Ordering::SeqCst);
        async move {
            let slot = s.get::<String>("app:slot").unwrap_or_default();
            Ok(json!({"slot": slot, "price": 40}))
        }
    })
    .inputs(["app:slot"])
    .recorded_in(log);
    line(log)
        .watch("app:slot")
        .blocking()
        .then(move |_old, _new, state| {
            let quote = quote.clone();
            async move {
                quote.resolve(&state).await.unwrap();
            }
        })
}

#[tokio::test(start_paused = true)]
async fn a_resolver_in_a_watcher_is_recorded_with_the_session_and_replays_without_fetching() {
    let log = Resolutions::record();
    let calls = Arc::new(AtomicUsize::new(0));
    let (builder, memory) = recording(quoting(&log, &calls));
    play(builder, None, None).await;
    assert_eq!(calls.load(Ordering::SeqCst), 1);
    let journal = memory.journal.entries();
    let quote = journal.iter().find(|m| m.key == "quote:result").unwrap();
    assert_eq!(quote.new, json!({"slot": "3pm", "price": 40}));

    let replay_calls = Arc::new(AtomicUsize::new(0));
    let outcome = quoting(&Resolutions::replay(log.entries()), &replay_calls)
        .replay(memory.wire.entries())
        .await
        .unwrap()
        .finish()
        .await
        .with_recorded_journal(journal.clone());
    assert_eq!(replay_calls.load(Ordering::SeqCst), 0, "nothing fetched");
    assert_eq!(outcome.resolver_drift, vec![]);
    assert_eq!(outcome.journal, journal, "journal, entry by entry");
    assert!(outcome.is_clean(), "{}", outcome.verdict());
}

#[tokio::test(start_paused = true)]
async fn a_steps_work_runs_each_time_the_step_joins_flow_active() {
    let runs = Arc::new(AtomicUsize::new(0));
    let builder = Live::builder()
        .model("gemini-live-2.5-flash-preview")
        .text_only()
        .tool(SimpleTool::new(
            "publish",
            "Publishes the active steps, as a flow's monitor would.",
            Some(json!({"type": "object", "properties": {"steps": {"type": "array"}}})),
            |args, ctx| async move {
                ctx.state
                    .set("flow:active", &args["steps"])
                    .map_err(|e| ctx.fail(e))?;
                Ok(json!({}))
            },
        ))
        .on_enter("check", availability(&runs, None), AgentMode::Call)
        .resolutions(&Resolutions::new());
    let mut server = ScriptedServer::bind().await;
    let mut events = builder.subscribe();
    let endpoint = server.endpoint();
    let script = async {
        let mut conn = server.accept().await;
        conn.recv().await.unwrap();
        conn.send_json(&json!({"setupComplete": {}})).await;
        conn
    };
    let (handle, mut conn) = tokio::join!(builder.connect(endpoint), script);
    let handle = handle.unwrap();
    let mut seen = Vec::new();
    for (id, steps) in [
        ("c-1", json!(["check"])),
        ("c-2", json!(["check", "pay"])),
        ("c-3", json!(["pay"])),
        ("c-4", json!(["pay", "check"])),
    ] {
        conn.send_json(&json!({"toolCall": {"functionCalls": [
            {"id": id, "name": "publish", "args": {"steps": steps}}
        ]}}))
        .await;
        conn.recv_json().await;
        conn.send_json(&turn_complete()).await;
        until_turn_complete(&mut events).await;
        seen.push(runs.load(Ordering::SeqCst));
    }
    assert_eq!(seen, [1, 1, 1, 2], "entered, stayed, left, entered again");
    let (end, _) = tokio::join!(handle.disconnect(), conn.expect_closed());
    assert_eq!(end.reason, "closed with code 1000: client disconnect");
}
