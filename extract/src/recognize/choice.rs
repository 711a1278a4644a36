//! The `one_of` and `fuzzy` recognizers: which of a list of options the user named.

use strsim::jaro_winkler;

/// An option as the tokens it must match (lowercase words).
fn option_words(option: &str) -> Vec<String> {
    option.split_whitespace().map(str::to_lowercase).collect()
}

/// The last option named exactly (case aside, a plural `s`/`es` allowed on its last
/// word), as given; of options named at the same place, the longest.
pub(super) fn one_of<'a>(tokens: &[String], options: &'a [String]) -> Option<&'a str> {
    let matches_at = |at: usize, words: &[String]| {
        let Some(said) = tokens.get(at..at + words.len()) else {
            return false;
        };
        let last = words.len() - 1;
        said.iter().zip(words).enumerate().all(|(i, (said, word))| {
            said == word
                || (i == last
                    && (said.strip_suffix('s') == Some(word)
                        || said.strip_suffix("es") == Some(word)))
        })
    };
    (0..tokens.len()).rev().find_map(|at| {
        options
            .iter()
            .map(|option| (option, option_words(option)))
            .filter(|(_, words)| !words.is_empty() && matches_at(at, words))
            .max_by_key(|(_, words)| words.len())
            .map(|(option, _)| option.as_str())
    })
}

/// The default least similarity of a `fuzzy` match.
pub const DEFAULT_FUZZY_THRESHOLD: f64 = 0.85;

/// The last option said approximately: the tokens at some place (as many as the option has
/// words, letters and digits only) whose Jaro-Winkler similarity to the option is at least
/// `threshold`; of options at the same place, the most similar (the first of equals).
pub(super) fn fuzzy<'a>(
    tokens: &[String],
    options: &'a [String],
    threshold: f64,
) -> Option<&'a str> {
    let cleaned: Vec<String> = tokens
        .iter()
        .map(|t| t.chars().filter(|c| c.is_alphanumeric()).collect())
        .collect();
    (0..cleaned.len()).rev().find_map(|at| {
        let mut best: Option<(&'a str, f64)> = None;
        for option in options {
            let words = option_words(option).len();
            let Some(said) = cleaned.get(at..at + words).filter(|_| words > 0) else {
                continue;
            };
            if said.iter().any(String::is_empty) {
                continue;
            }
            let score = jaro_winkler(&said.join(" "), &option.to_lowercase());
            if score >= threshold && best.is_none_or(|(_, s)| score > s) {
                best = Some((option.as_str(), score));
            }
        }
        best.map(|(option, _)| option)
    })
}

#[cfg(test)]
mod tests {
    use super::super::tokens::tokens;
    use super::*;

    /// The scores the fuzzy recognizer's threshold was chosen against (it was hand-written
    /// before `strsim`; these pin that the scores did not move).
    #[test]
    fn jaro_winkler_gives_the_textbook_values() {
        let rounded = |a: &str, b: &str| (jaro_winkler(a, b) * 10_000.0).round() / 10_000.0;
        assert_eq!(rounded("martha", "marhta"), 0.9611);
        assert_eq!(rounded("dwayne", "duane"), 0.84);
        assert_eq!(rounded("dixon", "dicksonx"), 0.8133);
        assert_eq!(rounded("jonson", "johnson"), 0.9619);
        assert_eq!(rounded("same", "same"), 1.0);
        assert_eq!(rounded("abc", "xyz"), 0.0);
        assert_eq!(rounded("", ""), 1.0);
        assert_eq!(rounded("", "a"), 0.0);
    }

    fn options(list: &[&str]) -> Vec<String> {
        list.iter().map(|s| (*s).to_owned()).collect()
    }

    #[test]
    fn one_of_finds_the_last_option_named() {
        let menu = options(&["pizza", "salad", "Soda", "ice cream"]);
        assert_eq!(one_of(&tokens("a pizza and a soda"), &menu), Some("Soda"));
        assert_eq!(one_of(&tokens("two pizzas please"), &menu), Some("pizza"));
        assert_eq!(
            one_of(&tokens("some ICE CREAM, not salad"), &menu),
            Some("salad")
        );
        assert_eq!(
            one_of(&tokens("salad, then ice creams"), &menu),
            Some("ice cream")
        );
        assert_eq!(one_of(&tokens("a sandwich"), &menu), None);
        assert_eq!(one_of(&tokens("pizzeria"), &menu), None);
    }

    #[test]
    fn one_of_prefers_the_longer_option_at_one_place() {
        let sizes = options(&["large", "large family"]);
        assert_eq!(
            one_of(&tokens("a large family pizza"), &sizes),
            Some("large family")
        );
    }

    #[test]
    fn fuzzy_matches_misheard_names() {
        let names = options(&["Johnson", "Jackson", "Mary Ann"]);
        let find = |text: &str| fuzzy(&tokens(text), &names, DEFAULT_FUZZY_THRESHOLD);
        assert_eq!(find("the name is Jonson"), Some("Johnson"));
        assert_eq!(find("it's jaksen"), Some("Jackson"));
        assert_eq!(find("my name is Peterson"), None);
        assert_eq!(find("mary anne"), Some("Mary Ann"));
        assert_eq!(find("Johnson, sorry, Jackson."), Some("Jackson"));
        // A common prefix weighs: "john" is 0.9143 like "johnson".
        assert_eq!(find("John"), Some("Johnson"));
        assert_eq!(fuzzy(&tokens("John"), &names, 0.95), None);
        assert_eq!(fuzzy(&tokens("Jonson"), &names, 0.97), None);
    }
}
