//! [`LiveTurns`]: a wire log's frames gathered turn by turn (what was asked, what the
//! model did, the tools it called and what they returned), for the trace.
//!
//! A turn ends with the server's `turnComplete`, as in [`crate::timeline`]. Server frames
//! are read through the protocol's own [`EventDecoder`]; client frames are named by
//! [`describe`], so audio is summarized (frames and playing time), never copied.

use reel_protocol::{
    ClientMessage, Content, EventDecoder, SessionEvent, UsageMetadata, decode_client, decode_server,
};
use reel_recorder::trace::{
    Timestamp, TokenUsage, TraceEntry, TraceInput, TraceRequest, TraceResponse, TraceToolCall,
};
use reel_recorder::wire_log::{Direction, WireEntry};

use crate::timeline::describe;

/// Model audio: PCM16 mono at 24 kHz, so 48 bytes a millisecond.
const MODEL_AUDIO_BYTES_PER_MS: f64 = 48.0;

/// One turn as it is gathered.
#[derive(Debug, Default)]
struct LiveTurn {
    /// When the turn's stretch of the log began: the previous turn's end, or the log's start.
    start_ms: u64,
    /// The last frame of the stretch.
    last_ms: u64,
    inputs: Vec<TraceInput>,
    prompt: Vec<String>,
    /// The last input before the model's first output.
    request_ms: Option<u64>,
    transcript_in: String,
    instruction: Option<String>,
    first_output_ms: Option<u64>,
    text: String,
    /// The answer's text as it streamed: one piece per text frame.
    text_chunks: Vec<String>,
    transcript_out: String,
    /// The output transcription as it streamed: one piece per transcription frame.
    transcript_chunks: Vec<String>,
    audio_ms: f64,
    tool_calls: Vec<TraceToolCall>,
    usage: Option<UsageMetadata>,
    interrupted: bool,
    finish_reason: Option<String>,
    end_ms: Option<u64>,
}

impl LiveTurn {
    fn starting_at(ms: u64) -> Self {
        LiveTurn {
            start_ms: ms,
            last_ms: ms,
            ..LiveTurn::default()
        }
    }

    /// Whether anything happened in the turn (a stretch with only connection frames, such
    /// as the one after the last turn, is not a turn).
    fn is_turn(&self) -> bool {
        self.end_ms.is_some()
            || !self.inputs.is_empty()
            || self.first_output_ms.is_some()
            || !self.tool_calls.is_empty()
    }

    fn output_at(&mut self, ms: u64) {
        self.first_output_ms.get_or_insert(ms);
    }

    fn input(&mut self, entry: &WireEntry, text: Option<String>) {
        let view = describe(entry);
        if self.first_output_ms.is_none() {
            self.request_ms = Some(entry.ts_ms);
        }
        if let Some(text) = &text {
            self.prompt.push(text.clone());
        }
        if view.pure_audio
            && let Some(last) = self.inputs.last_mut()
            && last.kind == view.kind
        {
            last.frames += 1;
            last.audio_ms = Some(last.audio_ms.unwrap_or(0.0) + view.audio_ms.unwrap_or(0.0));
            return;
        }
        self.inputs.push(TraceInput {
            kind: view.kind,
            text,
            frames: 1,
            audio_ms: view.audio_ms,
        });
    }

    /// The turn's request and response (none for the response of a turn in which the
    /// model did nothing and that never completed).
    fn entries(self, index: u64) -> (TraceRequest, Option<TraceResponse>) {
        let request_ms = self.request_ms.unwrap_or(self.start_ms);
        let request = TraceRequest {
            index,
            timestamp: Timestamp::from_epoch_ms(request_ms),
            prompt: non_empty(self.prompt.join("\n")),
            transcript: non_empty(self.transcript_in),
            inputs: self.inputs,
            instruction: self.instruction,
            ..TraceRequest::default()
        };
        let answered =
            self.end_ms.is_some() || self.first_output_ms.is_some() || !self.tool_calls.is_empty();
        if !answered {
            return (request, None);
        }
        let end_ms = self.end_ms.unwrap_or(self.last_ms);
        let response = TraceResponse {
            index,
            timestamp: Timestamp::from_epoch_ms(end_ms),
            text: non_empty(self.text),
            transcript: non_empty(self.transcript_out),
            audio_ms: (self.audio_ms > 0.0).then_some(self.audio_ms),
            duration_ms: Some(end_ms.saturating_sub(request_ms)),
            time_to_first_token_ms: self.first_output_ms.map(|ms| ms.saturating_sub(request_ms)),
            tool_calls: self.tool_calls,
            token_usage: self.usage.as_ref().map(token_usage),
            finish_reason: self.finish_reason,
            interrupted: self.interrupted,
            incomplete: self.end_ms.is_none(),
            // The pieces of the answer as they streamed: its text's, or, for an answer in
            // audio, its transcription's; only when it came in more than one.
            chunks: if self.text_chunks.is_empty() {
                several(self.transcript_chunks)
            } else {
                several(self.text_chunks)
            },
            ..TraceResponse::default()
        };
        (request, Some(response))
    }
}

