//! [`Recognizer`]: how one field of a record is found in what the user said.

use std::fmt;
use std::sync::Arc;

use serde_json::Value;

use super::calendar::Zone;
use super::choice::{DEFAULT_FUZZY_THRESHOLD, fuzzy, one_of};
use super::datetime::{datetime, datetime_after};
use super::money::money;
use super::number::{integer, integer_near};
use super::tokens::tokens;
use super::yes_no::yes_no;

type CustomFn = Arc<dyn Fn(&str) -> Option<Value> + Send + Sync>;

/// A time zone name the IANA database does not have.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("`{name}` is not a time zone of the IANA database (for example `Europe/London`)")]
pub struct UnknownTimeZone {
    /// The name as given.
    pub name: String,
}

/// The kinds of recognizer.
#[derive(Clone)]
enum Kind {
    Integer,
    IntegerNear(Vec<String>),
    Money,
    OneOf(Vec<String>),
    Fuzzy {
        options: Vec<String>,
        threshold: f64,
    },
    YesNo,
    DateTime(Zone),
    Custom(CustomFn),
}

/// Finds one kind of value in an utterance, deterministically (no model): the value
/// mentioned **last**, or nothing.
///
/// | recognizer | finds | value |
/// |---|---|---|
/// | [`integer`](Recognizer::integer) | a whole number, digits or words (`"12"`, `"1,200"`, `"two"`, `"twenty five"`, `"a dozen"`, `"half a dozen"`, `"a couple"`, `"a hundred and ten"`) | `12` |
/// | [`integer_near`](Recognizer::integer_near) | a number starting at most 3 words after a keyword (`"I want two"`) | `2` |
/// | [`money`](Recognizer::money) | an amount with a currency sign, code or word (`"$12.50"`, `"12,50 €"`, `"twenty dollars"`) | `{"amount": 12.5, "currency": "USD"}` |
/// | [`one_of`](Recognizer::one_of) | one of the options, exactly (case aside, plural allowed) | the option as given |
/// | [`fuzzy`](Recognizer::fuzzy) | one of the options, approximately (Jaro-Winkler ≥ 0.85), for names misheard by speech recognition | the option as given |
/// | [`yes_no`](Recognizer::yes_no) | a yes or a no (`"yes please"`, `"nope"`, `"not really"`) | `true` / `false` |
/// | [`datetime`](Recognizer::datetime) | a date and time of day (`"tomorrow at 7pm"`, `"next Tuesday"`, `"half past seven tonight"`, `"2024-07-01"`) | `{"date": "2024-06-11", "time": "19:00", "part_of_day": "evening"}` |
/// | [`custom`](Recognizer::custom) | whatever a closure finds | the closure's value |
///
/// Relative dates are resolved against the session time of the turn they were said in
/// (an argument of [`find`](Recognizer::find)), never the wall clock, so a replay finds
/// the same dates.
///
/// ```
/// use reel_extract::Recognizer;
/// use serde_json::json;
///
/// // 2024-06-10T06:13:20Z, a Monday.
/// let now = 1_718_000_000_000;
/// assert_eq!(Recognizer::integer_near(["want"]).find("for 4, I want a dozen", now), Some(json!(12)));
/// assert_eq!(
///     Recognizer::datetime().find("next Tuesday at 7pm", now),
///     Some(json!({"date": "2024-06-18", "time": "19:00"}))
/// );
/// assert_eq!(Recognizer::yes_no().find("nope", now), Some(json!(false)));
/// ```
#[derive(Clone)]
pub struct Recognizer {
    kind: Kind,
}

impl Recognizer {
    fn of(kind: Kind) -> Self {
        Recognizer { kind }
    }

    /// The last whole number, in digits or words.
    pub fn integer() -> Self {
        Recognizer::of(Kind::Integer)
    }

    /// The last whole number starting at most three words after one of `keywords` (a word
    /// equal to a keyword or starting with one, case aside: `"want"` matches `"wanted"`).
    pub fn integer_near<I, S>(keywords: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: AsRef<str>,
    {
        Recognizer::of(Kind::IntegerNear(lowercase(keywords)))
    }

    /// The last amount of money with its currency (`$`, `€`, `£`, `USD`, `EUR`, `GBP`,
    /// dollars, bucks, euros, pounds, quid): `{"amount": 12.5, "currency": "USD"}`. A
    /// separator followed by exactly three digits groups thousands (`"$1,200"`); otherwise
    /// it is the decimal one (`"12,50 €"`).
    pub fn money() -> Self {
        Recognizer::of(Kind::Money)
    }

    /// The last of `options` said exactly (case aside; a plural `s`/`es` allowed on its
    /// last word), as given in `options`. Options may have several words.
    pub fn one_of<I, S>(options: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        Recognizer::of(Kind::OneOf(options.into_iter().map(Into::into).collect()))
    }

    /// The last of `options` said approximately: Jaro-Winkler similarity (case aside) of at
    /// least [`DEFAULT_FUZZY_THRESHOLD`], as given in `options`.
    pub fn fuzzy<I, S>(options: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        Recognizer::fuzzy_with(options, DEFAULT_FUZZY_THRESHOLD)
    }

    /// [`Recognizer::fuzzy`] with a least similarity of `threshold` (0.0–1.0).
    pub fn fuzzy_with<I, S>(options: I, threshold: f64) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        Recognizer::of(Kind::Fuzzy {
            options: options.into_iter().map(Into::into).collect(),
            threshold,
        })
    }

