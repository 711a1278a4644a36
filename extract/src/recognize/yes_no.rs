//! The `yes_no` recognizer: the user's last answer, yes or no.

/// Phrases and what they answer, longest first where one starts another. `None` marks
/// phrases that look like an answer and are not ("no problem" thanks, "not sure" doubts).
const PHRASES: &[(&[&str], Option<bool>)] = &[
    (&["no", "problem"], None),
    (&["no", "worries"], None),
    (&["not", "sure"], None),
    (&["not", "really"], Some(false)),
    (&["of", "course"], Some(true)),
    (&["sounds", "good"], Some(true)),
    (&["that's", "right"], Some(true)),
    (&["go", "ahead"], Some(true)),
    (&["please", "do"], Some(true)),
    (&["don't"], Some(false)),
    (&["yes"], Some(true)),
    (&["yeah"], Some(true)),
    (&["yep"], Some(true)),
    (&["yup"], Some(true)),
    (&["yea"], Some(true)),
    (&["sure"], Some(true)),
    (&["ok"], Some(true)),
    (&["okay"], Some(true)),
    (&["correct"], Some(true)),
    (&["absolutely"], Some(true)),
    (&["definitely"], Some(true)),
    (&["affirmative"], Some(true)),
    (&["no"], Some(false)),
    (&["nope"], Some(false)),
    (&["nah"], Some(false)),
    (&["never"], Some(false)),
    (&["negative"], Some(false)),
    (&["incorrect"], Some(false)),
];

/// The last yes or no of the text: `true` for "yes", "yeah", "sure", "of course", …;
/// `false` for "no", "nope", "nah", "not really", "don't", …. "No problem", "no worries"
/// and "not sure" are neither.
pub(super) fn yes_no(tokens: &[String]) -> Option<bool> {
    let phrase_at = |at: usize| {
        PHRASES.iter().find(|(words, _)| {
            tokens
                .get(at..at + words.len())
                .is_some_and(|said| said.iter().zip(words.iter()).all(|(s, w)| s == w))
        })
    };
    let mut answer = None;
    let mut at = 0;
    while at < tokens.len() {
        match phrase_at(at) {
            Some((words, said)) => {
                answer = said.or(answer);
                at += words.len();
            }
            None => at += 1,
        }
    }
    answer
}

#[cfg(test)]
mod tests {
    use super::super::tokens::tokens;
    use super::*;

    fn answer(text: &str) -> Option<bool> {
        yes_no(&tokens(text))
    }

    #[test]
    fn yes_and_no_in_their_forms() {
        assert_eq!(answer("yes please"), Some(true));
        assert_eq!(answer("Nope."), Some(false));
        assert_eq!(answer("Yeah, sure"), Some(true));
        assert_eq!(answer("of course"), Some(true));
        assert_eq!(answer("not really"), Some(false));
        assert_eq!(answer("please don't"), Some(false));
        assert_eq!(answer("yes, I mean no"), Some(false));
        assert_eq!(answer("no wait, yes"), Some(true));
    }

    #[test]
    fn lookalikes_are_no_answer() {
        assert_eq!(answer("no problem"), None);
        assert_eq!(answer("I'm not sure"), None);
        assert_eq!(answer("yes. no worries"), Some(true));
        assert_eq!(answer("the pizza"), None);
        assert_eq!(answer("nobody knows"), None);
    }
}
