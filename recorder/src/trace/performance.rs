//! [`TracePerformance`]: a trace's performance block, computed from its entries.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::entry::{TraceEntry, TraceResponse};

/// The summary at the end of a trace. Seed 001 has `totalDurationMs`, `totalPromptTokens`
/// and `totalCompletionTokens`; the rest is reel's, written only when known.
///
/// [`TracePerformance::of`] computes it from the entries, so it always agrees with them.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct TracePerformance {
    /// The responses' durations added up: the time spent waiting for the model, in ms.
    pub total_duration_ms: u64,
    /// Prompt tokens, all turns.
    pub total_prompt_tokens: u64,
    /// Completion tokens, all turns.
    pub total_completion_tokens: u64,
    /// All tokens, all turns (when any turn reported a total).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub total_tokens: Option<u64>,
    /// Thinking tokens, all turns (when any turn reported them).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub total_thoughts_tokens: Option<u64>,
    /// Cached prompt tokens, all turns (when any turn reported them).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub total_cached_tokens: Option<u64>,
    /// Responses in the trace.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub turn_count: Option<u64>,
    /// Function calls, all turns.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_call_count: Option<u64>,
    /// Responses the user interrupted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub interruption_count: Option<u64>,
    /// Mean time to first token over the responses that have one, in ms.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mean_time_to_first_token_ms: Option<f64>,
    /// Median time to first token (the lower middle value for an even count), in ms.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub p50_time_to_first_token_ms: Option<u64>,
    /// Longest time to first token, in ms.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_time_to_first_token_ms: Option<u64>,
    /// The whole recording, from its first frame to its last, in ms (live sessions).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session_duration_ms: Option<u64>,
}

impl TracePerformance {
    /// The performance block of `entries` (no session duration: set it when known).
    ///
    /// ```
    /// use reel_recorder::trace::{TokenUsage, TraceEntry, TracePerformance, TraceResponse};
    ///
    /// let response = |ttft, prompt| TraceEntry::Response(TraceResponse {
    ///     duration_ms: Some(500),
    ///     time_to_first_token_ms: Some(ttft),
    ///     token_usage: Some(TokenUsage { prompt: Some(prompt), ..TokenUsage::default() }),
    ///     ..TraceResponse::default()
    /// });
    /// let performance = TracePerformance::of(&[response(100, 50), response(300, 70)]);
    /// assert_eq!(performance.total_duration_ms, 1000);
    /// assert_eq!(performance.total_prompt_tokens, 120);
    /// assert_eq!(performance.mean_time_to_first_token_ms, Some(200.0));
    /// assert_eq!(performance.p50_time_to_first_token_ms, Some(100));
    /// ```
    pub fn of(entries: &[TraceEntry]) -> Self {
        let responses: Vec<&TraceResponse> = entries
            .iter()
            .filter_map(|entry| match entry {
                TraceEntry::Response(response) => Some(response),
                TraceEntry::Request(_) => None,
            })
            .collect();
        let usage = |count: fn(&TraceResponse) -> Option<u64>| -> Option<u64> {
            responses
                .iter()
                .filter_map(|r| count(r))
                .fold(None, |sum, n| Some(sum.unwrap_or(0) + n))
        };
        let mut ttfts: Vec<u64> = responses
            .iter()
            .filter_map(|r| r.time_to_first_token_ms)
            .collect();
        ttfts.sort_unstable();
        let mean =
            (!ttfts.is_empty()).then(|| ttfts.iter().sum::<u64>() as f64 / ttfts.len() as f64);
        TracePerformance {
            total_duration_ms: responses.iter().filter_map(|r| r.duration_ms).sum(),
            total_prompt_tokens: usage(|r| r.token_usage?.prompt).unwrap_or(0),
            total_completion_tokens: usage(|r| r.token_usage?.completion).unwrap_or(0),
            total_tokens: usage(|r| r.token_usage?.total),
            total_thoughts_tokens: usage(|r| r.token_usage?.thoughts),
            total_cached_tokens: usage(|r| r.token_usage?.cached),
            turn_count: Some(responses.len() as u64),
            tool_call_count: Some(responses.iter().map(|r| r.tool_calls.len() as u64).sum()),
            interruption_count: Some(responses.iter().filter(|r| r.interrupted).count() as u64),
            mean_time_to_first_token_ms: mean,
            p50_time_to_first_token_ms: ttfts.get(ttfts.len().saturating_sub(1) / 2).copied(),
            max_time_to_first_token_ms: ttfts.last().copied(),
            session_duration_ms: None,
        }
    }
}
