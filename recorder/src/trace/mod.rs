//! Agent traces: a session or a series of model calls as versioned JSON, one
//! request and one response per turn, with a performance summary.
//!
//! ```json
//! {
//!   "version": "1.0",
//!   "traceName": "weather",
//!   "capturedAt": "2025-06-01T09:00:00.000Z",
//!   "agentName": "gemini-live-2.5-flash-preview",
//!   "entries": [
//!     {"type": "Request", "index": 0, "timestamp": "2025-06-01T09:00:00.180Z", "prompt": "Hello!"},
//!     {"type": "Response", "index": 0, "timestamp": "2025-06-01T09:00:00.360Z",
//!      "text": "Hi!", "durationMs": 180, "timeToFirstTokenMs": 180,
//!      "tokenUsage": {"prompt": 48, "completion": 17, "total": 65}}
//!   ],
//!   "performance": {"totalDurationMs": 180, "totalPromptTokens": 48, "totalCompletionTokens": 17}
//! }
//! ```
//!
//! Seed 001's fields keep their names and meaning; what a Live session needs beyond them
//! (transcripts, inputs summarized without audio bytes, tool results, time to first token,
//! interruptions, thinking and cached tokens) comes as optional fields, written only when
//! they say something, so a plain trace stays the plain format. Readers ignore fields they
//! do not know.
//!
//! - [`AgentTrace`]: the document; [`AgentTrace::turns`] pairs requests with responses;
//! - [`entry`]: [`TraceEntry`], [`TraceRequest`], [`TraceResponse`], [`TraceToolCall`],
//!   [`TokenUsage`], [`TraceInput`];
//! - [`performance`]: [`TracePerformance`], computed from the entries;
//! - [`timestamp`]: [`Timestamp`], RFC 3339 on the wire, epoch ms in memory;
//! - [`read_trace`], [`parse_trace`], [`write_trace`] and their [`TraceError`].
//!
//! The JSON Schema is [`crate::schema::trace_schema`].

pub mod entry;
mod error;
mod io;
pub mod performance;
pub mod timestamp;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

pub use entry::{TokenUsage, TraceEntry, TraceInput, TraceRequest, TraceResponse, TraceToolCall};
pub use error::{TraceError, TraceProblem};
pub use io::{parse_trace, read_trace, write_trace};
pub use performance::TracePerformance;
pub use timestamp::{Timestamp, TimestampError};

/// The format version this crate writes.
pub const TRACE_VERSION: &str = "1.0";

/// A whole trace.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(title = "AgentTrace")]
pub struct AgentTrace {
    /// The format version, `1.0` (readers accept any `1.x`).
    pub version: String,
    /// What the trace is called (a file stem, a test's name).
    pub trace_name: String,
    /// When recording started.
    pub captured_at: Timestamp,
    /// The agent recorded: for a live session, the model that answered.
    pub agent_name: String,
    /// The model every request went to, when one did (requests may name their own).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// Requests and responses, in the order they happened.
    pub entries: Vec<TraceEntry>,
    /// The summary of the entries.
    pub performance: TracePerformance,
}

/// One turn of a trace: request N with its response, when there is one.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TraceTurn<'a> {
    /// The turn, 0-based.
    pub index: u64,
    /// What was asked.
    pub request: &'a TraceRequest,
    /// What came back, if anything did.
    pub response: Option<&'a TraceResponse>,
}

impl AgentTrace {
    /// An empty trace at version [`TRACE_VERSION`].
    pub fn new(
        trace_name: impl Into<String>,
        agent_name: impl Into<String>,
        captured_at: Timestamp,
    ) -> Self {
        AgentTrace {
            version: TRACE_VERSION.to_owned(),
            trace_name: trace_name.into(),
            captured_at,
            agent_name: agent_name.into(),
            model: None,
            entries: Vec::new(),
            performance: TracePerformance::default(),
        }
    }

    /// Recomputes [`AgentTrace::performance`] from the entries, keeping the session
    /// duration.
    pub fn update_performance(&mut self) {
        let session = self.performance.session_duration_ms;
        self.performance = TracePerformance::of(&self.entries);
        self.performance.session_duration_ms = session;
    }

    /// The turns, in request order, each request with its response.
    ///
    /// ```
    /// use reel_recorder::trace::{AgentTrace, Timestamp, TraceEntry, TraceRequest, TraceResponse};
    ///
    /// let mut trace = AgentTrace::new("t", "a", Timestamp::from_epoch_ms(0));
    /// trace.entries.push(TraceEntry::Request(TraceRequest { index: 0, ..Default::default() }));
    /// trace.entries.push(TraceEntry::Request(TraceRequest { index: 1, ..Default::default() }));
    /// trace.entries.push(TraceEntry::Response(TraceResponse { index: 0, ..Default::default() }));
    /// let turns = trace.turns();
    /// assert_eq!(turns.len(), 2);
    /// assert!(turns[0].response.is_some() && turns[1].response.is_none());
    /// ```
    pub fn turns(&self) -> Vec<TraceTurn<'_>> {
        let mut turns: Vec<TraceTurn<'_>> = Vec::new();
        for entry in &self.entries {
            match entry {
                TraceEntry::Request(request) => turns.push(TraceTurn {
                    index: request.index,
                    request,
                    response: None,
                }),
                TraceEntry::Response(response) => {
                    if let Some(turn) = turns
                        .iter_mut()
                        .find(|t| t.index == response.index && t.response.is_none())
                    {
                        turn.response = Some(response);
                    }
                }
            }
        }
        turns
    }

    /// The model of turn `request`: its own, else the trace's.
    pub fn model_of<'a>(&'a self, request: &'a TraceRequest) -> Option<&'a str> {
        request.model.as_deref().or(self.model.as_deref())
    }

    /// The trace as pretty JSON, ending with a newline.
    pub fn to_json_pretty(&self) -> String {
        // Serializing these types cannot fail: every map key is a string and no value is
        // a float that JSON cannot hold (durations in ms are finite by construction).
        let mut text = serde_json::to_string_pretty(self).unwrap_or_default();
        text.push('\n');
        text
    }
}
