//! One recording file by its location, a local path or an `s3://` URL, as a stream of
//! bytes: what a reader of wire logs, journals or cassettes takes to read either the same.

use std::io::Read;

use super::{ObjectUrl, RecordingsError};

/// Opens the file at `location` for reading: a local path, or (with the `s3` feature) an
/// `s3://bucket/key` URL, streamed ([`super::object::ObjectReader`]; `endpoint` as for
/// [`super::object::Bucket::open`]). Nothing is read ahead beyond a few chunks.
pub fn open(
    location: &str,
    endpoint: Option<&str>,
) -> Result<Box<dyn Read + Send>, RecordingsError> {
    if ObjectUrl::is_object_url(location) {
        return open_object(&ObjectUrl::parse(location)?, endpoint);
    }
    let file = std::fs::File::open(location).map_err(|source| RecordingsError::Open {
        path: location.to_owned(),
        source,
    })?;
    Ok(Box::new(file))
}

/// The object at `url`, streamed.
#[cfg(feature = "s3")]
fn open_object(
    url: &ObjectUrl,
    endpoint: Option<&str>,
) -> Result<Box<dyn Read + Send>, RecordingsError> {
    Ok(Box::new(super::object::ObjectReader::open(url, endpoint)?))
}

/// Without the `s3` feature, an `s3://` URL is refused with the reason.
#[cfg(not(feature = "s3"))]
fn open_object(
    url: &ObjectUrl,
    _endpoint: Option<&str>,
) -> Result<Box<dyn Read + Send>, RecordingsError> {
    Err(RecordingsError::NoObjectStore {
        url: url.to_string(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_local_path_opens_as_a_file_and_a_missing_one_says_so() {
        let path = std::env::temp_dir().join(format!("reel-open-{}.jsonl", std::process::id()));
        std::fs::write(&path, "{}\n").unwrap();
        let mut text = String::new();
        open(path.to_str().unwrap(), None)
            .unwrap()
            .read_to_string(&mut text)
            .unwrap();
        std::fs::remove_file(&path).unwrap();
        assert_eq!(text, "{}\n");
        let error = open("/nonexistent/x.wire.jsonl", None).err().unwrap();
        assert!(
            error
                .to_string()
                .starts_with("/nonexistent/x.wire.jsonl: cannot open: "),
            "{error}"
        );
        assert_eq!(
            open("s3://", None).err().unwrap().to_string(),
            "s3://: not an object URL: it names no bucket"
        );
    }
}
