//! Turn extractors in the chain: a typed extractor turns transcription on and is named
//! after its type; names are checked; the `derived:` fields typed extractors write may be
//! watched and depended on (and a typo is refused, listing them), an extractor given whole
//! lifts that check; through a session, extractors of every kind run with their callbacks
//! and the chain's timeout.

use crate::support;

use std::sync::Arc;
use std::time::Duration;

use futures_util::future::BoxFuture;
use reel_actors::llm::{BaseLlm, LlmError, LlmRequest, LlmStream};
use reel_actors::testing::ScriptedServer;
use reel_actors::transcript::TranscriptTurn;
use reel_actors::{Lane, LiveEvent};
use reel_extract::{
    ExtractionContext, ExtractionError, ExtractionTrigger, FnExtractor, LlmExtractor, TurnExtractor,
};
use reel_fluent::{BuildError, Live, LiveBuilder, extractor_name};
use reel_protocol::Platform;
use serde_json::{Value, json};
use support::{accepted, lane, until_turn_complete};

/// What a typed extractor draws from the conversation.
#[derive(Debug, PartialEq, serde::Deserialize, schemars::JsonSchema)]
struct CallerMood {
    /// calm, worried or angry.
    mood: String,
    /// From 1 to 5.
    urgency: u8,
}

/// A model the chain holds but these tests never call.
struct Idle;

impl BaseLlm for Idle {
    fn model_id(&self) -> &str {
        "gemini-2.5-flash"
    }

    fn generate_stream(&self, _: LlmRequest) -> BoxFuture<'_, Result<LlmStream, LlmError>> {
        panic!("no model call in these tests")
    }
}

fn idle() -> Arc<dyn BaseLlm> {
    Arc::new(Idle)
}

fn error_of(builder: LiveBuilder) -> BuildError {
    match builder.validate() {
        Ok(()) => panic!("the chain was accepted"),
        Err(error) => error,
    }
}

fn setup_of(builder: &LiveBuilder) -> String {
    let config = builder.session_config().unwrap();
    String::from_utf8(config.setup_frame(&Platform::GoogleAi)).unwrap()
}

#[test]
fn a_typed_extractor_is_named_after_its_type_and_turns_transcription_on() {
    assert_eq!(extractor_name::<CallerMood>(), "CallerMood");
    let builder = Live::builder()
        .text_only()
        .extract_turns::<CallerMood>(idle(), "Extract the mood.");
    assert_eq!(
        setup_of(&builder),
        concat!(
            r#"{"setup":{"model":"models/gemini-live-2.5-flash-native-audio","#,
            r#""generationConfig":{"responseModalities":["TEXT"]},"#,
            r#""inputAudioTranscription":{},"outputAudioTranscription":{}}}"#
        )
    );
    // A later choice wins.
    let quiet = builder.transcription(false, false);
    assert_eq!(
        setup_of(&quiet),
        concat!(
            r#"{"setup":{"model":"models/gemini-live-2.5-flash-native-audio","#,
            r#""generationConfig":{"responseModalities":["TEXT"]}}}"#
        )
    );
}

#[test]
fn an_extractor_name_used_twice_is_refused() {
    let twice = Live::builder()
        .extract_turns::<CallerMood>(idle(), "Extract the mood.")
        .extract_turns_windowed::<CallerMood>(idle(), "Extract the mood again.", 5);
    let error = error_of(twice);
    assert!(
        matches!(&error, BuildError::DuplicateExtractor { name } if name == "CallerMood"),
        "{error:?}"
    );
    assert_eq!(
        error.to_string(),
        "two extractors are named `CallerMood`, and an extractor's name is its state key; give \
         one another name (a typed extractor is named after its type: extract into another \
         type, or add an `LlmExtractor` with a name of its own with `.extractor(..)`)"
    );

    // The same name from an extractor given whole.
    let given = LlmExtractor::new("CallerMood", idle(), "Extract the mood.", 3);
    let clash = Live::builder()
        .extract_turns::<CallerMood>(idle(), "Extract the mood.")
        .extractor(Arc::new(given));
    assert!(matches!(
        error_of(clash),
        BuildError::DuplicateExtractor { name } if name == "CallerMood"
    ));

    // Another name is fine.
    let renamed = LlmExtractor::new("MoodToo", idle(), "Extract the mood.", 3);
    let fine = Live::builder()
        .extract_turns::<CallerMood>(idle(), "Extract the mood.")
        .extractor(Arc::new(renamed));
    assert!(fine.validate().is_ok());
}

#[test]
fn an_extractor_without_a_name_is_refused_with_its_place() {
    let nameless = FnExtractor::new("", 1, |_, _| Ok(Value::Null));
    let builder = Live::builder()
        .extract_turns::<CallerMood>(idle(), "Extract the mood.")
        .extractor(Arc::new(nameless));
    let error = error_of(builder);
    assert!(
        matches!(error, BuildError::EmptyExtractorName { position: 2 }),
        "{error:?}"
    );
    assert_eq!(
        error.to_string(),
        "extractor number 2 (from 1) has an empty name; name it (its name is its state key)"
    );
}

