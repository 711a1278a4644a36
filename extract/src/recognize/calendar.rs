//! Civil dates as days since 1970-01-01 (proleptic Gregorian), and back.

/// Milliseconds in a day.
const DAY_MS: i64 = 86_400_000;

/// The day (since 1970-01-01) that session time `timestamp_ms` falls on, at UTC offset
/// `offset_minutes`.
pub(super) fn day_of(timestamp_ms: u64, offset_minutes: i32) -> i64 {
    // Session times are epoch milliseconds: far below i64::MAX.
    let ms = i64::try_from(timestamp_ms).unwrap_or(i64::MAX);
    ms.saturating_add(i64::from(offset_minutes) * 60_000)
        .div_euclid(DAY_MS)
}

/// The weekday of `day`: 0 for Monday … 6 for Sunday (1970-01-01 was a Thursday).
pub(super) fn weekday(day: i64) -> i64 {
    (day + 3).rem_euclid(7)
}

/// The day of `year`-`month`-`day`, if that date exists.
pub(super) fn day_from_date(year: i64, month: i64, day: i64) -> Option<i64> {
    if !(1..=12).contains(&month) || !(1..=31).contains(&day) {
        return None;
    }
    let y = if month <= 2 { year - 1 } else { year };
    let era = y.div_euclid(400);
    let year_of_era = y - era * 400;
    let month_index = if month > 2 { month - 3 } else { month + 9 };
    let day_of_year = (153 * month_index + 2) / 5 + day - 1;
    let day_of_era = year_of_era * 365 + year_of_era / 4 - year_of_era / 100 + day_of_year;
    let days = era * 146_097 + day_of_era - 719_468;
    // 31 February and the like roll over into the next month: not a date.
    (date_of_day(days) == (year, month, day)).then_some(days)
}

/// The `(year, month, day)` of `days` since 1970-01-01.
pub(super) fn date_of_day(days: i64) -> (i64, i64, i64) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let day_of_era = z - era * 146_097;
    let year_of_era =
        (day_of_era - day_of_era / 1460 + day_of_era / 36_524 - day_of_era / 146_096) / 365;
    let day_of_year = day_of_era - (365 * year_of_era + year_of_era / 4 - year_of_era / 100);
    let month_index = (5 * day_of_year + 2) / 153;
    let day = day_of_year - (153 * month_index + 2) / 5 + 1;
    let month = if month_index < 10 {
        month_index + 3
    } else {
        month_index - 9
    };
    let year = year_of_era + era * 400 + i64::from(month <= 2);
    (year, month, day)
}

/// `days` as an ISO date, `YYYY-MM-DD`.
pub(super) fn iso_date(days: i64) -> String {
    let (year, month, day) = date_of_day(days);
    format!("{year:04}-{month:02}-{day:02}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates_and_days_agree() {
        assert_eq!(day_from_date(1970, 1, 1), Some(0));
        assert_eq!(day_from_date(2024, 6, 10), Some(19_884));
        assert_eq!(day_from_date(2024, 2, 29), Some(19_782));
        assert_eq!(day_from_date(2023, 2, 29), None);
        assert_eq!(day_from_date(2024, 13, 1), None);
        assert_eq!(day_from_date(1969, 12, 31), Some(-1));
        assert_eq!(iso_date(19_884), "2024-06-10");
        assert_eq!(iso_date(-1), "1969-12-31");
        assert_eq!(iso_date(11_016), "2000-02-29");
    }

    #[test]
    fn days_of_session_times() {
        // 2024-06-10T06:13:20Z, a Monday.
        assert_eq!(day_of(1_718_000_000_000, 0), 19_884);
        assert_eq!(weekday(19_884), 0);
        // Nine hours behind UTC, it is still Sunday the 9th.
        assert_eq!(day_of(1_718_000_000_000, -9 * 60), 19_883);
        assert_eq!(weekday(19_883), 6);
        assert_eq!(weekday(0), 3);
    }
}
