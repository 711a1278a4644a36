//! The `datetime` recognizer: a small clock and calendar normalizer. Relative days are
//! resolved against the turn's session time, never the wall clock, so a replay finds the
//! same dates.

use serde_json::{Map, Value};

use super::calendar::{Zone, day_from_date, day_of, iso_date, weekday};
use super::clock::{ClockTime, time_at, written};
use super::month_date::month_date_at;
use super::tokens::number_at;

/// Parts of the day, as they are written in the result.
const PARTS: &[&str] = &["morning", "afternoon", "evening", "night"];

/// The furthest `"in N days"` / `"in N weeks"` reaches.
const MAX_DAYS_AHEAD: i64 = 36_525;

/// The weekday a name says, 0 for Monday … 6 for Sunday.
fn weekday_named(token: &str) -> Option<i64> {
    let day = match token {
        "monday" => 0,
        "tuesday" => 1,
        "wednesday" => 2,
        "thursday" => 3,
        "friday" => 4,
        "saturday" => 5,
        "sunday" => 6,
        _ => return None,
    };
    Some(day)
}

/// An ISO date, `YYYY-MM-DD`, as a day; with a time after a `t` (`2024-06-12t18:30`).
fn iso(token: &str) -> Option<(i64, Option<ClockTime>)> {
    let (date, time) = match token.split_once('t') {
        Some((date, time)) => (date, Some(time)),
        None => (token, None),
    };
    let mut parts = date.split('-');
    let (year, month, day) = (parts.next()?, parts.next()?, parts.next()?);
    if parts.next().is_some() || year.len() != 4 || month.len() != 2 || day.len() != 2 {
        return None;
    }
    let number = |s: &str| {
        s.bytes()
            .all(|b| b.is_ascii_digit())
            .then(|| s.parse().ok())?
    };
    let day = day_from_date(number(year)?, number(month)?, number(day)?)?;
    let time = match time {
        Some(time) => {
            let (hour, minute, _) = written(time.trim_end_matches('z'), false)?;
            Some(ClockTime {
                hour,
                minute,
                ambiguous: false,
            })
        }
        None => None,
    };
    Some((day, time))
}

/// A day said relative to `today`, starting at `tokens[at]`: `"today"`, `"tonight"`,
/// `"tomorrow"`, `"the day after tomorrow"`, `"yesterday"`, `"in 3 days"`, `"in a week"`,
/// a weekday (`"friday"`, `"this friday"`: the next one after today; `"next friday"`:
/// the one in next week, weeks starting on Monday). Returns the day, the part of the day
/// it implies (`"tonight"`), and how many tokens it spans.
fn relative_day(
    tokens: &[String],
    at: usize,
    today: i64,
) -> Option<(i64, Option<&'static str>, usize)> {
    let word = |i: usize| tokens.get(at + i).map(String::as_str);
    match (word(0)?, word(1), word(2)) {
        ("today", _, _) => Some((today, None, 1)),
        ("tonight", _, _) => Some((today, Some("night"), 1)),
        ("day", Some("after"), Some("tomorrow")) => Some((today + 2, None, 3)),
        ("tomorrow" | "tmrw", _, _) => Some((today + 1, None, 1)),
        ("yesterday", _, _) => Some((today - 1, None, 1)),
        ("in", _, _) => {
            let (count, used) = match number_at(tokens, at + 1) {
                Some(found) => found,
                None if word(1) == Some("a") => (1, 1),
                None => return None,
            };
            let unit = match word(1 + used)? {
                "day" | "days" => 1,
                "week" | "weeks" => 7,
                _ => return None,
            };
            // Within a century: further is not a date anyone books.
            let ahead = count.checked_mul(unit).filter(|d| *d <= MAX_DAYS_AHEAD)?;
            Some((today + ahead, None, 2 + used))
        }
        ("next", Some(name), _) => {
            let target = weekday_named(name)?;
            let next_monday = today - weekday(today) + 7;
            Some((next_monday + target, None, 2))
        }
        ("this", Some(name), _) => Some((coming(today, weekday_named(name)?), None, 2)),
        (name, _, _) => Some((coming(today, weekday_named(name)?), None, 1)),
    }
}