    /// The last yes (`true`) or no (`false`).
    pub fn yes_no() -> Self {
        Recognizer::of(Kind::YesNo)
    }

    /// The last date and time of day, relative days resolved in UTC. See
    /// [`Recognizer::datetime_at_offset`]; for a place with daylight saving, use
    /// [`Recognizer::datetime_in_zone`].
    pub fn datetime() -> Self {
        Recognizer::datetime_at_offset(0)
    }

    /// [`Recognizer::datetime`] with relative days resolved on the local day of the turn's
    /// session time in the IANA time zone `name` (`"Europe/London"`, `"America/New_York"`),
    /// daylight saving included: at 23:30 UTC on 31 March 2024, "tomorrow" in London is
    /// 2 April (it is already 1 April there), where a fixed offset is wrong half the year.
    ///
    /// The zone data is bundled (jiff's copy of the IANA database), so a replay on another
    /// machine resolves the same days.
    ///
    /// ```
    /// use reel_extract::Recognizer;
    /// use serde_json::json;
    ///
    /// let london = Recognizer::datetime_in_zone("Europe/London")?;
    /// let late_on_31_march_2024 = 1_711_927_800_000; // 23:30 UTC, 00:30 BST
    /// assert_eq!(
    ///     london.find("tomorrow at 9am", late_on_31_march_2024),
    ///     Some(json!({"date": "2024-04-02", "time": "09:00"}))
    /// );
    /// assert!(Recognizer::datetime_in_zone("Europe/Londres").is_err());
    /// # Ok::<_, reel_extract::recognize::UnknownTimeZone>(())
    /// ```
    pub fn datetime_in_zone(name: &str) -> Result<Self, UnknownTimeZone> {
        let zone = Zone::named(name).ok_or_else(|| UnknownTimeZone {
            name: name.to_owned(),
        })?;
        Ok(Recognizer::of(Kind::DateTime(zone)))
    }

    /// The last date and time of day, as `{"date": "YYYY-MM-DD", "time": "HH:MM",
    /// "part_of_day": "morning" | "afternoon" | "evening" | "night"}` with only what was
    /// said; relative days resolved on the local day of the turn's session time at UTC
    /// offset `offset_minutes` (all year: see [`Recognizer::datetime_in_zone`] for a
    /// place with daylight saving).
    ///
    /// Days: ISO dates (`2024-07-01`, `2024-07-01T18:30`), month names (`June 12`,
    /// `12th of June 2025`; without a year, the next one from today), `today`, `tonight`, `tomorrow`,
    /// `the day after tomorrow`, `yesterday`, `in 3 days`, `in a week`, weekdays (`friday`,
    /// `this friday`: the next one after today; `next friday`: the one in next week, weeks
    /// starting on Monday). Times: `19:30`, `7pm`, `7:30 p.m.`, `noon`, `midnight`,
    /// `half past seven`, `quarter to eight`, `ten past seven`, `seven o'clock`, `at 7`. A
    /// 12-hour time without am/pm is the morning one unless the afternoon, the evening or
    /// (for 6–11) the night is said with it (`half past seven tonight` is 19:30).
    ///
    /// Across turns ([`Recognizer::find_after`]), a later mention replaces the day if it
    /// says one, and the time of day (time and part of day together) if it says either; a
    /// bare 12-hour time keeps the part of the day said before (after "tomorrow evening",
    /// "at 8 then" is 20:00).
    pub fn datetime_at_offset(offset_minutes: i32) -> Self {
        Recognizer::of(Kind::DateTime(Zone::Offset(offset_minutes)))
    }

    /// Whatever `find` returns for an utterance (`None`: nothing there).
    pub fn custom<F>(find: F) -> Self
    where
        F: Fn(&str) -> Option<Value> + Send + Sync + 'static,
    {
        Recognizer::of(Kind::Custom(Arc::new(find)))
    }

    /// The value mentioned last in `text`, said at session time `timestamp_ms` (epoch
    /// milliseconds, what relative dates are resolved against), or `None`.
    pub fn find(&self, text: &str, timestamp_ms: u64) -> Option<Value> {
        let tokens = tokens(text);
        match &self.kind {
            Kind::Integer => integer(&tokens).map(Value::from),
            Kind::IntegerNear(keywords) => integer_near(&tokens, keywords).map(Value::from),
            Kind::Money => money(&tokens),
            Kind::OneOf(options) => one_of(&tokens, options).map(Value::from),
            Kind::Fuzzy { options, threshold } => {
                fuzzy(&tokens, options, *threshold).map(Value::from)
            }
            Kind::YesNo => yes_no(&tokens).map(Value::from),
            Kind::DateTime(zone) => datetime(&tokens, timestamp_ms, zone),
            Kind::Custom(find) => find(text),
        }
    }

