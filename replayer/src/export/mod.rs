//! Exports of a recorded session: its wire log as an agent trace (see
//! [`reel_recorder::trace`]) and as OpenTelemetry spans ([`otlp`]); its cassette of
//! out-of-band model calls likewise ([`export_cassette`]).
//!
//! [`TraceExporter`] reads a wire log one entry at a time (memory holds the turns' text,
//! never their audio) and builds an [`AgentTrace`]: one request and one response per model
//! turn, times from the frames' `ts_ms`:
//!
//! - the request: what the application sent in the turn (client content, realtime input:
//!   text in full, audio as frames and playing time), the user's speech as the server
//!   transcribed it, a new system instruction; its time is the last input before the
//!   model's first output (the moment the model had the question);
//! - the response: the answer text, the output transcription, the model's audio time, the
//!   function calls with their arguments and the results the runtime sent back, the usage
//!   the server reported last in the turn, whether the user interrupted; its time is the
//!   turn's `turnComplete`. Time to first token runs from the request to the model's first
//!   output of any kind (text, audio, transcript, thought or function call).
//!
//! ```
//! use reel_recorder::wire_log::{Direction, WireEntry};
//! use reel_replayer::export::{ExportOptions, TraceExporter};
//!
//! let frame = |seq, dir, ts_ms, json: &str| {
//!     WireEntry::frame(seq, dir, ts_ms, json.as_bytes().to_vec(), None, false)
//! };
//! let mut exporter = TraceExporter::new(ExportOptions::named("hello"));
//! for entry in [
//!     frame(1, Direction::Out, 1_000, r#"{"setup":{"model":"models/gemini-live-2.5-flash"}}"#),
//!     frame(2, Direction::Out, 1_100, r#"{"clientContent":{"turns":[{"role":"user","parts":[{"text":"Hi"}]}],"turnComplete":true}}"#),
//!     frame(3, Direction::In, 1_350, r#"{"serverContent":{"modelTurn":{"parts":[{"text":"Hello!"}]}}}"#),
//!     frame(4, Direction::In, 1_400, r#"{"serverContent":{"turnComplete":true}}"#),
//! ] {
//!     exporter.push(&entry);
//! }
//! let trace = exporter.finish()?.trace;
//! assert_eq!(trace.agent_name, "gemini-live-2.5-flash");
//! let turn = trace.turns()[0];
//! assert_eq!(turn.request.prompt.as_deref(), Some("Hi"));
//! let response = turn.response.unwrap();
//! assert_eq!(response.text.as_deref(), Some("Hello!"));
//! assert_eq!((response.time_to_first_token_ms, response.duration_ms), (Some(250), Some(300)));
//! # Ok::<(), reel_replayer::export::ExportError>(())
//! ```

mod cassette;
mod ids;
mod live_turn;
pub mod otlp;
mod wav;

use reel_protocol::SessionConfig;
use reel_recorder::trace::{AgentTrace, Timestamp};
use reel_recorder::wire_log::{Direction, WireEntry};

use crate::log_stats::LogStats;
use live_turn::LiveTurns;

pub use cassette::export_cassette;
pub use ids::IdSeed;
pub use otlp::{OtlpOptions, to_otlp};
pub use wav::{
    MAX_GAP_MS, MAX_WAV_DATA_BYTES, PeakMeter, WAV_RATE, WavError, WavExporter, WavLimits,
    WavSummary,
};

/// How an export names what it exports.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ExportOptions {
    /// The trace's name (`traceName`).
    pub trace_name: String,
    /// The agent's name (`agentName`); without it, the model the session set up.
    pub agent_name: Option<String>,
}

impl ExportOptions {
    /// A trace called `trace_name`, its agent named after the model.
    pub fn named(trace_name: impl Into<String>) -> Self {
        ExportOptions {
            trace_name: trace_name.into(),
            agent_name: None,
        }
    }
}

/// A wire log that cannot be exported.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ExportError {
    /// The first frame the client sent is not a setup (or it sent none): the log does not
    /// start a session, so there is no model to name and nothing to derive ids from.
    #[error("no setup frame: {}", match first_outbound_seq {
        Some(seq) => format!("the first frame the client sent (seq {seq}) is not a setup"),
        None => "the client sent no frame".to_owned(),
    })]
    NoSetup {
        /// The sequence number of the first frame the client sent, if it sent any.
        first_outbound_seq: Option<u64>,
    },
}

/// A wire log exported: its trace, and the seed its OpenTelemetry ids derive from.
#[derive(Debug, Clone, PartialEq)]
pub struct Exported {
    /// The trace.
    pub trace: AgentTrace,
    /// The ids' seed (see [`to_otlp`]).
    pub ids: IdSeed,
}

/// Builds an [`AgentTrace`] from a wire log's entries (see the [module docs](self)).
#[derive(Debug)]
pub struct TraceExporter {
    options: ExportOptions,
    stats: LogStats,
    setup_entry: Option<WireEntry>,
    turns: LiveTurns,
}

impl TraceExporter {
    /// An exporter with nothing read yet.
    pub fn new(options: ExportOptions) -> Self {
        TraceExporter {
            options,
            stats: LogStats::new(),
            setup_entry: None,
            turns: LiveTurns::default(),
        }
    }

    /// Takes the next entry (entries in log order).
    pub fn push(&mut self, entry: &WireEntry) {
        let first_outbound = self.stats.first_outbound_seq.is_none()
            && entry.dir == Direction::Out
            && !entry.is_close_marker();
        self.stats.observe(entry);
        if first_outbound && self.stats.setup.is_some() {
            self.setup_entry = Some(entry.clone());
        }
        self.turns.push(entry);
    }

    /// The trace of every entry taken.
    pub fn finish(self) -> Result<Exported, ExportError> {
        let (Some(setup), Some(setup_entry)) = (&self.stats.setup, &self.setup_entry) else {
            return Err(ExportError::NoSetup {
                first_outbound_seq: self.stats.first_outbound_seq,
            });
        };
        let model = short_model(SessionConfig::from_setup(setup.clone()).model_name());
        let captured_at = Timestamp::from_epoch_ms(self.stats.first_ts_ms.unwrap_or(0));
        let agent = self
            .options
            .agent_name
            .clone()
            .unwrap_or_else(|| model.clone());
        let mut trace = AgentTrace::new(self.options.trace_name.clone(), agent, captured_at);
        trace.model = Some(model);
        trace.entries = self.turns.finish();
        trace.performance.session_duration_ms = Some(self.stats.duration_ms());
        trace.update_performance();
        Ok(Exported {
            trace,
            ids: IdSeed::of_setup(setup_entry),
        })
    }
}

/// Exports the entries of a whole wire log.
pub fn export_trace<'a>(
    entries: impl IntoIterator<Item = &'a WireEntry>,
    options: ExportOptions,
) -> Result<Exported, ExportError> {
    let mut exporter = TraceExporter::new(options);
    for entry in entries {
        exporter.push(entry);
    }
    exporter.finish()
}

/// `gemini-live-2.5-flash` from `models/gemini-live-2.5-flash` or a Vertex AI resource
/// name ending in `/models/gemini-live-2.5-flash`.
fn short_model(model: &str) -> String {
    model.rsplit('/').next().unwrap_or(model).to_owned()
}
