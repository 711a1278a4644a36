//! The frames that stream, read without the general decoder.
//!
//! A spoken or written answer arrives as thousands of small frames of three shapes: a model
//! turn holding a few text or inline-data parts, an output transcription chunk, an input
//! transcription chunk. The general decoder reads every frame into a [`ServerMessage`]
//! (over a kilobyte, every field in place, each key matched against every spelling), which
//! is most of the cost of a text frame. This reader accepts exactly those three shapes, in
//! either key spelling and with any JSON whitespace, and nothing else:
//!
//! ```text
//! {"serverContent":{"modelTurn":{"role":"model","parts":[{"text":"…"},{"inlineData":{"mimeType":"…","data":"…"}}]}}}
//! {"serverContent":{"outputTranscription":{"text":"…"}}}
//! {"serverContent":{"inputTranscription":{"text":"…"}}}
//! ```
//!
//! Anything outside that grammar — another key, a key twice, a `\u` escape, a control
//! character, base64 that does not decode, more than [`MAX_PARTS`] parts, bytes that are not
//! UTF-8 — makes it answer `None`, and the caller reads the frame with the general decoder,
//! which gives the same events for every frame this reader accepts (tested frame by frame
//! against it in `tests/it/stream_frames.rs`) and the precise error for the rest.
//!
//! [`ServerMessage`]: crate::ServerMessage

use bytes::Bytes;

use crate::short_reader::Reader;

/// The most parts a model turn may hold for this reader; a frame with more is read by the
/// general decoder (Live sends one part per frame).
pub(crate) const MAX_PARTS: usize = 4;

/// A frame of one of the streaming shapes, with its strings taken out.
#[derive(Debug)]
pub(crate) enum StreamFrame<'a> {
    /// `serverContent.modelTurn.parts`: the parts in order from the first slot, the
    /// slots after the last part empty.
    ModelTurn {
        /// The parts.
        parts: [Option<StreamPart<'a>>; MAX_PARTS],
    },
    /// `serverContent.inputTranscription.text`.
    InputTranscription(String),
    /// `serverContent.outputTranscription.text`.
    OutputTranscription(String),
}

/// One part of a streamed model turn.
#[derive(Debug)]
pub(crate) enum StreamPart<'a> {
    /// `{"text": …}`.
    Text(String),
    /// `{"inlineData": {"mimeType": …, "data": …}}`, the data decoded.
    InlineData {
        /// The MIME type, borrowed from the frame.
        mime_type: &'a str,
        /// The decoded bytes.
        data: Bytes,
    },
}

/// Reads `frame` if it is one of the streaming shapes; `None` for anything else.
///
/// The frame is not checked for UTF-8 as a whole (audio frames are kilobytes): outside
/// strings the grammar admits only ASCII, keys must equal ASCII names, every string that
/// becomes text is checked on its own, and base64 that is not ASCII does not decode.
pub(crate) fn read(frame: &[u8]) -> Option<StreamFrame<'_>> {
    let mut reader = Reader::new(frame);
    reader.byte(b'{')?;
    reader.key(&[b"serverContent", b"server_content"])?;
    reader.byte(b'{')?;
    let key = reader.plain()?;
    reader.byte(b':')?;
    let read = match key {
        b"modelTurn" | b"model_turn" => reader.model_turn()?,
        b"outputTranscription" | b"output_transcription" => {
            StreamFrame::OutputTranscription(reader.transcription()?)
        }
        b"inputTranscription" | b"input_transcription" => {
            StreamFrame::InputTranscription(reader.transcription()?)
        }
        _ => return None,
    };
    reader.byte(b'}')?;
    reader.byte(b'}')?;
    reader.at_end().then_some(read)
}

