//! Recordings in object storage (the `s3` feature): S3 and S3-compatible servers through
//! the `object_store` crate. A prefix is listed into [`Recording`]s (each wire log with the
//! sidecar files found beside it, as on disk); a recording is copied, streamed chunk by
//! chunk, to a local directory ([`Bucket::fetch_recording`]) where the file readers take it; one
//! object can be read as a blocking [`std::io::Read`] that streams ([`ObjectReader`]).
//! Nothing holds a whole object in memory. Every failure is a [`RecordingsError`] naming
//! the URL: no such bucket, no such key, access refused, a partial object.
//!
//! Credentials, region and endpoint come from the standard AWS environment variables
//! (`AWS_ACCESS_KEY_ID`, `AWS_SECRET_ACCESS_KEY`, `AWS_SESSION_TOKEN`, `AWS_REGION`,
//! `AWS_DEFAULT_REGION`, `AWS_ENDPOINT_URL`, …); an explicit endpoint (`--s3-endpoint`)
//! wins over `AWS_ENDPOINT_URL`. An `http://` endpoint (a local S3-compatible server) is
//! allowed as such. Decision 0060.

use std::collections::BTreeSet;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::mpsc::{Receiver, SyncSender, sync_channel};

use bytes::Bytes;
use futures_util::StreamExt;
use object_store::aws::{AmazonS3, AmazonS3Builder};
use object_store::path::Path as ObjectPath;
use object_store::{ObjectStore, ObjectStoreExt};
use tokio::io::AsyncWriteExt;

use super::{ObjectUrl, RecordingsError, SIDECAR_SUFFIXES, WIRE_LOG_SUFFIX};

/// Chunks an [`ObjectReader`] lets its fetching thread run ahead by.
const READ_AHEAD_CHUNKS: usize = 4;

/// The environment variable naming an S3-compatible server's endpoint.
pub const ENDPOINT_VARIABLE: &str = "AWS_ENDPOINT_URL";

/// A bucket to read recordings from.
#[derive(Debug, Clone)]
pub struct Bucket {
    store: Arc<AmazonS3>,
    name: String,
}

/// A wire log in a bucket, with the sidecar files found beside it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Recording {
    /// The wire log.
    pub log: ObjectUrl,
    /// Its key relative to the prefix it was listed under (its file name when it was named
    /// by itself): the same on every machine, for [`super::Shard`].
    pub relative: String,
    /// The sidecar files beside it (`X.journal.jsonl`, `X.resume.json`, …).
    pub sidecars: Vec<ObjectUrl>,
}

impl Bucket {
    /// A client for `url`'s bucket, configured from the AWS environment variables;
    /// `endpoint` (`--s3-endpoint`) overrides `AWS_ENDPOINT_URL`.
    pub fn open(url: &ObjectUrl, endpoint: Option<&str>) -> Result<Bucket, RecordingsError> {
        // reqwest's rustls is built without a crypto provider (no aws-lc, no cmake); the
        // process's default is ring's. Installing it twice is refused and harmless.
        let _ = rustls::crypto::ring::default_provider().install_default();
        let mut builder = AmazonS3Builder::from_env().with_bucket_name(&url.bucket);
        let endpoint = endpoint
            .map(str::to_owned)
            .or_else(|| std::env::var(ENDPOINT_VARIABLE).ok());
        if let Some(endpoint) = endpoint {
            if endpoint.starts_with("http://") {
                builder = builder.with_allow_http(true);
            }
            builder = builder.with_endpoint(endpoint);
        }
        let store = builder.build().map_err(|error| RecordingsError::Client {
            url: url.to_string(),
            detail: error.to_string(),
        })?;
        Ok(Bucket {
            store: Arc::new(store),
            name: url.bucket.clone(),
        })
    }

    /// The wire logs under `url` (a prefix; or one wire log), each with its sidecars, in
    /// key order. A prefix with none is [`RecordingsError::NoRecordings`]; a wire log that
    /// is not there is [`RecordingsError::NoSuchKey`].
    pub async fn recordings(&self, url: &ObjectUrl) -> Result<Vec<Recording>, RecordingsError> {
        let (listed_under, root) = if url.is_wire_log() {
            let parent = url.key.rsplit_once('/').map_or("", |(dir, _)| dir);
            (parent.to_owned(), format!("{parent}/"))
        } else {
            let prefix = url.key.trim_end_matches('/').to_owned();
            let root = if prefix.is_empty() {
                String::new()
            } else {
                format!("{prefix}/")
            };
            (prefix, root)
        };
        let keys = self.keys(url, &listed_under).await?;
        let logs: Vec<&String> = keys
            .iter()
            .filter(|key| key.ends_with(WIRE_LOG_SUFFIX))
            .filter(|key| !url.is_wire_log() || **key == url.key)
            .collect();
        if logs.is_empty() {
            return Err(if url.is_wire_log() {
                RecordingsError::NoSuchKey {
                    url: url.to_string(),
                }
            } else {
                RecordingsError::NoRecordings {
                    url: url.to_string(),
                }
            });
        }
        Ok(logs
            .into_iter()
            .map(|key| {
                let stem = key.strip_suffix(WIRE_LOG_SUFFIX).unwrap_or(key);
                let sidecars = SIDECAR_SUFFIXES
                    .iter()
                    .map(|suffix| format!("{stem}{suffix}"))
                    .filter(|sidecar| keys.contains(sidecar))
                    .map(|sidecar| url.with_key(&sidecar))
                    .collect();
                Recording {
                    log: url.with_key(key),
                    relative: key.strip_prefix(&root).unwrap_or(key).to_owned(),
                    sidecars,
                }
            })
            .collect())
    }

