//! Civil dates as days since 1970-01-01, on jiff's proleptic Gregorian calendar and its IANA
//! time zones. The recognizers count in day numbers (`today + 2`, the next Friday); jiff
//! says which date a number is, which day a session time falls on in a zone, and which
//! dates exist.

use jiff::Unit;
use jiff::civil::Date;
use jiff::tz::{Offset, TimeZone};

/// Day 0.
const EPOCH: Date = Date::constant(1970, 1, 1);

/// Where relative days are resolved: a fixed UTC offset, or an IANA zone (its offset at
/// the moment in question, daylight saving included).
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Zone {
    /// Minutes east of UTC, all year.
    Offset(i32),
    /// A zone of the IANA database, by name (`Europe/London`).
    Named(String, TimeZone),
}

impl Zone {
    /// The zone named `name` in the IANA database jiff bundles (the same data on every
    /// machine, so a replay elsewhere resolves the same days).
    pub(crate) fn named(name: &str) -> Option<Zone> {
        jiff::tz::db()
            .get(name)
            .ok()
            .map(|tz| Zone::Named(name.to_owned(), tz))
    }

    fn time_zone(&self) -> TimeZone {
        match self {
            // Offsets beyond ±25:59:59 are not offsets; clamp them to UTC's neighbours.
            Zone::Offset(minutes) => TimeZone::fixed(
                Offset::from_seconds(minutes.saturating_mul(60)).unwrap_or(Offset::UTC),
            ),
            Zone::Named(_, tz) => tz.clone(),
        }
    }
}

/// The day that session time `timestamp_ms` falls on in `zone`; `None` outside the years
/// jiff represents (−9999 to 9999).
pub(super) fn day_of(timestamp_ms: u64, zone: &Zone) -> Option<i64> {
    let ms = i64::try_from(timestamp_ms).ok()?;
    let moment = jiff::Timestamp::from_millisecond(ms).ok()?;
    number(moment.to_zoned(zone.time_zone()).date())
}

/// The weekday of `day`: 0 for Monday … 6 for Sunday.
pub(super) fn weekday(day: i64) -> i64 {
    // 1970-01-01 was a Thursday; weekdays repeat every 7 days, whatever the calendar.
    (day + 3).rem_euclid(7)
}

/// The day of `year`-`month`-`day`, if that date exists.
pub(super) fn day_from_date(year: i64, month: i64, day: i64) -> Option<i64> {
    let date = Date::new(
        i16::try_from(year).ok()?,
        i8::try_from(month).ok()?,
        i8::try_from(day).ok()?,
    )
    .ok()?;
    number(date)
}

/// The `(year, month, day)` of day `days`; `None` outside jiff's years.
pub(super) fn date_of_day(days: i64) -> Option<(i64, i64, i64)> {
    let date = date(days)?;
    Some((
        i64::from(date.year()),
        i64::from(date.month()),
        i64::from(date.day()),
    ))
}

/// Day `days` as an ISO date, `YYYY-MM-DD`; `None` outside jiff's years.
pub(super) fn iso_date(days: i64) -> Option<String> {
    date(days).map(|date| date.to_string())
}

fn date(days: i64) -> Option<Date> {
    // `try_days`, not `days()`: the latter panics past ±7,304,484 days.
    let span = jiff::Span::new().try_days(days).ok()?;
    EPOCH.checked_add(span).ok()
}

fn number(date: Date) -> Option<i64> {
    let span = EPOCH.until((Unit::Day, date)).ok()?;
    Some(i64::from(span.get_days()))
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
        assert_eq!(day_from_date(100_000, 1, 1), None);
        assert_eq!(iso_date(19_884).as_deref(), Some("2024-06-10"));
        assert_eq!(iso_date(-1).as_deref(), Some("1969-12-31"));
        assert_eq!(iso_date(11_016).as_deref(), Some("2000-02-29"));
        assert_eq!(date_of_day(19_884), Some((2024, 6, 10)));
        assert_eq!(iso_date(10_000_000), None);
    }

    #[test]
    fn days_of_session_times() {
        // 2024-06-10T06:13:20Z, a Monday.
        assert_eq!(day_of(1_718_000_000_000, &Zone::Offset(0)), Some(19_884));
        assert_eq!(weekday(19_884), 0);
        // Nine hours behind UTC, it is still Sunday the 9th.
        assert_eq!(
            day_of(1_718_000_000_000, &Zone::Offset(-9 * 60)),
            Some(19_883)
        );
        assert_eq!(weekday(19_883), 6);
        assert_eq!(weekday(0), 3);
    }

    #[test]
    fn a_named_zone_follows_daylight_saving() {
        let london = Zone::named("Europe/London").unwrap();
        // 2024-03-31T23:30:00Z: 00:30 on 1 April in London (BST, UTC+1).
        let spring = 1_711_927_800_000;
        assert_eq!(
            iso_date(day_of(spring, &london).unwrap()).as_deref(),
            Some("2024-04-01")
        );
        assert_eq!(
            iso_date(day_of(spring, &Zone::Offset(0)).unwrap()).as_deref(),
            Some("2024-03-31")
        );
        // 2024-01-15T23:30:00Z: still the 15th in London (GMT); UTC+1 all year says the 16th.
        let winter = 1_705_361_400_000;
        assert_eq!(
            iso_date(day_of(winter, &london).unwrap()).as_deref(),
            Some("2024-01-15")
        );
        assert_eq!(
            iso_date(day_of(winter, &Zone::Offset(60)).unwrap()).as_deref(),
            Some("2024-01-16")
        );
        assert_eq!(Zone::named("Europe/Londres"), None);
    }
}
