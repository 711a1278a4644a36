//! `s3://bucket/key` URLs: parsed once, with a typed error for what is wrong.

use std::fmt;

use super::RecordingsError;

/// The scheme of an object in S3 or an S3-compatible server.
const S3_SCHEME: &str = "s3://";

/// An object, or a prefix of objects, in a bucket: `s3://bucket/key`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ObjectUrl {
    /// The bucket.
    pub bucket: String,
    /// The key (or prefix) within it; empty for the whole bucket.
    pub key: String,
}

impl ObjectUrl {
    /// Whether `input` names an object URL rather than a local path.
    pub fn is_object_url(input: &str) -> bool {
        input.starts_with(S3_SCHEME)
    }

    /// Parses `s3://bucket/key`; fails on another scheme or an empty bucket name.
    pub fn parse(input: &str) -> Result<ObjectUrl, RecordingsError> {
        let rest = input
            .strip_prefix(S3_SCHEME)
            .ok_or_else(|| RecordingsError::BadUrl {
                url: input.to_owned(),
                why: "it does not start with s3://",
            })?;
        let (bucket, key) = rest.split_once('/').unwrap_or((rest, ""));
        if bucket.is_empty() {
            return Err(RecordingsError::BadUrl {
                url: input.to_owned(),
                why: "it names no bucket",
            });
        }
        Ok(ObjectUrl {
            bucket: bucket.to_owned(),
            key: key.to_owned(),
        })
    }

    /// The URL of another key in the same bucket.
    pub fn with_key(&self, key: &str) -> ObjectUrl {
        ObjectUrl {
            bucket: self.bucket.clone(),
            key: key.to_owned(),
        }
    }

    /// Whether the URL names one wire log rather than a prefix.
    pub fn is_wire_log(&self) -> bool {
        self.key.ends_with(super::WIRE_LOG_SUFFIX)
    }
}

impl fmt::Display for ObjectUrl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{S3_SCHEME}{}/{}", self.bucket, self.key)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_bucket_and_key() {
        let url = ObjectUrl::parse("s3://tapes/ci/a.wire.jsonl").unwrap();
        assert_eq!(url.bucket, "tapes");
        assert_eq!(url.key, "ci/a.wire.jsonl");
        assert!(url.is_wire_log());
        assert_eq!(url.to_string(), "s3://tapes/ci/a.wire.jsonl");
        assert_eq!(ObjectUrl::parse("s3://tapes").unwrap().key, "");
    }

    #[test]
    fn refuses_no_bucket() {
        assert_eq!(
            ObjectUrl::parse("s3:///x").unwrap_err().to_string(),
            "s3:///x: not an object URL: it names no bucket"
        );
    }
}
