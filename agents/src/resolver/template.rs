//! `{key}` prompts: the keys a prompt reads, and the prompt with their values.

use reel_actors::state::State;
use serde_json::Value;

/// The keys `prompt` reads, in order of first appearance (`{key}`; `{{` and `}}` are
/// literal braces).
pub(crate) fn keys(prompt: &str) -> Vec<String> {
    let mut keys = Vec::new();
    for piece in pieces(prompt) {
        if let Piece::Key(key) = piece
            && !keys.iter().any(|k| k == key)
        {
            keys.push(key.to_owned());
        }
    }
    keys
}

/// `prompt` with each `{key}` replaced by its value (a string as is, anything else as
/// JSON); the first key not set is the error.
pub(crate) fn render(prompt: &str, state: &State) -> Result<String, String> {
    let mut out = String::with_capacity(prompt.len());
    for piece in pieces(prompt) {
        match piece {
            Piece::Text(text) => out.push_str(text),
            Piece::Key(key) => match state.get_raw(key) {
                Some(Value::String(text)) => out.push_str(&text),
                Some(value) => out.push_str(&value.to_string()),
                None => return Err(key.to_owned()),
            },
        }
    }
    Ok(out)
}

enum Piece<'a> {
    Text(&'a str),
    Key(&'a str),
}

/// The prompt cut into text and keys. A `{` with no `}` after it is text.
fn pieces(prompt: &str) -> Vec<Piece<'_>> {
    let mut pieces = Vec::new();
    let mut rest = prompt;
    while !rest.is_empty() {
        if let Some(after) = rest.strip_prefix("{{") {
            pieces.push(Piece::Text("{"));
            rest = after;
        } else if let Some(after) = rest.strip_prefix("}}") {
            pieces.push(Piece::Text("}"));
            rest = after;
        } else if let Some(after) = rest.strip_prefix('{')
            && let Some(end) = after.find('}')
            && end > 0
        {
            pieces.push(Piece::Key(&after[..end]));
            rest = &after[end + 1..];
        } else {
            // Past the first character (whole: it may be more than a byte).
            let first = rest.chars().next().map_or(1, char::len_utf8);
            let next = rest[first..]
                .find(['{', '}'])
                .map_or(rest.len(), |i| i + first);
            pieces.push(Piece::Text(&rest[..next]));
            rest = &rest[next..];
        }
    }
    pieces
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn keys_and_values() {
        let prompt = "Summarize the {topic} issue for {name} ({topic}) {{literal}}";
        assert_eq!(keys(prompt), ["topic", "name"]);
        let state = State::new();
        state.set("topic", "billing").await.unwrap();
        assert_eq!(render(prompt, &state), Err("name".to_owned()));
        state.set("name", serde_json::json!(7)).await.unwrap();
        assert_eq!(
            render(prompt, &state).unwrap(),
            "Summarize the billing issue for 7 (billing) {literal}"
        );
        assert_eq!(keys("a { b"), Vec::<String>::new());
        assert_eq!(render("a { b}", &state), Err(" b".to_owned()));
    }
}
