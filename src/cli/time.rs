//! Session times (epoch milliseconds) as people read them: RFC 3339 in UTC, as the trace
//! format's [`Timestamp`] writes them.

use reel_recorder::trace::Timestamp;

/// `first – last` in UTC: `2025-06-01T09:00:00.000Z – 2025-06-01T09:00:01.500Z`.
pub fn utc_range((first, last): (u64, u64)) -> String {
    format!(
        "{} – {}",
        Timestamp::from_epoch_ms(first),
        Timestamp::from_epoch_ms(last)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times_read_as_utc() {
        assert_eq!(
            utc_range((1_748_768_400_000, 1_748_768_401_500)),
            "2025-06-01T09:00:00.000Z – 2025-06-01T09:00:01.500Z"
        );
        assert_eq!(
            utc_range((0, 951_782_400_123)),
            "1970-01-01T00:00:00.000Z – 2000-02-29T00:00:00.123Z"
        );
    }
}
