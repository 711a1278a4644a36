//! Text for a terminal: recorded strings (a model's text, a tool's arguments, a file name)
//! may hold control characters, and a terminal obeys them — `ESC ] 0 ; … BEL` retitles the
//! window, `ESC [ 2 J` clears the screen, a carriage return overwrites what was printed.
//! Every text report goes through [`visible`] on its way out, which shows them as escapes
//! instead (`\u{1b}`, `\r`, `\t`). JSON output needs none of it: JSON escapes them itself.

use std::borrow::Cow;
use std::io::IsTerminal;

/// Green, bold: a CLEAN verdict.
const GREEN: &str = "\u{1b}[1;32m";
/// Red, bold: a DRIFT verdict.
const RED: &str = "\u{1b}[1;31m";
/// Back to the terminal's own colours.
const RESET: &str = "\u{1b}[0m";

/// Whether verdicts are coloured: standard output is a terminal and `NO_COLOR` is unset or
/// empty (<https://no-color.org>). `CLICOLOR_FORCE` set and not `0` colours output that is
/// not a terminal (a pager with `-R`, a test); `NO_COLOR` still wins over it.
pub fn colour_on() -> bool {
    let set = |name: &str| std::env::var_os(name).is_some_and(|value| !value.is_empty());
    if set("NO_COLOR") {
        return false;
    }
    let forced = std::env::var_os("CLICOLOR_FORCE").is_some_and(|v| !v.is_empty() && v != "0");
    forced || std::io::stdout().is_terminal()
}

/// `text` with the verdict that starts a line (after its indentation) — `CLEAN` green,
/// `DRIFT` red — coloured; nothing else is touched, so a model's text that says "CLEAN"
/// mid-line stays plain. Apply after [`visible`]: the escapes added here are ours.
pub fn paint_verdicts(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 32);
    for line in text.split_inclusive('\n') {
        let body = line.trim_start_matches(' ');
        let indent = &line[..line.len() - body.len()];
        let colour = [("CLEAN", GREEN), ("DRIFT", RED)]
            .into_iter()
            .find(|(word, _)| {
                body.strip_prefix(word)
                    .is_some_and(|rest| rest.is_empty() || rest.starts_with([' ', '\n']))
            });
        match colour {
            Some((word, colour)) => {
                out.push_str(indent);
                out.push_str(colour);
                out.push_str(word);
                out.push_str(RESET);
                out.push_str(&body[word.len()..]);
            }
            None => out.push_str(line),
        }
    }
    out
}

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
    fn only_a_verdict_that_starts_a_line_is_coloured() {
        assert_eq!(
            paint_verdicts("  CLEAN  a.wire.jsonl\n  “DRIFT is a word”\n  DRIFT — x\nCLEANER\n"),
            "  \u{1b}[1;32mCLEAN\u{1b}[0m  a.wire.jsonl\n  “DRIFT is a word”\n  \u{1b}[1;31mDRIFT\u{1b}[0m — x\nCLEANER\n"
        );
    }

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
