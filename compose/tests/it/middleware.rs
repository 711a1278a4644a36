//! M:: layers: what each does, and that a layer reading the clock records its decision so
//! a replay from the cassette decides the same with no model call and no clock.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use reel_actors::state::State;
use reel_agents::{Decisions, SharedAgent};
use reel_compose::{
    AgentBuilder, AuditEntry, AuditLog, LatencyLog, LatencyRecord, M, Metrics, MetricsSnapshot,
};
use reel_llm::{BaseLlm, Cassette, CassetteMode};
use serde_json::{Value, json};

use crate::scripted::{Scripted, Step, fail, ok, slow};

fn temp_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("reel-compose-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// What a phase saw: each run's output (an error as `error: …`), and how much (virtual)
/// time it took.
#[derive(Debug, PartialEq)]
struct Phase {
    outcomes: Vec<String>,
    elapsed: Duration,
}

async fn run_all(agent: &SharedAgent, inputs: &[(&str, Duration)], wait: bool) -> Phase {
    let state = State::new();
    let start = tokio::time::Instant::now();
    let mut outcomes = Vec::new();
    for (input, before) in inputs {
        if wait && !before.is_zero() {
            tokio::time::sleep(*before).await;
        }
        state.set("input", *input).await.unwrap();
        outcomes.push(match agent.run(&state).await {
            Ok(output) => output,
            Err(error) => format!("error: {error}"),
        });
    }
    Phase {
        outcomes,
        elapsed: start.elapsed(),
    }
}

/// Records `inputs` through `build`'s agent over a scripted model wrapped in a cassette,
/// with a recording decisions log; then replays from the cassette alone (no live model)
/// and the saved decisions, with no waits between inputs. Returns both phases, the
/// decisions file as JSON and how many calls the scripted model got.
async fn record_and_replay(
    name: &str,
    steps: Vec<Step>,
    inputs: &[(&str, Duration)],
    build: impl Fn(Arc<dyn BaseLlm>, &Decisions) -> SharedAgent,
) -> (Phase, Phase, Value, usize) {
    let dir = temp_dir(name);
    let cassette_path = dir.join("run.cassette.json");
    let decisions_path = Decisions::path_beside(&cassette_path);

    let live = Scripted::new("m", steps);
    let cassette = Cassette::open(&cassette_path, CassetteMode::Record).unwrap();
    let recorded_model =
        reel_llm::LlmInterceptor::wrap(&cassette, live.clone() as Arc<dyn BaseLlm>);
    let decisions = Decisions::record();
    let recorded = run_all(&build(recorded_model, &decisions), inputs, true).await;
    decisions.save(&decisions_path).unwrap();
    let file = serde_json::from_str(&std::fs::read_to_string(&decisions_path).unwrap()).unwrap();
    let live_calls = live.calls();

    let cassette = Cassette::open(&cassette_path, CassetteMode::Replay).unwrap();
    let offline = cassette.model("m");
    let decisions = Decisions::open(&decisions_path).unwrap();
    let replayed = run_all(&build(offline, &decisions), inputs, false).await;
    assert!(
        decisions.unused().is_empty(),
        "unread decisions: {:?}",
        decisions.unused()
    );
    assert_eq!(live.calls(), live_calls, "the replay made a model call");
    std::fs::remove_dir_all(&dir).unwrap();
    (recorded, replayed, file, live_calls)
}

fn writer(middleware: reel_compose::Middleware) -> AgentBuilder {
    AgentBuilder::new("writer")
        .instruction("Write.")
        .middleware(middleware)
}

const NOW: Duration = Duration::ZERO;

#[tokio::test(start_paused = true)]
async fn retry_records_its_attempts_and_waits_and_the_replay_does_not_wait() {
    let (recorded, replayed, file, calls) = record_and_replay(
        "retry",
        vec![fail("overloaded"), fail("overloaded"), ok("third time")],
        &[("q", NOW)],
        |llm, d| {
            writer(M::retry_with_backoff(3, Duration::from_millis(100)))
                .build_with(llm, d)
                .shared()
        },
    )
    .await;
    assert_eq!(calls, 3);
    assert_eq!(recorded.outcomes, ["third time"]);
    assert_eq!(recorded.elapsed, Duration::from_millis(300));
    assert_eq!(replayed.outcomes, recorded.outcomes);
    assert_eq!(replayed.elapsed, Duration::ZERO);
    assert_eq!(
        file,
        json!({"version": 1, "decisions": [
            {"agent": "writer.retry", "kind": "middleware", "layer": "retry", "outcome": {"attempts": 3, "waitsMs": [100, 200]}}
        ]})
    );
}

#[tokio::test(start_paused = true)]
async fn retry_exhausted_fails_the_same_way_live_and_replayed() {
    let (recorded, replayed, file, calls) = record_and_replay(
        "retry-exhausted",
        vec![fail("down"), fail("still down")],
        &[("q", NOW)],
        |llm, d| writer(M::retry(1)).build_with(llm, d).shared(),
    )
    .await;
    assert_eq!(calls, 2);
    let message = "error: agent `writer` failed: M::retry: all 2 attempts failed; the last: agent `writer`: the model call failed: the model API answered 503 for scripted: still down";
    assert_eq!(recorded.outcomes, [message]);
    assert_eq!(replayed.outcomes, [message]);
    assert_eq!(file["decisions"][0]["outcome"]["attempts"], json!(2));
}

#[tokio::test(start_paused = true)]
async fn a_retry_around_a_timeout_replays_the_attempt_that_succeeded() {
    let (recorded, replayed, file, calls) = record_and_replay(
        "retry-timeout",
        vec![
            slow("too late", Duration::from_millis(200)),
            ok("second try"),
        ],
        &[("q", NOW)],
        |llm, d| {
            writer(M::retry(2) | M::timeout(Duration::from_millis(50)))
                .build_with(llm, d)
                .shared()
        },
    )
    .await;
    assert_eq!(calls, 2);
    assert_eq!(recorded.outcomes, ["second try"]);
    assert_eq!(replayed.outcomes, recorded.outcomes);
    assert_eq!(
        file["decisions"],
        json!([
            {"agent": "writer.timeout", "kind": "middleware", "layer": "timeout", "outcome": {"fired": true}},
            {"agent": "writer.timeout", "kind": "middleware", "layer": "timeout", "outcome": {"fired": false}},
            {"agent": "writer.retry", "kind": "middleware", "layer": "retry",
             "outcome": {"attempts": 2, "waitsMs": [0], "skipped": ["writer.timeout"]}}
        ])
    );
}

#[tokio::test(start_paused = true)]
async fn timeout_records_whether_it_fired_and_the_replay_decides_the_same() {
    let (recorded, replayed, file, _) = record_and_replay(
        "timeout",
        vec![slow("too late", Duration::from_millis(200)), ok("in time")],
        &[("slow one", NOW), ("fast one", NOW)],
        |llm, d| {
            writer(M::timeout(Duration::from_millis(50)))
                .build_with(llm, d)
                .shared()
        },
    )
    .await;
    assert_eq!(
        recorded.outcomes,
        ["error: agent `writer` timed out after 50ms", "in time"]
    );
    assert_eq!(
        replayed,
        Phase {
            outcomes: recorded.outcomes.clone(),
            elapsed: Duration::ZERO
        }
    );
    assert_eq!(
        file["decisions"],
        json!([
            {"agent": "writer.timeout", "kind": "middleware", "layer": "timeout", "outcome": {"fired": true}},
            {"agent": "writer.timeout", "kind": "middleware", "layer": "timeout", "outcome": {"fired": false}}
        ])
    );
}

#[tokio::test(start_paused = true)]
async fn a_timeout_that_cut_a_cache_short_drops_its_decision_in_the_replay() {
    // The cache decided (a miss) before the call the timeout cut short; the replay does not
    // run the cache for that call, so the next call's cache must not read that decision.
    let (recorded, replayed, file, _) = record_and_replay(
        "timeout-cache",
        vec![slow("too late", Duration::from_millis(200)), ok("answer")],
        &[("slow one", NOW), ("q", NOW), ("q", NOW)],
        |llm, d| {
            writer(M::timeout(Duration::from_millis(50)) | M::cache(Duration::from_secs(60)))
                .build_with(llm, d)
                .shared()
        },
    )
    .await;
    assert_eq!(
        recorded.outcomes,
        [
            "error: agent `writer` timed out after 50ms",
            "answer",
            "answer"
        ]
    );
    assert_eq!(replayed.outcomes, recorded.outcomes);
    assert_eq!(
        file["decisions"][1],
        json!({"agent": "writer.timeout", "kind": "middleware", "layer": "timeout",
               "outcome": {"fired": true, "skipped": ["writer.cache"]}})
    );
}

#[tokio::test(start_paused = true)]
async fn latency_replays_the_recorded_figure() {
    let log = LatencyLog::new();
    let (recorded, replayed, file, _) = record_and_replay(
        "latency",
        vec![slow("answer", Duration::from_millis(120))],
        &[("q", NOW)],
        |llm, d| writer(M::latency(&log)).build_with(llm, d).shared(),
    )
    .await;
    assert_eq!(recorded.outcomes, ["answer"]);
    assert_eq!(
        replayed,
        Phase {
            outcomes: recorded.outcomes.clone(),
            elapsed: Duration::ZERO
        }
    );
    let record = LatencyRecord {
        agent: "writer".into(),
        ms: 120,
        ok: true,
    };
    assert_eq!(log.records(), [record.clone(), record]);
    assert_eq!(file["decisions"][0]["outcome"], json!({"ms": 120}));
}

#[tokio::test(start_paused = true)]
async fn circuit_breaker_states_replay_without_the_clock() {
    let (recorded, replayed, file, calls) = record_and_replay(
        "breaker",
        vec![fail("down"), fail("down"), ok("recovered")],
        &[
            ("1", NOW),
            ("2", NOW),
            ("3", NOW),
            ("4", Duration::from_secs(10)),
        ],
        |llm, d| {
            writer(M::circuit_breaker_with_cooldown(2, Duration::from_secs(10)))
                .build_with(llm, d)
                .shared()
        },
    )
    .await;
    assert_eq!(calls, 3);
    assert_eq!(
        recorded.outcomes[0],
        "error: agent `writer`: the model call failed: the model API answered 503 for scripted: down"
    );
    assert_eq!(
        recorded.outcomes[2..],
        [
            "error: agent `writer` failed: the circuit breaker is open after 2 failures in a row; no call made",
            "recovered"
        ]
    );
    // A failed call is not on the cassette: its replay fails as a typed miss, and the
    // breaker's states come from the recording.
    assert!(replayed.outcomes[0].starts_with("error: agent `writer`: the model call failed"));
    assert_eq!(replayed.outcomes[2..], recorded.outcomes[2..]);
    assert_eq!(replayed.elapsed, Duration::ZERO);
    let states: Vec<Value> = file["decisions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["outcome"]["state"].clone())
        .collect();
    assert_eq!(
        states,
        [
            json!("closed"),
            json!("closed"),
            json!("open"),
            json!("halfOpen")
        ]
    );
}

#[tokio::test(start_paused = true)]
async fn cache_hits_replay_where_the_recording_hit() {
    let (recorded, replayed, file, calls) = record_and_replay(
        "cache",
        vec![ok("answer 1"), ok("answer 2")],
        &[
            ("q", NOW),
            ("q", Duration::from_secs(30)),
            ("q", Duration::from_secs(31)),
        ],
        |llm, d| {
            writer(M::cache(Duration::from_secs(60)))
                .build_with(llm, d)
                .shared()
        },
    )
    .await;
    assert_eq!(calls, 2);
    assert_eq!(recorded.outcomes, ["answer 1", "answer 1", "answer 2"]);
    assert_eq!(replayed.outcomes, recorded.outcomes);
    let hits: Vec<Value> = file["decisions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["outcome"]["hit"].clone())
        .collect();
    assert_eq!(hits, [json!(false), json!(true), json!(false)]);
}

#[tokio::test]
async fn dedup_fallback_model_audit_and_metrics_need_no_clock() {
    let model = Scripted::new("m", vec![fail("overloaded"), ok("from flash"), ok("other")]);
    let (audit, metrics) = (AuditLog::new(), Metrics::new());
    let agent = writer(
        M::metrics(&metrics)
            | M::audit(&audit)
            | M::dedup()
            | M::fallback_model("gemini-2.5-flash")
            | M::log(),
    )
    .build(model.clone());
    let state = State::new();
    for input in ["q", "q", "r"] {
        state.set("input", input).await.unwrap();
        reel_agents::TextAgent::run(&agent, &state).await.unwrap();
    }
    assert_eq!(model.prompts(), ["m: q", "gemini-2.5-flash: q", "m: r"]);
    assert_eq!(
        audit.entries(),
        [
            AuditEntry {
                agent: "writer".into(),
                input: "q".into(),
                outcome: Ok("from flash".into())
            },
            AuditEntry {
                agent: "writer".into(),
                input: "q".into(),
                outcome: Ok("from flash".into())
            },
            AuditEntry {
                agent: "writer".into(),
                input: "r".into(),
                outcome: Ok("other".into())
            },
        ]
    );
    assert_eq!(
        metrics.snapshot(),
        MetricsSnapshot {
            calls: 3,
            succeeded: 3,
            failed: 0
        }
    );
}

#[tokio::test(start_paused = true)]
async fn a_race_in_a_compiled_tree_records_its_winner() {
    let (recorded, replayed, file, _) = record_and_replay(
        "race",
        vec![
            slow("slow answer", Duration::from_secs(5)),
            ok("fast answer"),
        ],
        &[("q", NOW)],
        |llm, d| {
            reel_compose::race(vec![
                AgentBuilder::new("slow").instruction("Slow.").into(),
                AgentBuilder::new("fast").instruction("Fast.").into(),
            ])
            .compile_with(llm, d)
        },
    )
    .await;
    assert_eq!(recorded.outcomes, ["fast answer"]);
    assert_eq!(replayed.outcomes, recorded.outcomes);
    assert_eq!(
        file["decisions"],
        json!([{"agent": "race(slow, fast)", "kind": "raceWinner", "index": 1, "winner": "fast"}])
    );
}
