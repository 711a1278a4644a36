//! 20_supervised: the reviewer approves the first reply and rejects the second; the
//! pipeline waits for each decision; offline the recorded decisions are read back.

#[allow(dead_code)] // the example's `main` is not called here
#[path = "../../../examples/cookbook/20_supervised.rs"]
mod example;

use example::NAME;
use example::cookbook::{MODEL, Models};
use reel::agents::{Approval, Decisions};
use tokio::sync::{mpsc, oneshot};

use super::support::{Script, bundled_cassette, check_printed, check_recorded, check_replayed};

const CRACKED: &str =
    "I'm sorry your order #4411 arrived damaged. We'll send a replacement today at no cost.";
const FRIDAY: &str = "Yes, we guarantee your refund will arrive before Friday.";

fn script() -> Script {
    Script::new().answer(MODEL, CRACKED).answer(MODEL, FRIDAY)
}

fn bundled_decisions() -> std::path::PathBuf {
    Decisions::path_beside(bundled_cassette(NAME))
}

/// A reviewer on the other end of a channel, as a UI would be: it gets each draft and
/// answers when it decides. Approves a draft without "guarantee"; rejects one with it.
fn reviewer() -> (
    impl Fn(String) -> oneshot::Receiver<Approval> + Send + Sync + 'static,
    tokio::task::JoinHandle<Vec<String>>,
) {
    let (tx, mut rx) = mpsc::unbounded_channel::<(String, oneshot::Sender<Approval>)>();
    let person = tokio::spawn(async move {
        let mut seen = Vec::new();
        while let Some((draft, answer)) = rx.recv().await {
            let decision = if draft.contains("guarantee") {
                Approval::reject("editor", "we cannot promise delivery dates")
            } else {
                Approval::approve("editor", "clear and kind")
            };
            seen.push(draft);
            let _ = answer.send(decision);
        }
        seen
    });
    let ask = move |draft: String| {
        let (answer, decided) = oneshot::channel();
        let _ = tx.send((draft, answer));
        decided
    };
    (ask, person)
}

#[tokio::test(start_paused = true)]
async fn the_bundled_cassette_is_the_script_recorded() {
    let script = script();
    let models = script.clone();
    let (ask, person) = reviewer();
    check_recorded(NAME, |cassette| async move {
        let decisions = Decisions::path_beside(cassette.path());
        let approver = move |draft: String| {
            let decided = ask(draft);
            async move {
                decided
                    .await
                    .unwrap_or_else(|_| Approval::reject("nobody", "the reviewer went away"))
            }
        };
        let printed = example::run_with(
            Models::scripted(move |id| models.model(id), Some(cassette)),
            approver,
        )
        .await?;
        let recorded = std::fs::read_to_string(&decisions)?;
        if std::env::var_os("REEL_BLESS").is_some() {
            std::fs::write(bundled_decisions(), &recorded)?;
        }
        assert_eq!(recorded, std::fs::read_to_string(bundled_decisions())?);
        Ok(printed)
    })
    .await;
    assert!(script.used_up());
    assert_eq!(
        script.asked(),
        [
            format!("{MODEL}: {}", example::TICKETS[0]),
            format!("{MODEL}: {}", example::TICKETS[1]),
        ]
    );
    // The reviewer saw each draft once (the approver and its sender are dropped with the
    // pipeline, which ends the reviewer's loop).
    assert_eq!(person.await.unwrap(), [CRACKED, FRIDAY]);
}

#[tokio::test]
async fn it_replays_its_bundled_cassette_offline() {
    check_replayed(NAME, |cassette| {
        example::run_with(Models::replaying(cassette), |_: String| async {
            panic!("the replay asked the reviewer")
        })
    })
    .await;
}

#[test]
fn cargo_run_prints_the_bundled_output() {
    check_printed(NAME);
}
