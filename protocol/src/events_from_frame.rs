//! Turning server frames into [`SessionEvent`]s.
//!
//! A frame can carry several things at once, and every one of them becomes an event, in
//! this order (the order the application needs to act on them):
//!
//! 1. `setupComplete` → [`SessionEvent::Connected`]
//! 2. `voiceActivity` / `voiceActivityDetectionSignal` → voice activity start or end
//! 3. `toolCallCancellation` → [`SessionEvent::ToolCallCancelled`] (before anything that
//!    might start new work)
//! 4. `serverContent`, field by field:
//!    1. `interrupted` → [`SessionEvent::Interrupted`] first, so playback stops before any
//!       audio of the same frame is considered
//!    2. `inputTranscription` → a partial [`SessionEvent::InputTranscription`], then
//!       `interimInputTranscription` → [`SessionEvent::InterimInputTranscription`]
//!    3. `modelTurn.parts`, in order → text deltas, thoughts, audio, media, files, code,
//!       code results; a part of unknown kind (or a function call or response part, which
//!       Live never sends there) → [`SessionEvent::Unrecognized`]
//!    4. `outputTranscription` → a partial [`SessionEvent::OutputTranscription`]
//!    5. `groundingMetadata`, `urlContextMetadata`
//!    6. `generationComplete` → [`SessionEvent::GenerationComplete`]
//!    7. `turnComplete` → the final input transcription, the final output transcription and
//!       [`SessionEvent::TextComplete`] (each only if the turn had any), then
//!       [`SessionEvent::TurnComplete`]
//!    8. `interactionStatus` → [`SessionEvent::InteractionStatus`]
//!    9. unknown `serverContent` fields → [`SessionEvent::Unrecognized`]
//! 5. `toolCall` → [`SessionEvent::ToolCall`]
//! 6. `sessionResumptionUpdate` → [`SessionEvent::SessionResumeUpdate`]
//! 7. `goAway` → [`SessionEvent::GoAway`]
//! 8. `usageMetadata` → [`SessionEvent::Usage`]; on a frame whose `serverContent`
//!    completes the turn, before all of `serverContent`'s events instead (after 3), so the
//!    turn's usage is known when it completes
//! 9. unknown top-level keys → [`SessionEvent::Unrecognized`]
//! 10. with [`EventDecoder::decode_partial`], each field that did not decode →
//!     [`SessionEvent::Error`] with [`SessionError::InvalidField`], in the order of the frame
//!
//! Transcriptions arrive as chunks. Each chunk is reported as it comes (`is_final: false`);
//! the whole text is reported once with `is_final: true` when the server marks it
//! `finished`, or else at turn complete. An interruption drops the output transcription and
//! answer text gathered so far without a final: the model never finished saying them.

use bytes::Bytes;

use crate::codec::{DecodeLimits, PartialServerMessage};
use crate::content::{Part, PartKind};
use crate::event::{ResumeInfo, SessionError, SessionEvent};
use crate::server::{ServerContent, ServerMessage, VadSignalType, VoiceActivityType};
use crate::stream_frame::{self, StreamFrame, StreamPart};

/// Turns server frames into events, keeping what spans frames: the answer text and the
/// transcriptions of the current turn.
#[derive(Debug, Clone, Default)]
pub struct EventDecoder {
    text: String,
    input_transcript: Transcript,
    output_transcript: Transcript,
}

/// A transcription being gathered over a turn.
#[derive(Debug, Clone, Default)]
struct Transcript {
    text: String,
    /// Chunks have arrived since the last final.
    open: bool,
}

impl Transcript {
    /// Adds a chunk's text; returns the partial event's text and, if `finished`, the final
    /// text.
    fn push(&mut self, text: Option<String>, finished: bool) -> (Option<String>, Option<String>) {
        let partial = text.filter(|t| !t.is_empty());
        if let Some(text) = &partial {
            self.text.push_str(text);
            self.open = true;
        }
        let last = if finished { self.finish() } else { None };
        (partial, last)
    }

    /// The whole transcription, if any chunk arrived since the last final.
    fn finish(&mut self) -> Option<String> {
        let open = std::mem::take(&mut self.open);
        let text = std::mem::take(&mut self.text);
        open.then_some(text)
    }

    fn discard(&mut self) {
        self.text.clear();
        self.open = false;
    }
}

impl EventDecoder {
    /// A decoder at the start of a session.
    pub fn new() -> Self {
        EventDecoder::default()
    }