#[test]
fn the_fields_a_typed_extractor_writes_may_be_watched_and_depended_on() {
    let builder = Live::builder()
        .extract_turns_triggered::<CallerMood>(
            idle(),
            "Extract the mood.",
            4,
            ExtractionTrigger::Interval(2),
        )
        .computed("priority", &["derived:urgency", "app:tier"], |_| None)
        .watch("derived:mood")
        .changed_to("angry")
        .then(|_, _, _| async {})
        .watch("derived:priority")
        .then(|_, _, _| async {});
    assert!(builder.validate().is_ok());

    let typo = Live::builder()
        .extract_turns::<CallerMood>(idle(), "Extract the mood.")
        .computed("priority", &["derived:urgency"], |_| None)
        .watch("derived:urgncy")
        .then(|_, _, _| async {});
    let error = error_of(typo);
    assert!(
        matches!(&error, BuildError::WatchesUnknownComputed { key, defined, extracted }
            if key == "derived:urgncy" && defined == &["priority"]
                && extracted == &["mood", "urgency"]),
        "{error:?}"
    );
    assert_eq!(
        error.to_string(),
        "a watcher watches `derived:urgncy`, but no computed value `urgncy` is defined; \
         defined computed values: [\"priority\"]; fields extractors write: [\"mood\", \
         \"urgency\"]; add `.computed(\"urgncy\", ..)` or watch another key"
    );

    let depends = Live::builder()
        .extract_turns::<CallerMood>(idle(), "Extract the mood.")
        .computed("priority", &["derived:moood"], |_| None);
    assert_eq!(
        error_of(depends).to_string(),
        "computed value `priority` depends on `derived:moood`, but no computed value `moood` \
         is defined; defined computed values: [\"priority\"]; fields extractors write: \
         [\"mood\", \"urgency\"]; add `.computed(\"moood\", ..)` or fix the dependency"
    );
}

#[test]
fn an_extractor_given_whole_may_write_any_derived_field() {
    let amounts = FnExtractor::new("amounts", 3, |_, _| Ok(json!({"amount": 80})));
    let builder = Live::builder()
        .extract_turns::<CallerMood>(idle(), "Extract the mood.")
        .extractor(Arc::new(amounts))
        .watch("derived:amount")
        .crossed_above(50.0)
        .then(|_, _, _| async {});
    assert!(builder.validate().is_ok());
}

/// An extractor whose work never ends.
struct Stuck;

impl TurnExtractor for Stuck {
    fn name(&self) -> &str {
        "stuck"
    }

    fn window_size(&self) -> usize {
        1
    }

    fn extract<'a>(
        &'a self,
        _window: &'a [TranscriptTurn],
        _ctx: &'a ExtractionContext,
    ) -> BoxFuture<'a, Result<Value, ExtractionError>> {
        Box::pin(std::future::pending())
    }
}

#[tokio::test(start_paused = true)]
async fn extractors_run_in_a_session_with_their_callbacks_and_the_chains_timeout() {
    let mut server = ScriptedServer::bind().await;
    let (seen, seen_rx) = tokio::sync::mpsc::unbounded_channel::<String>();
    let (extracted, failed) = (seen.clone(), seen);
    let words = FnExtractor::new("words", 2, |window, ctx| {
        let said: usize = window.iter().map(TranscriptTurn::user_words).sum();
        Ok(json!({"words": said, "turn": ctx.turn_number}))
    });
    let builder = Live::builder()
        .text_only()
        .transcription(true, true)
        .extractor(Arc::new(words))
        .extractor(Arc::new(Stuck))
        .extraction_timeout(Duration::from_secs(2))
        .on_extracted_concurrent(move |name, value| {
            let seen = extracted.clone();
            async move {
                let _ = seen.send(format!("{name}: {value}"));
            }
        })
        .on_extraction_error_concurrent(move |name, error| {
            let seen = failed.clone();
            async move {
                let _ = seen.send(format!("{name} failed: {error}"));
            }
        });
    let mut events = builder.subscribe();
    let (handle, mut conn, _setup) = accepted(builder, &mut server, Duration::ZERO).await;
    conn.send_json(
        &json!({"serverContent": {"inputTranscription": {"text": "two words", "finished": true}}}),
    )
    .await;
    conn.send_json(&json!({"serverContent": {"outputTranscription": {"text": "Hello."}}}))
        .await;
    conn.send_json(&json!({"serverContent": {"turnComplete": true}}))
        .await;
    let turn = until_turn_complete(&mut events).await;
    assert_eq!(
        lane(&turn, Lane::Control)
            .into_iter()
            .filter(|e| matches!(
                e,
                LiveEvent::Extraction { .. } | LiveEvent::ExtractionError { .. }
            ))
            .collect::<Vec<_>>(),
        [
            LiveEvent::Extraction {
                name: "words".into(),
                value: json!({"words": 2, "turn": 1})
            },
            LiveEvent::ExtractionError {
                name: "stuck".into(),
                error: "extractor `stuck` did not finish within 2s".into()
            },
        ]
    );
    assert_eq!(
        handle.extracted::<Value>("words"),
        Some(json!({"words": 2, "turn": 1}))
    );
    // Spawned: they may finish in either order.
    let mut seen_rx = seen_rx;
    let mut lines = vec![seen_rx.recv().await.unwrap(), seen_rx.recv().await.unwrap()];
    lines.sort();
    handle.disconnect().await;
    assert_eq!(
        lines,
        [
            r#"stuck failed: extractor `stuck` did not finish within 2s"#,
            r#"words: {"words":2,"turn":1}"#
        ]
    );
}
