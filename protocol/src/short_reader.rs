//! The cursor the short readers share ([`crate::stream_frame`], [`crate::tool_call_frame`]):
//! a frame's bytes read as a strict subset of JSON, where anything unexpected is `None` and
//! the frame goes to the general decoder.

use bytes::Bytes;
use serde_json::Number;

use crate::scalars::decode_base64;

/// The most keys a thread keeps room for between values (the list is dropped after a
/// larger value rather than kept).
const MAX_KEPT_KEYS: usize = 64;

thread_local! {
    /// The keys of the objects [`Reader::json_text`] is checking (their places in the
    /// frame), kept between values so a frame's arguments cost no allocation for it.
    static OPEN_KEYS: std::cell::Cell<Vec<(usize, usize)>> =
        const { std::cell::Cell::new(Vec::new()) };
}

/// A cursor over a frame.
#[derive(Clone)]
pub(crate) struct Reader<'a> {
    bytes: &'a [u8],
    /// The same bytes, when the whole frame was checked for UTF-8 at once: strings are then
    /// sliced from it instead of each being checked.
    text: Option<&'a str>,
    at: usize,
}

impl<'a> Reader<'a> {
    /// At the start of `bytes`, whose strings are checked for UTF-8 one by one (a frame of
    /// kilobytes of base64 is not scanned for a few short strings).
    pub(crate) fn new(bytes: &'a [u8]) -> Self {
        Reader {
            bytes,
            text: None,
            at: 0,
        }
    }

    /// At the start of `text` (a short frame, checked once: cheaper than checking each of
    /// its strings).
    pub(crate) fn of_text(text: &'a str) -> Self {
        Reader {
            bytes: text.as_bytes(),
            text: Some(text),
            at: 0,
        }
    }

    /// The bytes from `start` to `end` as text: they end at an ASCII byte (a quote, a
    /// backslash) and start after one, so they are whole characters of a checked frame.
    fn str_between(&self, start: usize, end: usize) -> Option<&'a str> {
        match self.text {
            Some(text) => text.get(start..end),
            None => std::str::from_utf8(self.bytes.get(start..end)?).ok(),
        }
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

