//! Text for a terminal: recorded strings (a model's text, a tool's arguments, a file name)
//! may hold control characters, and a terminal obeys them — `ESC ] 0 ; … BEL` retitles the
//! window, `ESC [ 2 J` clears the screen, a carriage return overwrites what was printed.
//! Every text report goes through [`visible`] on its way out, which shows them as escapes
//! instead (`\u{1b}`, `\r`, `\t`). JSON output needs none of it: JSON escapes them itself.

use std::borrow::Cow;

/// `text` with every control character but the line breaks of the report itself shown as
/// its Rust escape: C0 controls, DEL, C1 controls (`\u{9b}` starts a sequence on some
/// terminals) and the bidirectional overrides and isolates, which reorder what is shown.
///
/// ```text
/// "\u{1b}]0;pwned\u{7}" → "\u{1b}]0;pwned\u{7}", printed as those 20 visible characters
/// ```
pub fn visible(text: &str) -> Cow<'_, str> {
    if !text.chars().any(needs_escape) {
        return Cow::Borrowed(text);
    }
    let mut shown = String::with_capacity(text.len() + 16);
    for c in text.chars() {
        if needs_escape(c) {
            match c {
                '\t' => shown.push_str("\\t"),
                '\r' => shown.push_str("\\r"),
                _ => shown.push_str(&format!("\\u{{{:x}}}", u32::from(c))),
            }
        } else {
            shown.push(c);
        }
    }
    Cow::Owned(shown)
}

/// Whether `c` is shown as an escape.
fn needs_escape(c: char) -> bool {
    (c.is_control() && c != '\n') || matches!(c, '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn controls_are_shown_as_escapes_and_plain_text_is_untouched() {
        assert_eq!(
            visible("a\u{1b}]0;pwned\u{7}\u{1b}[2J\rb\tc\u{7f}\u{9b}1m\u{202e}d\n"),
            "a\\u{1b}]0;pwned\\u{7}\\u{1b}[2J\\rb\\tc\\u{7f}\\u{9b}1m\\u{202e}d\n"
        );
        assert!(matches!(
            visible("It's 14°C — “cloudy” ☁\n"),
            Cow::Borrowed("It's 14°C — “cloudy” ☁\n")
        ));
    }
}
