//! Where recordings live and which of them one machine replays: `s3://` URLs in object
//! storage ([`ObjectUrl`](crate::recordings::ObjectUrl), and with the `s3` feature the
//! reader in `object`), the shard of a set that one machine of a CI farm takes
//! ([`Shard`](crate::recordings::Shard)), and [`open()`](crate::recordings::open), which reads one
//! recording file by its path or URL alike. `reel replay`, `reel show` and `reel studio`
//! read through these; so can any tool that walks a directory or a bucket of recordings.
//! Decision 0060.

mod error;
#[cfg(feature = "s3")]
pub mod object;
mod open;
mod shard;
mod url;

pub use error::RecordingsError;
pub use open::open;
pub use shard::{Shard, ShardError};
pub use url::ObjectUrl;

/// The name every wire log ends with.
pub const WIRE_LOG_SUFFIX: &str = ".wire.jsonl";

/// What may sit beside `X.wire.jsonl` and is read with it: `X` followed by one of these
/// (the journal, the resume snapshot, the tool cassette, resolved inputs, a kept verdict).
pub const SIDECAR_SUFFIXES: [&str; 5] = [
    ".journal.jsonl",
    ".resume.json",
    ".cassette.json",
    ".resolved.jsonl",
    ".replay.json",
];
