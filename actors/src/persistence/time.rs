//! Session time as RFC 3339 text.

/// Epoch milliseconds as RFC 3339 in UTC with milliseconds: `2024-06-10T06:13:20.123Z`.
///
/// ```
/// use reel_actors::persistence::rfc3339_utc;
/// assert_eq!(rfc3339_utc(0), "1970-01-01T00:00:00.000Z");
/// assert_eq!(rfc3339_utc(1_718_000_000_123), "2024-06-10T06:13:20.123Z");
/// ```
pub fn rfc3339_utc(epoch_ms: u64) -> String {
    const DAY_MS: u64 = 86_400_000;
    let (year, month, day) = date_of(epoch_ms / DAY_MS);
    let in_day = epoch_ms % DAY_MS;
    let hours = in_day / 3_600_000;
    let minutes = in_day / 60_000 % 60;
    let seconds = in_day / 1000 % 60;
    let millis = in_day % 1000;
    format!("{year:04}-{month:02}-{day:02}T{hours:02}:{minutes:02}:{seconds:02}.{millis:03}Z")
}

/// The (year, month, day) of day `days` after 1970-01-01, in the proleptic Gregorian
/// calendar. Counts in 400-year eras starting on a 1 March, so that the leap day falls at
/// the end of each year of the count.
fn date_of(days: u64) -> (u64, u64, u64) {
    const ERA_DAYS: u64 = 146_097; // 400 years
    // 0000-03-01 is 719 468 days before 1970-01-01.
    let shifted = days + 719_468;
    let era = shifted / ERA_DAYS;
    let day_of_era = shifted % ERA_DAYS;
    // Years into the era: subtract the leap days before this day (one per 4 years, none
    // per 100, one again per 400) and divide by 365.
    let year_of_era =
        (day_of_era - day_of_era / 1460 + day_of_era / 36_524 - day_of_era / (ERA_DAYS - 1)) / 365;
    let day_of_year = day_of_era - (365 * year_of_era + year_of_era / 4 - year_of_era / 100);
    // Months from March, of 153 days per 5 months.
    let march_month = (5 * day_of_year + 2) / 153;
    let day = day_of_year - (153 * march_month + 2) / 5 + 1;
    let month = (march_month + 2) % 12 + 1;
    let year = era * 400 + year_of_era + u64::from(month <= 2);
    (year, month, day)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates_across_leap_days_and_centuries() {
        assert_eq!(rfc3339_utc(951_782_400_000), "2000-02-29T00:00:00.000Z");
        assert_eq!(rfc3339_utc(951_868_799_999), "2000-02-29T23:59:59.999Z");
        assert_eq!(rfc3339_utc(4_107_542_400_000), "2100-03-01T00:00:00.000Z");
        assert_eq!(rfc3339_utc(1_709_164_800_000), "2024-02-29T00:00:00.000Z");
        assert_eq!(rfc3339_utc(1_735_689_599_000), "2024-12-31T23:59:59.000Z");
    }
}
