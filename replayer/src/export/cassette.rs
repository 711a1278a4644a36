//! A cassette's out-of-band model calls as an agent trace: one request and one response per
//! recorded call, in the cassette's order.
//!
//! The request carries the call's body as it was sent (`body`), its model and the last
//! user text as the prompt; the response the answer's text, its chunks (when there were
//! several), the finish reason and usage of the last chunks that reported them, the time to
//! the first text (the recorded delays up to it) and the call's duration. Times come from
//! each interaction's `recordedAt`. The function calls an answer made (cassette format 2)
//! are its `toolCalls`, each with the result a later call of the cassette sent back for it
//! (its `functionResponse`, matched by id, else by name) and the time from the answer to
//! that call.

use reel_actors::llm::LlmRequest;
use reel_recorder::cassette::{CassetteFile, Interaction};
use reel_recorder::llm_tape::RecordedUsage;
use reel_recorder::trace::{
    AgentTrace, Timestamp, TokenUsage, TraceEntry, TraceRequest, TraceResponse, TraceToolCall,
};
use serde_json::Value;

use super::{ExportOptions, Exported, IdSeed};

/// The agent name of a cassette whose calls name no model.
const UNNAMED_AGENT: &str = "out-of-band";

/// Exports every call recorded in `cassette`: one request (the body as sent, its model, the
/// last user text as the prompt) and one response (text, chunks, finish reason, usage, time
/// to the first text, duration) per call, in the cassette's order, times from each call's
/// `recordedAt`. `bytes` are the cassette file's bytes: the OpenTelemetry ids derive from
/// them.
///
/// ```
/// use reel_recorder::cassette::CassetteFile;
/// use reel_replayer::export::{ExportOptions, export_cassette};
///
/// let file: CassetteFile = serde_json::from_str(r#"{"version":1,"interactions":[{
///     "request":{"model":"gemini-2.5-flash","contents":[{"role":"user","parts":[{"text":"Mood?"}]}]},
///     "response":[{"delayNs":120000000,"text":"{\"mood\":"},{"delayNs":30000000,"text":"\"calm\"}","finishReason":"STOP"}],
///     "recordedAt":"2025-06-01T09:00:01.000Z","durationNs":150000000}]}"#)?;
/// let trace = export_cassette(&file, b"bytes", ExportOptions::named("calls")).trace;
/// let turn = trace.turns()[0];
/// assert_eq!(turn.request.prompt.as_deref(), Some("Mood?"));
/// let response = turn.response.unwrap();
/// assert_eq!(response.text.as_deref(), Some(r#"{"mood":"calm"}"#));
/// assert_eq!((response.time_to_first_token_ms, response.duration_ms), (Some(120), Some(150)));
/// # Ok::<(), serde_json::Error>(())
/// ```
pub fn export_cassette(cassette: &CassetteFile, bytes: &[u8], options: ExportOptions) -> Exported {
    let models: Vec<Option<&str>> = cassette.interactions.iter().map(model_of).collect();
    let common_model = match models.first() {
        Some(Some(first)) if models.iter().all(|m| *m == Some(*first)) => Some(first.to_string()),
        _ => None,
    };
    let agent = options
        .agent_name
        .clone()
        .or_else(|| common_model.clone())
        .unwrap_or_else(|| UNNAMED_AGENT.to_owned());
    let captured_at = cassette
        .interactions
        .first()
        .map_or(Timestamp::from_epoch_ms(0), |i| i.recorded_at);
    let mut trace = AgentTrace::new(options.trace_name.clone(), agent, captured_at);
    trace.model = common_model.clone();
    for (index, interaction) in cassette.interactions.iter().enumerate() {
        let index = index as u64;
        let model = model_of(interaction)
            .filter(|model| common_model.as_deref() != Some(*model))
            .map(str::to_owned);
        trace.entries.push(TraceEntry::Request(request_entry(
            index,
            interaction,
            model,
        )));
        let mut response = response_entry(index, interaction);
        let later = &cassette.interactions[(index as usize + 1)..];
        response.tool_calls = tool_calls(interaction, response.timestamp, later);
        trace.entries.push(TraceEntry::Response(response));
    }
    trace.update_performance();
    Exported {
        trace,
        ids: IdSeed::of_bytes(bytes),
    }
}

fn model_of(interaction: &Interaction) -> Option<&str> {
    interaction.request.get("model").and_then(Value::as_str)
}

fn request_entry(index: u64, interaction: &Interaction, model: Option<String>) -> TraceRequest {
    let body = Value::Object(interaction.request.clone());
    let prompt = serde_json::from_value::<LlmRequest>(body.clone())
        .ok()
        .and_then(|request| request.last_user_text());
    TraceRequest {
        index,
        timestamp: interaction.recorded_at,
        prompt,
        model,
        body: Some(body),
        ..TraceRequest::default()
    }
}