    /// Appends the events of one frame to `out`, in the documented order.
    ///
    /// ```
    /// use reel_protocol::{decode_server, EventDecoder, SessionEvent};
    /// let frame = br#"{"serverContent":{"interrupted":true,"outputTranscription":{"text":"Hi"}},
    ///                  "usageMetadata":{"totalTokenCount":15}}"#;
    /// let mut events = Vec::new();
    /// EventDecoder::new().decode(decode_server(frame).unwrap(), &mut events);
    /// let kinds: Vec<_> = events.iter().map(SessionEvent::kind).collect();
    /// assert_eq!(kinds, ["interrupted", "output_transcription", "usage"]);
    /// ```
    pub fn decode(&mut self, mut message: ServerMessage, out: &mut Vec<SessionEvent>) {
        self.decode_message(&mut message, out);
    }

    /// Appends the events of a frame read by
    /// [`decode_server_partial`](crate::decode_server_partial): those of every field that
    /// decoded, in the documented order, then one [`SessionError::InvalidField`] error event
    /// for each field that did not. `seq` is the frame's sequence number, for the errors.
    ///
    /// ```
    /// use reel_protocol::{decode_server_partial, EventDecoder, SessionEvent};
    /// let frame = br#"{"serverContent":{"turnComplete":"yes"},"usageMetadata":{"totalTokenCount":15}}"#;
    /// let mut events = Vec::new();
    /// EventDecoder::new().decode_partial(7, decode_server_partial(frame).unwrap(), &mut events);
    /// let kinds: Vec<_> = events.iter().map(SessionEvent::kind).collect();
    /// assert_eq!(kinds, ["usage", "error"]);
    /// let SessionEvent::Error(error) = &events[1] else { panic!("not an error") };
    /// assert_eq!(
    ///     error.to_string(),
    ///     "inbound frame 7: field `serverContent.turnComplete`: expected a boolean, found a string of 3 characters; the rest of the frame was read"
    /// );
    /// ```
    pub fn decode_partial(
        &mut self,
        seq: u64,
        mut frame: PartialServerMessage,
        out: &mut Vec<SessionEvent>,
    ) {
        self.decode_partial_in_place(seq, &mut frame, out);
    }

    /// As [`EventDecoder::decode_partial`], reading the frame where it is: what the events
    /// carry (text, audio, calls) is taken out of `frame`, which is left holding the rest.
    ///
    /// A message is over a kilobyte; the session's router uses this so that no message is
    /// moved between decoding a frame and routing its events.
    pub fn decode_partial_in_place(
        &mut self,
        seq: u64,
        frame: &mut PartialServerMessage,
        out: &mut Vec<SessionEvent>,
    ) {
        self.decode_message(&mut frame.message, out);
        out.extend(
            frame
                .field_errors
                .drain(..)
                .map(|error| SessionEvent::Error(SessionError::InvalidField { seq, error })),
        );
    }

    /// The events of `message`, in the documented order, taking their data out of it.
    fn decode_message(&mut self, message: &mut ServerMessage, out: &mut Vec<SessionEvent>) {
        if let Some(setup) = &mut message.setup_complete {
            out.push(SessionEvent::Connected {
                session_id: setup.session_id.take(),
            });
        }
        if let Some(activity) = &message.voice_activity {
            match activity.voice_activity_type {
                Some(VoiceActivityType::ActivityStart) => {
                    out.push(SessionEvent::VoiceActivityStart)
                }
                Some(VoiceActivityType::ActivityEnd) => out.push(SessionEvent::VoiceActivityEnd),
                _ => {}
            }
        }
        if let Some(signal) = &message.voice_activity_detection_signal {
            match signal.vad_signal_type {
                Some(VadSignalType::StartOfSpeech) => out.push(SessionEvent::VoiceActivityStart),
                Some(VadSignalType::EndOfSpeech) => out.push(SessionEvent::VoiceActivityEnd),
                _ => {}
            }
        }
        if let Some(cancellation) = &mut message.tool_call_cancellation {
            out.push(SessionEvent::ToolCallCancelled(
                cancellation.ids.take().unwrap_or_default(),
            ));
        }
        if let Some(content) = &mut message.server_content {
            // The usage of a turn comes before its end, so the turn's figures are known
            // when it completes.
            if content.turn_complete == Some(true)
                && let Some(usage) = message.usage_metadata.take()
            {
                out.push(SessionEvent::Usage(Box::new(usage)));
            }
            self.decode_content(content, out);
        }
        if let Some(call) = &mut message.tool_call {
            out.push(SessionEvent::ToolCall(
                call.function_calls.take().unwrap_or_default(),
            ));
        }
        if let Some(update) = &mut message.session_resumption_update {
            out.push(SessionEvent::SessionResumeUpdate(ResumeInfo {
                handle: update.new_handle.take().filter(|h| !h.is_empty()),
                resumable: update.resumable.unwrap_or(false),
                last_consumed_index: update.last_consumed_client_message_index.map(|i| i.0),
            }));
        }
        if let Some(go_away) = &message.go_away {
            out.push(SessionEvent::GoAway {
                time_left: go_away.time_left.map(|d| d.0),
            });
        }
        if let Some(usage) = message.usage_metadata.take() {
            out.push(SessionEvent::Usage(Box::new(usage)));
        }
        for (key, value) in std::mem::take(&mut message.extra) {
            out.push(SessionEvent::Unrecognized {
                path: key,
                value: Box::new(value),
            });
        }
    }

