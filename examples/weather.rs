//! A weather assistant — a typed tool, three phases, a greeting — in one `Live::builder()`
//! chain (see `support/weather_assistant.rs`).
//!
//! ```text
//! cargo run --example weather                          # the bundled tape, on loopback
//! cargo run --example weather -- --speed 4             # … four times faster
//! GEMINI_API_KEY=… cargo run --example weather -- --live          # the Gemini Live API, text
//! GEMINI_API_KEY=… cargo run --example weather -- --live --voice  # … spoken answers
//! ```
//!
//! By default the model is the bundled tape (`reel::demo::WEATHER_TAPE`), played by the
//! tape server on loopback: no network, no key, the same conversation every time. With
//! `--live` it is the real API, wherever the environment says (`GEMINI_API_KEY`, or the
//! Vertex AI variables).

#[path = "support/main_of.rs"]
mod main_of;
#[path = "support/weather_assistant.rs"]
mod weather_assistant;

use std::error::Error;
use std::process::ExitCode;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use main_of::main_of;
use reel::fluent::LiveBuilder;
use reel::protocol::{ApiEndpoint, DEFAULT_MODEL, Modality};
use weather_assistant::{
    Conversation, USER_TURNS, assistant, endpoint_of, serve_bundled_tape, talk,
};

/// Whom the assistant talks to.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Target {
    /// The bundled tape on loopback, at the recorded pace divided by `speed` (`None`: no
    /// pauses at all).
    BundledTape {
        /// Speed factor.
        speed: Option<f64>,
    },
    /// The Gemini Live API, from the environment; spoken answers with `voice`.
    Live {
        /// Answer with audio (a native-audio model, the Kore voice, transcripts).
        voice: bool,
    },
}

/// Runs the whole conversation against `target` and returns what it showed.
pub async fn run(target: Target) -> Result<Conversation, Box<dyn Error>> {
    match target {
        Target::BundledTape { speed } => {
            let mut server = serve_bundled_tape(speed).await?;
            let endpoint = endpoint_of(&server);
            let conversation = converse(assistant(), endpoint).await;
            server.shutdown().await;
            conversation
        }
        Target::Live { voice: false } => converse(assistant(), ApiEndpoint::from_env()?).await,
        Target::Live { voice: true } => {
            converse(spoken(assistant()), ApiEndpoint::from_env()?).await
        }
    }
}

/// The assistant, answering aloud: its speech is transcribed (the transcript is printed as
/// the answer). Model audio arrives as PCM16 at 24 kHz; this example measures it rather
/// than playing it.
fn spoken(assistant: LiveBuilder) -> LiveBuilder {
    let samples = Arc::new(AtomicUsize::new(0));
    let counter = Arc::clone(&samples);
    assistant
        .model(DEFAULT_MODEL)
        .response_modalities(vec![Modality::Audio])
        .voice("Kore")
        .transcription(true, true)
        .on_audio(move |pcm| {
            counter.fetch_add(pcm.len() / 2, Ordering::Relaxed);
        })
        .on_turn_complete(move || {
            let seconds = samples.swap(0, Ordering::Relaxed) as f64 / 24_000.0;
            async move { println!("  [{seconds:.1} s of audio]") }
        })
}

async fn converse(
    assistant: LiveBuilder,
    endpoint: ApiEndpoint,
) -> Result<Conversation, Box<dyn Error>> {
    let [greeting, rest @ ..] = USER_TURNS;
    let assistant = assistant.greeting(greeting);
    let mut events = assistant.subscribe();
    println!("user: {greeting}");
    let handle = assistant.connect(endpoint).await?;
    let conversation = talk(&handle, &mut events, &rest).await;
    handle.disconnect().await;
    conversation
}

fn target_from_args() -> Result<Target, String> {
    let mut live = false;
    let mut voice = false;
    let mut speed = Some(1.0);
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--live" => live = true,
            "--voice" => voice = true,
            "--speed" => {
                let value = args
                    .next()
                    .ok_or("--speed needs a number, e.g. --speed 4")?;
                let value: f64 = value
                    .parse()
                    .map_err(|_| format!("--speed {value}: not a number"))?;
                speed = (value > 0.0).then_some(value);
            }
            other => {
                return Err(format!(
                    "unknown argument `{other}`; use --live, --voice, --speed N"
                ));
            }
        }
    }
    match (live, voice) {
        (true, voice) => Ok(Target::Live { voice }),
        (false, true) => Err("the bundled tape is a text session; --voice needs --live".into()),
        (false, false) => Ok(Target::BundledTape { speed }),
    }
}

fn main() -> ExitCode {
    main_of(target_from_args, run, |conversation| {
        println!(
            "\n{} answers, {} tool call(s), phases: {}",
            conversation.answers.len(),
            conversation.tools.len(),
            conversation.phases.join(", ")
        );
    })
}
