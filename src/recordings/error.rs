//! What can go wrong finding, sharding and reading recordings.

/// Why recordings could not be listed or read. Each names the URL or file concerned.
#[derive(Debug, thiserror::Error)]
pub enum RecordingsError {
    /// The input looked like an object URL but is not one.
    #[error("{url}: not an object URL: {why}")]
    BadUrl {
        /// The input.
        url: String,
        /// What is wrong with it.
        why: &'static str,
    },
    /// The object store client could not be set up (a bad endpoint, a bad setting in the
    /// environment).
    #[error("{url}: cannot set up the object store client: {detail}")]
    Client {
        /// The URL it was for.
        url: String,
        /// What the client said.
        detail: String,
    },
    /// The bucket does not exist.
    #[error("{url}: no such bucket `{bucket}`")]
    NoSuchBucket {
        /// The URL read.
        url: String,
        /// The bucket.
        bucket: String,
    },
    /// The key does not exist in the bucket.
    #[error("{url}: no such key")]
    NoSuchKey {
        /// The URL read.
        url: String,
    },
    /// The server refused the credentials or the request.
    #[error("{url}: access refused: {detail}")]
    AccessRefused {
        /// The URL read.
        url: String,
        /// What the server said.
        detail: String,
    },
    /// The object ended before its announced size: a partial read.
    #[error("{url}: partial object: read {read} of {size} bytes")]
    Partial {
        /// The URL read.
        url: String,
        /// Bytes read.
        read: u64,
        /// The object's size.
        size: u64,
    },
    /// Any other failure of the store (the network, the server).
    #[error("{url}: {detail}")]
    Store {
        /// The URL read.
        url: String,
        /// What the store said.
        detail: String,
    },
    /// A prefix with no wire log below it.
    #[error("{url}: no recordings (*.wire.jsonl) under this prefix")]
    NoRecordings {
        /// The prefix.
        url: String,
    },
    /// A local file could not be opened.
    #[error("{path}: cannot open: {source}")]
    Open {
        /// The file.
        path: String,
        /// The cause.
        #[source]
        source: std::io::Error,
    },
    /// An `s3://` URL given to a reel built without the `s3` feature.
    #[error("{url}: this reel was built without the `s3` feature (object storage)")]
    NoObjectStore {
        /// The URL.
        url: String,
    },
    /// A local copy could not be written.
    #[error("{path}: cannot write the local copy: {source}")]
    Write {
        /// The file.
        path: String,
        /// The cause.
        #[source]
        source: std::io::Error,
    },
}