    fn decode_content(&mut self, content: &mut ServerContent, out: &mut Vec<SessionEvent>) {
        if content.interrupted == Some(true) {
            self.text.clear();
            self.output_transcript.discard();
            out.push(SessionEvent::Interrupted);
        }
        if let Some(chunk) = content.input_transcription.take() {
            self.input_chunk(chunk.text, chunk.finished == Some(true), out);
        }
        if let Some(interim) = content
            .interim_input_transcription
            .as_mut()
            .and_then(|t| t.text.take())
        {
            out.push(SessionEvent::InterimInputTranscription(interim));
        }
        if let Some(parts) = content.model_turn.as_mut().and_then(|t| t.parts.as_mut()) {
            for (index, part) in parts.iter_mut().enumerate() {
                self.decode_part(index, part, out);
            }
        }
        if let Some(chunk) = content.output_transcription.take() {
            self.output_chunk(chunk.text, chunk.finished == Some(true), out);
        }
        if let Some(grounding) = content.grounding_metadata.take() {
            out.push(SessionEvent::Grounding(grounding));
        }
        if let Some(url_context) = content.url_context_metadata.take() {
            out.push(SessionEvent::UrlContext(url_context));
        }
        if content.generation_complete == Some(true) {
            out.push(SessionEvent::GenerationComplete);
        }
        if content.turn_complete == Some(true) {
            if let Some(text) = self.input_transcript.finish() {
                out.push(SessionEvent::InputTranscription {
                    text,
                    is_final: true,
                });
            }
            if let Some(text) = self.output_transcript.finish() {
                out.push(SessionEvent::OutputTranscription {
                    text,
                    is_final: true,
                });
            }
            if !self.text.is_empty() {
                out.push(SessionEvent::TextComplete(std::mem::take(&mut self.text)));
            }
            out.push(SessionEvent::TurnComplete {
                reason: content.turn_complete_reason.take(),
                waiting_for_input: content.waiting_for_input.unwrap_or(false),
            });
        }
        if let Some(status) = content.interaction_status.take() {
            out.push(SessionEvent::InteractionStatus(status));
        }
        for (key, value) in std::mem::take(&mut content.extra) {
            out.push(SessionEvent::Unrecognized {
                path: format!("serverContent.{key}"),
                value: Box::new(value),
            });
        }
    }

    fn decode_part(&mut self, index: usize, part: &mut Part, out: &mut Vec<SessionEvent>) {
        // Classify by reference first, then take the data out: no copies of text or audio.
        let kind = PartTag::of(part.kind());
        let event = match kind {
            PartTag::Text => self.text_delta(part.text.take().unwrap_or_default()),
            PartTag::Thought => SessionEvent::Thought(part.text.take().unwrap_or_default()),
            PartTag::InlineData => {
                let blob = part.inline_data.get_or_insert_default();
                let mime_type = blob.mime_type.take().unwrap_or_default();
                blob_event(mime_type, blob.data.take().map(|d| d.0).unwrap_or_default())
            }
            PartTag::FileData => {
                SessionEvent::File(Box::new(part.file_data.take().unwrap_or_default()))
            }
            PartTag::ExecutableCode => SessionEvent::ExecutableCode(Box::new(
                part.executable_code.take().unwrap_or_default(),
            )),
            PartTag::CodeExecutionResult => SessionEvent::CodeExecutionResult(Box::new(
                part.code_execution_result.take().unwrap_or_default(),
            )),
            // Live delivers calls in `toolCall`, never as parts; a call part is reported, not
            // dispatched, so a server that sent both could not make a tool run twice.
            PartTag::Unrecognized => SessionEvent::Unrecognized {
                path: format!("serverContent.modelTurn.parts[{index}]"),
                // Infallible: wire types serialize to a Value without error.
                value: Box::new(serde_json::to_value(&*part).unwrap_or_default()),
            },
        };
        out.push(event);
    }
}

impl EventDecoder {
    /// A text part's event; the text also joins the turn's answer.
    fn text_delta(&mut self, text: String) -> SessionEvent {
        self.text.push_str(&text);
        SessionEvent::TextDelta(text)
    }

    /// An input transcription chunk's events.
    fn input_chunk(&mut self, text: Option<String>, finished: bool, out: &mut Vec<SessionEvent>) {
        let (partial, last) = self.input_transcript.push(text, finished);
        push_transcript(out, partial, last, |text, is_final| {
            SessionEvent::InputTranscription { text, is_final }
        });
    }

