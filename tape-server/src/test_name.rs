//! Per-test tapes: a client names its test, and the server replays that test's tapes and
//! records into that test's file.
//!
//! The name comes from the `x-reel-test` header of the upgrade request (what an SDK's
//! `http_options.headers` sends), or from the `reel_test` query parameter for a client that
//! cannot set headers. It becomes a file name: ASCII letters, digits, `.`, `_` and `-` are
//! kept, anything else becomes `_` (`tests/test_app.py::test_weather[paris]` →
//! `tests_test_app.py__test_weather_paris_`).
//!
//! A test's first connection is recorded as `<test>.wire.jsonl`, later ones as
//! `<test>.2.wire.jsonl`, `<test>.3.wire.jsonl`, …; a tape belongs to a test when its file
//! is named either way.

use std::fmt;

use super::tape_index::TAPE_SUFFIX;

/// The header a client names its test with.
pub const TEST_HEADER: &str = "x-reel-test";

/// The query parameter a client names its test with, when it cannot set headers.
pub const TEST_QUERY_PARAM: &str = "reel_test";

/// The longest test name accepted, in bytes (file systems allow 255 per name, and the
/// suffixes need room).
pub const MAX_TEST_NAME_BYTES: usize = 200;

/// A test's name, made safe as a file name.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct TestName(String);

/// Why a test name cannot be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum TestNameError {
    /// Empty, or only spaces.
    #[error("the test name is empty")]
    Empty,
    /// Over [`MAX_TEST_NAME_BYTES`].
    #[error("the test name is {len} bytes long; at most {MAX_TEST_NAME_BYTES} are accepted")]
    TooLong {
        /// Its length in bytes.
        len: usize,
    },
    /// Not UTF-8 (a header value can be any bytes).
    #[error("the test name is not UTF-8")]
    NotUtf8,
    /// Only dots: `.` and `..` name directories, not files.
    #[error("the test name `{name}` is only dots")]
    OnlyDots {
        /// The name as given.
        name: String,
    },
    /// Named twice, differently (header and query).
    #[error("the test is named twice: `{header}` in the header, `{query}` in the query")]
    Conflict {
        /// The header's name.
        header: String,
        /// The query's name.
        query: String,
    },
}

impl TestName {
    /// The name given by a client, made safe as a file name.
    ///
    /// ```
    /// use reel_tape_server::TestName;
    ///
    /// let name = TestName::new("tests/test_app.py::test_weather[paris]")?;
    /// assert_eq!(name.as_str(), "tests_test_app.py__test_weather_paris_");
    /// assert!(TestName::new("  ").is_err());
    /// assert!(TestName::new("..").is_err());
    /// # Ok::<_, reel_tape_server::TestNameError>(())
    /// ```
    pub fn new(given: &str) -> Result<TestName, TestNameError> {
        let trimmed = given.trim();
        if trimmed.is_empty() {
            return Err(TestNameError::Empty);
        }
        if trimmed.len() > MAX_TEST_NAME_BYTES {
            return Err(TestNameError::TooLong { len: trimmed.len() });
        }
        if trimmed.chars().all(|c| c == '.') {
            return Err(TestNameError::OnlyDots {
                name: trimmed.to_owned(),
            });
        }
        Ok(TestName(file_safe(trimmed)))
    }

    /// The name as a file name stem.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The file the test's connection number `n` (from 1) is recorded in.
    pub fn file_name(&self, n: u32) -> String {
        if n <= 1 {
            format!("{}{TAPE_SUFFIX}", self.0)
        } else {
            format!("{}.{n}{TAPE_SUFFIX}", self.0)
        }
    }

    /// Whether the tape named `tape` (a path or a file name) is one of this test's.
    pub fn owns(&self, tape: &str) -> bool {
        let Some(stem) = tape_stem(tape) else {
            return false;
        };
        match stem.strip_prefix(self.0.as_str()) {
            Some("") => true,
            Some(rest) => rest
                .strip_prefix('.')
                .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit())),
            None => false,
        }
    }
}

