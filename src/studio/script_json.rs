//! JSON written inside an HTML `<script>` element, safe for the script-data state.
//!
//! The HTML parser reads a script element's text before any JavaScript sees it: `</script`
//! ends the element, and `<!--` followed by `<script` switches it into the "double escaped"
//! state, in which the real `</script>` no longer ends the element and the rest of the page
//! is swallowed (a blank page). Escaping only `</` is not enough. Here every character the
//! parser reacts to is written as a JSON `\uXXXX` escape: `<`, `>` and `&`, and U+2028 and
//! U+2029 (line terminators to older JavaScript parsers). In JSON text these characters can
//! only occur inside strings (keys or values), where the escape means the same character, so
//! the value the page reads is exactly the value written.

/// `value` as JSON text that contains no `<`, `>`, `&`, U+2028 or U+2029.
pub fn script_safe_json(value: &serde_json::Value) -> String {
    escape_json_text(&value.to_string())
}

/// JSON text `json` with `<`, `>`, `&`, U+2028 and U+2029 written as `\uXXXX` escapes.
///
/// `json` must be JSON text (as `serde_json` writes it): the characters escaped then occur
/// only inside strings, where the escape is equivalent.
pub fn escape_json_text(json: &str) -> String {
    let mut out = String::with_capacity(json.len());
    for c in json.chars() {
        match c {
            '<' => out.push_str("\\u003c"),
            '>' => out.push_str("\\u003e"),
            '&' => out.push_str("\\u0026"),
            '\u{2028}' => out.push_str("\\u2028"),
            '\u{2029}' => out.push_str("\\u2029"),
            other => out.push(other),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::script_safe_json;
    use serde_json::json;

    #[test]
    fn markup_characters_become_escapes_and_read_back_the_same() {
        let value = json!({
            "<!--<script>": "</script><script>x&y</script>",
            "line": "a\u{2028}b\u{2029}c",
            "plain": "café 1 > 0",
        });
        let text = script_safe_json(&value);
        assert_eq!(
            text,
            r#"{"\u003c!--\u003cscript\u003e":"\u003c/script\u003e\u003cscript\u003ex\u0026y\u003c/script\u003e","line":"a\u2028b\u2029c","plain":"café 1 \u003e 0"}"#
        );
        let back: serde_json::Value = serde_json::from_str(&text).unwrap();
        assert_eq!(back, value);
    }
}