    /// A string with no escapes, borrowed from the frame and checked for UTF-8.
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
            let text = self.str_between(start, self.at)?;
            self.at += 1;
            return Some(text.to_owned());
        }
        let mut out = String::new();
        loop {
            self.run();
            out.push_str(self.str_between(start, self.at)?);
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

/// A JSON value of the kinds tool arguments are made of, checked and handed back as text.
impl<'a> Reader<'a> {
    /// One JSON value (objects, arrays, strings with short escapes, numbers, booleans,
    /// `null`) that serde_json's `Value` reader reads without error, nested at most
    /// `max_depth` levels, as its text (from its first byte to its last). `None` for a `\u`
    /// escape, a key with an escape or given twice in its object, deeper nesting or bad
    /// JSON (a leading zero, a number out of range among them): the caller hands those to
    /// serde_json. The text is then read by serde_json as `serde_json::from_str` would read
    /// it on its own: no key twice, nothing it would refuse.
    pub(crate) fn json_text(&mut self, max_depth: usize) -> Option<&'a str> {
        self.skip_whitespace();
        let start = self.at;
        let mut keys = OPEN_KEYS.take();
        let checked = self.check_value(max_depth, &mut keys);
        keys.clear();
        if keys.capacity() <= MAX_KEPT_KEYS {
            OPEN_KEYS.set(keys);
        }
        checked?;
        self.str_between(start, self.at)
    }

    /// [`Reader::json_text`] without the text: moves past one value, `depth_left` levels
    /// of nesting allowed, the keys of the objects it is inside on `keys`.
    fn check_value(&mut self, depth_left: usize, keys: &mut Vec<(usize, usize)>) -> Option<()> {
        match self.peek()? {
            b'"' => self.check_string(),
            b'{' => {
                let depth_left = depth_left.checked_sub(1)?;
                self.advance();
                if self.empty(b'}')? {
                    return Some(());
                }
                let first = keys.len();
                loop {
                    // A key without escapes: two spellings of one key cannot hide from the
                    // byte comparison below.
                    let len = self.plain()?.len();
                    // `plain` stops after the closing quote.
                    let key = (self.at - 1 - len, self.at - 1);
                    let bytes = self.bytes;
                    let same = |(start, end): (usize, usize)| bytes.get(start..end);
                    if keys
                        .get(first..)?
                        .iter()
                        .any(|&other| same(other) == same(key))
                    {
                        return None;
                    }
                    keys.push(key);
                    self.byte(b':')?;
                    self.check_value(depth_left, keys)?;
                    if !self.more(b'}')? {
                        break;
                    }
                }
                keys.truncate(first);
                Some(())
            }
            b'[' => {
                let depth_left = depth_left.checked_sub(1)?;
                self.advance();
                if !self.empty(b']')? {
                    loop {
                        self.check_value(depth_left, keys)?;
                        if !self.more(b']')? {
                            break;
                        }
                    }
                }
                Some(())
            }
            b't' => self.literal(b"true"),
            b'f' => self.literal(b"false"),
            b'n' => self.literal(b"null"),
            _ => self.number().map(drop),
        }
    }

    /// Moves past a string whose escapes are all short ones (`\"`, `\\`, `\/`, `\b`, `\f`,
    /// `\n`, `\r`, `\t`); `None` for a `\u` escape or a control character.
    fn check_string(&mut self) -> Option<()> {
        self.byte(b'"')?;
        loop {
            self.run();
            match self.bytes.get(self.at)? {
                b'"' => {
                    self.at += 1;
                    return Some(());
                }
                b'\\' => match self.bytes.get(self.at + 1)? {
                    b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't' => self.at += 2,
                    _ => return None,
                },
                _ => return None,
            }
        }
    }

    /// Moves past `word` (`true`, `false`, `null`).
    fn literal(&mut self, word: &[u8]) -> Option<()> {
        self.rest().starts_with(word).then(|| self.at += word.len())
    }

    /// A number, as serde_json's `Value` reader makes it: an integer that fits 64 bits
    /// read here ([`Reader::integer`]), a short decimal fraction computed here
    /// ([`short_decimal`]), anything else (an exponent, many digits, `-0`, an integer wider
    /// than 64 bits) parsed by serde_json from its bytes alone. `None` for what is not a
    /// JSON number.
    fn number(&mut self) -> Option<Number> {
        if let Some(integer) = self.integer() {
            return Some(integer);
        }
        let rest = self.rest();
        let len = rest
            .iter()
            .position(|byte| !matches!(byte, b'0'..=b'9' | b'-' | b'+' | b'.' | b'e' | b'E'))
            .unwrap_or(rest.len());
        let token = rest.get(..len)?;
        let number = match short_decimal(token) {
            Some(number) => number,
            None => serde_json::from_slice::<Number>(token).ok()?,
        };
        self.at += len;
        Some(number)
    }

    /// An integer with no fraction or exponent that fits `u64` (or `i64` when negative):
    /// serde_json's `PosInt` / `NegInt`. `-0` (serde_json's float `-0.0`), leading zeros
    /// and anything wider are `None`.
    fn integer(&mut self) -> Option<Number> {
        let negative = self.bytes.get(self.at) == Some(&b'-');
        let start = self.at + usize::from(negative);
        let digits = self.bytes.get(start..)?;
        let len = digits
            .iter()
            .position(|byte| !byte.is_ascii_digit())
            .unwrap_or(digits.len());
        let (first, next) = (digits.first()?, digits.get(len));
        if len == 0
            || (*first == b'0' && (len > 1 || negative))
            || matches!(next, Some(b'.' | b'e' | b'E'))
        {
            return None;
        }
        let mut magnitude: u64 = 0;
        for digit in digits.get(..len)? {
            magnitude = magnitude
                .checked_mul(10)?
                .checked_add(u64::from(digit - b'0'))?;
        }
        let number = if negative {
            // -magnitude fits i64 down to i64::MIN (magnitude 2^63).
            Number::from(0i64.checked_sub_unsigned(magnitude)?)
        } else {
            Number::from(magnitude)
        };
        // Moved only once the integer is read: `None` leaves the number to `number`.
        self.at = start + len;
        Some(number)
    }
}

