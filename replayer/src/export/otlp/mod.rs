//! An [`AgentTrace`] as OpenTelemetry spans, in the OTLP/JSON encoding ([`model`]),
//! following the OpenTelemetry GenAI semantic conventions:
//!
//! - one session span, the root: `invoke_agent {agentName}` (kind internal,
//!   `gen_ai.operation.name` = `invoke_agent`, `gen_ai.agent.name`), from the recording's
//!   first frame to its last, with the session's token totals;
//! - one span per turn, its child: `chat {model}` (kind client, `gen_ai.operation.name` =
//!   `chat`, `gen_ai.provider.name` = `gcp.gemini`, `gen_ai.request.model`,
//!   `gen_ai.usage.input_tokens`, `gen_ai.usage.output_tokens`,
//!   `gen_ai.response.finish_reasons` when known), from the request to the response;
//! - one span per function call, the turn's child: `execute_tool {name}` (kind internal,
//!   `gen_ai.operation.name` = `execute_tool`, `gen_ai.tool.name`, `gen_ai.tool.call.id`,
//!   `gen_ai.tool.type` = `function`), from the call to its result.
//!
//! What the conventions do not name is under `reel.`: the turn's index, time to first
//! token, thinking and cached tokens, interruptions. Arguments and results are content the
//! conventions make opt-in: they are written only with [`OtlpOptions::content`].
//!
//! Ids come from an [`IdSeed`] (a hash of the recording's setup frame) and each span's
//! place in the trace, so the same recording always exports to the same bytes.

pub mod model;

use reel_recorder::trace::{AgentTrace, TraceResponse, TraceToolCall, TraceTurn};

use super::IdSeed;
use model::{
    KeyValue, OtlpTraces, Resource, ResourceSpans, Scope, ScopeSpans, Span, SpanKind, Status,
};

/// The provider every Live session talks to.
const PROVIDER: &str = "gcp.gemini";

/// What an OTLP export includes beyond the conventions' defaults.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct OtlpOptions {
    /// Write tool arguments and results (`gen_ai.tool.call.arguments`,
    /// `gen_ai.tool.call.result`): opt-in, as they may hold sensitive data.
    pub content: bool,
}

/// The spans of `trace`, ids derived from `ids`.
///
/// ```
/// use reel_recorder::trace::{AgentTrace, Timestamp};
/// use reel_recorder::wire_log::{Direction, WireEntry};
/// use reel_replayer::export::{IdSeed, OtlpOptions, to_otlp};
///
/// let trace = AgentTrace::new("empty", "agent", Timestamp::from_epoch_ms(1_000));
/// let setup = WireEntry::frame(1, Direction::Out, 1_000, &br#"{"setup":{}}"#[..], None, false);
/// let otlp = to_otlp(&trace, &IdSeed::of_setup(&setup), OtlpOptions::default());
/// let session = &otlp.resource_spans[0].scope_spans[0].spans[0];
/// assert_eq!(session.name, "invoke_agent agent");
/// assert_eq!(session.start_time_unix_nano, "1000000000");
/// ```
pub fn to_otlp(trace: &AgentTrace, ids: &IdSeed, options: OtlpOptions) -> OtlpTraces {
    let trace_id = ids.trace_id();
    let session_id = ids.span_id("session", &[]);
    let mut spans = vec![session_span(trace, &trace_id, &session_id)];
    for turn in trace.turns() {
        let turn_id = ids.span_id("turn", &[turn.index]);
        spans.push(turn_span(trace, &turn, &trace_id, &turn_id, &session_id));
        let calls = turn.response.map_or(&[][..], |r| &r.tool_calls[..]);
        for (position, call) in calls.iter().enumerate() {
            let span_id = ids.span_id("tool", &[turn.index, position as u64]);
            let start_ms = call.timestamp.unwrap_or(turn.request.timestamp).epoch_ms();
            spans.push(tool_span(
                call,
                start_ms,
                options,
                Span {
                    trace_id: trace_id.clone(),
                    span_id,
                    parent_span_id: Some(turn_id.clone()),
                    ..span_template()
                },
            ));
        }
    }
    OtlpTraces {
        resource_spans: vec![ResourceSpans {
            resource: Resource {
                attributes: vec![KeyValue::string("service.name", "reel")],
            },
            scope_spans: vec![ScopeSpans {
                scope: Scope {
                    name: "reel".to_owned(),
                    version: env!("CARGO_PKG_VERSION").to_owned(),
                },
                spans,
            }],
        }],
    }
}

fn span_template() -> Span {
    Span {
        trace_id: String::new(),
        span_id: String::new(),
        parent_span_id: None,
        name: String::new(),
        kind: SpanKind::Internal,
        start_time_unix_nano: String::new(),
        end_time_unix_nano: String::new(),
        attributes: Vec::new(),
        status: Status::default(),
    }
}

fn nanos(ms: u64) -> String {
    (u128::from(ms) * 1_000_000).to_string()
}

