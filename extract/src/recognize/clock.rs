//! Times of day in an utterance: `"19:30"`, `"7pm"`, `"7:30 p.m."`, `"half past seven"`,
//! `"quarter to eight"`, `"seven o'clock"`, `"at 7"`, `"noon"`, `"midnight"`.

use super::tokens::number_at;

/// A time of day said at some place in the utterance.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct ClockTime {
    /// Hour, 0–23.
    pub hour: u32,
    /// Minute, 0–59.
    pub minute: u32,
    /// Said on a 12-hour clock with no am/pm (`"half past seven"`, `"at 7"`, `"7:30"`):
    /// the hour is the morning one, and a part of the day said with it may move it to the
    /// afternoon.
    pub ambiguous: bool,
}

/// `"am"` or `"pm"` (also `"a.m"`, `"p.m"`, the tokenizer having trimmed the last dot):
/// whether it is `pm`.
fn meridiem(token: &str) -> Option<bool> {
    match token {
        "am" | "a.m" => Some(false),
        "pm" | "p.m" => Some(true),
        _ => None,
    }
}

/// `hour:minute` on a 12-hour clock with its am/pm, on the 24-hour clock.
fn with_meridiem(hour: u32, minute: u32, pm: bool) -> Option<ClockTime> {
    (1..=12).contains(&hour).then_some(ClockTime {
        hour: hour % 12 + if pm { 12 } else { 0 },
        minute,
        ambiguous: false,
    })
}

/// `hour:minute` said without am/pm: ambiguous when the hour is 1–11 and was not written
/// with a leading zero (`"07:30"` is a 24-hour time).
fn plain(hour: u32, minute: u32, zero_padded: bool) -> Option<ClockTime> {
    (hour < 24 && minute < 60).then_some(ClockTime {
        hour,
        minute,
        ambiguous: (1..12).contains(&hour) && !zero_padded,
    })
}

/// Digits, `0`–`max`.
fn small(text: &str, max: u32) -> Option<u32> {
    if text.is_empty() || text.len() > 2 || !text.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    text.parse().ok().filter(|v| *v <= max)
}

/// A written clock time, `H`, `H:MM` or `H:MM:SS` (seconds dropped), as `(hour, minute,
/// zero padded)`; a bare `H` only if `bare_hour`.
pub(super) fn written(text: &str, bare_hour: bool) -> Option<(u32, u32, bool)> {
    let mut parts = text.split(':');
    let hour_text = parts.next()?;
    let hour = small(hour_text, 23)?;
    let minute = match parts.next() {
        Some(m) if m.len() == 2 => small(m, 59)?,
        Some(_) => return None,
        None if bare_hour => 0,
        None => return None,
    };
    if let Some(seconds) = parts.next() {
        small(seconds, 59).filter(|_| seconds.len() == 2)?;
    }
    if parts.next().is_some() {
        return None;
    }
    Some((
        hour,
        minute,
        hour_text.len() == 2 && hour_text.starts_with('0'),
    ))
}

/// An hour said as a number, digits or words, 0–23, and how many tokens it spans.
fn hour_at(tokens: &[String], at: usize) -> Option<(u32, usize)> {
    let (value, used) = number_at(tokens, at)?;
    let hour = u32::try_from(value).ok().filter(|h| *h < 24)?;
    Some((hour, used))
}

/// The time of day starting at `tokens[at]`, and how many tokens it spans.
pub(super) fn time_at(tokens: &[String], at: usize) -> Option<(ClockTime, usize)> {
    let word = |i: usize| tokens.get(at + i).map(String::as_str);
    let first = word(0)?;
    let fixed = |hour| ClockTime {
        hour,
        minute: 0,
        ambiguous: false,
    };
    match first {
        "noon" | "midday" => return Some((fixed(12), 1)),
        "midnight" => return Some((fixed(0), 1)),
        _ => {}
    }
    // "7pm", "7:30pm", "7:30 p.m.", "19:30", "07:30".
    let glued = ["am", "pm", "a.m", "p.m"]
        .iter()
        .find_map(|m| first.strip_suffix(m).map(|core| (core, meridiem(m))))
        .filter(|(core, _)| !core.is_empty());
    if let Some((core, Some(pm))) = glued
        && let Some((hour, minute, _)) = written(core, true)
    {
        return Some((with_meridiem(hour, minute, pm)?, 1));
    }
    if let Some((hour, minute, padded)) = written(first, true) {
        if let Some(pm) = word(1).and_then(meridiem) {
            return Some((with_meridiem(hour, minute, pm)?, 2));
        }
        if first.contains(':') {
            return Some((plain(hour, minute, padded)?, 1));
        }
    }
    let (time, used) = spoken_at(tokens, at)?;
    // An am/pm after a spoken time settles it: "half past seven pm".
    match word(used).and_then(meridiem) {
        Some(pm) => Some((with_meridiem(time.hour, time.minute, pm)?, used + 1)),
        None => Some((time, used)),
    }
}

