//! Session times (epoch milliseconds) as people read them.

/// `2024-06-10T06:13:20.000Z`: an epoch-ms time in UTC, ISO 8601.
pub fn utc(epoch_ms: u64) -> String {
    let days = epoch_ms / 86_400_000;
    let ms_of_day = epoch_ms % 86_400_000;
    let (year, month, day) = civil_from_days(days);
    let (h, m, s, ms) = (
        ms_of_day / 3_600_000,
        ms_of_day / 60_000 % 60,
        ms_of_day / 1000 % 60,
        ms_of_day % 1000,
    );
    format!("{year:04}-{month:02}-{day:02}T{h:02}:{m:02}:{s:02}.{ms:03}Z")
}

/// `first – last` in UTC.
pub fn utc_range((first, last): (u64, u64)) -> String {
    format!("{} – {}", utc(first), utc(last))
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
    fn times_read_as_utc() {
        assert_eq!(utc(0), "1970-01-01T00:00:00.000Z");
        assert_eq!(utc(1_718_000_000_123), "2024-06-10T06:13:20.123Z");
        assert_eq!(utc(951_782_400_000), "2000-02-29T00:00:00.000Z");
        assert_eq!(
            utc_range((1_748_768_400_000, 1_748_768_401_500)),
            "2025-06-01T09:00:00.000Z – 2025-06-01T09:00:01.500Z"
        );
    }
}
