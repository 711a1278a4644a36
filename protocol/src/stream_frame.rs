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
//! against it in `tests/stream_frames.rs`) and the precise error for the rest.
//!
//! [`ServerMessage`]: crate::ServerMessage

use bytes::Bytes;

use crate::scalars::decode_base64;

/// The most parts a model turn may hold for this reader; a frame with more is read by the
/// general decoder (Live sends one part per frame).
pub(crate) const MAX_PARTS: usize = 4;

/// A frame of one of the streaming shapes, with its strings taken out.
#[derive(Debug)]
pub(crate) enum StreamFrame<'a> {
    /// `serverContent.modelTurn.parts`: the first `len` slots hold the parts in order.
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
    let mut reader = Reader {
        bytes: frame,
        at: 0,
    };
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
    reader.skip_whitespace();
    (reader.at == frame.len()).then_some(read)
}

/// A cursor over a frame.
struct Reader<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl<'a> Reader<'a> {
    fn bytes(&self) -> &'a [u8] {
        self.bytes
    }

    /// Skips JSON whitespace (space, tab, line feed, carriage return).
    fn skip_whitespace(&mut self) {
        while let Some(b' ' | b'\t' | b'\n' | b'\r') = self.bytes().get(self.at) {
            self.at += 1;
        }
    }

    /// After whitespace, the next byte, not consumed.
    fn peek(&mut self) -> Option<u8> {
        self.skip_whitespace();
        self.bytes().get(self.at).copied()
    }

    /// After whitespace, `expected`.
    fn byte(&mut self, expected: u8) -> Option<()> {
        (self.peek()? == expected).then(|| self.at += 1)
    }

    /// An object key that is one of `names`, and its colon.
    fn key(&mut self, names: &[&[u8]]) -> Option<()> {
        let key = self.plain()?;
        names.contains(&key).then_some(())?;
        self.byte(b':')
    }

    /// Moves to the first `"`, `\` or control character from here (or the end).
    fn run(&mut self) {
        // Eight bytes at a time (audio is kilobytes of base64): a byte stops the run when
        // it equals `"` or `\` (its XOR with them has a zero byte) or is below 0x20. Each
        // test can flag a byte wrongly only above one it flags rightly (the borrow of a
        // subtraction runs upwards), so the lowest flag is exact.
        const ONES: u64 = u64::from_le_bytes([1; 8]);
        const HIGHS: u64 = ONES << 7;
        let below =
            |word: u64, limit: u8| word.wrapping_sub(ONES * u64::from(limit)) & !word & HIGHS;
        while let Some(chunk) = self.bytes().get(self.at..self.at + 8) {
            let Ok(chunk) = <[u8; 8]>::try_from(chunk) else {
                break;
            };
            let word = u64::from_le_bytes(chunk);
            let stops = below(word ^ (ONES * u64::from(b'"')), 1)
                | below(word ^ (ONES * u64::from(b'\\')), 1)
                | below(word, 0x20);
            if stops != 0 {
                self.at += (stops.trailing_zeros() / 8) as usize;
                return;
            }
            self.at += 8;
        }
        while let Some(&byte) = self.bytes().get(self.at) {
            if byte == b'"' || byte == b'\\' || byte < 0x20 {
                return;
            }
            self.at += 1;
        }
    }

    /// The bytes of a string with no escapes and no control characters, borrowed from the
    /// frame (not checked for UTF-8).
    fn plain(&mut self) -> Option<&'a [u8]> {
        self.byte(b'"')?;
        let start = self.at;
        self.run();
        if self.bytes().get(self.at) != Some(&b'"') {
            return None;
        }
        let text = self.bytes().get(start..self.at)?;
        self.at += 1;
        Some(text)
    }

    /// A string with no escapes, borrowed from the frame.
    fn plain_str(&mut self) -> Option<&'a str> {
        std::str::from_utf8(self.plain()?).ok()
    }

    /// A string of base64, decoded. Its end is the next `"`, found at the speed of
    /// `memchr`; an escape or a control character before it is not base64 and fails the
    /// decoding.
    fn base64(&mut self) -> Option<Bytes> {
        self.byte(b'"')?;
        let rest = self.bytes().get(self.at..)?;
        let len = memchr::memchr(b'"', rest)?;
        let data = decode_base64(rest.get(..len)?).ok()?;
        self.at += len + 1;
        Some(Bytes::from(data))
    }

    /// A string, its short escapes (`\"`, `\\`, `\/`, `\b`, `\f`, `\n`, `\r`, `\t`) read;
    /// a `\u` escape is left to the general decoder (`None`).
    fn string(&mut self) -> Option<String> {
        self.byte(b'"')?;
        let mut start = self.at;
        let mut out = String::new();
        loop {
            self.run();
            out.push_str(std::str::from_utf8(self.bytes().get(start..self.at)?).ok()?);
            match self.bytes().get(self.at)? {
                b'"' => {
                    self.at += 1;
                    return Some(out);
                }
                b'\\' => {
                    out.push(match self.bytes().get(self.at + 1)? {
                        b'"' => '"',
                        b'\\' => '\\',
                        b'/' => '/',
                        b'b' => '\u{8}',
                        b'f' => '\u{c}',
                        b'n' => '\n',
                        b'r' => '\r',
                        b't' => '\t',
                        _ => return None,
                    });
                    self.at += 2;
                    start = self.at;
                }
                _ => return None,
            }
        }
    }

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
            if self.peek()? == b'}' {
                self.at += 1;
                return parts.map(|parts| StreamFrame::ModelTurn { parts });
            }
            self.byte(b',')?;
        }
    }

    /// `[part, …]`, at most [`MAX_PARTS`].
    fn parts(&mut self) -> Option<[Option<StreamPart<'a>>; MAX_PARTS]> {
        let mut parts = [None, None, None, None];
        self.byte(b'[')?;
        if self.peek()? == b']' {
            self.at += 1;
            return Some(parts);
        }
        let mut len = 0;
        loop {
            let part = self.part()?;
            // A fifth part finds no slot: the frame goes to the general decoder.
            *parts.get_mut(len)? = Some(part);
            len += 1;
            match self.peek()? {
                b']' => {
                    self.at += 1;
                    return Some(parts);
                }
                b',' => self.at += 1,
                _ => return None,
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
            if self.peek()? == b'}' {
                self.at += 1;
                return Some(StreamPart::InlineData {
                    mime_type: mime_type?,
                    data: data?,
                });
            }
            self.byte(b',')?;
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
    fn a_run_stops_at_the_first_quote_backslash_or_control_character() {
        for len in 0..40 {
            for stop in ["\"", "\\", "\u{0}", "\u{1f}", "\n"] {
                // Bytes above 0x7f (é, 😀) and just above the stops (#, ], space) never stop it.
                let before: String = "é😀#] a".chars().cycle().take(len).collect();
                let text = format!("{before}{stop}x\"\"");
                let mut reader = Reader {
                    bytes: text.as_bytes(),
                    at: 0,
                };
                reader.run();
                assert_eq!(reader.at, before.len(), "{len} characters, then {stop:?}");
            }
            let text: String = "é😀#] a".chars().cycle().take(len).collect();
            let mut reader = Reader {
                bytes: text.as_bytes(),
                at: 0,
            };
            reader.run();
            assert_eq!(reader.at, text.len(), "{len} characters, no stop");
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