/// `chunks` when there are two or more; none for an answer in one piece.
fn several(chunks: Vec<String>) -> Vec<String> {
    if chunks.len() > 1 { chunks } else { Vec::new() }
}

fn non_empty(text: String) -> Option<String> {
    (!text.is_empty()).then_some(text)
}

fn token_usage(usage: &UsageMetadata) -> TokenUsage {
    let count = |n: Option<i64>| n.and_then(|n| u64::try_from(n).ok());
    TokenUsage {
        prompt: count(usage.prompt_token_count),
        completion: count(usage.response_token_count),
        total: count(usage.total_token_count),
        thoughts: count(usage.thoughts_token_count),
        cached: count(usage.cached_content_token_count),
    }
}

/// The text parts of `contents`, joined, leaving out the model's own turns (history the
/// application replays is not what the user asked).
fn user_text<'a>(contents: impl IntoIterator<Item = &'a Content>) -> Option<String> {
    let text: String = contents
        .into_iter()
        .filter(|c| c.role.as_deref() != Some("model"))
        .flat_map(Content::parts)
        .filter(|p| p.thought != Some(true))
        .filter_map(|p| p.text.as_deref())
        .collect();
    non_empty(text)
}

/// A wire log's frames, gathered turn by turn.
#[derive(Debug, Default)]
pub(super) struct LiveTurns {
    /// The turns so far; the last one is the one being gathered.
    turns: Vec<LiveTurn>,
    decoder: EventDecoder,
    events: Vec<SessionEvent>,
}

impl LiveTurns {
    /// Takes the next entry (entries in log order).
    pub(super) fn push(&mut self, entry: &WireEntry) {
        if self.turns.is_empty() {
            self.turns.push(LiveTurn::starting_at(entry.ts_ms));
        }
        if entry.is_close_marker() {
            return;
        }
        if let Some(turn) = self.turns.last_mut() {
            turn.last_ms = entry.ts_ms;
        }
        match entry.dir {
            Direction::Out => {
                // A frame that does not decode is left out, as `reel show` marks it invalid.
                if let Ok(message) = decode_client(&entry.payload) {
                    self.client(entry, message);
                }
            }
            Direction::In => {
                if let Ok(message) = decode_server(&entry.payload) {
                    self.events.clear();
                    self.decoder.decode(message, &mut self.events);
                    let events = std::mem::take(&mut self.events);
                    // Usage riding on a turnComplete frame is that turn's, though the
                    // decoder reports it after the turn's end.
                    let frame_turn = self.turns.len().saturating_sub(1);
                    for event in &events {
                        match event {
                            SessionEvent::Usage(usage) => {
                                if let Some(turn) = self.turns.get_mut(frame_turn) {
                                    turn.usage = Some((**usage).clone());
                                }
                            }
                            event => self.server(entry.ts_ms, event),
                        }
                    }
                    self.events = events;
                }
            }
        }
    }

    fn current(&mut self) -> &mut LiveTurn {
        if self.turns.is_empty() {
            self.turns.push(LiveTurn::default());
        }
        let last = self.turns.len() - 1;
        &mut self.turns[last]
    }

