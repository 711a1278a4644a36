//! `reel trace show`: an agent trace turn by turn (what was asked, what came back, the
//! tools called, tokens, time to first token) and its performance block.
//!
//! ```text
//! trace weather · agent gemini-live-2.5-flash-preview · captured 2025-06-01T09:00:00.000Z · format 1.0
//!
//! turn 2  +0.360s  ttft 180 ms · 360 ms · STOP
//!   prompt    "What's the weather in London?"
//!   tool      get_weather({"city":"London"}) → {"city":"London","temp_c":14} (0 ms)
//!   response  "It's 14°C and cloudy in London right now."
//!   tokens    121 prompt · 19 completion · 140 total
//! ```
//!
//! Turns are numbered from 1, as `reel show --turn` numbers them. `--json` prints the
//! same as one JSON object: each turn's request and response as the trace holds them.
//! `--prices FILE` adds the trace's cost (`reel_eval::PriceTable`): a `cost` line after the
//! performance block, a `cost` object in the JSON.

use std::fmt::Write as _;
use std::process::ExitCode;

use clap::{Args, Subcommand};
use reel_eval::{Cost, PriceTable};
use reel_recorder::compressed;
use reel_recorder::trace::{
    AgentTrace, TraceError, TracePerformance, TraceRequest, TraceResponse, parse_trace,
};
use reel_replayer::summary::ToolCallSummary;
use serde::Serialize;

use super::{CliError, plural, print_stdout, print_text};

/// Arguments of `reel trace`.
#[derive(Debug, Args)]
pub struct TraceArgs {
    #[command(subcommand)]
    command: TraceCommand,
}

#[derive(Debug, Subcommand)]
enum TraceCommand {
    /// Show a trace turn by turn: prompt, response, tools, tokens, time to first token,
    /// and its performance block.
    Show(ShowArgs),
}

/// Arguments of `reel trace show`.
#[derive(Debug, Args)]
struct ShowArgs {
    /// The trace file (`reel export LOG --format trace` writes one).
    file: String,
    /// Print one JSON object instead of text.
    #[arg(long)]
    json: bool,
    /// A price table (JSON: `currency`, and per model `promptPerMillion` and
    /// `completionPerMillion`): the trace's cost, its tokens × the prices.
    #[arg(long, value_name = "FILE")]
    prices: Option<String>,
}

/// Runs the subcommand. A trace that cannot be read ends it with exit code 2 and one line
/// on stderr naming the file and, when the content is at fault, the JSON path.
pub fn run(args: TraceArgs) -> Result<ExitCode, CliError> {
    let TraceCommand::Show(args) = args.command;
    let prices = args
        .prices
        .as_ref()
        .map(PriceTable::from_json_file)
        .transpose()?;
    let trace = match read_any_trace(&args.file) {
        Ok(trace) => trace,
        Err(TraceError::Io { source, .. }) => {
            return Err(CliError::Read {
                path: args.file,
                source,
            });
        }
        Err(error) => {
            eprintln!("reel: {}", super::terminal::visible(&error.to_string()));
            return Ok(ExitCode::from(2));
        }
    };
    let cost = prices.map(|prices| prices.cost(&trace));
    if args.json {
        let mut json = ShowJson::of(&trace);
        json.cost = cost.as_ref();
        print_stdout(&format!("{}\n", serde_json::to_string_pretty(&json)?))?;
    } else {
        let mut text = render(&trace);
        if let Some(cost) = &cost {
            line(&mut text, "cost", &cost.to_text());
        }
        print_text(&text)?;
    }
    Ok(ExitCode::SUCCESS)
}

/// Reads and checks the trace at `path`, gzip or Zstandard compressed or not.
pub fn read_any_trace(path: &str) -> Result<AgentTrace, TraceError> {
    let text = compressed::read_to_string(path).map_err(|source| TraceError::Io {
        path: path.into(),
        source,
    })?;
    parse_trace(&text, path)
}

