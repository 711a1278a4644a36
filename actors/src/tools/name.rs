//! The function names the Live API accepts, checked when a tool is registered rather than
//! discovered when the server rejects the setup frame.

/// The longest name the API accepts.
pub const MAX_NAME_LEN: usize = 64;

/// `Ok` if the API accepts `name` as a function name: it starts with a letter or `_`, holds
/// only letters, digits, `_`, `.`, `:` and `-`, and is at most 64 characters long.
///
/// ```
/// use reel_actors::tools::validate_name;
///
/// assert_eq!(validate_name("get_weather"), Ok(()));
/// assert_eq!(validate_name("get weather"), Err("only letters, digits, `_`, `.`, `:` and `-` are allowed"));
/// ```
pub fn validate_name(name: &str) -> Result<(), &'static str> {
    let Some(first) = name.chars().next() else {
        return Err("it is empty");
    };
    if !(first.is_ascii_alphabetic() || first == '_') {
        return Err("it must start with a letter or `_`");
    }
    if !name
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | ':' | '-'))
    {
        return Err("only letters, digits, `_`, `.`, `:` and `-` are allowed");
    }
    if name.len() > MAX_NAME_LEN {
        return Err("it is longer than 64 characters");
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accepts_the_api_alphabet() {
        assert_eq!(validate_name("_private.v2:get-weather_9"), Ok(()));
        assert_eq!(validate_name(&"a".repeat(64)), Ok(()));
    }

    #[test]
    fn rejects_with_the_reason() {
        assert_eq!(validate_name(""), Err("it is empty"));
        assert_eq!(
            validate_name("9lives"),
            Err("it must start with a letter or `_`")
        );
        assert_eq!(
            validate_name("wetter_für_köln"),
            Err("only letters, digits, `_`, `.`, `:` and `-` are allowed")
        );
        assert_eq!(
            validate_name(&"a".repeat(65)),
            Err("it is longer than 64 characters")
        );
    }
}