    /// Every key under `prefix` (a whole path segment; empty: the bucket).
    async fn keys(
        &self,
        url: &ObjectUrl,
        prefix: &str,
    ) -> Result<BTreeSet<String>, RecordingsError> {
        let prefix = (!prefix.is_empty()).then(|| ObjectPath::from(prefix));
        let mut listing = self.store.list(prefix.as_ref());
        let mut keys = BTreeSet::new();
        while let Some(meta) = listing.next().await {
            let meta = meta.map_err(|error| self.error(url, error))?;
            keys.insert(meta.location.to_string());
        }
        Ok(keys)
    }

    /// Copies the object at `url` to the file `to`, streamed; fails with
    /// [`RecordingsError::Partial`] when fewer bytes arrive than the object holds.
    pub async fn download(&self, url: &ObjectUrl, to: &Path) -> Result<u64, RecordingsError> {
        let write_error = |source| RecordingsError::Write {
            path: to.display().to_string(),
            source,
        };
        let got = self
            .store
            .get(&ObjectPath::from(url.key.as_str()))
            .await
            .map_err(|error| self.error(url, error))?;
        let size = got.meta.size;
        if let Some(dir) = to.parent() {
            tokio::fs::create_dir_all(dir).await.map_err(write_error)?;
        }
        let mut file = tokio::fs::File::create(to).await.map_err(write_error)?;
        let mut stream = got.into_stream();
        let mut read = 0u64;
        while let Some(chunk) = stream.next().await {
            let Ok(chunk) = chunk else {
                break;
            };
            read += chunk.len() as u64;
            file.write_all(&chunk).await.map_err(write_error)?;
        }
        file.flush().await.map_err(write_error)?;
        if read != size {
            return Err(RecordingsError::Partial {
                url: url.to_string(),
                read,
                size,
            });
        }
        Ok(read)
    }

    /// Copies `recording` (its wire log and sidecars) below `dir`, at its relative path;
    /// returns the local wire log.
    pub async fn fetch_recording(
        &self,
        recording: &Recording,
        dir: &Path,
    ) -> Result<PathBuf, RecordingsError> {
        let local = |url: &ObjectUrl| {
            let name = url.key.rsplit('/').next().unwrap_or(&url.key);
            let parent = Path::new(&recording.relative)
                .parent()
                .map(Path::to_path_buf)
                .unwrap_or_default();
            dir.join(parent).join(name)
        };
        let log = local(&recording.log);
        self.download(&recording.log, &log).await?;
        for sidecar in &recording.sidecars {
            self.download(sidecar, &local(sidecar)).await?;
        }
        Ok(log)
    }

    /// Copies every recording under `url` (a prefix), with its sidecars, below `dir` at
    /// its relative path, one after another, streamed; returns how many. For readers that
    /// take a directory (`reel studio`): a snapshot of the prefix as it was listed.
    pub async fn fetch_all(&self, url: &ObjectUrl, dir: &Path) -> Result<usize, RecordingsError> {
        let recordings = self.recordings(url).await?;
        for recording in &recordings {
            self.fetch_recording(recording, dir).await?;
        }
        Ok(recordings.len())
    }

    /// The typed error for what the store said about `url`.
    fn error(&self, url: &ObjectUrl, error: object_store::Error) -> RecordingsError {
        let detail = server_words(&error.to_string());
        let url_text = url.to_string();
        if detail.contains("NoSuchBucket") {
            return RecordingsError::NoSuchBucket {
                url: url_text,
                bucket: self.name.clone(),
            };
        }
        match error {
            object_store::Error::NotFound { .. } => RecordingsError::NoSuchKey { url: url_text },
            object_store::Error::PermissionDenied { .. }
            | object_store::Error::Unauthenticated { .. } => RecordingsError::AccessRefused {
                url: url_text,
                detail,
            },
            _ if [
                "AccessDenied",
                "InvalidAccessKeyId",
                "SignatureDoesNotMatch",
            ]
            .iter()
            .any(|code| detail.contains(code)) =>
            {
                RecordingsError::AccessRefused {
                    url: url_text,
                    detail,
                }
            }
            _ => RecordingsError::Store {
                url: url_text,
                detail,
            },
        }
    }
}

