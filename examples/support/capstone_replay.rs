//! What the capstones (`booking`, `screening`) share beyond the replayed-call runner: a
//! capstone's run (its call against the bundled tape, or its offline replay), the bundled
//! resolutions file read as a replaying log, and the story of an offline replay — the
//! refusals it answered again, each `{step}:result` it wrote from the recording and the
//! steps as they completed, in journal order.
//!
//! An example including this file includes beside it `capstone` (its agent and caller),
//! `replayed_call` and `tape_server`, which it reaches as `super::…`.

// Shared by the capstone examples and their tests; each uses part of it.
#![allow(dead_code)]

use std::error::Error;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use reel::actors::{Lane, LiveEvent};
use reel::agents::{Resolution, Resolutions};
use reel::fluent::{LiveBuilder, ReplayOutcome};
use reel::protocol::ApiEndpoint;
use reel::recorder::{RecordError, WireEntry};
use serde_json::Value;

use super::capstone::{Call, converse};
use super::replayed_call::{self, Target};
use super::tape_server::{endpoint_of, serve_tape};

/// One capstone as its example runs it: its bundled recording and its agent.
pub struct Capstone {
    /// Its name (the tape server's label).
    pub name: &'static str,
    /// The bundled tape, and where it is read from.
    pub tape: (&'static str, &'static str),
    /// The bundled `X.resolved.jsonl`, and where it is read from.
    pub resolutions: (&'static str, &'static str),
    /// Its agent, counting its sub-agent's runs in the counter it is given.
    pub agent: fn(Arc<AtomicUsize>) -> LiveBuilder,
    /// What its sub-agent is called in the output (`availability sub-agent`).
    pub sub_agent: &'static str,
}

/// What a run showed.
#[derive(Debug)]
pub enum Outcome {
    /// The call, against the tape server.
    Call(Call),
    /// The offline replay, CLEAN.
    Replay {
        /// Frames the replay sent.
        frames: usize,
        /// What it did, line by line ([`story`]).
        story: Vec<String>,
        /// How many times the sub-agent ran (a replay calls nothing: 0).
        agent_calls: usize,
    },
}

impl Capstone {
    /// The bundled tape as wire entries, read and checked as any wire log is.
    pub fn bundled_tape(&self) -> Result<Vec<WireEntry>, RecordError> {
        replayed_call::wire_entries(self.tape.0, self.tape.1)
    }

    /// Runs `target` and returns what it showed.
    pub async fn run(&self, target: Target) -> Result<Outcome, Box<dyn Error>> {
        let calls = Arc::new(AtomicUsize::new(0));
        match target {
            Target::BundledTape { speed } => {
                let mut server = serve_tape(self.name, self.bundled_tape()?, speed).await?;
                let endpoint = endpoint_of(&server);
                let call = self.call(endpoint, calls).await;
                server.shutdown().await;
                Ok(Outcome::Call(call?))
            }
            Target::Replay => {
                let log = replaying(self.resolutions.0, self.resolutions.1)?;
                let outcome = (self.agent)(Arc::clone(&calls))
                    .resolutions(&log)
                    .replay(self.bundled_tape()?)
                    .await?
                    .finish()
                    .await;
                replayed(&outcome, calls.load(Ordering::SeqCst))
            }
        }
    }

    /// One call: the agent connects, then the caller speaks.
    pub async fn call(
        &self,
        endpoint: ApiEndpoint,
        calls: Arc<AtomicUsize>,
    ) -> Result<Call, Box<dyn Error>> {
        call_with((self.agent)(calls), endpoint).await
    }

    /// The call against the Gemini Live API (`--live`), the key from the environment, its
    /// wire log recorded to `record` if given (with the sub-agent's results beside it).
    pub async fn live_call(&self, record: Option<PathBuf>) -> Result<Outcome, Box<dyn Error>> {
        let endpoint = ApiEndpoint::from_env()?;
        let agent = (self.agent)(Arc::new(AtomicUsize::new(0)));
        let agent = match record {
            Some(path) => agent.record_wire(path),
            None => agent,
        };
        Ok(Outcome::Call(call_with(agent, endpoint).await?))
    }

