//! Scalar wire types that JSON alone does not describe: base64 bytes, protobuf int64 and
//! protobuf `Duration` strings.

use std::fmt;
use std::time::Duration;

use bytes::Bytes;
use serde::de::{self, Deserializer, Visitor};
use serde::{Deserialize, Serialize, Serializer};

use crate::wire::borrowed_str;

/// Binary data carried as base64 text (audio, video, images).
///
/// Decoding accepts the standard and the URL-safe alphabet, padded or not (protobuf JSON
/// allows all four; the Python SDK writes URL-safe). Encoding writes standard, padded.
/// The bytes are held as [`Bytes`], so handing audio to a callback never copies it.
#[derive(Clone, Default, PartialEq, Eq, Hash)]
pub struct Base64Data(pub Bytes);

impl Base64Data {
    /// Decodes base64 text in any of the accepted alphabets.
    pub fn decode(text: &str) -> Result<Self, Base64Error> {
        decode_base64(text.as_bytes()).map(|v| Base64Data(Bytes::from(v)))
    }

    /// The standard, padded base64 text of the bytes.
    pub fn encode(&self) -> String {
        base64_simd::STANDARD.encode_to_string(&self.0)
    }
}

impl From<Bytes> for Base64Data {
    fn from(bytes: Bytes) -> Self {
        Base64Data(bytes)
    }
}

impl From<Vec<u8>> for Base64Data {
    fn from(bytes: Vec<u8>) -> Self {
        Base64Data(Bytes::from(bytes))
    }
}

impl fmt::Debug for Base64Data {
    /// Prints the length, not the bytes: a second of audio is 48 KB of noise in a log.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Base64Data({} bytes)", self.0.len())
    }
}

/// Base64 text that none of the accepted alphabets could decode.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid base64 data ({len} characters): not standard or URL-safe base64")]
pub struct Base64Error {
    /// Length of the text that failed to decode.
    pub len: usize,
}

/// Decodes base64 in the standard alphabet first (the common case), then URL-safe, each
/// padded or not (as the length says).
///
/// The standard alphabet is tried without looking at the text first: `-` and `_` are not in
/// it, so text that holds them fails there and only then is checked for them, and audio in
/// the standard alphabet is read in a single SIMD pass.
pub(crate) fn decode_base64(text: &[u8]) -> Result<Vec<u8>, Base64Error> {
    use base64_simd::{STANDARD, STANDARD_NO_PAD, URL_SAFE, URL_SAFE_NO_PAD};
    let padded = text.len().is_multiple_of(4);
    let (standard, url_safe) = if padded {
        (STANDARD, URL_SAFE)
    } else {
        (STANDARD_NO_PAD, URL_SAFE_NO_PAD)
    };
    let error = || Base64Error { len: text.len() };
    match standard.decode_to_vec(text) {
        Ok(bytes) => Ok(bytes),
        Err(_) if text.iter().any(|&b| b == b'-' || b == b'_') => {
            url_safe.decode_to_vec(text).map_err(|_| error())
        }
        Err(_) => Err(error()),
    }
}

impl Serialize for Base64Data {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(&self.encode())
    }
}

impl<'de> Deserialize<'de> for Base64Data {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let text = borrowed_str(deserializer, "base64 text")?;
        Base64Data::decode(&text).map_err(de::Error::custom)
    }
}

/// A protobuf int64, which JSON carries as a string (`"42"`) or, from some writers, a number.
///
/// Both read; it is written back the way the server writes it, as a string.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Int64(pub i64);

/// A protobuf int64 that reel writes as a JSON number, as the official SDKs do for client
/// fields such as token counts in `contextWindowCompression`. Reads a string or a number.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Int64Number(pub i64);

impl Serialize for Int64 {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(&self.0)
    }
}

impl Serialize for Int64Number {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_i64(self.0)
    }
}

/// Reads an int64 given as a JSON number or a decimal string.
fn deserialize_int64<'de, D: Deserializer<'de>>(deserializer: D) -> Result<i64, D::Error> {
    struct Int64Visitor;
    impl Visitor<'_> for Int64Visitor {
        type Value = i64;
        fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
            f.write_str("an int64 as a number or a decimal string")
        }
        fn visit_i64<E: de::Error>(self, v: i64) -> Result<i64, E> {
            Ok(v)
        }
        fn visit_u64<E: de::Error>(self, v: u64) -> Result<i64, E> {
            i64::try_from(v).map_err(|_| E::custom(format_args!("{v} is out of the int64 range")))
        }
        fn visit_str<E: de::Error>(self, v: &str) -> Result<i64, E> {
            v.parse()
                .map_err(|_| E::custom(format_args!("{v:?} is not a decimal int64")))
        }
    }
    deserializer.deserialize_any(Int64Visitor)
}