/// What the server said, in one line: S3's error `Code: Message` when the answer carries
/// its XML error document, else the client's message up to its first line break.
fn server_words(detail: &str) -> String {
    let element = |name: &str| {
        let open = format!("<{name}>");
        let start = detail.find(&open)? + open.len();
        let end = start + detail[start..].find(&format!("</{name}>"))?;
        let text = detail[start..end].trim();
        let text = text
            .strip_prefix("<![CDATA[")
            .and_then(|t| t.strip_suffix("]]>"))
            .unwrap_or(text);
        Some(text.to_owned())
    };
    match (element("Code"), element("Message")) {
        (Some(code), Some(message)) => format!("{code}: {message}"),
        (Some(code), None) => code,
        _ => detail.lines().next().unwrap_or_default().trim().to_owned(),
    }
}

/// One object read as a blocking stream: a thread of its own fetches it chunk by chunk, a
/// few chunks ahead, so it can be read from any thread, inside an async runtime or not.
pub struct ObjectReader {
    chunks: Receiver<Result<Bytes, RecordingsError>>,
    current: Bytes,
    /// The URL, which the reader's caller names already: left out of its read errors.
    url: String,
}

impl ObjectReader {
    /// Opens the object at `url` (see [`Bucket::open`] for `endpoint`); fails here, not
    /// on the first read, when the bucket or key is missing or access is refused.
    pub fn open(url: &ObjectUrl, endpoint: Option<&str>) -> Result<ObjectReader, RecordingsError> {
        let bucket = Bucket::open(url, endpoint)?;
        let (opened_tx, opened_rx) = sync_channel(1);
        let (chunks_tx, chunks) = sync_channel(READ_AHEAD_CHUNKS);
        let shown = url.to_string();
        let url = url.clone();
        std::thread::spawn(move || fetch_chunks(&bucket, &url, &opened_tx, &chunks_tx));
        match opened_rx.recv() {
            Ok(Ok(())) => Ok(ObjectReader {
                chunks,
                current: Bytes::new(),
                url: shown,
            }),
            Ok(Err(error)) => Err(error),
            Err(_) => Err(RecordingsError::Store {
                url: String::new(),
                detail: "the reading thread ended before the object was opened".to_owned(),
            }),
        }
    }
}

/// The reading thread of an [`ObjectReader`]: opens the object, says so, sends its chunks,
/// then a [`RecordingsError::Partial`] if it ended short.
fn fetch_chunks(
    bucket: &Bucket,
    url: &ObjectUrl,
    opened: &SyncSender<Result<(), RecordingsError>>,
    chunks: &SyncSender<Result<Bytes, RecordingsError>>,
) {
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(error) => {
            let _ = opened.send(Err(RecordingsError::Store {
                url: url.to_string(),
                detail: format!("cannot start the reading thread's runtime: {error}"),
            }));
            return;
        }
    };
    runtime.block_on(async {
        let got = match bucket.store.get(&ObjectPath::from(url.key.as_str())).await {
            Ok(got) => got,
            Err(error) => {
                let _ = opened.send(Err(bucket.error(url, error)));
                return;
            }
        };
        let _ = opened.send(Ok(()));
        let size = got.meta.size;
        let mut read = 0u64;
        let mut stream = got.into_stream();
        while let Some(Ok(chunk)) = stream.next().await {
            read += chunk.len() as u64;
            if chunks.send(Ok(chunk)).is_err() {
                return;
            }
        }
        if read != size {
            let _ = chunks.send(Err(RecordingsError::Partial {
                url: url.to_string(),
                read,
                size,
            }));
        }
    });
}

impl Read for ObjectReader {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        while self.current.is_empty() {
            match self.chunks.recv() {
                Ok(Ok(chunk)) => self.current = chunk,
                Ok(Err(error)) => {
                    let said = error.to_string();
                    let said = said
                        .strip_prefix(&format!("{}: ", self.url))
                        .unwrap_or(&said);
                    return Err(std::io::Error::other(said.to_owned()));
                }
                // The thread is done: the whole object was read.
                Err(_) => return Ok(0),
            }
        }
        let n = buf.len().min(self.current.len());
        buf[..n].copy_from_slice(&self.current.split_to(n));
        Ok(n)
    }
}

#[cfg(test)]
mod tests {
    use super::server_words;

    #[test]
    fn the_servers_words_in_one_line() {
        let said = "Generic S3 error: Error performing list request: 403 Forbidden: <?xml version=\"1.0\"?>\n<Error>\n    <Code>InvalidAccessKeyId</Code>\n    <Message><![CDATA[The AWS Access Key Id you provided does not exist in our records.]]></Message>\n</Error>";
        assert_eq!(
            server_words(said),
            "InvalidAccessKeyId: The AWS Access Key Id you provided does not exist in our records."
        );
        assert_eq!(
            server_words("connection refused\nmore"),
            "connection refused"
        );
    }
}
