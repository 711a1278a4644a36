//! Writing a wire-log line by hand: the hot path of recording.
//!
//! Recording runs on the transport's path for every frame, so its line is written directly —
//! integers with `itoa`, the payload base64-encoded straight into the line (base64 never
//! needs JSON escaping) — rather than through serde, which builds the base64 `String` and
//! then scans it for characters to escape (about 60 % of recording's cost per frame; see
//! docs/BENCHMARKS.md). The bytes are exactly serde_json's for the same [`WireEntry`]; a test
//! holds the two together.

use crate::wire_log::{Direction, Source, WireEntry};

/// Appends `entry` as one JSON object (no newline) to `out`, byte-identical to
/// `serde_json::to_writer(out, entry)`.
///
/// ```
/// use reel_recorder::wire_line::write_entry;
/// use reel_recorder::wire_log::{Direction, WireEntry};
///
/// let entry = WireEntry::frame(2, Direction::In, 1_718_000_000_123, &b"{}"[..], Some(2), false);
/// let mut line = Vec::new();
/// write_entry(&entry, &mut line)?;
/// assert_eq!(line, serde_json::to_vec(&entry)?);
/// # Ok::<(), serde_json::Error>(())
/// ```
pub fn write_entry(entry: &WireEntry, out: &mut Vec<u8>) -> Result<(), serde_json::Error> {
    let mut numbers = itoa::Buffer::new();
    out.extend_from_slice(b"{\"seq\":");
    out.extend_from_slice(numbers.format(entry.seq).as_bytes());
    out.extend_from_slice(match entry.dir {
        Direction::In => b",\"dir\":\"in\",\"ts_ms\":",
        Direction::Out => b",\"dir\":\"out\",\"ts_ms\":",
    });
    out.extend_from_slice(numbers.format(entry.ts_ms).as_bytes());
    out.extend_from_slice(b",\"payload_b64\":\"");
    base64_simd::STANDARD.encode_append(&entry.payload, out);
    out.push(b'"');
    if let Some(conn) = entry.conn {
        out.extend_from_slice(b",\"conn\":");
        out.extend_from_slice(numbers.format(conn).as_bytes());
    }
    if entry.binary {
        out.extend_from_slice(b",\"binary\":true");
    }
    match entry.source {
        Some(Source::App) => out.extend_from_slice(b",\"source\":\"app\""),
        Some(Source::Runtime) => out.extend_from_slice(b",\"source\":\"runtime\""),
        None => {}
    }
    if let Some(dropped) = entry.dropped_before {
        out.extend_from_slice(b",\"dropped_before\":");
        out.extend_from_slice(numbers.format(dropped).as_bytes());
    }
    if let Some(close) = &entry.close {
        // Rare (once per connection) and carries free text: serde escapes it.
        out.extend_from_slice(b",\"close\":");
        serde_json::to_writer(&mut *out, close)?;
    }
    out.push(b'}');
    Ok(())
}

#[cfg(test)]
mod tests {
    use bytes::Bytes;

    use super::*;
    use crate::wire_log::CloseMark;

    fn entries() -> Vec<WireEntry> {
        let payloads: [&[u8]; 5] = [b"", b"{}", b"a", b"ab", &[0, 255, 62, 63, 250, 10, 34, 92]];
        let mut all = Vec::new();
        for (i, payload) in payloads.into_iter().enumerate() {
            for dir in [Direction::In, Direction::Out] {
                for conn in [None, Some(2), Some(u32::MAX)] {
                    for binary in [false, true] {
                        for (source, dropped_before) in [
                            (None, None),
                            (Some(Source::App), None),
                            (Some(Source::App), Some(21)),
                            (Some(Source::Runtime), Some(u64::MAX)),
                        ] {
                            all.push(WireEntry {
                                source,
                                dropped_before,
                                ..WireEntry::frame(
                                    i as u64 * 1_000_003,
                                    dir,
                                    u64::MAX - i as u64,
                                    Bytes::copy_from_slice(payload),
                                    conn,
                                    binary,
                                )
                            });
                        }
                    }
                }
            }
        }
        let closes = [
            CloseMark {
                code: Some(1000),
                reason: Some("go_away".into()),
                client: true,
            },
            CloseMark {
                code: None,
                reason: Some("a \"quoted\"\n\u{1} é reason".into()),
                client: false,
            },
            CloseMark {
                code: Some(4001),
                reason: None,
                client: false,
            },
        ];
        for (i, close) in closes.into_iter().enumerate() {
            all.push(WireEntry {
                close: Some(close),
                ..WireEntry::frame(i as u64, Direction::In, 7, Bytes::new(), Some(3), false)
            });
        }
        all
    }

    #[test]
    fn lines_are_byte_identical_to_serde() {
        for entry in entries() {
            let mut by_hand = b"prefix".to_vec();
            write_entry(&entry, &mut by_hand).unwrap();
            let mut expected = b"prefix".to_vec();
            serde_json::to_writer(&mut expected, &entry).unwrap();
            assert_eq!(
                String::from_utf8_lossy(&by_hand),
                String::from_utf8_lossy(&expected),
                "{entry:?}"
            );
        }
    }

    #[test]
    fn a_long_payload_round_trips() {
        let payload: Vec<u8> = (0..6_500u32).map(|i| (i * 31 % 251) as u8).collect();
        let entry = WireEntry::frame(9, Direction::Out, 1, payload, None, false);
        let mut line = Vec::new();
        write_entry(&entry, &mut line).unwrap();
        assert_eq!(serde_json::from_slice::<WireEntry>(&line).unwrap(), entry);
    }
}
