//! Who said what, and when: a call's transcript as the studio's transcript panel shows it,
//! gathered from the recording's text and transcription frames.
//!
//! The user's lines come from `inputTranscription` (what the server heard) and from the
//! text the client sent (`clientContent` turns, `realtimeInput.text`); the model's from
//! `outputTranscription` (what it said aloud) and from the text parts of its `modelTurn`.
//! Chunks of one speaker run together into one line until the other speaker's line starts,
//! the chunk says it is the last (`finished`), or the turn ends (`turnComplete`,
//! `interrupted`).

use reel_protocol::{ClientMessage, ServerMessage};
use serde::Serialize;

/// One line of the transcript.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TranscriptLine {
    /// `user` or `model`.
    pub who: &'static str,
    /// When its first chunk arrived (or was sent), ms since the recording's first entry.
    pub t_ms: u64,
    /// The sequence number of the frame of its first chunk (the panel seeks to it).
    pub seq: u64,
    /// Where it came from: `transcription` (speech) or `text` (typed or generated text).
    pub source: &'static str,
    /// What was said.
    pub text: String,
}

/// Builds a transcript frame by frame.
#[derive(Debug, Default)]
pub struct TranscriptBuilder {
    lines: Vec<TranscriptLine>,
    /// The line each speaker is still adding to (user, model), by index into `lines`.
    open: [Option<usize>; 2],
}

const USER: usize = 0;
const MODEL: usize = 1;

impl TranscriptBuilder {
    /// A chunk of `who`'s speech or text at `t_ms` in frame `seq`: added to `who`'s open
    /// line of the same source, or starting a new line.
    fn add(&mut self, who: usize, source: &'static str, t_ms: u64, seq: u64, text: &str) {
        if text.is_empty() {
            return;
        }
        // The other speaker's line ends where this one's starts.
        self.open[1 - who] = None;
        if let Some(line) = self.open[who]
            .and_then(|i| self.lines.get_mut(i))
            .filter(|line| line.source == source)
        {
            line.text.push_str(text);
            return;
        }
        self.open[who] = Some(self.lines.len());
        self.lines.push(TranscriptLine {
            who: if who == USER { "user" } else { "model" },
            t_ms,
            seq,
            source,
            text: text.to_owned(),
        });
    }

    /// What the client sent in frame `seq` at `t_ms`.
    pub fn client(&mut self, message: &ClientMessage, t_ms: u64, seq: u64) {
        if let Some(content) = &message.client_content {
            for turn in content.turns.iter().flatten() {
                let who = if turn.role.as_deref() == Some("model") {
                    MODEL
                } else {
                    USER
                };
                let text: String = turn
                    .parts
                    .iter()
                    .flatten()
                    .filter(|part| part.thought != Some(true))
                    .filter_map(|part| part.text.as_deref())
                    .collect();
                // Each turn the client sends is a line of its own.
                self.open = [None, None];
                self.add(who, "text", t_ms, seq, &text);
                self.open = [None, None];
            }
        }
        if let Some(text) = message
            .realtime_input
            .as_ref()
            .and_then(|i| i.text.as_deref())
        {
            self.add(USER, "text", t_ms, seq, text);
        }
    }

    /// What the server sent in frame `seq` at `t_ms`.
    pub fn server(&mut self, message: &ServerMessage, t_ms: u64, seq: u64) {
        let Some(content) = &message.server_content else {
            return;
        };
        if let Some(heard) = &content.input_transcription {
            self.add(
                USER,
                "transcription",
                t_ms,
                seq,
                heard.text.as_deref().unwrap_or(""),
            );
            if heard.finished == Some(true) {
                self.open[USER] = None;
            }
        }
        let text: String = content
            .model_turn
            .iter()
            .flat_map(|turn| turn.parts.iter().flatten())
            .filter(|part| part.thought != Some(true))
            .filter_map(|part| part.text.as_deref())
            .collect();
        self.add(MODEL, "text", t_ms, seq, &text);
        if let Some(said) = &content.output_transcription {
            self.add(
                MODEL,
                "transcription",
                t_ms,
                seq,
                said.text.as_deref().unwrap_or(""),
            );
            if said.finished == Some(true) {
                self.open[MODEL] = None;
            }
        }
        if content.turn_complete == Some(true) || content.interrupted == Some(true) {
            self.open = [None, None];
        }
    }

    /// The transcript, in time order.
    pub fn finish(self) -> Vec<TranscriptLine> {
        self.lines
    }
}
