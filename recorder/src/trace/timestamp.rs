//! [`Timestamp`]: a moment in UTC, kept as epoch milliseconds and written as RFC 3339
//! (`2026-01-07T10:30:00.500Z`).

use std::borrow::Cow;
use std::fmt;
use std::str::FromStr;

use schemars::{JsonSchema, Schema, SchemaGenerator, json_schema};
use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// A moment in UTC with millisecond precision, from 1970 on.
///
/// Written as RFC 3339 with milliseconds and `Z`; read from any RFC 3339 date-time (an
/// offset is applied, digits past the millisecond are dropped).
///
/// ```
/// use reel_recorder::trace::Timestamp;
///
/// let t = Timestamp::from_epoch_ms(1_767_781_800_500);
/// assert_eq!(t.to_string(), "2026-01-07T10:30:00.500Z");
/// assert_eq!("2026-01-07T11:30:00.5+01:00".parse::<Timestamp>(), Ok(t));
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Timestamp(u64);

impl Timestamp {
    /// The moment `epoch_ms` milliseconds after 1970-01-01T00:00:00Z.
    pub fn from_epoch_ms(epoch_ms: u64) -> Self {
        Timestamp(epoch_ms)
    }

    /// Milliseconds since 1970-01-01T00:00:00Z.
    pub fn epoch_ms(self) -> u64 {
        self.0
    }

    /// Milliseconds from `earlier` to this moment (0 if `earlier` is later).
    pub fn since(self, earlier: Timestamp) -> u64 {
        self.0.saturating_sub(earlier.0)
    }
}

/// What is wrong with a date-time string.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum TimestampError {
    /// Not shaped `YYYY-MM-DDTHH:MM:SS[.fff](Z|±HH:MM)`.
    #[error("not an RFC 3339 date-time (YYYY-MM-DDTHH:MM:SS.sssZ)")]
    Shape,
    /// A field out of its range (month 13, day 31 of April, hour 24, …).
    #[error("a date or time field is out of range")]
    OutOfRange,
    /// A moment before 1970-01-01T00:00:00Z.
    #[error("before 1970")]
    BeforeEpoch,
}

impl fmt::Display for Timestamp {
    /// RFC 3339 in UTC with milliseconds (jiff's calendar). A moment past 9999-12-31, which
    /// RFC 3339 cannot write, is written as its epoch milliseconds.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match i64::try_from(self.0).map(jiff::Timestamp::from_millisecond) {
            Ok(Ok(moment)) => write!(f, "{moment:.3}"),
            _ => write!(f, "{}", self.0),
        }
    }
}

impl FromStr for Timestamp {
    type Err = TimestampError;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        let bytes = text.as_bytes();
        let number = |range: std::ops::Range<usize>| -> Result<u64, TimestampError> {
            let digits = bytes.get(range).ok_or(TimestampError::Shape)?;
            if digits.is_empty() || !digits.iter().all(u8::is_ascii_digit) {
                return Err(TimestampError::Shape);
            }
            Ok(digits.iter().fold(0, |n, d| n * 10 + u64::from(d - b'0')))
        };
        let separators = [(4, b'-'), (7, b'-'), (13, b':'), (16, b':')];
        if separators.iter().any(|&(at, c)| bytes.get(at) != Some(&c))
            || !matches!(bytes.get(10), Some(b'T' | b't'))
        {
            return Err(TimestampError::Shape);
        }
        let (year, month, day) = (number(0..4)?, number(5..7)?, number(8..10)?);
        let (hour, minute, second) = (number(11..13)?, number(14..16)?, number(17..19)?);
        let mut rest = 19;
        let mut millis = 0;
        if bytes.get(rest) == Some(&b'.') {
            let digits = bytes[rest + 1..]
                .iter()
                .take_while(|b| b.is_ascii_digit())
                .count();
            if digits == 0 {
                return Err(TimestampError::Shape);
            }
            // Milliseconds: the first three digits, padded; later digits are dropped.
            let kept = number(rest + 1..rest + 1 + digits.min(3))?;
            millis = kept * 10u64.pow(3 - digits.min(3) as u32);
            rest += 1 + digits;
        }
        let offset_minutes: i64 = match bytes.get(rest..) {
            Some(b"Z" | b"z") => 0,
            Some([sign @ (b'+' | b'-'), _, _, b':', _, _]) => {
                let (h, m) = (number(rest + 1..rest + 3)?, number(rest + 4..rest + 6)?);
                if h > 23 || m > 59 {
                    return Err(TimestampError::OutOfRange);
                }
                let minutes = (h * 60 + m) as i64;
                if *sign == b'-' { -minutes } else { minutes }
            }
            _ => return Err(TimestampError::Shape),
        };
        // The shape is RFC 3339's, checked above by hand: jiff's parsers read the wider
        // ISO 8601 / Temporal grammar (a space for `T`, no offset), which a trace file must
        // not hold. The calendar is jiff's.
        let field = |n: u64| i8::try_from(n).map_err(|_| TimestampError::OutOfRange);
        let year = i16::try_from(year).map_err(|_| TimestampError::OutOfRange)?;
        // RFC 3339 allows a leap second (`:60`); the moment is the last one of its minute.
        let second = second.min(59);
        let civil = jiff::civil::DateTime::new(
            year,
            field(month)?,
            field(day)?,
            field(hour)?,
            field(minute)?,
            field(second)?,
            0,
        )
        .map_err(|_| TimestampError::OutOfRange)?;
        let offset = jiff::tz::Offset::from_seconds(
            i32::try_from(offset_minutes * 60).map_err(|_| TimestampError::OutOfRange)?,
        )
        .map_err(|_| TimestampError::OutOfRange)?;
        let moment = civil
            .to_zoned(jiff::tz::TimeZone::fixed(offset))
            .map_err(|_| TimestampError::OutOfRange)?;
        let utc = i128::from(moment.timestamp().as_millisecond()) + i128::from(millis);
        u64::try_from(utc)
            .map(Timestamp)
            .map_err(|_| TimestampError::BeforeEpoch)
    }
}

