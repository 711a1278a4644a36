//! A live cookbook session told as a story: the user's lines sent one turn at a time, and
//! for each turn the model's answer, every tool call it made and what came back, one line
//! each. Examples 34 (tool policies) and 36 (MCP tools) print their sessions this way.

use std::error::Error;
use std::path::Path;
use std::sync::Arc;

use reel::actors::{EventStream, Lane, LiveEvent, LiveHandle};
use reel::fluent::LiveBuilder;
use reel::protocol::{ApiEndpoint, SessionEvent};
use reel::recorder::{MemoryWireRecorder, WireEntry, WireRecorder};

use super::turns::wait_for_turn;

/// Sends each of `lines` as a user turn and waits for the model to finish it: what the
/// session showed, one line per event worth telling (the user's line, the answer, each tool
/// call and its result, `ok` or `error`).
pub async fn converse(
    handle: &LiveHandle,
    events: &mut EventStream,
    lines: &[&str],
) -> Result<Vec<String>, Box<dyn Error>> {
    let mut story = Vec::new();
    for line in lines {
        story.push(format!("user      | {line}"));
        handle.send_text(*line)?;
        let finished = wait_for_turn(events, |lane, event| {
            if lane != Lane::Control {
                return;
            }
            match event {
                LiveEvent::Session(SessionEvent::TextComplete(text)) => {
                    story.push(format!("assistant | {text}"));
                }
                LiveEvent::ToolStarted { name, args, .. } => {
                    story.push(format!("  call    | {name}({args})"));
                }
                LiveEvent::ToolFinished { response, ok, .. } => {
                    let how = if *ok { "ok" } else { "error" };
                    story.push(format!("  {how:<7} | {response}"));
                }
                _ => {}
            }
        })
        .await?;
        if !finished {
            return Err("the session ended before the model finished its turn".into());
        }
    }
    Ok(story)
}

/// One session of `agent` against `endpoint` saying `lines`: its story and its wire log
/// (recorded to `wire_file` when given, else kept in memory).
pub async fn session(
    agent: LiveBuilder,
    endpoint: ApiEndpoint,
    wire_file: Option<&Path>,
    lines: &[&str],
) -> Result<(Vec<String>, Vec<WireEntry>), Box<dyn Error>> {
    let recorder = Arc::new(MemoryWireRecorder::new());
    let agent = match wire_file {
        Some(path) => agent.record_wire(path),
        None => agent.record_wire_to(recorder.clone() as Arc<dyn WireRecorder>),
    };
    let mut events = agent.subscribe();
    let handle = agent.connect(endpoint).await?;
    let story = converse(&handle, &mut events, lines).await;
    handle.disconnect().await;
    let story = story?;
    let entries = match wire_file {
        Some(path) => super::read_tape(path)?,
        None => recorder.entries(),
    };
    Ok((story, entries))
}