/// `--json`: the trace's header, its turns paired up, its performance block.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct ShowJson<'a> {
    version: &'a str,
    trace_name: &'a str,
    agent_name: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    model: Option<&'a str>,
    captured_at: String,
    turns: Vec<TurnJson<'a>>,
    performance: &'a TracePerformance,
    /// With `--prices`: what the trace cost.
    #[serde(skip_serializing_if = "Option::is_none")]
    cost: Option<&'a Cost>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct TurnJson<'a> {
    /// 1-based, as `reel show --turn`.
    turn: u64,
    /// From the trace's start to the request, in ms.
    offset_ms: u64,
    request: &'a TraceRequest,
    response: Option<&'a TraceResponse>,
}

impl<'a> ShowJson<'a> {
    fn of(trace: &'a AgentTrace) -> Self {
        ShowJson {
            version: &trace.version,
            trace_name: &trace.trace_name,
            agent_name: &trace.agent_name,
            model: trace.model.as_deref(),
            captured_at: trace.captured_at.to_string(),
            turns: trace
                .turns()
                .into_iter()
                .map(|turn| TurnJson {
                    turn: turn.index + 1,
                    offset_ms: turn.request.timestamp.since(trace.captured_at),
                    request: turn.request,
                    response: turn.response,
                })
                .collect(),
            performance: &trace.performance,
            cost: None,
        }
    }
}

/// The trace as text.
fn render(trace: &AgentTrace) -> String {
    let mut out = format!(
        "trace {} · agent {} · captured {} · format {}\n",
        trace.trace_name, trace.agent_name, trace.captured_at, trace.version
    );
    for turn in trace.turns() {
        let offset = turn.request.timestamp.since(trace.captured_at);
        let mut head = format!("\nturn {}  +{}", turn.index + 1, seconds(offset));
        if let Some(response) = turn.response {
            let timing: Vec<String> = [
                response
                    .time_to_first_token_ms
                    .map(|ms| format!("ttft {ms} ms")),
                response.duration_ms.map(|ms| format!("{ms} ms")),
                response.finish_reason.clone(),
            ]
            .into_iter()
            .flatten()
            .collect();
            if !timing.is_empty() {
                head.push_str(&format!("  {}", timing.join(" · ")));
            }
        }
        out.push_str(&head);
        out.push('\n');
        request_lines(&mut out, trace, turn.request);
        match turn.response {
            Some(response) => response_lines(&mut out, response),
            None => line(&mut out, "response", "none recorded"),
        }
    }
    performance_lines(&mut out, &trace.performance);
    out
}

fn line(out: &mut String, label: &str, text: &str) {
    // Writing to a String cannot fail.
    let _ = writeln!(out, "  {label:<11} {text}");
}

fn request_lines(out: &mut String, trace: &AgentTrace, request: &TraceRequest) {
    if let Some(agent) = &request.agent {
        line(out, "agent", agent);
    }
    if let Some(model) = &request.model
        && trace.model.as_ref() != Some(model)
    {
        line(out, "model", model);
    }
    if let Some(instruction) = &request.instruction {
        line(out, "instruction", &format!("{instruction:?}"));
    }
    let inputs: Vec<String> = request
        .inputs
        .iter()
        .filter(|input| input.text.is_none())
        .map(|input| {
            let mut text = input.kind.clone();
            if input.frames > 1 {
                text.push_str(&format!(" ×{}", input.frames));
            }
            if let Some(ms) = input.audio_ms {
                text.push_str(&format!(" ({})", seconds(ms.round() as u64)));
            }
            text
        })
        .collect();
    if !inputs.is_empty() {
        line(out, "input", &inputs.join(", "));
    }
    if let Some(prompt) = &request.prompt {
        line(out, "prompt", &format!("{prompt:?}"));
    }
    if let Some(transcript) = &request.transcript {
        line(out, "heard", &format!("{transcript:?}"));
    }
}

