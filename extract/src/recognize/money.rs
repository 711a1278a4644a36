//! The `money` recognizer: an amount with its currency.

use serde_json::{Value, json};

use super::tokens::number_at;

/// The currency a sign, code or word names.
fn currency(token: &str) -> Option<&'static str> {
    let code = match token {
        "$" | "usd" | "dollar" | "dollars" | "buck" | "bucks" => "USD",
        "€" | "eur" | "euro" | "euros" => "EUR",
        "£" | "gbp" | "pound" | "pounds" | "quid" => "GBP",
        _ => return None,
    };
    Some(code)
}

/// An amount in minor units (cents) from digits with separators: `"12.50"`, `"12,50"`,
/// `"1,200"`, `"1.200,50"`. A separator followed by exactly three digits, with no other
/// kind of separator before it, groups thousands; otherwise the last separator is the
/// decimal one (at most two decimals).
fn amount_cents(text: &str) -> Option<i64> {
    if text.is_empty()
        || !text
            .bytes()
            .all(|b| b.is_ascii_digit() || b == b'.' || b == b',')
    {
        return None;
    }
    let (whole, decimals) = match text.rfind(['.', ',']) {
        Some(at) => {
            let (head, tail) = (&text[..at], &text[at + 1..]);
            let other = if text.as_bytes()[at] == b'.' {
                ','
            } else {
                '.'
            };
            if tail.len() == 3 && !head.contains(other) {
                (text, "")
            } else {
                (head, tail)
            }
        }
        None => (text, ""),
    };
    if decimals.len() > 2 {
        return None;
    }
    let units = grouped(whole)?;
    let cents: i64 = match decimals.len() {
        0 => 0,
        1 => decimals.parse::<i64>().ok()? * 10,
        _ => decimals.parse().ok()?,
    };
    units.checked_mul(100)?.checked_add(cents)
}

/// A whole number with one kind of thousands separator (`"1,200"`, `"1.200"`, `"12"`).
fn grouped(whole: &str) -> Option<i64> {
    let mut separators = whole.chars().filter(|c| !c.is_ascii_digit());
    if let Some(first) = separators.next()
        && separators.any(|c| c != first)
    {
        return None;
    }
    let groups: Vec<&str> = whole.split([',', '.']).collect();
    let (head, tail) = groups.split_first()?;
    if head.is_empty() || (!tail.is_empty() && head.len() > 3) || tail.iter().any(|g| g.len() != 3)
    {
        return None;
    }
    groups.concat().parse().ok()
}

/// An amount at `tokens[at]` and how many tokens it spans: digits with separators, or a
/// spelled number (`"twenty"`), in cents.
fn amount_at(tokens: &[String], at: usize) -> Option<(i64, usize)> {
    if let Some(cents) = amount_cents(tokens.get(at)?) {
        return Some((cents, 1));
    }
    let (value, used) = number_at(tokens, at)?;
    Some((value.checked_mul(100)?, used))
}

/// A token that is an amount with a currency sign glued to its front or back (`"$12.50"`,
/// `"12,50€"`).
fn glued(token: &str) -> Option<(i64, &'static str)> {
    ["$", "€", "£"].iter().find_map(|sign| {
        let amount = token
            .strip_prefix(sign)
            .or_else(|| token.strip_suffix(sign))?;
        Some((amount_cents(amount)?, currency(sign)?))
    })
}

/// Every amount with a currency, as `(cents, currency)`, in order: a sign or code before
/// (`"$12.50"`, `"$ 12"`, `"usd 12"`), a sign after (`"12,50€"`, `"12,50 €"`), or a
/// currency word after (`"twenty dollars"`, `"5 euros"`).
fn amounts(tokens: &[String]) -> Vec<(i64, &'static str)> {
    let mut found = Vec::new();
    let mut at = 0;
    while at < tokens.len() {
        let token = tokens[at].as_str();
        // A sign glued to the front or the back: "$12.50", "12,50€".
        if let Some(signed) = glued(token) {
            found.push(signed);
            at += 1;
            continue;
        }
        // A sign or code alone, then the amount: "$ 12", "usd 12".
        if let Some(code) = currency(token).filter(|_| token.len() <= 3 || !token.is_ascii())
            && let Some((cents, used)) = amount_at(tokens, at + 1)
        {
            found.push((cents, code));
            at += 1 + used;
            continue;
        }
        // The amount, then a sign, code or word: "12,50 €", "twenty dollars".
        if let Some((cents, used)) = amount_at(tokens, at)
            && let Some(code) = tokens.get(at + used).and_then(|t| currency(t))
        {
            found.push((cents, code));
            at += used + 1;
            continue;
        }
        at += 1;
    }
    found
}

/// The last amount with a currency: `{"amount": 12.5, "currency": "USD"}` (the amount a
/// JSON number with at most two decimals, the currency an ISO 4217 code).
pub(super) fn money(tokens: &[String]) -> Option<Value> {
    let (cents, code) = amounts(tokens).pop()?;
    // Cents to units: an i64 below 2^53 converts exactly, and one division rounds once.
    #[allow(clippy::cast_precision_loss)]
    let amount = cents as f64 / 100.0;
    Some(json!({"amount": amount, "currency": code}))
}

#[cfg(test)]
mod tests {
    use super::super::tokens::tokens;
    use super::*;

    fn money_of(text: &str) -> Option<Value> {
        money(&tokens(text))
    }

    #[test]
    fn amounts_with_signs_codes_and_words() {
        let m = |amount: f64, currency: &str| Some(json!({"amount": amount, "currency": currency}));
        assert_eq!(money_of("it was $12.50 total"), m(12.5, "USD"));
        assert_eq!(money_of("12,50 € bitte"), m(12.5, "EUR"));
        assert_eq!(money_of("12,50€"), m(12.5, "EUR"));
        assert_eq!(money_of("$1,200"), m(1200.0, "USD"));
        assert_eq!(money_of("1.200,50 €"), m(1200.5, "EUR"));
        assert_eq!(money_of("£3.2"), m(3.2, "GBP"));
        assert_eq!(money_of("$ 19.99"), m(19.99, "USD"));
        assert_eq!(money_of("USD 40"), m(40.0, "USD"));
        assert_eq!(money_of("twenty dollars"), m(20.0, "USD"));
        assert_eq!(money_of("5 euros, no, 7 pounds"), m(7.0, "GBP"));
        assert_eq!(money_of("twenty five bucks"), m(25.0, "USD"));
    }

    #[test]
    fn numbers_without_a_currency_are_not_money() {
        assert_eq!(money_of("12.50"), None);
        assert_eq!(money_of("two pizzas"), None);
        assert_eq!(money_of("$"), None);
        assert_eq!(
            money_of("$12.505"),
            Some(json!({"amount": 12505.0, "currency": "USD"}))
        );
        assert_eq!(money_of("$1.2.3"), None);
    }
}
