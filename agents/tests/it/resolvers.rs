//! Resolvers: the three sources, results and provenance in state, the TTL cache on the
//! state's clock, and the resolutions log — recorded, written to a file, and replayed
//! with no source called, a changed input reported naming the resolver.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use reel_actors::clock::{ManualClock, SharedClock};
use reel_actors::state::State;
use reel_agents::{
    FnTextAgent, Resolution, ResolutionMode, Resolutions, ResolveError, Resolver, ResolverDrift,
    SourceKind, provenance, read_resolutions,
};
use serde_json::{Map, Value, json};

use crate::scripted_llm::{ScriptedLlm, entries, log};

/// An availability fetch that counts its calls.
fn availability(calls: &Arc<AtomicUsize>) -> Resolver {
    let calls = Arc::clone(calls);
    Resolver::fetch("availability", move |s: State| {
        calls.fetch_add(1, Ordering::SeqCst);
        async move {
            let slot = s.get::<String>("slot").unwrap_or_default();
            Ok(json!({"open": slot == "afternoon"}))
        }
    })
    .inputs(["slot"])
}

async fn state_with(pairs: &[(&str, Value)]) -> State {
    let state = State::new();
    for (key, value) in pairs {
        state.set(key, value).await.unwrap();
    }
    state
}

fn inputs(pairs: &[(&str, Value)]) -> Map<String, Value> {
    pairs
        .iter()
        .map(|(k, v)| ((*k).to_owned(), v.clone()))
        .collect()
}

#[tokio::test]
async fn a_fetch_lands_its_result_and_provenance() {
    let calls = Arc::new(AtomicUsize::new(0));
    let state = state_with(&[("slot", json!("afternoon"))]).await;
    let value = availability(&calls).resolve(&state).await.unwrap();
    assert_eq!(value, json!({"open": true}));
    assert_eq!(
        state.get_raw("availability:result"),
        Some(json!({"open": true}))
    );
    assert_eq!(
        state.get_raw("state_meta:availability:result"),
        Some(json!({"source": "fetch", "inputs": {"slot": "afternoon"}}))
    );
    let from = provenance(&state, "availability:result").unwrap();
    assert_eq!(from.source, SourceKind::Fetch);
    assert_eq!(calls.load(Ordering::SeqCst), 1);
}

#[tokio::test]
async fn a_failed_fetch_lands_its_message_in_the_error_key() {
    let state = State::new();
    let error = Resolver::fetch("crm", |_s: State| async move {
        Err::<Value, _>("the CRM answered 503".into())
    })
    .resolve(&state)
    .await
    .unwrap_err();
    assert_eq!(
        error.to_string(),
        "resolver `crm` (fetch) failed: the CRM answered 503"
    );
    assert_eq!(error.resolver(), "crm");
    assert_eq!(
        state.get_raw("crm:error"),
        Some(json!("the CRM answered 503"))
    );
    assert_eq!(state.get_raw("crm:result"), None);
}

#[tokio::test]
async fn an_agent_runs_on_a_copy_and_only_its_result_is_written() {
    let agent = FnTextAgent::new_async("checker", |s: State| async move {
        s.set("scratch", "agent's own").await.unwrap();
        Ok(format!(
            "free at {}",
            s.get::<String>("slot").unwrap_or_default()
        ))
    });
    let state = state_with(&[("slot", json!("3pm"))]).await;
    let before = state.mutation_cursor();
    let value = Resolver::agent("check", agent)
        .resolve(&state)
        .await
        .unwrap();
    assert_eq!(value, json!("free at 3pm"));
    let written: Vec<(String, Value)> = state
        .mutations_since(before)
        .into_iter()
        .map(|m| (m.key, m.new))
        .collect();
    assert_eq!(
        written,
        [
            ("check:result".to_owned(), json!("free at 3pm")),
            (
                "state_meta:check:result".to_owned(),
                json!({"source": "agent", "inputs": {}})
            ),
        ]
    );
}

