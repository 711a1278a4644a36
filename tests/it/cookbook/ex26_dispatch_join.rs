//! 26_dispatch_join: three background tasks and the foreground acknowledgement, all
//! answered by what their requests hold (they run at once), joined in dispatch order.

#[allow(dead_code)] // the example's `main` is not called here
#[path = "../../../examples/cookbook/26_dispatch_join.rs"]
mod example;

use example::cookbook::{MODEL, Models};
use example::{NAME, TICKET};

use super::support::{Script, check_printed, check_recorded, check_replayed};

const FRENCH: &str = "Ma commande 5521 est arrivée cassée et personne ne répond au téléphone. Je veux un remboursement aujourd'hui.";
const ACK: &str = "Thank you for telling us about order 5521; we are looking into it now.";

/// The answers, each by what its request holds: the four calls run at once, so their
/// order is not part of the script.
fn script() -> Script {
    Script::new()
        .when(MODEL, "Translate into French", FRENCH)
        .when(MODEL, "Label the sentiment", "negative")
        .when(
            MODEL,
            "Summarise in five words",
            "Broken order, wants refund today",
        )
        // Checked in order: the tasks' requests hold the ticket too, and match above first.
        .when(MODEL, "My order 5521", ACK)
}

#[tokio::test(start_paused = true)]
async fn the_bundled_cassette_is_the_script_recorded() {
    let script = script();
    let models = script.clone();
    check_recorded(NAME, |cassette| {
        example::run(Models::scripted(move |id| models.model(id), Some(cassette)))
    })
    .await;
    let mut asked = script.asked();
    asked.sort();
    assert_eq!(
        asked,
        [
            format!("{MODEL}: Label the sentiment as positive, neutral or negative: {TICKET}"),
            format!("{MODEL}: {TICKET}"),
            format!("{MODEL}: Summarise in five words: {TICKET}"),
            format!("{MODEL}: Translate into French: {TICKET}"),
        ]
    );
}

#[tokio::test]
async fn it_replays_its_bundled_cassette_offline() {
    check_replayed(NAME, |cassette| example::run(Models::replaying(cassette))).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn it_replays_the_same_on_a_multi_threaded_runtime() {
    // The tasks finish in any order on several threads; the cassette answers each by its
    // request and the join reports in dispatch order, so the output is the same.
    check_replayed(NAME, |cassette| example::run(Models::replaying(cassette))).await;
}

#[test]
fn cargo_run_prints_the_bundled_output() {
    check_printed(NAME);
}
