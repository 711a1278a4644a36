//! RFC 3339 times (`2025-12-10T18:00:00Z`), as tapes and cassettes stamp their recordings.
//!
//! Only what the formats need: writing a UTC time from epoch milliseconds, and checking that
//! a time read from a file is RFC 3339 (`date-time` production: full date, `T`, full time
//! with optional fraction, `Z` or a numeric offset). The text is kept as written.

use std::borrow::Cow;
use std::fmt;

use schemars::{JsonSchema, Schema, SchemaGenerator, json_schema};
use serde::de::{self, Deserializer};
use serde::{Deserialize, Serialize, Serializer};

/// A time written as RFC 3339, checked when read.
///
/// ```
/// use reel_recorder::llm_tape::Rfc3339Time;
///
/// let time = Rfc3339Time::from_epoch_ms(1_765_389_600_000);
/// assert_eq!(time.as_str(), "2025-12-10T18:00:00.000Z");
/// assert!(Rfc3339Time::parse("2025-12-10T18:00:00+01:00").is_ok());
/// assert!(Rfc3339Time::parse("2025-13-10T18:00:00Z").is_err());
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Rfc3339Time(String);

/// A text that is not an RFC 3339 time.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("`{text}` is not an RFC 3339 time (like 2025-12-10T18:00:00Z)")]
pub struct NotRfc3339 {
    /// The text as given.
    pub text: String,
}

impl Rfc3339Time {
    /// `text`, if it is an RFC 3339 time.
    pub fn parse(text: impl Into<String>) -> Result<Self, NotRfc3339> {
        let text = text.into();
        if is_rfc3339(text.as_bytes()) {
            Ok(Rfc3339Time(text))
        } else {
            Err(NotRfc3339 { text })
        }
    }

    /// The UTC time `epoch_ms` milliseconds after 1970-01-01, with milliseconds
    /// (`2025-12-10T18:00:00.000Z`).
    pub fn from_epoch_ms(epoch_ms: u64) -> Self {
        let days = epoch_ms / 86_400_000;
        let ms_of_day = epoch_ms % 86_400_000;
        let (year, month, day) = civil_from_days(days);
        let (h, m, s, ms) = (
            ms_of_day / 3_600_000,
            ms_of_day / 60_000 % 60,
            ms_of_day / 1000 % 60,
            ms_of_day % 1000,
        );
        Rfc3339Time(format!(
            "{year:04}-{month:02}-{day:02}T{h:02}:{m:02}:{s:02}.{ms:03}Z"
        ))
    }

    /// The time as written.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for Rfc3339Time {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl Serialize for Rfc3339Time {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(&self.0)
    }
}

impl<'de> Deserialize<'de> for Rfc3339Time {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let text = String::deserialize(deserializer)?;
        Rfc3339Time::parse(text).map_err(de::Error::custom)
    }
}

impl JsonSchema for Rfc3339Time {
    fn schema_name() -> Cow<'static, str> {
        "Rfc3339Time".into()
    }

    fn inline_schema() -> bool {
        true
    }

    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        json_schema!({"type": "string", "format": "date-time"})
    }
}

/// `YYYY-MM-DDTHH:MM:SS[.frac](Z|±HH:MM)`, with the fields in range (a leap second allowed).
fn is_rfc3339(text: &[u8]) -> bool {
    let number = |range: std::ops::Range<usize>| -> Option<u32> {
        let digits = text.get(range)?;
        digits.iter().try_fold(0_u32, |acc, &b| {
            b.is_ascii_digit().then(|| acc * 10 + u32::from(b - b'0'))
        })
    };
    let at = |i: usize, expected: &[u8]| text.get(i).is_some_and(|b| expected.contains(b));
    let (Some(year), Some(month), Some(day)) = (number(0..4), number(5..7), number(8..10)) else {
        return false;
    };
    let (Some(hour), Some(minute), Some(second)) = (number(11..13), number(14..16), number(17..19))
    else {
        return false;
    };
    if !(at(4, b"-") && at(7, b"-") && at(10, b"Tt") && at(13, b":") && at(16, b":")) {
        return false;
    }
    if !(1..=12).contains(&month)
        || day == 0
        || day > days_in_month(year, month)
        || hour > 23
        || minute > 59
        || second > 60
    {
        return false;
    }
    let mut i = 19;
    if at(i, b".") {
        let digits = text[i + 1..]
            .iter()
            .take_while(|b| b.is_ascii_digit())
            .count();
        if digits == 0 {
            return false;
        }
        i += 1 + digits;
    }
    match text.get(i) {
        Some(b'Z' | b'z') => i + 1 == text.len(),
        Some(b'+' | b'-') => {
            let (Some(oh), Some(om)) = (number(i + 1..i + 3), number(i + 4..i + 6)) else {
                return false;
            };
            at(i + 3, b":") && oh <= 23 && om <= 59 && i + 6 == text.len()
        }
        _ => false,
    }
}

fn days_in_month(year: u32, month: u32) -> u32 {
    match month {
        2 if year.is_multiple_of(4) && (!year.is_multiple_of(100) || year.is_multiple_of(400)) => {
            29
        }
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

/// The civil date of a day count since 1970-01-01 (Howard Hinnant's algorithm, for days
/// after the epoch).
fn civil_from_days(days: u64) -> (u64, u64, u64) {
    let z = days + 719_468;
    let era = z / 146_097;
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + u64::from(month <= 2);
    (year, month, day)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn epoch_milliseconds_are_written_in_utc() {
        assert_eq!(
            Rfc3339Time::from_epoch_ms(0).as_str(),
            "1970-01-01T00:00:00.000Z"
        );
        assert_eq!(
            Rfc3339Time::from_epoch_ms(1_718_000_000_123).as_str(),
            "2024-06-10T06:13:20.123Z"
        );
        assert_eq!(
            Rfc3339Time::from_epoch_ms(951_782_400_000).as_str(),
            "2000-02-29T00:00:00.000Z"
        );
    }

    #[test]
    fn rfc3339_times_are_accepted_and_others_are_not() {
        for good in [
            "2025-12-10T18:00:00Z",
            "2025-12-10t18:00:00z",
            "2025-12-10T18:00:00.123456Z",
            "2025-12-10T18:00:00+05:30",
            "2025-12-10T18:00:00.5-08:00",
            "2024-02-29T23:59:60Z",
        ] {
            assert!(Rfc3339Time::parse(good).is_ok(), "{good}");
        }
        for bad in [
            "",
            "2025-12-10",
            "2025-12-10 18:00:00Z",
            "2025-12-10T18:00:00",
            "2025-12-10T18:00:00.Z",
            "2025-02-29T18:00:00Z",
            "2025-13-10T18:00:00Z",
            "2025-12-10T24:00:00Z",
            "2025-12-10T18:00:00+0530",
            "2025-12-10T18:00:00Zjunk",
            "２025-12-10T18:00:00Z",
            "yesterday",
        ] {
            assert_eq!(
                Rfc3339Time::parse(bad),
                Err(NotRfc3339 {
                    text: bad.to_owned()
                }),
                "{bad}"
            );
        }
    }
}
