//! The weather assistant of the examples, written with `Live::builder()`, and the user's
//! side of its conversation.
//!
//! It is the application `reel demo` runs (same setup, same `get_weather` tool, same
//! phases, written there on the runtime's API), so it talks to the bundled tape, which
//! was recorded from that application, frame for frame.

// Shared by the `weather` and `replay_test` examples; each uses part of it.
#![allow(dead_code)]

#[path = "tape_server.rs"]
mod tape_server;
#[path = "turns.rs"]
mod turns;

use std::error::Error;

use reel::actors::{EventStream, Lane, LiveEvent, LiveHandle};
use reel::demo::weather::{Conditions, lookup};
use reel::fluent::{Live, LiveBuilder};
use reel::protocol::SessionEvent;
use reel::tape_server::RunningServer;
use reel::tools::{ToolContext, ToolError, TypedTool};
use serde_json::Value;
pub use tape_server::endpoint_of;
use tape_server::serve_tape;
use turns::wait_for_turn;

/// What the user says, turn by turn: the first is the greeting.
pub const USER_TURNS: [&str; 3] = reel::demo::weather::USER_TURNS;

/// Arguments of `get_weather`.
#[derive(Debug, serde::Deserialize, schemars::JsonSchema)]
pub struct WeatherArgs {
    /// The city, e.g. "London".
    pub city: String,
}

/// Looks a city up and remembers it, so the conversation can move on to the forecast.
async fn get_weather(args: WeatherArgs, ctx: ToolContext) -> Result<Conditions, ToolError> {
    let Some(found) = lookup(&args.city) else {
        return Err(ctx.fail(format!("no weather data for {}", args.city)));
    };
    ctx.state
        .set("app:last_city", &found.city)
        .map_err(|e| ctx.fail(e))?;
    ctx.state
        .set("app:last_temp_c", found.temp_c)
        .map_err(|e| ctx.fail(e))?;
    Ok(found)
}

/// The assistant: a text-answering weather assistant with one tool and three phases.
pub fn assistant() -> LiveBuilder {
    Live::builder()
        .model("gemini-live-2.5-flash-preview")
        .text_only()
        .session_resume(true)
        .tool(TypedTool::new(
            "get_weather",
            "Current weather for a city: temperature in °C and conditions.",
            get_weather,
        ))
        .phase("greeting", |p| {
            p.instruction(
                "You are a friendly weather assistant. Greet the user and ask which city \
                 they want the weather for. Use get_weather for every forecast.",
            )
            .transition_with(
                "forecast",
                |s| s.contains("app:last_city"),
                "a city was looked up",
            )
        })
        .phase("forecast", |p| {
            p.instruction(
                "Tell the user the weather you looked up, in one sentence, and ask if \
                 they need anything else.",
            )
            .transition_with(
                "farewell",
                |s| s.get::<u64>("session:turn_count").unwrap_or(0) >= 2,
                "the user has had their answer",
            )
        })
        .phase("farewell", |p| {
            p.instruction("Say a short goodbye.").terminal()
        })
}

/// The tape server playing the bundled weather tape on loopback: the recorded model,
/// at the recorded pace divided by `speed`, or at once.
pub async fn serve_bundled_tape(speed: Option<f64>) -> Result<RunningServer, Box<dyn Error>> {
    serve_tape("weather", reel::demo::run::bundled_tape()?, speed).await
}

/// What the conversation showed, lane by lane.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct Conversation {
    /// The assistant's answers, whole (text, or the final transcript of its speech).
    pub answers: Vec<String>,
    /// Each tool call: the tool and the response the model got.
    pub tools: Vec<(String, Value)>,
    /// Each phase change: `from → to`.
    pub phases: Vec<String>,
}

impl Conversation {
    fn observe(&mut self, lane: Lane, event: &LiveEvent) {
        match (lane, event) {
            (Lane::Control, LiveEvent::Session(SessionEvent::TextComplete(text)))
            | (
                Lane::Control,
                LiveEvent::Session(SessionEvent::OutputTranscription {
                    text,
                    is_final: true,
                }),
            ) => {
                println!("assistant: {text}");
                self.answers.push(text.clone());
            }
            (Lane::Control, LiveEvent::ToolFinished { name, response, .. }) => {
                println!("  [{name} → {response}]");
                self.tools.push((name.clone(), response.clone()));
            }
            (Lane::Control, LiveEvent::PhaseTransition { from, to, reason }) => {
                println!("  [phase {from} → {to}: {reason}]");
                self.phases.push(format!("{from} → {to}"));
            }
            _ => {}
        }
    }
}

/// Plays the user: waits for the model to finish each turn, then says the next of
/// `turns`; returns once the model has answered the last. `events` must have been
/// subscribed before the session started.
pub async fn talk(
    handle: &LiveHandle,
    events: &mut EventStream,
    turns: &[&str],
) -> Result<Conversation, Box<dyn Error>> {
    let mut conversation = Conversation::default();
    let mut next = turns.iter();
    loop {
        if !wait_for_turn(events, |lane, event| conversation.observe(lane, event)).await? {
            return Err("the session ended in the middle of the conversation".into());
        }
        let Some(text) = next.next() else {
            return Ok(conversation);
        };
        println!("user: {text}");
        handle.send_text(*text)?;
    }
}
