//! The cursor the short readers share ([`crate::stream_frame`], [`crate::tool_call_frame`]):
//! a frame's bytes read as a strict subset of JSON, where anything unexpected is `None` and
//! the frame goes to the general decoder.

use bytes::Bytes;
use serde_json::{Map, Number, Value};

use crate::scalars::decode_base64;

/// How many arrays and objects a value [`Reader::value`] builds itself may sit inside;
/// deeper ones go to serde_json.
pub(crate) const MAX_VALUE_DEPTH: usize = 16;

/// The most members a thread keeps room for between values (the list is dropped after a
/// larger value rather than kept).
const MAX_KEPT_PENDING: usize = 64;

thread_local! {
    /// The members of the objects [`Reader::value`] is reading, kept between values so a
    /// frame's arguments cost no allocation for it.
    static PENDING_MEMBERS: std::cell::Cell<Vec<(String, Value)>> =
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

    /// From here to the end of the frame, as text.
    pub(crate) fn rest_str(&self) -> Option<&'a str> {
        self.str_between(self.at, self.bytes.len())
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

/// A JSON value of the kinds tool arguments are made of, built as serde_json builds it.
impl Reader<'_> {
    /// A value `depth` levels down (objects in member order, arrays, strings with short
    /// escapes, numbers, booleans, `null`), equal to what serde_json's `Value` reader makes
    /// of the same bytes; `None` for a `\u` escape, nesting past [`MAX_VALUE_DEPTH`] or bad
    /// JSON (a leading zero among them), which the caller hands to serde_json.
    pub(crate) fn value(&mut self, depth: usize) -> Option<Value> {
        // The members of the objects being read wait on one list the thread keeps, so each
        // map is made at its final size once (no growth, no rehash) and a frame's maps do
        // not all land in one allocator size class.
        let mut pending = PENDING_MEMBERS.take();
        let value = self.value_in(depth, &mut pending);
        pending.clear();
        if pending.capacity() <= MAX_KEPT_PENDING {
            PENDING_MEMBERS.set(pending);
        }
        value
    }

    /// [`Reader::value`], the members of unfinished objects on `pending`.
    fn value_in(&mut self, depth: usize, pending: &mut Vec<(String, Value)>) -> Option<Value> {
        if depth > MAX_VALUE_DEPTH {
            return None;
        }
        Some(match self.peek()? {
            b'"' => Value::String(self.string()?),
            b'{' => {
                self.advance();
                let mut members = Map::new();
                if !self.empty(b'}')? {
                    let first = pending.len();
                    loop {
                        let key = self.string()?;
                        self.byte(b':')?;
                        let value = self.value_in(depth + 1, pending)?;
                        pending.push((key, value));
                        if !self.more(b'}')? {
                            break;
                        }
                    }
                    members = Map::with_capacity(pending.len() - first);
                    // A key given twice keeps its first place and its last value, as
                    // serde_json's map does.
                    for (key, value) in pending.drain(first..) {
                        members.insert(key, value);
                    }
                }
                Value::Object(members)
            }
            b'[' => {
                self.advance();
                let mut items = Vec::new();
                if !self.empty(b']')? {
                    loop {
                        items.push(self.value_in(depth + 1, pending)?);
                        if !self.more(b']')? {
                            break;
                        }
                    }
                }
                Value::Array(items)
            }
            b't' => self.literal(b"true", Value::Bool(true))?,
            b'f' => self.literal(b"false", Value::Bool(false))?,
            b'n' => self.literal(b"null", Value::Null)?,
            _ => Value::Number(self.number()?),
        })
    }

    /// `word` (`true`, `false`, `null`), as `value`.
    fn literal(&mut self, word: &[u8], value: Value) -> Option<Value> {
        self.rest().starts_with(word).then(|| {
            self.at += word.len();
            value
        })
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
    fn a_value_is_what_serde_json_makes_of_it_or_left_to_it() {
        let built = [
            r#"{"city": "London", "days": [1, -2, true, false, null], "o": {}}"#,
            r#"{"a": 1, "b": 2, "a": 3}"#,
            r#"["x\"y\n", "é😀", [], [[]]]"#,
            "0",
            "-1",
            "18446744073709551615",
            "-9223372036854775808",
            // Numbers that are not 64-bit integers: short decimals computed here, the
            // rest parsed by serde_json from their bytes.
            "[51.5072, -0.1276, 0.1, 0.30000000000000004, 123456789.012345, -0.0, 1.0]",
            "[1e3, 1.5E-7, 2.5e+300, -0, 18446744073709551616, -9223372036854775809]",
            "[0.1234567890123456789, 9007199254740993.0, 1.7976931348623157e308]",
        ];
        for text in built {
            let expected: Value = serde_json::from_str(text).unwrap();
            let mut reader = Reader::of_text(text);
            let value = reader.value(0);
            assert_eq!(value.as_ref(), Some(&expected), "{text}");
            assert!(reader.at_end(), "{text}");
            // Key order too.
            assert_eq!(
                serde_json::to_string(&value).unwrap(),
                serde_json::to_string(&expected).unwrap()
            );
        }
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
            "nul",
            "[1,]",
            deep.as_str(),
        ];
        for text in left {
            assert_eq!(Reader::of_text(text).value(0), None, "{text}");
        }
        // The innermost `[]` of 17 sits inside 16 arrays: the deepest built here.
        assert!(Reader::of_text(&deep[1..deep.len() - 1]).value(0).is_some());
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