/// A spoken time: `"half past seven"`, `"quarter past 7"`, `"ten past seven"`, `"quarter
/// to eight"`, `"seven o'clock"`, `"seven pm"`, `"at 7"`, `"at seven thirty"`.
fn spoken_at(tokens: &[String], at: usize) -> Option<(ClockTime, usize)> {
    let word = |i: usize| tokens.get(at + i).map(String::as_str);
    let hour12 = |i: usize| hour_at(tokens, at + i).filter(|(h, _)| (1..=12).contains(h));
    match (word(0)?, word(1)) {
        ("half" | "quarter", Some("past")) => {
            let (hour, used) = hour12(2)?;
            let minute = if word(0) == Some("half") { 30 } else { 15 };
            return Some((plain(hour, minute, false)?, 2 + used));
        }
        ("quarter", Some("to")) => {
            let (hour, used) = hour12(2)?;
            let before = if hour == 1 { 12 } else { hour - 1 };
            return Some((plain(before, 45, false)?, 2 + used));
        }
        ("at", _) => {
            let (hour, used) = hour_at(tokens, at + 1)?;
            // "at seven thirty", "at 7 15": minutes 10–59 right after a 12-hour hour.
            let minutes = number_at(tokens, at + 1 + used)
                .filter(|(m, _)| (10..60).contains(m) && hour <= 12)
                .and_then(|(m, n)| Some((u32::try_from(m).ok()?, n)));
            let (minute, more) = minutes.unwrap_or((0, 0));
            return Some((plain(hour, minute, false)?, 1 + used + more));
        }
        _ => {}
    }
    // "ten past seven".
    if let Some((minutes, used)) = number_at(tokens, at).filter(|(m, _)| (1..30).contains(m))
        && word(used) == Some("past")
        && let Some((hour, more)) = hour12(used + 1)
    {
        let minute = u32::try_from(minutes).ok()?;
        return Some((plain(hour, minute, false)?, used + 1 + more));
    }
    // "seven o'clock", "seven pm".
    let (hour, used) = hour12(0)?;
    match word(used) {
        Some("o'clock" | "oclock") => Some((plain(hour, 0, false)?, used + 1)),
        Some(m) if meridiem(m).is_some() => Some((plain(hour, 0, false)?, used)),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::super::tokens::tokens;
    use super::*;

    /// The first time of the text as `(HH:MM, ambiguous, tokens spanned)`.
    fn time(text: &str) -> Option<(String, bool, usize)> {
        let tokens = tokens(text);
        (0..tokens.len()).find_map(|at| {
            time_at(&tokens, at)
                .map(|(t, n)| (format!("{:02}:{:02}", t.hour, t.minute), t.ambiguous, n))
        })
    }

    fn t(hhmm: &str, ambiguous: bool, used: usize) -> Option<(String, bool, usize)> {
        Some((hhmm.to_owned(), ambiguous, used))
    }

    #[test]
    fn written_times() {
        assert_eq!(time("at 19:30"), t("19:30", false, 1));
        assert_eq!(time("07:30"), t("07:30", false, 1));
        assert_eq!(time("7:30"), t("07:30", true, 1));
        assert_eq!(time("12:15"), t("12:15", false, 1));
        assert_eq!(time("0:05"), t("00:05", false, 1));
        assert_eq!(time("18:00:00"), t("18:00", false, 1));
        assert_eq!(time("7pm"), t("19:00", false, 1));
        assert_eq!(time("7 pm"), t("19:00", false, 2));
        assert_eq!(time("7:30 p.m."), t("19:30", false, 2));
        assert_eq!(time("12am"), t("00:00", false, 1));
        assert_eq!(time("12pm"), t("12:00", false, 1));
        assert_eq!(time("11:45am"), t("11:45", false, 1));
        assert_eq!(time("13pm"), None);
        assert_eq!(time("24:00"), None);
        assert_eq!(time("7:3"), None);
    }

    #[test]
    fn spoken_times() {
        assert_eq!(time("half past seven"), t("07:30", true, 3));
        assert_eq!(time("quarter past 7"), t("07:15", true, 3));
        assert_eq!(time("quarter to eight"), t("07:45", true, 3));
        assert_eq!(time("quarter to one"), t("12:45", false, 3));
        assert_eq!(time("ten past seven"), t("07:10", true, 3));
        assert_eq!(time("seven o'clock"), t("07:00", true, 2));
        assert_eq!(time("seven pm"), t("19:00", false, 2));
        assert_eq!(time("half past seven pm"), t("19:30", false, 4));
        assert_eq!(time("at 7"), t("07:00", true, 2));
        assert_eq!(time("at seven thirty"), t("07:30", true, 3));
        assert_eq!(time("at 20"), t("20:00", false, 2));
        assert_eq!(time("at noon"), t("12:00", false, 1));
        assert_eq!(time("midnight"), t("00:00", false, 1));
        assert_eq!(time("two pizzas"), None);
        assert_eq!(time("seven people"), None);
    }
}