    /// Prints what a run showed.
    pub fn print(&self, outcome: &Outcome) {
        match outcome {
            Outcome::Call(call) => {
                println!("\nrefused by the flow:");
                for (id, why) in &call.refused {
                    println!("  {id}: {why}");
                }
                println!("steps done: {}", call.completed.join(" → "));
                println!("state:");
                for (key, value) in &call.state {
                    println!("  {key} = {value}");
                }
            }
            Outcome::Replay {
                frames,
                story,
                agent_calls,
            } => {
                for line in story {
                    println!("{line}");
                }
                println!("{} calls: {agent_calls}", self.sub_agent);
                println!("replay CLEAN: {frames} frames sent, each the recorded one");
            }
        }
    }
}

/// One call of `agent`: it connects, then the caller speaks.
async fn call_with(agent: LiveBuilder, endpoint: ApiEndpoint) -> Result<Call, Box<dyn Error>> {
    let mut events = agent.subscribe();
    let handle = agent.connect(endpoint).await?;
    let call = converse(&handle, &mut events).await;
    handle.disconnect().await;
    call
}

/// The replay's outcome when it is CLEAN — no divergent frame, no resolver drift — else
/// an error listing what differed.
pub fn replayed(outcome: &ReplayOutcome, agent_calls: usize) -> Result<Outcome, Box<dyn Error>> {
    if !outcome.resolver_drift.is_empty() {
        let drift: Vec<String> = outcome
            .resolver_drift
            .iter()
            .map(ToString::to_string)
            .collect();
        return Err(format!("replay DRIFT in resolutions:\n  {}", drift.join("\n  ")).into());
    }
    let replayed_call::Outcome::<()>::Replay { frames } = replayed_call::clean(outcome)? else {
        return Err("a replay's outcome is a replay".into());
    };
    Ok(Outcome::Replay {
        frames,
        story: story(outcome),
        agent_calls,
    })
}

/// A bundled `X.resolved.jsonl` (`text`, read from `path`) as a log replaying it: one
/// resolution per line, blank lines skipped; a bad line is an error naming it.
pub fn replaying(text: &str, path: &str) -> Result<Resolutions, Box<dyn Error>> {
    let mut recorded = Vec::new();
    for (index, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let resolution: Resolution = serde_json::from_str(line)
            .map_err(|e| format!("{path}:{}: not a resolution: {e}", index + 1))?;
        recorded.push(resolution);
    }
    Ok(Resolutions::replay(recorded))
}

/// The story of a replay, one line each: the refused calls (`refused <tool> (<id>):
/// <answer>`), then, in journal order, each `{step}:result` written (`<key> = <value>`)
/// and each step as `flow:done` gained it (`completed <id>`).
pub fn story(outcome: &ReplayOutcome) -> Vec<String> {
    let mut lines = Vec::new();
    for envelope in &outcome.events {
        if let (
            Lane::Control,
            LiveEvent::ToolFinished {
                call_id,
                name,
                response,
                ok: false,
            },
        ) = (envelope.lane, &envelope.event)
        {
            let error = response["error"].as_str().unwrap_or_default();
            lines.push(format!("refused {name} ({call_id}): {error}"));
        }
    }
    let mut done = 0;
    for mutation in &outcome.journal {
        if mutation.key == "flow:done" {
            let steps = mutation
                .new
                .as_array()
                .map(Vec::as_slice)
                .unwrap_or_default();
            for step in steps.iter().skip(done) {
                lines.push(format!("completed {}", step.as_str().unwrap_or_default()));
            }
            done = steps.len();
        } else if mutation.key.ends_with(":result") && !mutation.key.starts_with("state_meta:") {
            lines.push(format!("{} = {}", mutation.key, shown(&mutation.new)));
        }
    }
    lines
}

/// A value as the story shows it: a string as is, anything else as JSON.
fn shown(value: &Value) -> String {
    match value {
        Value::String(text) => text.clone(),
        other => other.to_string(),
    }
}

/// The sequence of `flow:done` values a journal holds, in order.
pub fn flow_done_sequence(journal: &[reel::recorder::journal::StateMutation]) -> Vec<Value> {
    journal
        .iter()
        .filter(|m| m.key == "flow:done")
        .map(|m| m.new.clone())
        .collect()
}