fn response_entry(index: u64, interaction: &Interaction) -> TraceResponse {
    let chunks = &interaction.response;
    let text: String = chunks.iter().map(|chunk| chunk.text.as_str()).collect();
    let nanos_to_ms = |nanos: u64| nanos / 1_000_000;
    // The recorded delays up to (and with) the first chunk that carried text.
    let first_text_ns = chunks
        .iter()
        .scan(0u64, |elapsed, chunk| {
            *elapsed = elapsed.saturating_add(chunk.delay_ns);
            Some((*elapsed, !chunk.text.is_empty()))
        })
        .find_map(|(elapsed, has_text)| has_text.then_some(elapsed));
    let streamed_ns: u64 = chunks.iter().map(|chunk| chunk.delay_ns).sum();
    let duration_ns = interaction.duration_ns.unwrap_or(streamed_ns);
    let usage = interaction
        .usage
        .or_else(|| chunks.iter().rev().find_map(|chunk| chunk.usage));
    TraceResponse {
        index,
        timestamp: Timestamp::from_epoch_ms(
            interaction
                .recorded_at
                .epoch_ms()
                .saturating_add(nanos_to_ms(duration_ns)),
        ),
        text: (!text.is_empty()).then_some(text),
        time_to_first_token_ms: first_text_ns.map(nanos_to_ms),
        duration_ms: Some(nanos_to_ms(duration_ns)),
        token_usage: usage.map(token_usage),
        finish_reason: chunks.iter().rev().find_map(|c| c.finish_reason.clone()),
        chunks: if chunks.len() > 1 {
            chunks.iter().map(|chunk| chunk.text.clone()).collect()
        } else {
            Vec::new()
        },
        ..TraceResponse::default()
    }
}

/// The function calls `interaction`'s answer made (answered at `answered`), each with the
/// result the first of the `later` calls that sent one back for it gave.
fn tool_calls(
    interaction: &Interaction,
    answered: Timestamp,
    later: &[Interaction],
) -> Vec<TraceToolCall> {
    let mut taken: Vec<(usize, usize)> = Vec::new();
    interaction
        .response
        .iter()
        .flat_map(|chunk| chunk.function_calls.iter())
        .map(|call| {
            let reply = later.iter().enumerate().find_map(|(at, next)| {
                function_responses(next)
                    .enumerate()
                    .find(|(n, response)| {
                        !taken.contains(&(at, *n))
                            && match (&call.id, response.get("id").and_then(Value::as_str)) {
                                (Some(id), Some(answered)) => id == answered,
                                _ => {
                                    response.get("name").and_then(Value::as_str)
                                        == Some(call.name.as_str())
                                }
                            }
                    })
                    .map(|(n, response)| (at, n, response.get("response").cloned(), next))
            });
            if let Some((at, n, _, _)) = reply {
                taken.push((at, n));
            }
            TraceToolCall {
                name: call.name.clone(),
                id: call.id.clone(),
                arguments: call.args.clone().map_or(Value::Null, Value::from),
                result: reply
                    .as_ref()
                    .map(|(_, _, result, _)| result.clone().unwrap_or(Value::Null)),
                timestamp: Some(answered),
                duration_ms: reply.map(|(_, _, _, next)| {
                    next.recorded_at
                        .epoch_ms()
                        .saturating_sub(answered.epoch_ms())
                }),
                cancelled: false,
            }
        })
        .collect()
}

/// The `functionResponse` objects of a recorded request's turns, in order.
fn function_responses(interaction: &Interaction) -> impl Iterator<Item = &Value> {
    interaction
        .request
        .get("contents")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|content| content.get("parts").and_then(Value::as_array))
        .flatten()
        .filter_map(|part| part.get("functionResponse"))
}

fn token_usage(usage: RecordedUsage) -> TokenUsage {
    TokenUsage {
        prompt: Some(usage.prompt_tokens),
        completion: Some(usage.response_tokens),
        total: Some(usage.total_tokens),
        ..TokenUsage::default()
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn an_answers_function_calls_are_its_tool_calls_with_the_results_sent_back_later() {
        let file: CassetteFile = serde_json::from_value(json!({"version": 2, "interactions": [
            {"request": {"model": "m", "contents": [{"role": "user", "parts": [{"text": "Weather?"}]}]},
             "response": [{"delayNs": 100_000_000, "text": "", "functionCalls": [
                 {"id": "c1", "name": "get_weather", "args": {"city": "Lisbon"}},
                 {"name": "get_weather", "args": {"city": "Porto"}},
                 {"name": "never_answered"}]}],
             "recordedAt": "2025-06-01T09:00:00.000Z", "durationNs": 100_000_000},
            {"request": {"model": "m", "contents": [
                 {"role": "user", "parts": [{"text": "Weather?"}]},
                 {"role": "model", "parts": [{"functionCall": {"id": "c1", "name": "get_weather"}}]},
                 {"role": "user", "parts": [
                     {"functionResponse": {"id": "c1", "name": "get_weather", "response": {"celsius": 21}}},
                     {"functionResponse": {"name": "get_weather", "response": {"error": "no station"}}}]}]},
             "response": [{"delayNs": 50_000_000, "text": "21 °C."}],
             "recordedAt": "2025-06-01T09:00:00.130Z", "durationNs": 50_000_000}
        ]}))
        .unwrap();
        let trace = export_cassette(&file, b"bytes", ExportOptions::named("calls")).trace;
        let turns = trace.turns();
        let calls: Vec<Value> = turns[0]
            .response
            .unwrap()
            .tool_calls
            .iter()
            .map(|call| serde_json::to_value(call).unwrap())
            .collect();
        assert_eq!(
            calls,
            [
                json!({"name": "get_weather", "id": "c1", "arguments": {"city": "Lisbon"},
                       "result": {"celsius": 21}, "timestamp": "2025-06-01T09:00:00.100Z",
                       "durationMs": 30}),
                json!({"name": "get_weather", "arguments": {"city": "Porto"},
                       "result": {"error": "no station"}, "timestamp": "2025-06-01T09:00:00.100Z",
                       "durationMs": 30}),
                json!({"name": "never_answered", "arguments": null,
                       "timestamp": "2025-06-01T09:00:00.100Z"}),
            ]
        );
        assert!(turns[1].response.unwrap().tool_calls.is_empty());
    }
}