#[tokio::test]
async fn an_llm_resolver_asks_its_prompt_with_the_state_filled_in() {
    let prompts = log();
    let llm = ScriptedLlm::new("flash", &["The card was charged twice."], prompts.clone());
    let resolver = Resolver::llm("summary", llm, "Summarize the {topic} issue");
    let state = State::new();

    let missing = resolver.resolve(&state).await.unwrap_err();
    assert_eq!(
        missing.to_string(),
        "resolver `summary` (llm) failed: its prompt reads `{topic}`, but state key `topic` is not set"
    );
    assert!(
        entries(&prompts).is_empty(),
        "no model call without its input"
    );

    state.set("topic", "billing").await.unwrap();
    let value = resolver.resolve(&state).await.unwrap();
    assert_eq!(value, json!("The card was charged twice."));
    assert_eq!(entries(&prompts), ["flash: Summarize the billing issue"]);
    assert_eq!(
        provenance(&state, "summary:result").unwrap().inputs,
        inputs(&[("topic", json!("billing"))])
    );
}

#[tokio::test]
async fn the_cache_answers_within_its_ttl_on_the_states_clock() {
    let calls = Arc::new(AtomicUsize::new(0));
    let clock = Arc::new(ManualClock::new(1_000));
    let state = state_with(&[("slot", json!("afternoon"))]).await;
    state.set_clock(Arc::clone(&clock) as SharedClock);
    let resolver = availability(&calls).ttl(Duration::from_secs(30));

    resolver.resolve(&state).await.unwrap();
    clock.advance(Duration::from_millis(29_999));
    resolver.resolve(&state).await.unwrap();
    assert_eq!(calls.load(Ordering::SeqCst), 1, "fresh: from the cache");

    state.set("slot", "morning").await.unwrap();
    let other = resolver.resolve(&state).await.unwrap();
    assert_eq!(other, json!({"open": false}));
    assert_eq!(calls.load(Ordering::SeqCst), 2, "other inputs: called");

    state.set("slot", "afternoon").await.unwrap();
    clock.advance(Duration::from_millis(1));
    resolver.resolve(&state).await.unwrap();
    assert_eq!(calls.load(Ordering::SeqCst), 3, "30 s passed: called again");
}

#[tokio::test]
async fn a_replay_calls_nothing_and_writes_the_same_journal() {
    let calls = Arc::new(AtomicUsize::new(0));
    let recording = Resolutions::record();
    assert_eq!(recording.mode(), ResolutionMode::Record);
    let live = state_with(&[("slot", json!("afternoon"))]).await;
    availability(&calls)
        .recorded_in(&recording)
        .resolve(&live)
        .await
        .unwrap();
    assert_eq!(
        recording.entries(),
        [Resolution {
            resolver: "availability".into(),
            call: 1,
            source: SourceKind::Fetch,
            inputs: inputs(&[("slot", json!("afternoon"))]),
            result: Some(json!({"open": true})),
            error: None,
            landed_after: None,
            landed_at_ms: None,
            landed_at_mark: None,
        }]
    );

    let replayed_calls = Arc::new(AtomicUsize::new(0));
    let replay = Resolutions::replay(recording.entries());
    let again = state_with(&[("slot", json!("afternoon"))]).await;
    availability(&replayed_calls)
        .recorded_in(&replay)
        .resolve(&again)
        .await
        .unwrap();
    assert_eq!(replayed_calls.load(Ordering::SeqCst), 0, "nothing called");
    assert_eq!(
        again
            .mutations_since(0)
            .iter()
            .map(|m| (&m.key, &m.new))
            .collect::<Vec<_>>(),
        live.mutations_since(0)
            .iter()
            .map(|m| (&m.key, &m.new))
            .collect::<Vec<_>>()
    );
    assert_eq!(replay.drift(), []);
}

#[tokio::test]
async fn a_changed_input_or_an_extra_call_is_drift_naming_the_resolver() {
    let recording = Resolutions::record();
    let calls = Arc::new(AtomicUsize::new(0));
    let live = state_with(&[("slot", json!("afternoon"))]).await;
    availability(&calls)
        .recorded_in(&recording)
        .resolve(&live)
        .await
        .unwrap();

    let replay = Resolutions::replay(recording.entries());
    let never = Arc::new(AtomicUsize::new(0));
    let changed = state_with(&[("slot", json!("morning"))]).await;
    let resolver = availability(&never).recorded_in(&replay);
    // The recorded result is used: a replay calls nothing.
    assert_eq!(
        resolver.resolve(&changed).await.unwrap(),
        json!({"open": true})
    );
    let extra = resolver.resolve(&changed).await.unwrap_err();
    assert!(
        matches!(extra, ResolveError::NotRecorded { call: 2, .. }),
        "{extra:?}"
    );
    assert_eq!(never.load(Ordering::SeqCst), 0);
    let drift = replay.drift();
    assert_eq!(
        drift.iter().map(ToString::to_string).collect::<Vec<_>>(),
        [
            r#"resolver `availability` call 1: inputs {"slot":"afternoon"} recorded, {"slot":"morning"} in the replay"#,
            "resolver `availability` call 2: not in the recording (nothing was called)",
        ]
    );
    assert!(drift.iter().all(|d| d.resolver() == "availability"));

    // A recorded call the replay never makes is drift too.
    let unused = Resolutions::replay(recording.entries());
    assert_eq!(
        unused.drift(),
        [ResolverDrift::Unused {
            resolver: "availability".into(),
            call: 1
        }]
    );
}

