//! Race, timeout and their recorded decisions: a replay decides as the recording did,
//! whatever the timing now.

use std::sync::Arc;
use std::time::Duration;

use reel_actors::state::State;
use reel_agents::{
    AgentError, Choice, DECISIONS_VERSION, Decision, DecisionFile, Decisions, FnTextAgent,
    LlmTextAgent, RaceTextAgent, SharedAgent, TextAgent, TimeoutTextAgent,
};
use serde_json::json;

use crate::scripted_llm::{ScriptedLlm, entries, log};

fn slow(name: &str, answer: &str, secs: u64, log: &crate::scripted_llm::Log) -> SharedAgent {
    Arc::new(LlmTextAgent::new(
        name,
        ScriptedLlm::slow(name, &[answer], Duration::from_secs(secs), log.clone()),
    ))
}

#[tokio::test(start_paused = true)]
async fn race_returns_the_first_success_and_cancels_the_rest() {
    let log = log();
    let failing: SharedAgent = Arc::new(FnTextAgent::new("broken", |_| {
        Err(AgentError::failed("broken", "down"))
    }));
    let race = RaceTextAgent::new(
        "race",
        vec![
            failing,
            slow("thorough", "deep", 10, &log),
            slow("fast", "quick", 1, &log),
        ],
    );
    assert_eq!(race.run(&State::new()).await.unwrap(), "quick");

    let all_fail = RaceTextAgent::new(
        "doomed",
        vec![Arc::new(FnTextAgent::new("only", |_| {
            Err(AgentError::failed("only", "down"))
        }))],
    );
    let error = all_fail.run(&State::new()).await.unwrap_err();
    assert_eq!(error.to_string(), "agent `only` failed: down");
}

#[tokio::test(start_paused = true)]
async fn a_replayed_race_picks_the_recorded_winner_even_when_another_branch_is_now_faster() {
    let log = log();
    let decisions = Decisions::record();
    let recorded = RaceTextAgent::new(
        "race",
        vec![
            slow("a", "answer a", 5, &log),
            slow("b", "answer b", 1, &log),
        ],
    )
    .decisions(decisions.clone());
    assert_eq!(recorded.run(&State::new()).await.unwrap(), "answer b");
    let file = decisions.snapshot();
    assert_eq!(
        serde_json::to_value(&file).unwrap(),
        json!({"version": 1, "decisions": [{"agent": "race", "kind": "raceWinner", "index": 1, "winner": "b"}]})
    );

    // Now `a` is the faster branch; the replay still runs `b`, and only `b`.
    let replay_log = log_fresh();
    let replayed = RaceTextAgent::new(
        "race",
        vec![
            slow("a", "answer a", 0, &replay_log),
            slow("b", "answer b", 9, &replay_log),
        ],
    )
    .decisions(Decisions::replay(file));
    assert_eq!(replayed.run(&State::new()).await.unwrap(), "answer b");
    assert_eq!(entries(&replay_log), ["b: "]);
}

fn log_fresh() -> crate::scripted_llm::Log {
    log()
}

#[tokio::test(start_paused = true)]
async fn a_replayed_timeout_decides_as_recorded() {
    let log = log();
    let decisions = Decisions::record();
    let fired = TimeoutTextAgent::new(
        "deadline",
        slow("slow", "late", 10, &log),
        Duration::from_secs(5),
    )
    .decisions(decisions.clone());
    assert!(matches!(
        fired.run(&State::new()).await,
        Err(AgentError::Timeout { .. })
    ));
    let passed = TimeoutTextAgent::new(
        "deadline",
        slow("slow", "on time", 1, &log),
        Duration::from_secs(5),
    )
    .decisions(decisions.clone());
    assert_eq!(passed.run(&State::new()).await.unwrap(), "on time");
    let file = decisions.snapshot();
    assert_eq!(
        file.decisions,
        [
            Decision {
                agent: "deadline".into(),
                choice: Choice::Timeout { fired: true }
            },
            Decision {
                agent: "deadline".into(),
                choice: Choice::Timeout { fired: false }
            },
        ]
    );

    // Replayed: now the agent is instant, yet the first run times out as recorded (without
    // calling the model) and the second, now slower than the limit, finishes as recorded.
    let replay_log = log_fresh();
    let replay = Decisions::replay(file);
    let first = TimeoutTextAgent::new(
        "deadline",
        slow("slow", "late", 0, &replay_log),
        Duration::from_secs(5),
    )
    .decisions(replay.clone());
    let error = first.run(&State::new()).await.unwrap_err();
    assert_eq!(error.to_string(), "agent `deadline` timed out after 5s");
    let second = TimeoutTextAgent::new(
        "deadline",
        slow("slow", "on time", 60, &replay_log),
        Duration::from_secs(5),
    )
    .decisions(replay.clone());
    assert_eq!(second.run(&State::new()).await.unwrap(), "on time");
    assert_eq!(entries(&replay_log), ["slow: "]);
    assert!(replay.unused().is_empty());
}

#[tokio::test]
async fn a_replay_that_does_not_fit_its_decisions_is_a_typed_error() {
    let state = State::new();
    let agent = |name: &'static str| -> SharedAgent {
        Arc::new(FnTextAgent::new(name, move |_| Ok(name.to_owned())))
    };
    let empty = Decisions::replay(DecisionFile {
        version: DECISIONS_VERSION,
        decisions: vec![],
    });
    let race = RaceTextAgent::new("race", vec![agent("a")]).decisions(empty);
    let error = race.run(&state).await.unwrap_err();
    assert_eq!(
        error.to_string(),
        "agent `race`: replayed decision mismatch: the recording holds no further decision of this agent"
    );

    let renamed = Decisions::replay(DecisionFile {
        version: DECISIONS_VERSION,
        decisions: vec![Decision {
            agent: "race".into(),
            choice: Choice::RaceWinner {
                index: 1,
                winner: "b".into(),
            },
        }],
    });
    let race = RaceTextAgent::new("race", vec![agent("a"), agent("c")]).decisions(renamed);
    let error = race.run(&state).await.unwrap_err();
    assert_eq!(
        error.to_string(),
        "agent `race`: replayed decision mismatch: the recorded winner is `b`, branch 1 is now `c`"
    );
}

#[test]
fn decisions_files_round_trip_and_refuse_other_versions() {
    let dir = std::env::temp_dir().join(format!("reel-agents-decisions-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = Decisions::path_beside(dir.join("review.cassette.json"));
    assert_eq!(path, dir.join("review.decisions.json"));
    let decisions = Decisions::replay(DecisionFile {
        version: DECISIONS_VERSION,
        decisions: vec![Decision {
            agent: "t".into(),
            choice: Choice::Timeout { fired: false },
        }],
    });
    decisions.save(&path).unwrap();
    assert_eq!(
        std::fs::read_to_string(&path).unwrap(),
        "{\n  \"version\": 1,\n  \"decisions\": [\n    {\n      \"agent\": \"t\",\n      \"kind\": \"timeout\",\n      \"fired\": false\n    }\n  ]\n}\n"
    );
    assert_eq!(
        Decisions::open(&path).unwrap().snapshot(),
        decisions.snapshot()
    );
    std::fs::write(&path, r#"{"version": 9, "decisions": []}"#).unwrap();
    let error = Decisions::open(&path).unwrap_err();
    assert_eq!(
        error.to_string(),
        format!(
            "decisions file {} has version 9; this reel reads version 1",
            path.display()
        )
    );
    std::fs::remove_dir_all(&dir).unwrap();
}