fn session_span(trace: &AgentTrace, trace_id: &str, span_id: &str) -> Span {
    let start = trace.captured_at.epoch_ms();
    let last_entry = trace
        .entries
        .iter()
        .map(|e| e.timestamp().epoch_ms())
        .max()
        .unwrap_or(start);
    let end = trace
        .performance
        .session_duration_ms
        .map_or(last_entry, |d| start + d);
    let performance = &trace.performance;
    let mut attributes = vec![
        KeyValue::string("gen_ai.operation.name", "invoke_agent"),
        KeyValue::string("gen_ai.provider.name", PROVIDER),
        KeyValue::string("gen_ai.agent.name", trace.agent_name.clone()),
    ];
    if let Some(model) = &trace.model {
        attributes.push(KeyValue::string("gen_ai.request.model", model.clone()));
    }
    attributes.extend([
        KeyValue::int("gen_ai.usage.input_tokens", performance.total_prompt_tokens),
        KeyValue::int(
            "gen_ai.usage.output_tokens",
            performance.total_completion_tokens,
        ),
        KeyValue::string("reel.trace.name", trace.trace_name.clone()),
    ]);
    let counts = [
        ("reel.turn.count", performance.turn_count),
        ("reel.tool_call.count", performance.tool_call_count),
        ("reel.interruption.count", performance.interruption_count),
    ];
    for (key, count) in counts {
        if let Some(count) = count {
            attributes.push(KeyValue::int(key, count));
        }
    }
    if let Some(mean) = performance.mean_time_to_first_token_ms {
        attributes.push(KeyValue::double("reel.time_to_first_token.mean_ms", mean));
    }
    Span {
        trace_id: trace_id.to_owned(),
        span_id: span_id.to_owned(),
        name: format!("invoke_agent {}", trace.agent_name),
        kind: SpanKind::Internal,
        start_time_unix_nano: nanos(start),
        end_time_unix_nano: nanos(end.max(start)),
        attributes,
        ..span_template()
    }
}

fn turn_span(
    trace: &AgentTrace,
    turn: &TraceTurn<'_>,
    trace_id: &str,
    span_id: &str,
    parent: &str,
) -> Span {
    let model = trace.model_of(turn.request);
    let start = turn.request.timestamp.epoch_ms();
    let end = turn.response.map_or(start, |r| r.timestamp.epoch_ms());
    let mut attributes = vec![
        KeyValue::string("gen_ai.operation.name", "chat"),
        KeyValue::string("gen_ai.provider.name", PROVIDER),
    ];
    if let Some(model) = model {
        attributes.push(KeyValue::string("gen_ai.request.model", model));
    }
    attributes.push(KeyValue::int("reel.turn.index", turn.index));
    let mut status = Status::default();
    match turn.response {
        Some(response) => {
            attributes.extend(response_attributes(response));
            if let Some(error) = &response.error {
                status = Status::error(error.clone());
            }
        }
        None => attributes.push(KeyValue::bool("reel.turn.incomplete", true)),
    }
    Span {
        trace_id: trace_id.to_owned(),
        span_id: span_id.to_owned(),
        parent_span_id: Some(parent.to_owned()),
        name: model.map_or_else(|| "chat".to_owned(), |m| format!("chat {m}")),
        kind: SpanKind::Client,
        start_time_unix_nano: nanos(start),
        end_time_unix_nano: nanos(end.max(start)),
        attributes,
        status,
    }
}

fn response_attributes(response: &TraceResponse) -> Vec<KeyValue> {
    let mut attributes = Vec::new();
    if let Some(reason) = &response.finish_reason {
        attributes.push(KeyValue::strings(
            "gen_ai.response.finish_reasons",
            [reason.to_lowercase()],
        ));
    }
    let usage = response.token_usage.unwrap_or_default();
    let counts = [
        ("gen_ai.usage.input_tokens", usage.prompt),
        ("gen_ai.usage.output_tokens", usage.completion),
        ("reel.usage.total_tokens", usage.total),
        ("reel.usage.thoughts_tokens", usage.thoughts),
        ("reel.usage.cached_tokens", usage.cached),
        (
            "reel.time_to_first_token_ms",
            response.time_to_first_token_ms,
        ),
    ];
    for (key, count) in counts {
        if let Some(count) = count {
            attributes.push(KeyValue::int(key, count));
        }
    }
    if response.interrupted {
        attributes.push(KeyValue::bool("reel.turn.interrupted", true));
    }
    if response.incomplete {
        attributes.push(KeyValue::bool("reel.turn.incomplete", true));
    }
    attributes
}

fn tool_span(call: &TraceToolCall, start_ms: u64, options: OtlpOptions, span: Span) -> Span {
    let mut attributes = vec![
        KeyValue::string("gen_ai.operation.name", "execute_tool"),
        KeyValue::string("gen_ai.tool.name", call.name.clone()),
    ];
    if let Some(id) = &call.id {
        attributes.push(KeyValue::string("gen_ai.tool.call.id", id.clone()));
    }
    attributes.push(KeyValue::string("gen_ai.tool.type", "function"));
    if options.content {
        attributes.push(KeyValue::string(
            "gen_ai.tool.call.arguments",
            call.arguments.to_string(),
        ));
        if let Some(result) = &call.result {
            attributes.push(KeyValue::string(
                "gen_ai.tool.call.result",
                result.to_string(),
            ));
        }
    }
    let status = if call.cancelled {
        Status::error("the server cancelled the call")
    } else if call.result.is_none() {
        Status::error("no result was recorded")
    } else {
        Status::default()
    };
    Span {
        name: format!("execute_tool {}", call.name),
        kind: SpanKind::Internal,
        start_time_unix_nano: nanos(start_ms),
        end_time_unix_nano: nanos(start_ms + call.duration_ms.unwrap_or(0)),
        attributes,
        status,
        ..span
    }
}
