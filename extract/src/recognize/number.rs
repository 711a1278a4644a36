//! The `integer` and `integer_near` recognizers.

use super::tokens::number_at;

/// How many tokens after a keyword an `integer_near` number may start ("want **two**",
/// "get me the **three**").
const NEAR: usize = 3;

/// Every number of the text as `(token index, value)`, in order. A number spans its
/// tokens (`"twenty five"` is one number, 25).
fn numbers(tokens: &[String]) -> Vec<(usize, i64)> {
    let mut found = Vec::new();
    let mut at = 0;
    while at < tokens.len() {
        match number_at(tokens, at) {
            Some((value, used)) => {
                found.push((at, value));
                at += used;
            }
            None => at += 1,
        }
    }
    found
}

/// The last number of the text.
pub(super) fn integer(tokens: &[String]) -> Option<i64> {
    numbers(tokens).last().map(|&(_, value)| value)
}

/// The last number that starts within [`NEAR`] tokens after a keyword (a token equal to
/// one, or starting with one: `"want"` matches `"wanted"`). `keywords` are lowercase.
pub(super) fn integer_near(tokens: &[String], keywords: &[String]) -> Option<i64> {
    let is_keyword = |token: &String| keywords.iter().any(|k| token.starts_with(k.as_str()));
    numbers(tokens)
        .into_iter()
        .rev()
        .find(|&(at, _)| tokens[at.saturating_sub(NEAR)..at].iter().any(is_keyword))
        .map(|(_, value)| value)
}

#[cfg(test)]
mod tests {
    use super::super::tokens::tokens;
    use super::*;

    fn near(text: &str) -> Option<i64> {
        integer_near(&tokens(text), &["want".to_owned(), "get".to_owned()])
    }

    #[test]
    fn integer_is_the_last_number() {
        assert_eq!(integer(&tokens("two, no, make it three")), Some(3));
        assert_eq!(integer(&tokens("I'd like 12 please")), Some(12));
        assert_eq!(integer(&tokens("a dozen")), Some(12));
        assert_eq!(integer(&tokens("twenty five of them")), Some(25));
        assert_eq!(integer(&tokens("none of that")), Some(0));
        assert_eq!(integer(&tokens("nothing here")), None);
    }

    #[test]
    fn integer_near_needs_a_keyword_just_before() {
        assert_eq!(near("I want two pizzas for 4 people"), Some(2));
        assert_eq!(near("we wanted to get me the three"), Some(3));
        assert_eq!(near("table for 4, I want a dozen"), Some(12));
        assert_eq!(near("4 people, we want pizza"), None);
        assert_eq!(near("I want pizza for the whole 5 of us"), None);
    }
}
