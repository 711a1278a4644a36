//! Jaro-Winkler similarity, for the `fuzzy` recognizer.

/// The Jaro-Winkler similarity of `a` and `b` (by chars, case-sensitive), from 0.0
/// (nothing in common) to 1.0 (equal): the Jaro similarity raised for a common prefix of
/// up to four chars, by 0.1 per char.
pub fn jaro_winkler(a: &str, b: &str) -> f64 {
    let jaro = jaro(a, b);
    let prefix = a
        .chars()
        .zip(b.chars())
        .take(4)
        .take_while(|(x, y)| x == y)
        .count();
    // At most 4: exact as f64.
    #[allow(clippy::cast_precision_loss)]
    let prefix = prefix as f64;
    jaro + prefix * 0.1 * (1.0 - jaro)
}

/// The Jaro similarity: chars that match within half the longer length (less one), and
/// how many of them are out of order.
fn jaro(a: &str, b: &str) -> f64 {
    let (a, b): (Vec<char>, Vec<char>) = (a.chars().collect(), b.chars().collect());
    if a.is_empty() && b.is_empty() {
        return 1.0;
    }
    if a.is_empty() || b.is_empty() {
        return 0.0;
    }
    let reach = (a.len().max(b.len()) / 2).saturating_sub(1);
    let mut b_taken = vec![false; b.len()];
    let mut a_matched = Vec::new();
    for (i, &ca) in a.iter().enumerate() {
        let window = i.saturating_sub(reach)..(i + reach + 1).min(b.len());
        if let Some(j) = window.into_iter().find(|&j| !b_taken[j] && b[j] == ca) {
            b_taken[j] = true;
            a_matched.push(ca);
        }
    }
    if a_matched.is_empty() {
        return 0.0;
    }
    let b_matched = b
        .iter()
        .zip(&b_taken)
        .filter(|(_, taken)| **taken)
        .map(|(c, _)| *c);
    let transpositions = a_matched
        .iter()
        .zip(b_matched)
        .filter(|(x, y)| **x != *y)
        .count()
        / 2;
    // Lengths of utterance words: far below 2^53, exact as f64.
    #[allow(clippy::cast_precision_loss)]
    let (m, t, la, lb) = (
        a_matched.len() as f64,
        transpositions as f64,
        a.len() as f64,
        b.len() as f64,
    );
    (m / la + m / lb + (m - t) / m) / 3.0
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rounded(a: &str, b: &str) -> f64 {
        (jaro_winkler(a, b) * 10_000.0).round() / 10_000.0
    }

    #[test]
    fn the_textbook_values() {
        assert_eq!(rounded("martha", "marhta"), 0.9611);
        assert_eq!(rounded("dwayne", "duane"), 0.84);
        assert_eq!(rounded("dixon", "dicksonx"), 0.8133);
        assert_eq!(rounded("jonson", "johnson"), 0.9619);
        assert_eq!(rounded("same", "same"), 1.0);
        assert_eq!(rounded("abc", "xyz"), 0.0);
        assert_eq!(rounded("", ""), 1.0);
        assert_eq!(rounded("", "a"), 0.0);
    }
}