/// The grammar of the three shapes.
impl<'a> Reader<'a> {
    /// `{"role": "…", "parts": […]}`, role optional, either order.
    fn model_turn(&mut self) -> Option<StreamFrame<'a>> {
        let mut parts = None;
        let mut role = false;
        self.byte(b'{')?;
        loop {
            let key = self.plain()?;
            self.byte(b':')?;
            match key {
                b"role" if !role => {
                    self.plain_str()?;
                    role = true;
                }
                b"parts" if parts.is_none() => parts = Some(self.parts()?),
                _ => return None,
            }
            if !self.more(b'}')? {
                return parts.map(|parts| StreamFrame::ModelTurn { parts });
            }
        }
    }

    /// `[part, …]`, at most [`MAX_PARTS`].
    fn parts(&mut self) -> Option<[Option<StreamPart<'a>>; MAX_PARTS]> {
        let mut parts = std::array::from_fn(|_| None);
        self.byte(b'[')?;
        if self.empty(b']')? {
            return Some(parts);
        }
        let mut len = 0;
        loop {
            let part = self.part()?;
            // A fifth part finds no slot: the frame goes to the general decoder.
            *parts.get_mut(len)? = Some(part);
            len += 1;
            if !self.more(b']')? {
                return Some(parts);
            }
        }
    }

    /// `{"text": "…"}` or `{"inlineData": {…}}`.
    fn part(&mut self) -> Option<StreamPart<'a>> {
        self.byte(b'{')?;
        let key = self.plain()?;
        self.byte(b':')?;
        let part = match key {
            b"text" => StreamPart::Text(self.string()?),
            b"inlineData" | b"inline_data" => self.inline_data()?,
            _ => return None,
        };
        self.byte(b'}')?;
        Some(part)
    }

    /// `{"mimeType": "…", "data": "…"}`, both, either order.
    fn inline_data(&mut self) -> Option<StreamPart<'a>> {
        let mut mime_type = None;
        let mut data = None;
        self.byte(b'{')?;
        loop {
            let key = self.plain()?;
            self.byte(b':')?;
            match key {
                b"mimeType" | b"mime_type" if mime_type.is_none() => {
                    mime_type = Some(self.plain_str()?)
                }
                b"data" if data.is_none() => data = Some(self.base64()?),
                _ => return None,
            }
            if !self.more(b'}')? {
                return Some(StreamPart::InlineData {
                    mime_type: mime_type?,
                    data: data?,
                });
            }
        }
    }

    /// `{"text": "…"}`.
    fn transcription(&mut self) -> Option<String> {
        self.byte(b'{')?;
        self.key(&[b"text"])?;
        let text = self.string()?;
        self.byte(b'}')?;
        Some(text)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn texts(frame: &str) -> Option<Vec<String>> {
        match read(frame.as_bytes())? {
            StreamFrame::ModelTurn { parts } => Some(
                parts
                    .into_iter()
                    .flatten()
                    .map(|part| match part {
                        StreamPart::Text(text) => text,
                        StreamPart::InlineData { mime_type, data } => {
                            format!("{mime_type}:{data:?}")
                        }
                    })
                    .collect(),
            ),
            StreamFrame::InputTranscription(text) => Some(vec![format!("in:{text}")]),
            StreamFrame::OutputTranscription(text) => Some(vec![format!("out:{text}")]),
        }
    }

    #[test]
    fn reads_the_three_shapes_in_both_spellings() {
        assert_eq!(
            texts(r#"{"serverContent":{"modelTurn":{"role":"model","parts":[{"text":"Hi"}]}}}"#),
            Some(vec!["Hi".to_owned()])
        );
        assert_eq!(
            texts(
                r#" { "server_content" : { "model_turn" : { "parts" : [ { "inline_data" : { "data" : "AAE=" , "mime_type" : "audio/pcm" } } ] , "role" : "model" } } }
"#
            ),
            Some(vec![r#"audio/pcm:b"\0\x01""#.to_owned()])
        );
        assert_eq!(
            texts(r#"{"serverContent":{"outputTranscription":{"text":"a\"b\\c\/d\n"}}}"#),
            Some(vec!["out:a\"b\\c/d\n".to_owned()])
        );
        assert_eq!(
            texts(r#"{"serverContent":{"input_transcription":{"text":""}}}"#),
            Some(vec!["in:".to_owned()])
        );
        assert_eq!(
            texts(r#"{"serverContent":{"modelTurn":{"parts":[]}}}"#),
            Some(vec![])
        );
    }

    #[test]
    fn leaves_everything_else_to_the_general_decoder() {
        for frame in [
            r#"{"serverContent":{"modelTurn":{"parts":[{"text":"\u00e9"}]}}}"#,
            r#"{"serverContent":{"modelTurn":{"parts":[{"text":"a","thought":true}]}}}"#,
            r#"{"serverContent":{"modelTurn":{"parts":[{"text":"a"}]},"turnComplete":true}}"#,
            r#"{"serverContent":{"modelTurn":{"parts":[{"text":"a"}]}},"usageMetadata":{}}"#,
            r#"{"serverContent":{"modelTurn":{"role":"model"}}}"#,
            r#"{"serverContent":{"modelTurn":{"role":"a","role":"b","parts":[]}}}"#,
            r#"{"serverContent":{"modelTurn":{"parts":[{"text":"a"}]}}} x"#,
            r#"{"serverContent":{"modelTurn":{"parts":[{"text":"a"}]}}"#,
            r#"{"serverContent":{"modelTurn":{"parts":[{"inlineData":{"mimeType":"audio/pcm","data":"!"}}]}}}"#,
            r#"{"serverContent":{"modelTurn":{"parts":[{"inlineData":{"data":"AAE="}}]}}}"#,
            r#"{"serverContent":{"modelTurn":{"parts":[{},{"text":"a"}]}}}"#,
            r#"{"serverContent":{"modelTurn":{"parts":[{"text":"1"},{"text":"2"},{"text":"3"},{"text":"4"},{"text":"5"}]}}}"#,
            r#"{"serverContent":{"outputTranscription":{"text":"a","finished":true}}}"#,
            "{\"serverContent\":{\"outputTranscription\":{\"text\":\"a\tb\"}}}",
            r#"{"toolCall":{"functionCalls":[]}}"#,
            r#"{"serverContent":{"modelTurn":{"parts":[{"text":"a"},]}}}"#,
        ] {
            assert!(texts(frame).is_none(), "read by the short reader: {frame}");
        }
        // Bytes that are not UTF-8, in each string the reader keeps or skips; base64 with an
        // escape (the general decoder reads `\/` as `/`).
        for frame in [
            &b"{\"serverContent\":{\"outputTranscription\":{\"text\":\"a\xff\"}}}"[..],
            b"{\"serverContent\":{\"modelTurn\":{\"role\":\"\xc3\",\"parts\":[]}}}",
            b"{\"serverContent\":{\"modelTurn\":{\"parts\":[{\"text\":\"\\n\xe2\x82\"}]}}}",
            b"{\"serverContent\":{\"modelTurn\":{\"parts\":[{\"inlineData\":{\"mimeType\":\"audio/\xff\",\"data\":\"AAE=\"}}]}}}",
            b"{\"serverContent\":{\"modelTurn\":{\"parts\":[{\"inlineData\":{\"mimeType\":\"audio/pcm\",\"data\":\"AA\xc3\xa9\"}}]}}}",
            b"{\"serverContent\":{\"modelTurn\":{\"parts\":[{\"inlineData\":{\"mimeType\":\"audio/pcm\",\"data\":\"QUJD\\/A==\"}}]}}}",
        ] {
            assert!(read(frame).is_none(), "{}", String::from_utf8_lossy(frame));
        }
    }

    #[test]
    fn reads_up_to_four_parts() {
        assert_eq!(
            texts(
                r#"{"serverContent":{"modelTurn":{"parts":[{"text":"1"},{"text":"2"},{"text":"3"},{"text":"4"}]}}}"#
            ),
            Some(vec!["1".into(), "2".into(), "3".into(), "4".into()])
        );
    }
}