    fn client(&mut self, entry: &WireEntry, message: ClientMessage) {
        if let Some(content) = &message.client_content {
            let text = user_text(content.turns.iter().flatten());
            self.current().input(entry, text);
        } else if let Some(input) = &message.realtime_input {
            self.current().input(entry, input.text.clone());
        } else if let Some(response) = message.tool_response {
            for answer in response.function_responses.into_iter().flatten() {
                self.answer(
                    entry.ts_ms,
                    answer.id.as_deref(),
                    answer.name.as_deref(),
                    answer.response,
                );
            }
        } else if let Some(update) = &message.context_update
            && let Some(text) = update
                .system_instruction
                .as_ref()
                .and_then(|c| user_text([c]))
        {
            self.current().instruction = Some(text);
        }
    }

    /// Gives the first unanswered call with this id (or, without an id, this name) its
    /// result, whichever turn it was made in (a non-blocking tool may answer later).
    fn answer(
        &mut self,
        ms: u64,
        id: Option<&str>,
        name: Option<&str>,
        result: Option<serde_json::Value>,
    ) {
        let call = self
            .turns
            .iter_mut()
            .flat_map(|t| t.tool_calls.iter_mut())
            .find(|call| {
                call.result.is_none()
                    && match id {
                        Some(id) => call.id.as_deref() == Some(id),
                        None => Some(call.name.as_str()) == name,
                    }
            });
        if let Some(call) = call {
            call.duration_ms = call.timestamp.map(|t| ms.saturating_sub(t.epoch_ms()));
            call.result = Some(result.unwrap_or(serde_json::Value::Null));
        }
    }

    fn server(&mut self, ms: u64, event: &SessionEvent) {
        let turn = self.current();
        match event {
            SessionEvent::TextDelta(text) => {
                turn.output_at(ms);
                turn.text.push_str(text);
                turn.text_chunks.push(text.clone());
            }
            SessionEvent::OutputTranscription {
                text,
                is_final: false,
            } => {
                turn.output_at(ms);
                turn.transcript_out.push_str(text);
                turn.transcript_chunks.push(text.clone());
            }
            SessionEvent::AudioData(pcm) => {
                turn.output_at(ms);
                turn.audio_ms += pcm.len() as f64 / MODEL_AUDIO_BYTES_PER_MS;
            }
            SessionEvent::Thought(_)
            | SessionEvent::Media { .. }
            | SessionEvent::File(_)
            | SessionEvent::ExecutableCode(_)
            | SessionEvent::CodeExecutionResult(_) => turn.output_at(ms),
            SessionEvent::InputTranscription {
                text,
                is_final: false,
            } => turn.transcript_in.push_str(text),
            SessionEvent::ToolCall(calls) => {
                turn.output_at(ms);
                turn.tool_calls.extend(calls.iter().map(|call| {
                    TraceToolCall {
                        name: call.name.clone().unwrap_or_else(|| "?".to_owned()),
                        id: call.id.clone(),
                        arguments: call
                            .args
                            .clone()
                            .map_or(serde_json::Value::Null, serde_json::Value::from),
                        result: None,
                        timestamp: Some(Timestamp::from_epoch_ms(ms)),
                        duration_ms: None,
                        cancelled: false,
                    }
                }));
            }
            SessionEvent::ToolCallCancelled(ids) => {
                let calls = self.turns.iter_mut().flat_map(|t| t.tool_calls.iter_mut());
                for call in calls {
                    if call.id.as_ref().is_some_and(|id| ids.contains(id)) {
                        call.cancelled = true;
                    }
                }
            }
            SessionEvent::Interrupted => turn.interrupted = true,
            SessionEvent::TurnComplete { reason, .. } => {
                turn.end_ms = Some(ms);
                // A turn that ran to its end without a stated reason stopped as a model
                // does when it is done; a cut-off one has no reason.
                turn.finish_reason = match reason {
                    Some(reason) => Some(reason.as_str().to_owned()),
                    None if !turn.interrupted => Some("STOP".to_owned()),
                    None => None,
                };
                self.turns.push(LiveTurn::starting_at(ms));
            }
            _ => {}
        }
    }

    /// The entries of every turn: request, then response, turn after turn.
    pub(super) fn finish(self) -> Vec<TraceEntry> {
        let mut entries = Vec::new();
        let turns = self.turns.into_iter().filter(LiveTurn::is_turn);
        for (index, turn) in turns.enumerate() {
            let (request, response) = turn.entries(index as u64);
            entries.push(TraceEntry::Request(request));
            entries.extend(response.map(TraceEntry::Response));
        }
        entries
    }
}