    /// The value mentioned last in `text` (said at session time `timestamp_ms`) when
    /// `previous` was found before: [`Recognizer::find`], except for
    /// [`Recognizer::datetime`], which keeps the day or the time of day of `previous` that
    /// `text` does not say (and reads a bare 12-hour time in `previous`'s part of the day).
    pub fn find_after(
        &self,
        previous: Option<&Value>,
        text: &str,
        timestamp_ms: u64,
    ) -> Option<Value> {
        match (&self.kind, previous) {
            (Kind::DateTime(zone), Some(previous)) => {
                datetime_after(previous, &tokens(text), timestamp_ms, zone)
            }
            _ => self.find(text, timestamp_ms),
        }
    }
}

fn lowercase<I, S>(words: I) -> Vec<String>
where
    I: IntoIterator<Item = S>,
    S: AsRef<str>,
{
    words
        .into_iter()
        .map(|w| w.as_ref().to_lowercase())
        .collect()
}

impl fmt::Debug for Recognizer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.kind {
            Kind::Integer => f.write_str("Recognizer::integer"),
            Kind::IntegerNear(keywords) => write!(f, "Recognizer::integer_near({keywords:?})"),
            Kind::Money => f.write_str("Recognizer::money"),
            Kind::OneOf(options) => write!(f, "Recognizer::one_of({options:?})"),
            Kind::Fuzzy { options, threshold } => {
                write!(f, "Recognizer::fuzzy_with({options:?}, {threshold})")
            }
            Kind::YesNo => f.write_str("Recognizer::yes_no"),
            Kind::DateTime(Zone::Offset(minutes)) => {
                write!(f, "Recognizer::datetime_at_offset({minutes})")
            }
            Kind::DateTime(Zone::Named(name, _)) => {
                write!(f, "Recognizer::datetime_in_zone({name:?})")
            }
            Kind::Custom(_) => f.write_str("Recognizer::custom(..)"),
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    /// 2024-06-10T06:13:20Z, a Monday.
    const MONDAY: u64 = 1_718_000_000_000;

    #[test]
    fn each_recognizer_through_find() {
        let find = |r: Recognizer, text: &str| r.find(text, MONDAY);
        assert_eq!(find(Recognizer::integer(), "a dozen"), Some(json!(12)));
        assert_eq!(
            find(Recognizer::integer_near(["WANT"]), "I Want 3"),
            Some(json!(3))
        );
        assert_eq!(
            find(Recognizer::money(), "$12.50"),
            Some(json!({"amount": 12.5, "currency": "USD"}))
        );
        assert_eq!(
            find(Recognizer::one_of(["Soda"]), "a soda"),
            Some(json!("Soda"))
        );
        assert_eq!(
            find(Recognizer::fuzzy(["Jackson"]), "jaksen"),
            Some(json!("Jackson"))
        );
        assert_eq!(find(Recognizer::yes_no(), "yes please"), Some(json!(true)));
        assert_eq!(
            find(Recognizer::datetime(), "next Tuesday"),
            Some(json!({"date": "2024-06-18"}))
        );
        // Seven hours behind UTC, 06:13Z is 23:13 on the 9th: tomorrow is the 10th.
        assert_eq!(
            find(Recognizer::datetime_at_offset(-7 * 60), "tomorrow"),
            Some(json!({"date": "2024-06-10"}))
        );
        assert_eq!(
            find(Recognizer::custom(|t| Some(json!(t.len()))), "abc"),
            Some(json!(3))
        );
        // Only datetime reads what was found before.
        let before = json!({"date": "2024-06-11"});
        assert_eq!(
            Recognizer::datetime().find_after(Some(&before), "at 19:30", MONDAY),
            Some(json!({"date": "2024-06-11", "time": "19:30"}))
        );
        assert_eq!(
            Recognizer::integer().find_after(Some(&json!(5)), "no number", MONDAY),
            None
        );
    }

    #[test]
    fn odd_input_finds_nothing() {
        let all = [
            Recognizer::integer(),
            Recognizer::integer_near(["want"]),
            Recognizer::money(),
            Recognizer::one_of(["pizza"]),
            Recognizer::fuzzy(["Johnson"]),
            Recognizer::yes_no(),
            Recognizer::datetime(),
        ];
        for text in [
            "",
            "   ",
            "☃ €€ $$ ,.,",
            "$,",
            "€.5",
            "1:2:3:4",
            "in in in",
            "want",
        ] {
            for recognizer in &all {
                assert_eq!(
                    recognizer.find(text, MONDAY),
                    None,
                    "{recognizer:?} on {text:?}"
                );
            }
        }
        assert_eq!(
            format!("{:?}", Recognizer::fuzzy_with(["A"], 0.9)),
            r#"Recognizer::fuzzy_with(["A"], 0.9)"#
        );
    }
}
