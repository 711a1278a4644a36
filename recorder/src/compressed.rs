//! Compressed recordings: a wire log, journal, trace or cassette kept as gzip (`.gz`) or
//! Zstandard (`.zst`) is read as if it were not.
//!
//! The compression is told by the stream's first bytes (gzip `1f 8b`, Zstandard
//! `28 b5 2f fd`), not by the file's name, so a pipe works as well as a file and a
//! misnamed file is still read right. Both decoders are pure Rust (`flate2` on
//! `miniz_oxide`, `ruzstd`): no C library in the build. A gzip file of several members (as
//! `cat a.gz b.gz` makes) is read whole; a Zstandard stream is read frame by frame.
//!
//! ```
//! use std::io::Read;
//! use reel_recorder::compressed::{Compression, decompressing, sniff};
//!
//! assert_eq!(sniff(&[0x1f, 0x8b, 8, 0]), Some(Compression::Gzip));
//! assert_eq!(sniff(b"{\"seq\""), None);
//! // Plain text passes through, every byte of it.
//! let mut text = String::new();
//! decompressing(Box::new(&b"{\"seq\":1}\n"[..]))?.read_to_string(&mut text)?;
//! assert_eq!(text, "{\"seq\":1}\n");
//! # Ok::<(), std::io::Error>(())
//! ```

use std::fs::File;
use std::io::{self, Cursor, Read};
use std::path::Path;

/// A compression reel reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Compression {
    /// gzip (RFC 1952).
    Gzip,
    /// Zstandard (RFC 8878).
    Zstd,
}

/// The suffixes compressed recordings end with, after the recording's own (`.wire.jsonl.gz`).
pub const COMPRESSED_SUFFIXES: [&str; 2] = [".gz", ".zst"];

/// The compression the stream starting with `head` is in, if any.
pub fn sniff(head: &[u8]) -> Option<Compression> {
    if head.starts_with(&[0x1f, 0x8b]) {
        Some(Compression::Gzip)
    } else if head.starts_with(&[0x28, 0xb5, 0x2f, 0xfd]) {
        Some(Compression::Zstd)
    } else {
        None
    }
}

/// `source`, decompressed when its first bytes say it is compressed, else as it is (every
/// byte of it, the ones looked at included).
pub fn decompressing<'a>(
    mut source: Box<dyn Read + Send + 'a>,
) -> io::Result<Box<dyn Read + Send + 'a>> {
    let mut head = Vec::with_capacity(4);
    (&mut source).take(4).read_to_end(&mut head)?;
    let compression = sniff(&head);
    let whole = Cursor::new(head).chain(source);
    Ok(match compression {
        None => Box::new(whole),
        Some(Compression::Gzip) => Box::new(flate2::read::MultiGzDecoder::new(whole)),
        Some(Compression::Zstd) => Box::new(ZstdFrames::new(Box::new(whole))),
    })
}

/// Opens the file at `path`, decompressing it when it is compressed.
pub fn open(path: impl AsRef<Path>) -> io::Result<Box<dyn Read + Send>> {
    decompressing(Box::new(File::open(path)?))
}

/// The whole file at `path` as text, decompressed when it is compressed.
pub fn read_to_string(path: impl AsRef<Path>) -> io::Result<String> {
    let mut text = String::new();
    open(path)?.read_to_string(&mut text)?;
    Ok(text)
}

/// `name` without a compression suffix: `weather.wire.jsonl` for `weather.wire.jsonl.gz`.
pub fn without_compression_suffix(name: &str) -> &str {
    COMPRESSED_SUFFIXES
        .iter()
        .find_map(|suffix| name.strip_suffix(suffix))
        .unwrap_or(name)
}

/// A boxed byte source.
type Source<'a> = Box<dyn Read + Send + 'a>;

/// A Zstandard stream of one or more frames, decoded frame after frame.
struct ZstdFrames<'a> {
    /// The stream before the next frame, when no frame is being read.
    source: Option<Source<'a>>,
    /// The frame being read.
    frame: Option<ruzstd::decoding::StreamingDecoder<Source<'a>, ruzstd::decoding::FrameDecoder>>,
}

impl<'a> ZstdFrames<'a> {
    fn new(source: Source<'a>) -> Self {
        ZstdFrames {
            source: Some(source),
            frame: None,
        }
    }
}

impl Read for ZstdFrames<'_> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if buf.is_empty() {
            return Ok(0);
        }
        loop {
            if let Some(frame) = &mut self.frame {
                let n = frame.read(buf)?;
                if n > 0 {
                    return Ok(n);
                }
                // This frame is done: on to the next one, if the stream holds more.
                self.source = self.frame.take().map(|frame| frame.into_inner());
            }
            let Some(mut source) = self.source.take() else {
                return Ok(0);
            };
            let mut magic = Vec::with_capacity(4);
            (&mut source).take(4).read_to_end(&mut magic)?;
            if magic.is_empty() {
                return Ok(0);
            }
            let rest: Source<'_> = Box::new(Cursor::new(magic).chain(source));
            let frame = ruzstd::decoding::StreamingDecoder::new(rest).map_err(|error| {
                io::Error::new(
                    io::ErrorKind::InvalidData,
                    format!("not a Zstandard frame: {error}"),
                )
            })?;
            self.frame = Some(frame);
        }
    }
}