fn response_lines(out: &mut String, response: &TraceResponse) {
    for call in &response.tool_calls {
        let summary = ToolCallSummary {
            name: call.name.clone(),
            args: call.arguments.clone(),
            id: call.id.clone(),
        };
        let mut text = summary.to_string();
        match &call.result {
            Some(result) => text.push_str(&format!(" → {result}")),
            None if call.cancelled => text.push_str(" → cancelled"),
            None => text.push_str(" → no result"),
        }
        if let Some(ms) = call.duration_ms {
            text.push_str(&format!(" ({ms} ms)"));
        }
        line(out, "tool", &text);
    }
    if let Some(text) = &response.text {
        line(out, "response", &format!("{text:?}"));
    }
    if let Some(transcript) = &response.transcript {
        line(out, "said", &format!("{transcript:?}"));
    }
    if let Some(ms) = response.audio_ms {
        line(out, "audio", &seconds(ms.round() as u64));
    }
    if let Some(usage) = response.token_usage {
        let counts: Vec<String> = [
            (usage.prompt, "prompt"),
            (usage.completion, "completion"),
            (usage.total, "total"),
            (usage.thoughts, "thoughts"),
            (usage.cached, "cached"),
        ]
        .into_iter()
        .filter_map(|(count, what)| count.map(|n| format!("{n} {what}")))
        .collect();
        line(out, "tokens", &counts.join(" · "));
    }
    let flags: Vec<&str> = [
        (response.interrupted, "interrupted by the user"),
        (
            response.incomplete,
            "the recording ended before the answer did",
        ),
    ]
    .into_iter()
    .filter_map(|(set, text)| set.then_some(text))
    .collect();
    if !flags.is_empty() {
        line(out, "note", &flags.join("; "));
    }
    if let Some(error) = &response.error {
        line(out, "error", error);
    }
}

fn performance_lines(out: &mut String, performance: &TracePerformance) {
    out.push_str("\nperformance\n");
    let counts: Vec<String> = [
        (performance.turn_count, "turn", "turns"),
        (performance.tool_call_count, "tool call", "tool calls"),
        (
            performance.interruption_count,
            "interruption",
            "interruptions",
        ),
    ]
    .into_iter()
    .filter_map(|(count, one, many)| count.map(|n| plural(n, one, many)))
    .collect();
    if !counts.is_empty() {
        line(out, "count", &counts.join(" · "));
    }
    let mut duration = format!("{} ms waiting for the model", performance.total_duration_ms);
    if let Some(ms) = performance.session_duration_ms {
        duration.push_str(&format!(" · session {}", seconds(ms)));
    }
    line(out, "duration", &duration);
    let mut tokens = format!(
        "{} prompt · {} completion",
        performance.total_prompt_tokens, performance.total_completion_tokens
    );
    for (count, what) in [
        (performance.total_tokens, "total"),
        (performance.total_thoughts_tokens, "thoughts"),
        (performance.total_cached_tokens, "cached"),
    ] {
        if let Some(n) = count {
            tokens.push_str(&format!(" · {n} {what}"));
        }
    }
    line(out, "tokens", &tokens);
    let ttft: Vec<String> = [
        performance
            .mean_time_to_first_token_ms
            .map(|ms| format!("mean {ms:.1} ms")),
        performance
            .p50_time_to_first_token_ms
            .map(|ms| format!("p50 {ms} ms")),
        performance
            .max_time_to_first_token_ms
            .map(|ms| format!("max {ms} ms")),
    ]
    .into_iter()
    .flatten()
    .collect();
    if !ttft.is_empty() {
        line(out, "ttft", &ttft.join(" · "));
    }
}

/// `1.300s`.
fn seconds(ms: u64) -> String {
    format!("{}.{:03}s", ms / 1000, ms % 1000)
}