impl<'de> Deserialize<'de> for Int64 {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserialize_int64(deserializer).map(Int64)
    }
}

impl<'de> Deserialize<'de> for Int64Number {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserialize_int64(deserializer).map(Int64Number)
    }
}

/// A protobuf `Duration` as JSON carries it: seconds with an optional fraction and an `s`
/// suffix (`"30s"`, `"9.5s"`, `"0.000001s"`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ProtoDuration(pub Duration);

/// A duration string that is not of the protobuf form.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "invalid duration {text:?}: expected seconds with an optional fraction and an 's' suffix, like \"9.5s\""
)]
pub struct DurationError {
    /// The text that did not parse.
    pub text: String,
}

impl ProtoDuration {
    /// Parses `"9.5s"`-style text. Negative durations are refused (a `timeLeft` cannot be).
    pub fn parse(text: &str) -> Result<Self, DurationError> {
        let error = || DurationError {
            text: text.to_owned(),
        };
        let number = text.strip_suffix('s').ok_or_else(error)?;
        let (whole, fraction) = match number.split_once('.') {
            Some((whole, fraction)) => (whole, fraction),
            None => (number, ""),
        };
        let digits = |s: &str| s.bytes().all(|b| b.is_ascii_digit());
        if whole.is_empty() || !digits(whole) || !digits(fraction) || fraction.len() > 9 {
            return Err(error());
        }
        let secs: u64 = whole.parse().map_err(|_| error())?;
        let nanos: u32 = if fraction.is_empty() {
            0
        } else {
            // Right-pad to nine digits: ".5" is 500_000_000 ns.
            let scale = 10u32.pow(9 - fraction.len() as u32);
            fraction.parse::<u32>().map_err(|_| error())? * scale
        };
        Ok(ProtoDuration(Duration::new(secs, nanos)))
    }
}

impl fmt::Display for ProtoDuration {
    /// The shortest protobuf form: `"30s"`, `"9.5s"`, `"0.000001s"`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let secs = self.0.as_secs();
        let nanos = self.0.subsec_nanos();
        if nanos == 0 {
            return write!(f, "{secs}s");
        }
        let fraction = format!("{nanos:09}");
        write!(f, "{secs}.{}s", fraction.trim_end_matches('0'))
    }
}

impl Serialize for ProtoDuration {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for ProtoDuration {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let text = borrowed_str(deserializer, "a duration string like \"9.5s\"")?;
        ProtoDuration::parse(&text).map_err(de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_parse_and_print_in_protobuf_form() {
        let cases = [
            ("30s", Duration::from_secs(30)),
            ("9.5s", Duration::from_millis(9500)),
            ("0.000001s", Duration::from_micros(1)),
            ("1.123456789s", Duration::new(1, 123_456_789)),
        ];
        for (text, expected) in cases {
            let parsed = ProtoDuration::parse(text).unwrap();
            assert_eq!(parsed.0, expected, "{text}");
            assert_eq!(parsed.to_string(), text);
        }
        assert_eq!(ProtoDuration::parse("9.50s").unwrap().to_string(), "9.5s");
    }

    #[test]
    fn malformed_durations_are_refused() {
        for text in [
            "",
            "s",
            "9",
            "-1s",
            "1.s5",
            "1.0000000001s",
            "abc",
            ".5s",
            "1e3s",
        ] {
            assert_eq!(
                ProtoDuration::parse(text),
                Err(DurationError { text: text.into() }),
                "{text:?}"
            );
        }
    }

    #[test]
    fn base64_reads_all_four_alphabets() {
        let bytes = vec![0xfb, 0xff, 0xfe, 0x01];
        for text in ["+//+AQ==", "+//+AQ", "-__-AQ==", "-__-AQ"] {
            assert_eq!(Base64Data::decode(text).unwrap().0, bytes, "{text}");
        }
        assert_eq!(Base64Data::from(bytes).encode(), "+//+AQ==");
        assert_eq!(
            Base64Data::decode("not base64!"),
            Err(Base64Error { len: 11 })
        );
    }

    #[test]
    fn int64_reads_strings_and_numbers() {
        let from_str: Int64 = serde_json::from_str("\"42\"").unwrap();
        let from_num: Int64 = serde_json::from_str("42").unwrap();
        assert_eq!(from_str, Int64(42));
        assert_eq!(from_num, Int64(42));
        assert_eq!(serde_json::to_string(&Int64(42)).unwrap(), "\"42\"");
        assert_eq!(serde_json::to_string(&Int64Number(42)).unwrap(), "42");
        assert!(serde_json::from_str::<Int64>("\"4x\"").is_err());
        assert!(serde_json::from_str::<Int64>("1.5").is_err());
    }
}
