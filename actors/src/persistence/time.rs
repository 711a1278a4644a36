//! Session time as RFC 3339 text.

use reel_recorder::trace::Timestamp;

/// Epoch milliseconds as RFC 3339 in UTC with milliseconds: `2024-06-10T06:13:20.123Z`
/// (the recordings' one date format, [`Timestamp`]).
///
/// ```
/// use reel_actors::persistence::rfc3339_utc;
/// assert_eq!(rfc3339_utc(0), "1970-01-01T00:00:00.000Z");
/// assert_eq!(rfc3339_utc(1_718_000_000_123), "2024-06-10T06:13:20.123Z");
/// ```
pub fn rfc3339_utc(epoch_ms: u64) -> String {
    Timestamp::from_epoch_ms(epoch_ms).to_string()
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