/// The first day after `today` that is weekday `target` (1–7 days ahead).
fn coming(today: i64, target: i64) -> i64 {
    let ahead = (target - weekday(today)).rem_euclid(7);
    today + if ahead == 0 { 7 } else { ahead }
}

/// A part of the day named at `tokens[at]`.
fn part_at(tokens: &[String], at: usize) -> Option<&'static str> {
    let token = tokens.get(at)?;
    PARTS.iter().copied().find(|part| token == part)
}

/// What an utterance said of the date and time, the last of each.
#[derive(Debug, Default)]
struct Moment {
    date: Option<i64>,
    time: Option<ClockTime>,
    part: Option<&'static str>,
}

/// The last day, time and part of the day said in the text; relative days from `today`.
fn moment(tokens: &[String], today: i64) -> Moment {
    let mut said = Moment::default();
    let mut at = 0;
    while at < tokens.len() {
        if let Some((day, clock)) = iso(&tokens[at]) {
            said.date = Some(day);
            said.time = clock.or(said.time);
            at += 1;
        } else if let Some((day, used)) = month_date_at(tokens, at, today) {
            said.date = Some(day);
            at += used;
        } else if let Some((day, implied, used)) = relative_day(tokens, at, today) {
            said.date = Some(day);
            said.part = implied.or(said.part);
            at += used;
        } else if let Some((clock, used)) = time_at(tokens, at) {
            said.time = Some(clock);
            at += used;
        } else if let Some(part) = part_at(tokens, at) {
            said.part = Some(part);
            at += 1;
        } else {
            at += 1;
        }
    }
    said
}

/// `said` as the recognizer's value, `None` if it says nothing.
fn render(said: &Moment) -> Option<Value> {
    if said.date.is_none() && said.time.is_none() && said.part.is_none() {
        return None;
    }
    let mut found = Map::new();
    if let Some(day) = said.date {
        // A day past the years the calendar holds (−9999 to 9999) is not a date.
        found.insert("date".into(), Value::String(iso_date(day)?));
    }
    if let Some(clock) = said.time {
        let later = match said.part {
            Some("afternoon" | "evening") => clock.ambiguous,
            Some("night") => clock.ambiguous && clock.hour >= 6,
            _ => false,
        };
        let hour = clock.hour + if later { 12 } else { 0 };
        found.insert(
            "time".into(),
            Value::String(format!("{hour:02}:{:02}", clock.minute)),
        );
    }
    if let Some(part) = said.part {
        found.insert("part_of_day".into(), Value::String(part.to_owned()));
    }
    Some(Value::Object(found))
}

/// The date and time said last in the text, as `{"date": "YYYY-MM-DD", "time": "HH:MM",
/// "part_of_day": "evening"}` with only what was said; relative days from the day of
/// `timestamp_ms` in `zone`; `None` also for a session time outside the calendar's years.
///
/// A 12-hour time said without am/pm (`"half past seven"`) is the morning one, unless a
/// part of the day said with it is the afternoon or evening (any hour), or the night
/// (hours 6–11): `"half past seven tonight"` is 19:30.
pub(super) fn datetime(tokens: &[String], timestamp_ms: u64, zone: &Zone) -> Option<Value> {
    render(&moment(tokens, day_of(timestamp_ms, zone)?))
}

/// [`datetime`] said after `old` was found, merged into it (see [`merge`]). A 12-hour time
/// said without am/pm nor a part of the day takes the part of the day of `old`: after
/// "tomorrow evening", "at 8 then" is 20:00.
pub(super) fn datetime_after(
    old: &Value,
    tokens: &[String],
    timestamp_ms: u64,
    zone: &Zone,
) -> Option<Value> {
    let mut said = moment(tokens, day_of(timestamp_ms, zone)?);
    if said.part.is_none() && said.time.is_some_and(|t| t.ambiguous) {
        said.part = old
            .get("part_of_day")
            .and_then(Value::as_str)
            .and_then(|part| PARTS.iter().copied().find(|p| *p == part));
    }
    Some(merge(old, &render(&said)?))
}

