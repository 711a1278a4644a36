//! Ground lines: `{key}` and `{key?yes:no}` interpolated from state.
//!
//! `{key}` is the key's value (a string as it is, anything else as JSON; `unknown` when
//! the key is absent or `null`, so the model is never handed a blank); `{key?yes:no}` is
//! `yes` when the key holds a truthy value (`true`, a non-zero number, a non-empty string,
//! list or object) and `no` otherwise. `{{` and `}}` are literal braces.

use serde_json::Value;

use crate::state_view::StateView;

/// One piece of a template.
#[derive(Debug, Clone, PartialEq)]
enum Piece<'a> {
    Text(&'a str),
    Value(&'a str),
    Choice(&'a str, &'a str, &'a str),
}

/// Splits a template into pieces, or says what is wrong with it.
fn parse(template: &str) -> Result<Vec<Piece<'_>>, String> {
    let mut pieces = Vec::new();
    let mut rest = template;
    while !rest.is_empty() {
        if let Some(after) = rest.strip_prefix("{{") {
            pieces.push(Piece::Text("{"));
            rest = after;
        } else if let Some(after) = rest.strip_prefix("}}") {
            pieces.push(Piece::Text("}"));
            rest = after;
        } else if let Some(after) = rest.strip_prefix('{') {
            let end = after
                .find('}')
                .ok_or_else(|| "has a { that is never closed (write {{ for a brace)".to_owned())?;
            let inner = &after[..end];
            pieces.push(placeholder(inner)?);
            rest = &after[end + 1..];
        } else if rest.starts_with('}') {
            return Err("has a } that closes nothing (write }} for a brace)".to_owned());
        } else {
            let end = rest.find(['{', '}']).unwrap_or(rest.len());
            pieces.push(Piece::Text(&rest[..end]));
            rest = &rest[end..];
        }
    }
    Ok(pieces)
}

fn placeholder(inner: &str) -> Result<Piece<'_>, String> {
    let bad_key = |key: &str| key.trim().is_empty() || key.contains('{');
    match inner.split_once('?') {
        None if bad_key(inner) => Err(format!("has an empty or broken placeholder {{{inner}}}")),
        None => Ok(Piece::Value(inner.trim())),
        Some((key, choices)) => {
            let (yes, no) = choices.split_once(':').ok_or_else(|| {
                format!("has {{{inner}}} without the `:` between its two texts ({{key?yes:no}})")
            })?;
            if bad_key(key) {
                return Err(format!("has an empty or broken placeholder {{{inner}}}"));
            }
            Ok(Piece::Choice(key.trim(), yes, no))
        }
    }
}

/// Checks a template: `Err` says what is wrong.
pub(crate) fn check(template: &str) -> Result<(), String> {
    parse(template).map(drop)
}

fn truthy(value: Option<&Value>) -> bool {
    match value {
        None | Some(Value::Null) => false,
        Some(Value::Bool(b)) => *b,
        Some(Value::Number(n)) => n.as_f64().is_some_and(|f| f != 0.0),
        Some(Value::String(s)) => !s.is_empty(),
        Some(Value::Array(a)) => !a.is_empty(),
        Some(Value::Object(o)) => !o.is_empty(),
    }
}

/// The template with its placeholders filled from `state`. A template that does not parse
/// (never the case for a built flow) is returned as it is.
pub fn render(template: &str, state: &dyn StateView) -> String {
    let Ok(pieces) = parse(template) else {
        return template.to_owned();
    };
    let mut line = String::new();
    for piece in pieces {
        match piece {
            Piece::Text(text) => line.push_str(text),
            Piece::Value(key) => match state.get(key) {
                None | Some(Value::Null) => line.push_str("unknown"),
                Some(Value::String(s)) => line.push_str(s),
                Some(other) => line.push_str(&other.to_string()),
            },
            Piece::Choice(key, yes, no) => {
                line.push_str(if truthy(state.get(key)) { yes } else { no });
            }
        }
    }
    line
}
