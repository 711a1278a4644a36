//! 16_context_engineering: each `C::` policy's selection of the conversation, then a run
//! whose `C::summarize` step makes a real (scripted, recorded) summary call before the
//! agent's own call.

#[allow(dead_code)] // the example's `main` is not called here
#[path = "../../../examples/cookbook/16_context_engineering.rs"]
mod example;

use example::NAME;
use example::cookbook::{MODEL, Models};
use reel::compose::{C, summary_request};
use reel::llm::{Cassette, CassetteMode};
use reel::protocol::Content;

use super::support::{Script, bundled_cassette, check_printed, check_recorded, check_replayed};

const SUMMARY: &str = "The customer's standing desk, order A-1042, is delayed with DHL until \
4 December, too late for their move on 2 December. The agent offered express re-shipping or \
a refund; express costs 25 EUR and arrives on 1 December.";
const ANSWER: &str = "Done: order A-1042 is re-shipped express for 25 EUR, charged to your \
card on file, and arrives on 1 December, before your move.";

/// The answers the bundled cassette holds, in call order: the summary, then the answer.
fn script() -> Script {
    Script::new().answer(MODEL, SUMMARY).answer(MODEL, ANSWER)
}

/// What the summary call summarizes: the conversation without its duplicate, less the last
/// three turns.
fn summarized() -> Vec<Content> {
    let deduped = C::dedup().apply(&example::conversation());
    deduped[..deduped.len() - 3].to_vec()
}

#[tokio::test(start_paused = true)]
async fn the_bundled_cassette_is_the_script_recorded() {
    let script = script();
    let models = script.clone();
    check_recorded(NAME, |cassette| {
        example::run(Models::scripted(move |id| models.model(id), Some(cassette)))
    })
    .await;
    assert!(script.used_up());
    assert_eq!(
        script.asked(),
        [
            "gemini-2.5-flash: Conversation:\n\
             user: Hi, where is my standing desk? Order A-1042.\n\
             model called get_order({\"order_id\":\"A-1042\"})\n\
             tool get_order returned {\"status\":\"delayed\",\"carrier\":\"DHL\",\"eta\":\"2026-12-04\"}\n\
             model: Order A-1042 is with DHL and delayed: it now arrives on 4 December.\n\
             user: That's too late, I move house on 2 December.\n\
             model: Sorry about that. I can re-ship it express or refund it.\n\
             user: What would express cost?\n\
             model called quote_express({\"order_id\":\"A-1042\"})\n\
             tool quote_express returned {\"price_eur\":25,\"arrives\":\"2026-12-01\"}",
            "gemini-2.5-flash: OK, let's do the express shipping. Charge the card on file.",
        ]
    );
}

#[tokio::test]
async fn it_replays_its_bundled_cassette_offline() {
    check_replayed(NAME, |cassette| example::run(Models::replaying(cassette))).await;
}

#[tokio::test]
async fn the_recorded_summary_call_is_the_summary_request_of_the_older_turns() {
    let cassette = Cassette::open(bundled_cassette(NAME), CassetteMode::Replay).unwrap();
    let file = cassette.snapshot().await;
    let requests: Vec<serde_json::Value> = file
        .interactions
        .iter()
        .map(|interaction| serde_json::to_value(&interaction.request).unwrap())
        .collect();
    assert_eq!(requests.len(), 2);
    assert_eq!(
        requests[0],
        serde_json::to_value(summary_request(MODEL, &summarized())).unwrap()
    );
    // The agent's call: the summary turn, the last three turns, the input.
    let contents: Vec<Content> = serde_json::from_value(requests[1]["contents"].clone()).unwrap();
    let conversation = example::conversation();
    assert_eq!(
        contents,
        [
            Content::user_text(format!("Summary of the earlier conversation:\n{SUMMARY}")),
            conversation[10].clone(),
            conversation[11].clone(),
            conversation[12].clone(),
            Content::user_text(example::INPUT),
        ]
    );
}

#[tokio::test]
async fn a_changed_older_turn_is_a_summary_miss_not_a_call() {
    let cassette = Cassette::open(bundled_cassette(NAME), CassetteMode::Replay).unwrap();
    let mut history = example::conversation();
    history[0] = Content::user_text("Hi, where is my standing desk? Order A-1043.");
    let error = example::run_on(cassette.model(MODEL), history)
        .await
        .unwrap_err()
        .to_string();
    assert!(
        error.starts_with(
            "agent `support` failed: its context policy: C::summarize(3): the summary call to \
             `gemini-2.5-flash` failed:"
        ),
        "{error}"
    );
    assert_eq!(cassette.unused().await, [0, 1]);
}

#[test]
fn cargo_run_prints_the_bundled_output() {
    check_printed(NAME);
}
