//! Splitting an utterance into lowercase tokens, and reading numbers (digits or words)
//! from them.

/// The text's tokens: split at whitespace, lowercased, with the punctuation around a word
/// trimmed (`"19:30,"` → `"19:30"`, `"(yes!)"` → `"yes"`); currency signs stay.
pub(super) fn tokens(text: &str) -> Vec<String> {
    const TRIM: &[char] = &[
        ',', '.', '!', '?', ';', ':', '"', '(', ')', '[', ']', '{', '}', '…', '“', '”', '\'',
    ];
    text.split_whitespace()
        .map(|word| word.trim_matches(TRIM).to_lowercase())
        .filter(|word| !word.is_empty())
        .collect()
}

/// The value of a number word below twenty, or a tens word.
fn word_value(word: &str) -> Option<i64> {
    let value = match word {
        "zero" | "none" => 0,
        "one" => 1,
        "two" => 2,
        "three" => 3,
        "four" => 4,
        "five" => 5,
        "six" => 6,
        "seven" => 7,
        "eight" => 8,
        "nine" => 9,
        "ten" => 10,
        "eleven" => 11,
        "twelve" => 12,
        "thirteen" => 13,
        "fourteen" => 14,
        "fifteen" => 15,
        "sixteen" => 16,
        "seventeen" => 17,
        "eighteen" => 18,
        "nineteen" => 19,
        "twenty" => 20,
        "thirty" => 30,
        "forty" => 40,
        "fifty" => 50,
        "sixty" => 60,
        "seventy" => 70,
        "eighty" => 80,
        "ninety" => 90,
        _ => return None,
    };
    Some(value)
}

/// A whole number written in digits: `"12"`, `"1,200"` (thousands separators in groups of
/// three).
pub(super) fn digits_value(token: &str) -> Option<i64> {
    let mut groups = token.split(',');
    let first = groups.next()?;
    let rest: Vec<&str> = groups.collect();
    let all_digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    if !all_digits(first) || !rest.iter().all(|g| g.len() == 3 && all_digits(g)) {
        return None;
    }
    if !rest.is_empty() && first.len() > 3 {
        return None;
    }
    token.replace(',', "").parse().ok()
}

/// One token of a spelled number: a word below twenty, a tens word, or a hyphenated
/// tens-and-unit (`"twenty-five"`).
fn spelled_value(token: &str) -> Option<i64> {
    match token.split_once('-') {
        Some((tens, unit)) => {
            let (tens, unit) = (word_value(tens)?, word_value(unit)?);
            (tens >= 20 && tens % 10 == 0 && (1..10).contains(&unit)).then_some(tens + unit)
        }
        None => word_value(token),
    }
}

/// The number starting at `tokens[at]`, and how many tokens it spans: digits (`"12"`,
/// `"1,200"`), words (`"two"`, `"twenty five"`, `"twenty-five"`, `"a hundred and ten"`),
/// `"a dozen"` (12), `"half a dozen"` (6), `"a couple"` (2).
pub(super) fn number_at(tokens: &[String], at: usize) -> Option<(i64, usize)> {
    let word = |i: usize| tokens.get(at + i).map(String::as_str);
    match (word(0)?, word(1), word(2)) {
        ("half", Some("a"), Some("dozen")) => return Some((6, 3)),
        ("a", Some("dozen"), _) | ("dozen", _, _) => {
            return Some((12, if word(0) == Some("a") { 2 } else { 1 }));
        }
        ("a", Some("couple"), _) => return Some((2, 2)),
        ("a", Some("hundred"), _) => return Some(hundreds(tokens, at + 2, 100, 2)),
        _ => {}
    }
    if let Some(value) = digits_value(word(0)?) {
        return Some((value, 1));
    }
    let first = spelled_value(word(0)?)?;
    let (mut value, mut used) = (first, 1);
    if first >= 20
        && first % 10 == 0
        && let Some(unit) = word(1).and_then(word_value).filter(|u| (1..10).contains(u))
    {
        value += unit;
        used = 2;
    }
    if (1..10).contains(&value) && word(used) == Some("hundred") {
        return Some(hundreds(tokens, at + used + 1, value * 100, used + 1));
    }
    Some((value, used))
}

/// `base` (a number of hundreds spanning `used` tokens) plus the tens after it
/// (`"and ten"`, `"five"`), if any, starting at `tokens[at]`.
fn hundreds(tokens: &[String], at: usize, base: i64, used: usize) -> (i64, usize) {
    let skip = usize::from(tokens.get(at).map(String::as_str) == Some("and"));
    match number_at(tokens, at + skip) {
        Some((rest, n)) if (1..100).contains(&rest) => (base + rest, used + skip + n),
        _ => (base, used),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn number(text: &str) -> Option<(i64, usize)> {
        number_at(&tokens(text), 0)
    }

    #[test]
    fn tokens_are_lowercase_without_punctuation() {
        assert_eq!(
            tokens("Yes, please! At 19:30. (Don't) $12.50"),
            ["yes", "please", "at", "19:30", "don't", "$12.50"]
        );
    }

    #[test]
    fn numbers_in_digits_and_words() {
        assert_eq!(number("12 pizzas"), Some((12, 1)));
        assert_eq!(number("1,200"), Some((1200, 1)));
        assert_eq!(number("12,34"), None);
        assert_eq!(number("two"), Some((2, 1)));
        assert_eq!(number("twenty five"), Some((25, 2)));
        assert_eq!(number("twenty-five"), Some((25, 1)));
        assert_eq!(number("a dozen eggs"), Some((12, 2)));
        assert_eq!(number("dozen"), Some((12, 1)));
        assert_eq!(number("half a dozen"), Some((6, 3)));
        assert_eq!(number("a couple of"), Some((2, 2)));
        assert_eq!(number("a hundred"), Some((100, 2)));
        assert_eq!(number("three hundred and twelve"), Some((312, 4)));
        assert_eq!(number("two hundred"), Some((200, 2)));
        assert_eq!(number("pizza"), None);
        assert_eq!(number("a"), None);
    }
}
