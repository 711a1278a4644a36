//! What criteria read from a trace: the agent's answers, its tool calls, the conversation
//! as text for the judge.

use reel_recorder::trace::{AgentTrace, TraceResponse, TraceToolCall};

/// What the agent said in one answer: its text, else what the server transcribed of its
/// audio, else nothing.
pub fn answer_text(response: &TraceResponse) -> &str {
    response
        .text
        .as_deref()
        .or(response.transcript.as_deref())
        .unwrap_or("")
}

/// The answer of `turn` (1-based), or the last answer that said something.
///
/// `Err` says why there is none, for the score's detail.
pub fn select_answer(trace: &AgentTrace, turn: Option<u64>) -> Result<String, String> {
    let turns = trace.turns();
    match turn {
        Some(n) => {
            let found = turns
                .iter()
                .find(|t| t.index + 1 == n)
                .ok_or_else(|| format!("the recording has no turn {n} ({} turns)", turns.len()))?;
            let response = found
                .response
                .ok_or_else(|| format!("turn {n} has no recorded answer"))?;
            Ok(answer_text(response).to_owned())
        }
        None => turns
            .iter()
            .rev()
            .filter_map(|t| t.response)
            .map(answer_text)
            .find(|text| !text.is_empty())
            .map(str::to_owned)
            .ok_or_else(|| "the recording has no answer".to_owned()),
    }
}

/// Every answer's text, in order, or only turn `turn`'s.
pub fn answers(trace: &AgentTrace, turn: Option<u64>) -> Vec<String> {
    trace
        .turns()
        .iter()
        .filter(|t| turn.is_none_or(|n| t.index + 1 == n))
        .filter_map(|t| t.response)
        .map(|r| answer_text(r).to_owned())
        .collect()
}

/// Every tool call the model made, in order.
pub fn tool_calls(trace: &AgentTrace) -> Vec<&TraceToolCall> {
    trace
        .turns()
        .iter()
        .filter_map(|t| t.response)
        .flat_map(|r| r.tool_calls.iter())
        .collect()
}

/// `name({"city":"London"})`.
pub fn call_text(name: &str, args: &serde_json::Value) -> String {
    format!("{name}({args})")
}

/// The conversation as the judge reads it: per turn, the user's words, the tool calls
/// with their results, the agent's answer.
pub fn conversation(trace: &AgentTrace) -> String {
    let mut out = String::new();
    for turn in trace.turns() {
        out.push_str(&format!("Turn {}\n", turn.index + 1));
        let user = turn
            .request
            .prompt
            .as_deref()
            .or(turn.request.transcript.as_deref());
        if let Some(user) = user {
            out.push_str(&format!("User: {user}\n"));
        }
        if let Some(response) = turn.response {
            for call in &response.tool_calls {
                let result = call
                    .result
                    .as_ref()
                    .map_or_else(|| "no result".to_owned(), ToString::to_string);
                out.push_str(&format!(
                    "Tool call: {} -> {result}\n",
                    call_text(&call.name, &call.arguments)
                ));
            }
            let answer = answer_text(response);
            if !answer.is_empty() {
                out.push_str(&format!("Assistant: {answer}\n"));
            }
        }
    }
    out
}