#[tokio::test]
async fn the_file_holds_one_line_per_resolution_and_replays() {
    let dir = std::env::temp_dir().join(format!("reel-agents-resolved-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let wire = dir.join("call-7.wire.jsonl");
    let path = Resolutions::path_beside(&wire);
    assert_eq!(path, dir.join("call-7.resolved.jsonl"));

    let log = Resolutions::new();
    assert_eq!(log.mode(), ResolutionMode::Pass);
    log.record_into(&path).unwrap();
    let calls = Arc::new(AtomicUsize::new(0));
    let state = state_with(&[("slot", json!("afternoon"))]).await;
    availability(&calls)
        .recorded_in(&log)
        .resolve(&state)
        .await
        .unwrap();
    Resolver::fetch(
        "crm",
        |_s: State| async move { Err::<Value, _>("503".into()) },
    )
    .recorded_in(&log)
    .resolve(&state)
    .await
    .unwrap_err();
    assert_eq!(
        std::fs::read_to_string(&path).unwrap(),
        concat!(
            r#"{"resolver":"availability","call":1,"source":"fetch","inputs":{"slot":"afternoon"},"result":{"open":true}}"#,
            "\n",
            r#"{"resolver":"crm","call":1,"source":"fetch","inputs":{},"error":"503"}"#,
            "\n"
        )
    );
    let replay = Resolutions::open(&path).unwrap();
    assert_eq!(replay.entries(), read_resolutions(&path).unwrap());
    assert_eq!(replay.mode(), ResolutionMode::Replay);

    std::fs::write(&path, "{\"resolver\":\"x\"}\n").unwrap();
    let bad = read_resolutions(&path).unwrap_err().to_string();
    assert!(
        bad.starts_with(&format!(
            "resolutions file {} line 1: missing field",
            path.display()
        )),
        "{bad}"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[tokio::test(start_paused = true)]
async fn a_dispatched_replay_is_held_until_the_journal_reaches_its_landing() {
    // Recording: a slow agent dispatched; two writes land before its result.
    let recording = Resolutions::record();
    let slow = || {
        FnTextAgent::new_async("slow", |_s: State| async move {
            tokio::time::sleep(Duration::from_secs(5)).await;
            Ok("done".to_owned())
        })
    };
    let live = State::new();
    let task = Resolver::agent("check", slow())
        .recorded_in(&recording)
        .dispatch(live.clone());
    live.set("a", 1).await.unwrap();
    live.set("b", 2).await.unwrap();
    assert_eq!(task.await.unwrap().unwrap(), json!("done"));
    let recorded = recording.entries();
    assert_eq!(recorded[0].landed_after, Some(2));

    // Replay, driven: held until the journal has its two writes.
    let replay = Resolutions::replay(recorded);
    replay.drive();
    let again = State::new();
    let task = Resolver::agent("check", FnTextAgent::new("never", |_| panic!("called")))
        .recorded_in(&replay)
        .dispatch(again.clone());
    replay.release_due(&again, u64::MAX).await;
    assert_eq!(replay.held(), 1);
    again.set("a", 1).await.unwrap();
    replay.release_due(&again, u64::MAX).await;
    assert_eq!(replay.held(), 1);
    again.set("b", 2).await.unwrap();
    replay.release_due(&again, u64::MAX).await;
    assert_eq!(replay.held(), 0);
    assert_eq!(task.await.unwrap().unwrap(), json!("done"));
    let keys = |s: &State| {
        s.mutations_since(0)
            .into_iter()
            .map(|m| m.key)
            .collect::<Vec<_>>()
    };
    assert_eq!(keys(&again), keys(&live));
    assert_eq!(replay.drift(), []);
}
