//! Dates with a month name: `"June 12"`, `"june 12th 2025"`, `"12 June"`, `"the 12th of
//! June"`, `"Dec 3"`.

use super::calendar::{date_of_day, day_from_date};

/// The month a name or abbreviation says, 1–12.
fn month_named(token: &str) -> Option<i64> {
    let month = match token {
        "january" | "jan" => 1,
        "february" | "feb" => 2,
        "march" | "mar" => 3,
        "april" | "apr" => 4,
        "may" => 5,
        "june" | "jun" => 6,
        "july" | "jul" => 7,
        "august" | "aug" => 8,
        "september" | "sep" | "sept" => 9,
        "october" | "oct" => 10,
        "november" | "nov" => 11,
        "december" | "dec" => 12,
        _ => return None,
    };
    Some(month)
}

/// A day of the month in digits, with or without its ordinal suffix (`"12"`, `"12th"`,
/// `"1st"`), 1–31.
fn day_of_month(token: &str) -> Option<i64> {
    let digits = ["st", "nd", "rd", "th"]
        .iter()
        .find_map(|suffix| token.strip_suffix(suffix))
        .unwrap_or(token);
    if digits.is_empty() || digits.len() > 2 || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    digits.parse().ok().filter(|d| (1..=31).contains(d))
}

/// A year in four digits.
fn year(token: Option<&String>) -> Option<i64> {
    let token = token?;
    if token.len() != 4 || !token.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    token.parse().ok()
}

/// The date with a month name starting at `tokens[at]`, and how many tokens it spans.
/// Without a year, the first such date on or after `today`.
pub(super) fn month_date_at(tokens: &[String], at: usize, today: i64) -> Option<(i64, usize)> {
    let word = |i: usize| tokens.get(at + i).map(String::as_str);
    let (month, day, used) = if let Some(month) = month_named(word(0)?) {
        (month, day_of_month(word(1)?)?, 2)
    } else {
        let day = day_of_month(word(0)?)?;
        match word(1)? {
            "of" => (month_named(word(2)?)?, day, 3),
            name => (month_named(name)?, day, 2),
        }
    };
    if let Some(year) = year(tokens.get(at + used)) {
        return Some((day_from_date(year, month, day)?, used + 1));
    }
    let (this_year, _, _) = date_of_day(today)?;
    // 29 February skips to the next leap year within the next eight.
    (this_year..this_year + 8)
        .filter_map(|year| day_from_date(year, month, day))
        .find(|date| *date >= today)
        .map(|date| (date, used))
}

#[cfg(test)]
mod tests {
    use super::super::calendar::iso_date;
    use super::super::tokens::tokens;
    use super::*;

    /// 2024-06-10.
    const TODAY: i64 = 19_884;

    fn date(text: &str) -> Option<(String, usize)> {
        month_date_at(&tokens(text), 0, TODAY).map(|(day, used)| (iso_date(day).unwrap(), used))
    }

    fn d(iso: &str, used: usize) -> Option<(String, usize)> {
        Some((iso.to_owned(), used))
    }

    #[test]
    fn month_names_with_days_and_years() {
        assert_eq!(date("June 12"), d("2024-06-12", 2));
        assert_eq!(date("june 12th, 2025"), d("2025-06-12", 3));
        assert_eq!(date("12 June"), d("2024-06-12", 2));
        assert_eq!(date("12th of June"), d("2024-06-12", 3));
        assert_eq!(date("Dec 3rd"), d("2024-12-03", 2));
        assert_eq!(date("June 10"), d("2024-06-10", 2));
        // Past this year: next year's.
        assert_eq!(date("June 9"), d("2025-06-09", 2));
        assert_eq!(date("1st of March"), d("2025-03-01", 3));
        assert_eq!(date("February 29"), d("2028-02-29", 2));
        assert_eq!(date("February 29 2023"), None);
        assert_eq!(date("June 31"), None);
        assert_eq!(date("may I"), None);
        assert_eq!(date("12 pizzas"), None);
        assert_eq!(date("32 June"), None);
    }
}