/// `new` said after `old`: the day of `new` if it says one, else `old`'s; the time of day
/// (`time` and `part_of_day` together) of `new` if it says either, else `old`'s.
pub(super) fn merge(old: &Value, new: &Value) -> Value {
    let (Value::Object(old), Value::Object(new)) = (old, new) else {
        return new.clone();
    };
    let says_clock = new.contains_key("time") || new.contains_key("part_of_day");
    let from = |key: &str, clock: bool| {
        let source = if new.contains_key(key) || (clock && says_clock) {
            new
        } else {
            old
        };
        source.get(key).map(|v| (key.to_owned(), v.clone()))
    };
    let merged: Map<String, Value> = [
        from("date", false),
        from("time", true),
        from("part_of_day", true),
    ]
    .into_iter()
    .flatten()
    .collect();
    Value::Object(merged)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::super::tokens::tokens;
    use super::*;

    /// 2024-06-10T06:13:20Z, a Monday.
    const MONDAY: u64 = 1_718_000_000_000;

    fn when(text: &str) -> Option<Value> {
        datetime(&tokens(text), MONDAY, &Zone::Offset(0))
    }

    #[test]
    fn times_alone() {
        assert_eq!(when("at 19:30 please"), Some(json!({"time": "19:30"})));
        assert_eq!(when("7pm"), Some(json!({"time": "19:00"})));
        assert_eq!(when("half past seven"), Some(json!({"time": "07:30"})));
        assert_eq!(when("noon, no, 1pm"), Some(json!({"time": "13:00"})));
        assert_eq!(when("two pizzas"), None);
    }

    #[test]
    fn relative_days_from_the_turn_time() {
        assert_eq!(when("today"), Some(json!({"date": "2024-06-10"})));
        assert_eq!(when("tomorrow"), Some(json!({"date": "2024-06-11"})));
        assert_eq!(
            when("the day after tomorrow"),
            Some(json!({"date": "2024-06-12"}))
        );
        assert_eq!(when("yesterday"), Some(json!({"date": "2024-06-09"})));
        assert_eq!(when("in 3 days"), Some(json!({"date": "2024-06-13"})));
        assert_eq!(when("in a week"), Some(json!({"date": "2024-06-17"})));
        assert_eq!(when("in two weeks"), Some(json!({"date": "2024-06-24"})));
        assert_eq!(when("Tuesday"), Some(json!({"date": "2024-06-11"})));
        assert_eq!(when("this Sunday"), Some(json!({"date": "2024-06-16"})));
        assert_eq!(when("on Monday"), Some(json!({"date": "2024-06-17"})));
        assert_eq!(when("next Tuesday"), Some(json!({"date": "2024-06-18"})));
        assert_eq!(when("next Monday"), Some(json!({"date": "2024-06-17"})));
        // From Sunday the 16th, next Monday is the day after.
        let sunday = MONDAY + 6 * 86_400_000;
        assert_eq!(
            datetime(&tokens("next monday"), sunday, &Zone::Offset(0)),
            Some(json!({"date": "2024-06-17"}))
        );
        // Nine hours behind UTC it is still Sunday the 9th: tomorrow is Monday the 10th.
        assert_eq!(
            datetime(&tokens("tomorrow"), MONDAY, &Zone::Offset(-9 * 60)),
            Some(json!({"date": "2024-06-10"}))
        );
    }

    #[test]
    fn odd_input_finds_nothing_and_does_not_panic() {
        assert_eq!(when("in 99999999999999999999 days"), None);
        assert_eq!(when("in 9999999 weeks"), None);
        // 2100 is no leap year: 36 525 days is a century and a day.
        assert_eq!(when("in 36525 days"), Some(json!({"date": "2124-06-11"})));
        assert_eq!(when("9999-99-99 ☃:☃ €€ 1:2:3:4"), None);
        // A session time past the calendar's years (9999) resolves no day; nor does a day
        // counted past them.
        assert_eq!(
            datetime(&tokens("tomorrow"), u64::MAX, &Zone::Offset(i32::MIN)),
            None
        );
        let december_9999 = 253_399_622_400_000;
        assert_eq!(
            datetime(&tokens("in 36500 days"), december_9999, &Zone::Offset(0)),
            None
        );
    }

    #[test]
    fn iso_dates_and_date_times() {
        assert_eq!(when("on 2024-07-01"), Some(json!({"date": "2024-07-01"})));
        assert_eq!(
            when("2024-07-01T18:30"),
            Some(json!({"date": "2024-07-01", "time": "18:30"}))
        );
        assert_eq!(
            when("2024-07-01T18:30:00Z"),
            Some(json!({"date": "2024-07-01", "time": "18:30"}))
        );
        assert_eq!(when("2023-02-29"), None);
        assert_eq!(
            when("the 12th of July at 6pm"),
            Some(json!({"date": "2024-07-12", "time": "18:00"}))
        );
    }

    #[test]
    fn parts_of_the_day_settle_twelve_hour_times() {
        assert_eq!(
            when("tomorrow evening at 7"),
            Some(json!({"date": "2024-06-11", "time": "19:00", "part_of_day": "evening"}))
        );
        assert_eq!(
            when("half past seven tonight"),
            Some(json!({"date": "2024-06-10", "time": "19:30", "part_of_day": "night"}))
        );
        assert_eq!(
            when("friday morning"),
            Some(json!({"date": "2024-06-14", "part_of_day": "morning"}))
        );
        assert_eq!(
            when("in the afternoon, 07:30"),
            Some(json!({"time": "07:30", "part_of_day": "afternoon"}))
        );
        assert_eq!(
            when("at 2 at night"),
            Some(json!({"time": "02:00", "part_of_day": "night"}))
        );
        assert_eq!(
            when("7pm in the morning"),
            Some(json!({"time": "19:00", "part_of_day": "morning"}))
        );
    }

    #[test]
    fn a_bare_time_after_a_part_of_the_day_keeps_it() {
        let old = json!({"date": "2024-06-11", "time": "19:00", "part_of_day": "evening"});
        let after = |text: &str| datetime_after(&old, &tokens(text), MONDAY, &Zone::Offset(0));
        assert_eq!(
            after("at 8 then"),
            Some(json!({"date": "2024-06-11", "time": "20:00", "part_of_day": "evening"}))
        );
        assert_eq!(
            after("make it 08:00"),
            Some(json!({"date": "2024-06-11", "time": "08:00"}))
        );
        assert_eq!(
            after("at 8 in the morning"),
            Some(json!({"date": "2024-06-11", "time": "08:00", "part_of_day": "morning"}))
        );
        assert_eq!(
            after("on friday"),
            Some(json!({"date": "2024-06-14", "time": "19:00", "part_of_day": "evening"}))
        );
        assert_eq!(after("nothing"), None);
    }

    #[test]
    fn later_mentions_replace_the_day_or_the_time_of_day() {
        let old = json!({"date": "2024-06-11", "time": "19:00", "part_of_day": "evening"});
        assert_eq!(
            merge(&old, &json!({"time": "20:00"})),
            json!({"date": "2024-06-11", "time": "20:00"})
        );
        assert_eq!(
            merge(&old, &json!({"date": "2024-06-12"})),
            json!({"date": "2024-06-12", "time": "19:00", "part_of_day": "evening"})
        );
        assert_eq!(
            merge(&json!("odd"), &json!({"date": "x"})),
            json!({"date": "x"})
        );
    }
}
