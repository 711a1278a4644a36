//! The `review_loop` example runs offline from its bundled cassette and prints exactly the
//! recorded review.

#[allow(dead_code)] // the example's `main` is not called here
#[path = "../../examples/review_loop.rs"]
mod review_loop;

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};

use futures_util::future::BoxFuture;
use reel::llm::{
    BaseLlm, Cassette, CassetteMode, LlmChunk, LlmError, LlmInterceptor, LlmRequest, LlmStream,
    LlmUsage,
};

const EXPECTED: &str = "\
round 1
  draft  | The lamp turns slow above the sea,
  draft  | the keeper counts the ships gone by;
  draft  | tomorrow strangers hold the key,
  draft  | tonight the light is his to fly.
  review | Make the last line about the light going out.
round 2
  draft  | The lamp turns slow above the sea,
  draft  | the keeper counts the ships gone by;
  draft  | tomorrow strangers hold the key,
  draft  | tonight he lets the last beam die.
  review | APPROVED
approved after 2 rounds:
The lamp turns slow above the sea,
the keeper counts the ships gone by;
tomorrow strangers hold the key,
tonight he lets the last beam die.
";

#[tokio::test]
async fn the_review_loop_example_replays_its_bundled_cassette_offline() {
    let model = review_loop::model_for(&review_loop::Target::Bundled).unwrap();
    let review = review_loop::run(model).await.unwrap();
    assert_eq!(review_loop::report(&review), EXPECTED);
    assert!(review.approved);
    assert_eq!(review.rounds.len(), 2);
}

#[tokio::test]
async fn every_bundled_call_is_used_and_a_changed_prompt_is_a_miss_not_a_call() {
    let cassette = Cassette::open(review_loop::BUNDLED_CASSETTE, CassetteMode::Replay).unwrap();
    review_loop::run(cassette.model(review_loop::MODEL))
        .await
        .unwrap();
    assert!(cassette.unused().await.is_empty());
    let again = review_loop::run(cassette.model(review_loop::MODEL))
        .await
        .unwrap_err();
    assert!(
        again
            .to_string()
            .starts_with("agent `writer`: the model call failed:"),
        "{again}"
    );
}

/// The answers the bundled cassette holds, in call order.
const SCRIPT: [&str; 4] = [
    "The lamp turns slow above the sea,\nthe keeper counts the ships gone by;\ntomorrow strangers hold the key,\ntonight the light is his to fly.",
    "Make the last line about the light going out.",
    "The lamp turns slow above the sea,\nthe keeper counts the ships gone by;\ntomorrow strangers hold the key,\ntonight he lets the last beam die.",
    "APPROVED",
];

/// A scripted model standing in for Gemini: the script's answers in order.
struct Scripted(Mutex<VecDeque<&'static str>>);

impl BaseLlm for Scripted {
    fn model_id(&self) -> &str {
        review_loop::MODEL
    }

    fn generate_stream(&self, _request: LlmRequest) -> BoxFuture<'_, Result<LlmStream, LlmError>> {
        let text = self
            .0
            .lock()
            .unwrap()
            .pop_front()
            .unwrap_or("the script ran out");
        Box::pin(async move {
            let chunk = LlmChunk {
                text: text.to_owned(),
                finish_reason: Some("STOP".to_owned()),
                usage: Some(LlmUsage {
                    prompt_tokens: 60,
                    response_tokens: 30,
                    total_tokens: 90,
                }),
                ..LlmChunk::default()
            };
            Ok(Box::pin(futures_util::stream::iter([Ok(chunk)])) as LlmStream)
        })
    }
}

/// Rewrites the bundled cassette from the script (run by hand after changing the example's
/// prompts: `cargo test --test it example_review_loop::regenerate -- --ignored`).
#[tokio::test]
#[ignore = "rewrites assets/tapes/review_loop.cassette.json"]
async fn regenerate() {
    let cassette = Cassette::open(review_loop::BUNDLED_CASSETTE, CassetteMode::Record).unwrap();
    let scripted: Arc<dyn BaseLlm> = Arc::new(Scripted(Mutex::new(SCRIPT.into())));
    let review = review_loop::run(cassette.wrap(scripted)).await.unwrap();
    assert_eq!(review_loop::report(&review), EXPECTED);
}
