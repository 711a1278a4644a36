//! The cursor the short readers share ([`crate::stream_frame`], [`crate::tool_call_frame`]):
//! a frame's bytes read as a strict subset of JSON, where anything unexpected is `None` and
//! the frame goes to the general decoder.

use bytes::Bytes;

use crate::scalars::decode_base64;

/// A cursor over a frame.
pub(crate) struct Reader<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl<'a> Reader<'a> {
    /// At the start of `bytes`.
    pub(crate) fn new(bytes: &'a [u8]) -> Self {
        Reader { bytes, at: 0 }
    }

    /// After whitespace, at the end of the frame.
    pub(crate) fn at_end(&mut self) -> bool {
        self.skip_whitespace();
        self.at == self.bytes.len()
    }

    /// Steps over the byte [`Reader::peek`] returned.
    pub(crate) fn advance(&mut self) {
        self.at += 1;
    }

    /// From here to the end of the frame.
    pub(crate) fn rest(&self) -> &'a [u8] {
        self.bytes.get(self.at..).unwrap_or_default()
    }

    /// Steps over `len` bytes that [`Reader::rest`] showed.
    pub(crate) fn skip(&mut self, len: usize) {
        self.at = (self.at + len).min(self.bytes.len());
    }

    /// Skips JSON whitespace (space, tab, line feed, carriage return).
    fn skip_whitespace(&mut self) {
        while let Some(b' ' | b'\t' | b'\n' | b'\r') = self.bytes.get(self.at) {
            self.at += 1;
        }
    }

    /// After whitespace, the next byte, not consumed.
    pub(crate) fn peek(&mut self) -> Option<u8> {
        self.skip_whitespace();
        self.bytes.get(self.at).copied()
    }

    /// After whitespace, `expected`.
    pub(crate) fn byte(&mut self, expected: u8) -> Option<()> {
        (self.peek()? == expected).then(|| self.at += 1)
    }

    /// After `open` (`{` or `[`), whether the object or array is empty: its `close` is
    /// next (and read).
    pub(crate) fn empty(&mut self, close: u8) -> Option<bool> {
        let empty = self.peek()? == close;
        if empty {
            self.advance();
        }
        Some(empty)
    }

    /// After a member or an item, whether another follows: `,` (read, `true`) or `close`
    /// (read, `false`); anything else is `None`.
    pub(crate) fn more(&mut self, close: u8) -> Option<bool> {
        let next = self.peek()?;
        (next == b',' || next == close).then(|| {
            self.advance();
            next == b','
        })
    }

    /// An object key that is one of `names`, and its colon.
    pub(crate) fn key(&mut self, names: &[&[u8]]) -> Option<()> {
        self.byte(b'"')?;
        // A name has no quote, backslash or control character: the key is that name when
        // the frame holds it and then the closing quote.
        let rest = self.rest();
        let name = names
            .iter()
            .find(|name| rest.get(name.len()) == Some(&b'"') && rest.starts_with(name))?;
        self.at += name.len() + 1;
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
        while let Some(chunk) = self.bytes.get(self.at..self.at + 8) {
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
        while let Some(&byte) = self.bytes.get(self.at) {
            if byte == b'"' || byte == b'\\' || byte < 0x20 {
                return;
            }
            self.at += 1;
        }
    }

    /// The bytes of a string with no escapes and no control characters, borrowed from the
    /// frame (not checked for UTF-8).
    pub(crate) fn plain(&mut self) -> Option<&'a [u8]> {
        self.byte(b'"')?;
        let start = self.at;
        self.run();
        if self.bytes.get(self.at) != Some(&b'"') {
            return None;
        }
        let text = self.bytes.get(start..self.at)?;
        self.at += 1;
        Some(text)
    }

    /// A string with no escapes, borrowed from the frame.
    pub(crate) fn plain_str(&mut self) -> Option<&'a str> {
        std::str::from_utf8(self.plain()?).ok()
    }

    /// A string of base64, decoded. Its end is the next `"`, found at the speed of
    /// `memchr`; an escape or a control character before it is not base64 and fails the
    /// decoding.
    pub(crate) fn base64(&mut self) -> Option<Bytes> {
        self.byte(b'"')?;
        let rest = self.bytes.get(self.at..)?;
        let len = memchr::memchr(b'"', rest)?;
        let data = decode_base64(rest.get(..len)?).ok()?;
        self.at += len + 1;
        Some(Bytes::from(data))
    }

    /// A string, its short escapes (`\"`, `\\`, `\/`, `\b`, `\f`, `\n`, `\r`, `\t`) read;
    /// a `\u` escape is left to the general decoder (`None`).
    pub(crate) fn string(&mut self) -> Option<String> {
        self.byte(b'"')?;
        let mut start = self.at;
        self.run();
        if self.bytes.get(self.at) == Some(&b'"') {
            // No escapes, the common case: one check, one copy.
            let text = std::str::from_utf8(self.bytes.get(start..self.at)?).ok()?;
            self.at += 1;
            return Some(text.to_owned());
        }
        let mut out = String::new();
        loop {
            self.run();
            out.push_str(std::str::from_utf8(self.bytes.get(start..self.at)?).ok()?);
            match self.bytes.get(self.at)? {
                b'"' => {
                    self.at += 1;
                    return Some(out);
                }
                b'\\' => {
                    out.push(match self.bytes.get(self.at + 1)? {
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
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_run_stops_at_the_first_quote_backslash_or_control_character() {
        for len in 0..40 {
            for stop in ["\"", "\\", "\u{0}", "\u{1f}", "\n"] {
                // Bytes above 0x7f (é, 😀) and just above the stops (#, ], space) never stop it.
                let before: String = "é😀#] a".chars().cycle().take(len).collect();
                let text = format!("{before}{stop}x\"\"");
                let mut reader = Reader::new(text.as_bytes());
                reader.run();
                assert_eq!(reader.at, before.len(), "{len} characters, then {stop:?}");
            }
            let text: String = "é😀#] a".chars().cycle().take(len).collect();
            let mut reader = Reader::new(text.as_bytes());
            reader.run();
            assert_eq!(reader.at, text.len(), "{len} characters, no stop");
        }
    }
}
