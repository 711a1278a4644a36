//! lowerCamelCase and snake_case spellings of a key.

use std::borrow::Cow;

/// The lowerCamelCase spelling of `key`: `inline_data` → `inlineData`. A key already in
/// lowerCamelCase (no `_` after its first character) is returned as it is, without a copy.
///
/// ```
/// use reel_protocol::json::camel_case;
///
/// assert_eq!(camel_case("inline_data"), "inlineData");
/// assert_eq!(camel_case("mimeType"), "mimeType");
/// assert_eq!(camel_case("_private"), "_private");
/// ```
pub fn camel_case(key: &str) -> Cow<'_, str> {
    if !key.chars().skip(1).any(|c| c == '_') {
        return Cow::Borrowed(key);
    }
    let mut out = String::with_capacity(key.len());
    let mut upper = false;
    for c in key.chars() {
        if c == '_' && !out.is_empty() {
            upper = true;
        } else if upper {
            out.extend(c.to_uppercase());
            upper = false;
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

/// The snake_case spelling of `key`: `inlineData` → `inline_data`. A key without capitals
/// is returned as it is, without a copy.
///
/// ```
/// use reel_protocol::json::snake_case;
///
/// assert_eq!(snake_case("inlineData"), "inline_data");
/// assert_eq!(snake_case("turn_complete"), "turn_complete");
/// ```
pub fn snake_case(key: &str) -> Cow<'_, str> {
    if !key.chars().any(char::is_uppercase) {
        return Cow::Borrowed(key);
    }
    let mut out = String::with_capacity(key.len() + 4);
    for c in key.chars() {
        if c.is_uppercase() {
            if !out.is_empty() {
                out.push('_');
            }
            out.extend(c.to_lowercase());
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_two_spellings_of_the_live_apis_keys() {
        for (camel, snake) in [
            ("inlineData", "inline_data"),
            ("turnComplete", "turn_complete"),
            ("realtimeInput", "realtime_input"),
            ("data", "data"),
            ("mediaChunks", "media_chunks"),
        ] {
            assert_eq!(camel_case(snake), camel);
            assert_eq!(camel_case(camel), camel);
            assert_eq!(snake_case(camel), snake);
            assert_eq!(snake_case(snake), snake);
        }
        assert!(matches!(camel_case("mimeType"), Cow::Borrowed(_)));
        assert!(matches!(snake_case("mime_type"), Cow::Borrowed(_)));
        // A leading underscore is part of the key, not a word break.
        assert_eq!(camel_case("_a_b"), "_aB");
        assert_eq!(snake_case("URL"), "u_r_l");
    }
}