    /// An output transcription chunk's events.
    fn output_chunk(&mut self, text: Option<String>, finished: bool, out: &mut Vec<SessionEvent>) {
        let (partial, last) = self.output_transcript.push(text, finished);
        push_transcript(out, partial, last, |text, is_final| {
            SessionEvent::OutputTranscription { text, is_final }
        });
    }

    /// Appends the events of `frame` if it is one of the frames that stream (a model turn
    /// of text or inline-data parts, a transcription chunk) and returns `true`; otherwise
    /// appends nothing, changes nothing and returns `false`, and the frame is for
    /// [`decode_server_partial_with`](crate::decode_server_partial_with) and
    /// [`EventDecoder::decode_partial_in_place`].
    ///
    /// The events are those the general decoder gives for the same frame, at a fraction of
    /// its cost: the frame is read with a reader that knows only those shapes, and no
    /// message is built. A frame larger than `limits` allows is never read here.
    ///
    /// ```
    /// use reel_protocol::{DecodeLimits, EventDecoder, SessionEvent};
    ///
    /// let mut decoder = EventDecoder::new();
    /// let mut events = Vec::new();
    /// let frame = br#"{"serverContent":{"modelTurn":{"parts":[{"text":"Hi"}]}}}"#;
    /// assert!(decoder.decode_streamed(frame, DecodeLimits::default(), &mut events));
    /// assert_eq!(events, [SessionEvent::TextDelta("Hi".into())]);
    ///
    /// let frame = br#"{"serverContent":{"turnComplete":true}}"#;
    /// assert!(!decoder.decode_streamed(frame, DecodeLimits::default(), &mut events));
    /// assert_eq!(events.len(), 1);
    /// ```
    pub fn decode_streamed(
        &mut self,
        frame: &[u8],
        limits: DecodeLimits,
        out: &mut Vec<SessionEvent>,
    ) -> bool {
        if frame.len() > limits.max_frame_bytes {
            return false;
        }
        let Some(read) = stream_frame::read(frame) else {
            return false;
        };
        match read {
            StreamFrame::ModelTurn { parts } => {
                for part in parts.into_iter().flatten() {
                    out.push(match part {
                        StreamPart::Text(text) => self.text_delta(text),
                        StreamPart::InlineData { mime_type, data } => blob_event(mime_type, data),
                    });
                }
            }
            StreamFrame::InputTranscription(text) => self.input_chunk(Some(text), false, out),
            StreamFrame::OutputTranscription(text) => self.output_chunk(Some(text), false, out),
        }
        true
    }
}

/// An inline-data part's event: audio, or media of another type.
fn blob_event<S: AsRef<str> + Into<String>>(mime_type: S, data: Bytes) -> SessionEvent {
    if mime_type.as_ref().starts_with("audio/") {
        SessionEvent::AudioData(data)
    } else {
        SessionEvent::Media {
            mime_type: mime_type.into(),
            data,
        }
    }
}

/// What a part becomes, decided before its data is taken out of it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum PartTag {
    Text,
    Thought,
    InlineData,
    FileData,
    ExecutableCode,
    CodeExecutionResult,
    /// A function call or response part (Live never sends them there), or an unknown kind.
    Unrecognized,
}

impl PartTag {
    fn of(kind: PartKind<'_>) -> Self {
        match kind {
            PartKind::Text(_) => PartTag::Text,
            PartKind::Thought(_) => PartTag::Thought,
            PartKind::InlineData(_) => PartTag::InlineData,
            PartKind::FileData(_) => PartTag::FileData,
            PartKind::ExecutableCode(_) => PartTag::ExecutableCode,
            PartKind::CodeExecutionResult(_) => PartTag::CodeExecutionResult,
            PartKind::FunctionCall(_) | PartKind::FunctionResponse(_) | PartKind::Unknown(_) => {
                PartTag::Unrecognized
            }
        }
    }
}

fn push_transcript(
    out: &mut Vec<SessionEvent>,
    partial: Option<String>,
    last: Option<String>,
    make: impl Fn(String, bool) -> SessionEvent,
) {
    if let Some(text) = partial {
        out.push(make(text, false));
    }
    if let Some(text) = last {
        out.push(make(text, true));
    }
}

/// The events of one frame on its own, with no turn context: text and transcriptions of
/// earlier frames are not known, so a final is only reported for what this frame holds.
/// A session uses one [`EventDecoder`] for all of its frames instead.
pub fn events_from_frame(message: ServerMessage) -> Vec<SessionEvent> {
    let mut out = Vec::new();
    EventDecoder::new().decode(message, &mut out);
    out
}