/// `text` with every character other than ASCII letters, digits, `.`, `_` and `-` replaced
/// by `_`: a name that cannot leave its directory or need quoting.
pub(crate) fn file_safe(text: &str) -> String {
    text.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-') {
                c
            } else {
                '_'
            }
        })
        .collect()
}

/// The file name of `tape` without its directory and [`TAPE_SUFFIX`].
fn tape_stem(tape: &str) -> Option<&str> {
    let file = tape.rsplit(['/', '\\']).next()?;
    file.strip_suffix(TAPE_SUFFIX)
}

impl fmt::Display for TestName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// The test a request names: from the header's value (`None`: absent) and the raw query.
pub(crate) fn requested_test(
    header: Option<&[u8]>,
    query: Option<&str>,
) -> Result<Option<TestName>, TestNameError> {
    let from_header = header
        .map(|value| std::str::from_utf8(value).map_err(|_| TestNameError::NotUtf8))
        .transpose()?;
    let from_query = query.and_then(|query| {
        query.split('&').find_map(|pair| {
            let (key, value) = pair.split_once('=').unwrap_or((pair, ""));
            (key == TEST_QUERY_PARAM).then(|| percent_decoded(value))
        })
    });
    let from_query = from_query.transpose()?;
    match (from_header, from_query) {
        (Some(header), Some(query)) if header.trim() != query.trim() => {
            Err(TestNameError::Conflict {
                header: header.to_owned(),
                query,
            })
        }
        (Some(name), _) => TestName::new(name).map(Some),
        (None, Some(name)) => TestName::new(&name).map(Some),
        (None, None) => Ok(None),
    }
}

/// A query value with `%XX` escapes and `+` decoded.
fn percent_decoded(value: &str) -> Result<String, TestNameError> {
    // `+` first: an escaped `%2B` stays a plus.
    String::from_utf8(reel_protocol::percent_decode(&value.replace('+', " ")))
        .map_err(|_| TestNameError::NotUtf8)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_become_safe_file_names() {
        assert_eq!(TestName::new("weather").unwrap().as_str(), "weather");
        assert_eq!(TestName::new(" a b/c\\d ").unwrap().as_str(), "a_b_c_d");
        assert_eq!(TestName::new("é").unwrap().as_str(), "_");
        assert_eq!(TestName::new(""), Err(TestNameError::Empty));
        assert_eq!(
            TestName::new(".."),
            Err(TestNameError::OnlyDots { name: "..".into() })
        );
        assert_eq!(
            TestName::new(&"x".repeat(201)),
            Err(TestNameError::TooLong { len: 201 })
        );
    }

    #[test]
    fn a_tests_files_are_its_own() {
        let name = TestName::new("weather").unwrap();
        assert_eq!(name.file_name(1), "weather.wire.jsonl");
        assert_eq!(name.file_name(3), "weather.3.wire.jsonl");
        assert!(name.owns("tapes/weather.wire.jsonl"));
        assert!(name.owns("weather.12.wire.jsonl"));
        assert!(!name.owns("weather-2.wire.jsonl"));
        assert!(!name.owns("weather.x.wire.jsonl"));
        assert!(!name.owns("weathered.wire.jsonl"));
        assert!(!name.owns("weather.jsonl"));
    }

    #[test]
    fn the_header_or_the_query_names_the_test() {
        assert_eq!(requested_test(None, None), Ok(None));
        assert_eq!(
            requested_test(Some(b"t1"), Some("alt=sse")),
            Ok(Some(TestName::new("t1").unwrap()))
        );
        assert_eq!(
            requested_test(None, Some("key=K&reel_test=test%20two+x")),
            Ok(Some(TestName::new("test two x").unwrap()))
        );
        assert_eq!(
            requested_test(Some(b"a"), Some("reel_test=a")),
            Ok(Some(TestName::new("a").unwrap()))
        );
        assert_eq!(
            requested_test(Some(b"a"), Some("reel_test=b")),
            Err(TestNameError::Conflict {
                header: "a".into(),
                query: "b".into()
            })
        );
        assert_eq!(
            requested_test(Some(b"\xff"), None),
            Err(TestNameError::NotUtf8)
        );
        assert_eq!(requested_test(Some(b" "), None), Err(TestNameError::Empty));
    }
}