impl Serialize for Timestamp {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for Timestamp {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let text = Cow::<str>::deserialize(deserializer)?;
        text.parse().map_err(serde::de::Error::custom)
    }
}

impl JsonSchema for Timestamp {
    fn schema_name() -> Cow<'static, str> {
        "Timestamp".into()
    }

    fn json_schema(_generator: &mut SchemaGenerator) -> Schema {
        json_schema!({
            "description": "A moment in UTC, RFC 3339 (written with milliseconds and `Z`).",
            "type": "string",
            "format": "date-time"
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_as_rfc_3339_with_milliseconds() {
        let cases = [
            (0, "1970-01-01T00:00:00.000Z"),
            (1_718_000_000_123, "2024-06-10T06:13:20.123Z"),
            (951_782_400_000, "2000-02-29T00:00:00.000Z"),
            (1_748_768_400_180, "2025-06-01T09:00:00.180Z"),
            (4_107_542_399_999, "2100-02-28T23:59:59.999Z"),
        ];
        for (ms, text) in cases {
            let t = Timestamp::from_epoch_ms(ms);
            assert_eq!(t.to_string(), text);
            assert_eq!(text.parse::<Timestamp>(), Ok(t), "{text}");
        }
    }

    #[test]
    fn reads_seconds_fractions_and_offsets() {
        let t = |text: &str| text.parse::<Timestamp>().map(Timestamp::epoch_ms);
        assert_eq!(t("2026-01-07T10:30:00Z"), Ok(1_767_781_800_000));
        assert_eq!(t("2026-01-07T10:30:00.5Z"), Ok(1_767_781_800_500));
        assert_eq!(t("2026-01-07T10:30:00.123456789Z"), Ok(1_767_781_800_123));
        assert_eq!(t("2026-01-07T12:30:00.000+02:00"), Ok(1_767_781_800_000));
        assert_eq!(t("2026-01-07T05:00:00-05:30"), Ok(1_767_781_800_000));
        assert_eq!(t("2026-01-07t10:30:00z"), Ok(1_767_781_800_000));
    }

    #[test]
    fn rejects_what_is_not_a_date_time() {
        let t = |text: &str| text.parse::<Timestamp>();
        assert_eq!(t("2026-01-07 10:30:00Z"), Err(TimestampError::Shape));
        assert_eq!(t("2026-01-07T10:30:00"), Err(TimestampError::Shape));
        assert_eq!(t("2026-01-07T10:30:00.Z"), Err(TimestampError::Shape));
        assert_eq!(t("yesterday"), Err(TimestampError::Shape));
        assert_eq!(t("2026-13-07T10:30:00Z"), Err(TimestampError::OutOfRange));
        assert_eq!(t("2025-02-29T10:30:00Z"), Err(TimestampError::OutOfRange));
        assert_eq!(t("2026-01-07T24:00:00Z"), Err(TimestampError::OutOfRange));
        assert_eq!(t("1969-12-31T23:59:59Z"), Err(TimestampError::BeforeEpoch));
        assert_eq!(
            t("1970-01-01T00:30:00+01:00"),
            Err(TimestampError::BeforeEpoch)
        );
    }
}