/// Powers of ten a `f64` holds exactly (10^22 is the last: 5^22 < 2^53).
const EXACT_POWERS_OF_TEN: [f64; 23] = [
    1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16,
    1e17, 1e18, 1e19, 1e20, 1e21, 1e22,
];

/// `-?(0|[1-9][0-9]*)\.[0-9]+` with at most 15 digits in all (`51.5072`, `-0.1276`): the
/// number it names, as a float. Its digits make an integer below 2^53 and its fraction
/// divides it by a power of ten below 10^23, both exact as `f64`, so the one rounding is
/// the division's, to the nearest float: the value serde_json's correctly rounding reader
/// (the workspace builds it with `float_roundtrip`) makes of the same text. `None` for any
/// other shape, left to serde_json.
fn short_decimal(token: &[u8]) -> Option<Number> {
    let (negative, unsigned) = match token.split_first() {
        Some((b'-', rest)) => (true, rest),
        _ => (false, token),
    };
    let dot = unsigned.iter().position(|&byte| byte == b'.')?;
    let (whole, fraction) = (unsigned.get(..dot)?, unsigned.get(dot + 1..)?);
    let digits = whole.len() + fraction.len();
    if whole.is_empty()
        || fraction.is_empty()
        || digits > 15
        || (whole.len() > 1 && whole.first() == Some(&b'0'))
    {
        return None;
    }
    let mut mantissa: u64 = 0;
    for &digit in whole.iter().chain(fraction) {
        if !digit.is_ascii_digit() {
            return None;
        }
        // At most 15 digits: below 10^15, no overflow.
        mantissa = mantissa * 10 + u64::from(digit - b'0');
    }
    // Below 10^15 < 2^53: exact as a float.
    let magnitude = mantissa as f64 / EXACT_POWERS_OF_TEN.get(fraction.len())?;
    Number::from_f64(if negative { -magnitude } else { magnitude })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_value_is_taken_when_serde_json_reads_it_alone_or_left_to_it() {
        let taken = [
            r#"{"city": "London", "days": [1, -2, true, false, null], "o": {}}"#,
            r#"["x\"y\n\/", "é😀", [], [[]], {"a": {"a": 1}, "b": {"a": 2}}]"#,
            "0",
            "-1",
            "18446744073709551615",
            "-9223372036854775808",
            // Numbers that are not 64-bit integers: short decimals checked here, the rest
            // parsed by serde_json from their bytes.
            "[51.5072, -0.1276, 0.1, 0.30000000000000004, 123456789.012345, -0.0, 1.0]",
            "[1e3, 1.5E-7, 2.5e+300, -0, 18446744073709551616, -9223372036854775809]",
            "[0.1234567890123456789, 9007199254740993.0, 1.7976931348623157e308]",
        ];
        for text in taken {
            let mut reader = Reader::of_text(text);
            assert_eq!(reader.json_text(100), Some(text), "{text}");
            assert!(reader.at_end(), "{text}");
            assert!(
                serde_json::from_str::<serde_json::Value>(text).is_ok(),
                "{text}"
            );
        }
        let spaced = " [ 1 , {\"a\" : 2} ] ,";
        assert_eq!(
            Reader::of_text(spaced).json_text(100),
            Some("[ 1 , {\"a\" : 2} ]")
        );
        let deep = format!("{}{}", "[".repeat(18), "]".repeat(18));
        let left = [
            "01",
            "-01.5",
            "1.",
            ".5",
            "1e",
            "1e999",
            "--1",
            r#""\u0041""#,
            r#"{"\u0041": 1}"#,
            r#"{"a\/": 1}"#,
            r#"{"a": 1, "b": 2, "a": 3}"#,
            "\"a\u{1}\"",
            "nul",
            "[1,]",
            "{\"a\":1,}",
            deep.as_str(),
        ];
        for text in left {
            assert_eq!(Reader::of_text(text).json_text(17), None, "{text}");
        }
        // 17 levels are taken with a limit of 17.
        assert!(
            Reader::of_text(&deep[1..deep.len() - 1])
                .json_text(17)
                .is_some()
        );
    }

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
