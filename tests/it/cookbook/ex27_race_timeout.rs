//! 27_race_timeout: under paused time the quick model wins the race (the thorough one
//! would answer after 4 s), the slow agent's 10 s answer passes its 2 s deadline, the
//! summary comes within it; the decisions log holds exactly those three choices, and a
//! replay reads them back with no clock.

#[allow(dead_code)] // the example's `main` is not called here
#[path = "../../../examples/cookbook/27_race_timeout.rs"]
mod example;

use std::sync::{Arc, Mutex};
use std::time::Duration;

use example::cookbook::{MODEL, Models};
use example::{LITE, NAME, PRO, QUESTION};
use reel::agents::{Choice, Decision, DecisionFile, Decisions};

use super::support::{Script, bundled_cassette, check_printed, check_recorded, check_replayed};

const FIRST: &str =
    "Because which branch answers first depends on timing, and a replay must make the same choice.";
const QUICK: &str = "A race's outcome is not in any recorded byte. The log keeps it so the replay does not depend on the machine.";
const SUMMARY: &str = "Log timing choices, replay them.";

/// Each model its own queue: the two racers run at once but ask different models.
fn script() -> Script {
    Script::new()
        .slow(LITE, FIRST, Duration::from_millis(300))
        .slow(
            PRO,
            "A thorough answer that arrives too late to win.",
            Duration::from_secs(4),
        )
        .slow(
            PRO,
            "An in-depth analysis that misses its deadline.",
            Duration::from_secs(10),
        )
        .answer(MODEL, QUICK)
        .slow(MODEL, SUMMARY, Duration::from_millis(500))
}

/// The decisions the recording made, in order.
fn expected_decisions() -> Vec<Decision> {
    vec![
        Decision {
            agent: "race".into(),
            choice: Choice::RaceWinner {
                index: 0,
                winner: "lite_answer".into(),
            },
        },
        Decision {
            agent: "deep_deadline".into(),
            choice: Choice::Timeout { fired: true },
        },
        Decision {
            agent: "summary_deadline".into(),
            choice: Choice::Timeout { fired: false },
        },
    ]
}

/// Checks that `decisions` is the bundled decisions file (or writes it, blessing).
fn check_decisions(decisions: &Decisions) {
    let path = Decisions::path_beside(bundled_cassette(NAME));
    if std::env::var_os("REEL_BLESS").is_some() {
        decisions.save(&path).unwrap();
        return;
    }
    let mut recorded = serde_json::to_string_pretty(&decisions.snapshot()).unwrap();
    recorded.push('\n');
    assert_eq!(
        recorded,
        std::fs::read_to_string(&path).unwrap(),
        "{} is stale",
        path.display()
    );
}

#[tokio::test(start_paused = true)]
async fn the_bundled_cassette_and_decisions_are_the_script_recorded() {
    let script = script();
    let models = script.clone();
    let log = Arc::new(Mutex::new(None));
    let kept = log.clone();
    check_recorded(NAME, |cassette| {
        let models = Models::scripted(move |id| models.model(id), Some(cassette));
        *kept.lock().unwrap() = Some(models.decisions().unwrap());
        example::run(models)
    })
    .await;
    assert!(script.used_up());
    assert_eq!(
        script.asked(),
        [
            format!("{LITE}: {QUESTION}"),
            format!("{PRO}: {QUESTION}"),
            format!("{PRO}: {QUESTION}"),
            format!("{MODEL}: {QUESTION}"),
            format!("{MODEL}: {QUICK}"),
        ]
    );
    let decisions = log.lock().unwrap().take().unwrap();
    assert_eq!(decisions.snapshot().decisions, expected_decisions());
    check_decisions(&decisions);
    // Only the calls that counted were recorded: the race's winner, the quick analysis and
    // the summary; neither of the thorough model's late answers.
    let cassette: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(bundled_cassette(NAME)).unwrap()).unwrap();
    let models: Vec<&str> = cassette["interactions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["request"]["model"].as_str().unwrap())
        .collect();
    assert_eq!(models, [LITE, MODEL, MODEL]);
}

#[tokio::test(start_paused = true)]
async fn a_replay_makes_every_recorded_choice_and_reads_no_clock() {
    let log = Arc::new(Mutex::new(None));
    let kept = log.clone();
    let start = tokio::time::Instant::now();
    check_replayed(NAME, |cassette| {
        let models = Models::replaying(cassette);
        *kept.lock().unwrap() = Some(models.decisions().unwrap());
        example::run(models)
    })
    .await;
    // No deadline was waited for and no late answer awaited: not a tick of tokio time.
    assert_eq!(start.elapsed(), Duration::ZERO);
    let decisions = log.lock().unwrap().take().unwrap();
    assert_eq!(decisions.unused(), Vec::<usize>::new());
    assert_eq!(decisions.snapshot().decisions, expected_decisions());
}

#[tokio::test]
async fn a_replay_with_another_winner_recorded_runs_that_winner() {
    // The bundled log with its winner changed to the second branch: a replay runs the
    // branch the log names, and only it, whichever would finish first now.
    let mut file: DecisionFile = serde_json::from_str(
        &std::fs::read_to_string(Decisions::path_beside(bundled_cassette(NAME))).unwrap(),
    )
    .unwrap();
    file.decisions[0].choice = Choice::RaceWinner {
        index: 1,
        winner: "pro_answer".into(),
    };
    let decisions = Decisions::replay(file);
    let race = reel::agents::RaceTextAgent::new(
        "race",
        vec![
            Arc::new(reel::agents::FnTextAgent::new("lite_answer", |_: &_| {
                Ok("lite".to_owned())
            })),
            Arc::new(reel::agents::FnTextAgent::new("pro_answer", |_: &_| {
                Ok("pro".to_owned())
            })),
        ],
    )
    .decisions(decisions);
    let state = reel::actors::state::State::new();
    assert_eq!(
        reel::agents::TextAgent::run(&race, &state).await.unwrap(),
        "pro"
    );
}

#[test]
fn cargo_run_prints_the_bundled_output() {
    check_printed(NAME);
}
