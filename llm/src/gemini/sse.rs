//! Server-sent events, read by hand from a byte stream that arrives in pieces of any size.
//!
//! Follows the event-stream rules of the HTML standard, keeping only what a
//! `streamGenerateContent?alt=sse` answer uses:
//!
//! - lines end with CR LF, LF or CR, and a CR LF split across two reads is one line end;
//! - a UTF-8 byte order mark at the very start is skipped;
//! - `data` lines are joined with `\n` (one leading space after the colon is dropped);
//! - a line starting with `:` is a comment; `event`, `id`, `retry` and unknown fields are
//!   read and ignored;
//! - an empty line ends the event, and an event with no `data` line is not an event;
//! - bytes are split into lines before they are decoded, so a character split across reads
//!   arrives whole (invalid UTF-8 is replaced, as the standard says).
//!
//! One rule is relaxed on purpose: at the end of the stream, an event that has data but no
//! closing empty line is still handed out (see [`SseParser::finish`]), so a final answer
//! chunk is never dropped silently; if it was cut short, parsing its JSON fails loudly.
//!
//! Why reel keeps its own parser rather than `sse-stream` (no per-event bound, a last
//! event without its blank line dropped, fields the standard ignores refused): decision
//! 0032, measured by the tests in `tests::beside_sse_stream`.

/// Collects lines into events. Feed it bytes as they come; it hands out each event's data
/// once the event is complete.
#[derive(Debug)]
pub(crate) struct SseParser {
    /// The line being read, without its end.
    line: Vec<u8>,
    /// The last byte fed was a CR, so an LF right after it ends nothing.
    after_cr: bool,
    /// Whether no line has ended yet (the byte order mark may only start the first).
    first_line: bool,
    /// The data of the event being read, each line followed by `\n`.
    data: String,
    /// The most bytes one event (its lines so far and its data) may hold.
    max_event_bytes: usize,
}

/// An event grew past the size limit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct EventTooLarge {
    /// The limit, in bytes.
    pub(crate) limit: usize,
}

const BYTE_ORDER_MARK: &[u8] = b"\xEF\xBB\xBF";

impl SseParser {
    /// A parser that refuses events larger than `max_event_bytes`.
    pub(crate) fn new(max_event_bytes: usize) -> Self {
        SseParser {
            line: Vec::new(),
            after_cr: false,
            first_line: true,
            data: String::new(),
            max_event_bytes,
        }
    }

    /// Reads `bytes` and appends the data of every event they complete to `events`.
    pub(crate) fn feed(
        &mut self,
        mut bytes: &[u8],
        events: &mut Vec<String>,
    ) -> Result<(), EventTooLarge> {
        while let Some(&first) = bytes.first() {
            if self.after_cr && first == b'\n' {
                self.after_cr = false;
                bytes = &bytes[1..];
                continue;
            }
            self.after_cr = false;
            match bytes.iter().position(|&b| b == b'\n' || b == b'\r') {
                Some(end) => {
                    self.line.extend_from_slice(&bytes[..end]);
                    self.check_size()?;
                    self.after_cr = bytes[end] == b'\r';
                    bytes = &bytes[end + 1..];
                    self.end_line(events);
                }
                None => {
                    self.line.extend_from_slice(bytes);
                    bytes = &[];
                }
            }
        }
        self.check_size()
    }

    /// The end of the stream: the data of an event left without its closing empty line, if
    /// it has any.
    pub(crate) fn finish(mut self) -> Option<String> {
        let mut events = Vec::new();
        if !self.line.is_empty() {
            self.end_line(&mut events);
        }
        self.dispatch(&mut events);
        events.pop()
    }

    fn check_size(&self) -> Result<(), EventTooLarge> {
        if self.line.len() + self.data.len() > self.max_event_bytes {
            return Err(EventTooLarge {
                limit: self.max_event_bytes,
            });
        }
        Ok(())
    }

    fn end_line(&mut self, events: &mut Vec<String>) {
        let mut line = std::mem::take(&mut self.line);
        if std::mem::replace(&mut self.first_line, false) && line.starts_with(BYTE_ORDER_MARK) {
            line.drain(..BYTE_ORDER_MARK.len());
        }
        if line.is_empty() {
            self.dispatch(events);
            return;
        }
        if line[0] == b':' {
            return;
        }
        let (field, value) = match line.iter().position(|&b| b == b':') {
            Some(colon) => {
                let value = &line[colon + 1..];
                (&line[..colon], value.strip_prefix(b" ").unwrap_or(value))
            }
            None => (&line[..], &[][..]),
        };
        if field == b"data" {
            self.data.push_str(&String::from_utf8_lossy(value));
            self.data.push('\n');
        }
    }

    fn dispatch(&mut self, events: &mut Vec<String>) {
        let mut data = std::mem::take(&mut self.data);
        if data.is_empty() {
            return;
        }
        data.pop();
        events.push(data);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse_in_pieces(pieces: &[&[u8]]) -> Vec<String> {
        let mut parser = SseParser::new(1 << 20);
        let mut events = Vec::new();
        for piece in pieces {
            parser.feed(piece, &mut events).unwrap();
        }
        events.extend(parser.finish());
        events
    }

    #[test]
    fn line_ends_of_every_kind_end_lines() {
        let stream = b"data: a\r\n\r\ndata: b\n\ndata: c\r\rdata: d\r\n\n";
        assert_eq!(parse_in_pieces(&[stream]), ["a", "b", "c", "d"]);
    }

    #[test]
    fn every_split_of_a_stream_gives_the_same_events() {
        let stream = "\u{FEFF}: keep-alive\r\ndata: {\"t\":\"é\"}\r\n\r\nevent: x\r\nid: 7\r\ndata:one\r\ndata:  two\r\nretry: 10\r\n\r\ndata\r\n\r\n";
        let expected = ["{\"t\":\"é\"}", "one\n two", ""];
        let bytes = stream.as_bytes();
        for cut in 0..=bytes.len() {
            assert_eq!(
                parse_in_pieces(&[&bytes[..cut], &bytes[cut..]]),
                expected,
                "cut at {cut}"
            );
        }
        let one_byte_each: Vec<&[u8]> = bytes.chunks(1).collect();
        assert_eq!(parse_in_pieces(&one_byte_each), expected);
    }

    #[test]
    fn a_cr_lf_split_across_reads_is_one_line_end() {
        assert_eq!(
            parse_in_pieces(&[b"data: a\r", b"\ndata: b\r", b"\n\r", b"\n"]),
            ["a\nb"]
        );
    }

    #[test]
    fn comments_and_events_without_data_are_not_events() {
        assert_eq!(
            parse_in_pieces(&[b":hello\n\nevent: ping\n\nid: 3\n\n"]),
            Vec::<String>::new()
        );
    }

    #[test]
    fn a_field_without_a_colon_has_an_empty_value() {
        assert_eq!(parse_in_pieces(&[b"data\ndata\n\n"]), ["\n"]);
    }

    #[test]
    fn only_one_leading_space_is_dropped_and_colons_in_values_stay() {
        assert_eq!(parse_in_pieces(&[b"data:   a: b\n\n"]), ["  a: b"]);
    }

    #[test]
    fn a_byte_order_mark_is_skipped_only_at_the_start() {
        let bom_later = "data: a\n\n\u{FEFF}data: b\n\n";
        assert_eq!(parse_in_pieces(&[bom_later.as_bytes()]), ["a"]);
    }

    #[test]
    fn an_unterminated_last_event_is_handed_out_at_the_end() {
        assert_eq!(parse_in_pieces(&[b"data: a\n\ndata: b"]), ["a", "b"]);
        assert_eq!(parse_in_pieces(&[b"data: a\n\ndata: b\n"]), ["a", "b"]);
        assert_eq!(parse_in_pieces(&[b"data: a\n\n: trailing"]), ["a"]);
    }

    #[test]
    fn a_character_split_across_reads_arrives_whole() {
        let bytes = "data: é\n\n".as_bytes();
        assert_eq!(parse_in_pieces(&[&bytes[..7], &bytes[7..]]), ["é"]);
    }

    #[test]
    fn invalid_utf8_is_replaced() {
        assert_eq!(parse_in_pieces(&[b"data: \xFF\n\n"]), ["\u{FFFD}"]);
    }

    #[test]
    fn an_event_over_the_limit_is_refused() {
        let mut parser = SseParser::new(8);
        let mut events = Vec::new();
        assert_eq!(parser.feed(b"data: 12", &mut events), Ok(()));
        assert_eq!(
            parser.feed(b"3", &mut events),
            Err(EventTooLarge { limit: 8 })
        );
        let mut parser = SseParser::new(8);
        assert_eq!(parser.feed(b"data:1\ndata:2\n", &mut events), Ok(()));
        assert_eq!(
            parser.feed(b"data:3\n", &mut events),
            Err(EventTooLarge { limit: 8 })
        );
        assert!(events.is_empty());
    }

    /// reel's parser beside `sse-stream` 0.2 (the library decision 0032 weighed), fed the
    /// same bytes: what each does with an event that does not end, and with a last event
    /// that has no closing blank line.
    mod beside_sse_stream {
        use std::convert::Infallible;

        use bytes::Bytes;
        use futures_util::{FutureExt, StreamExt, stream};
        use sse_stream::SseStream;

        use super::super::*;
        use super::parse_in_pieces;

        const CHUNK: usize = 64 << 10;

        /// `total` bytes of one `data:` line that never ends, in 64 KiB chunks.
        fn endless_event(total: usize) -> Vec<Bytes> {
            let mut first = b"data: ".to_vec();
            first.resize(CHUNK, b'a');
            let mut chunks = vec![Bytes::from(first)];
            chunks.extend(std::iter::repeat_n(
                Bytes::from(vec![b'a'; CHUNK]),
                total / CHUNK - 1,
            ));
            chunks
        }

        /// `sse-stream` over `chunks`, then a stream that never ends.
        fn sse_stream_of(
            chunks: Vec<Bytes>,
        ) -> impl futures_util::Stream<Item = Result<sse_stream::Sse, sse_stream::Error>> {
            let body =
                stream::iter(chunks.into_iter().map(Ok::<_, Infallible>)).chain(stream::pending());
            SseStream::from_bytes_stream(body)
        }

        /// The bytes fed before reel's parser refused the event, and its error.
        fn reel_until_refused(chunks: &[Bytes], limit: usize) -> (usize, EventTooLarge) {
            let mut parser = SseParser::new(limit);
            let mut events = Vec::new();
            let mut fed = 0;
            for chunk in chunks {
                fed += chunk.len();
                if let Err(refused) = parser.feed(chunk, &mut events) {
                    assert!(events.is_empty());
                    return (fed, refused);
                }
            }
            panic!("reel's parser took {fed} bytes of one event under a {limit}-byte limit");
        }

        #[test]
        fn an_endless_event_stops_reel_at_its_cap_and_sse_stream_holds_all_of_it() {
            let total = 64 << 20;
            let mut chunks = endless_event(total);
            // reel (here with a 1 MiB cap; the Gemini client's default is 64 MiB): refused
            // at the first chunk past the cap, having held at most the cap and one chunk.
            assert_eq!(
                reel_until_refused(&chunks, 1 << 20),
                ((1 << 20) + CHUNK, EventTooLarge { limit: 1 << 20 })
            );
            // sse-stream takes all 64 MiB of the one event without a word, and waits for
            // more.
            let mut endless = Box::pin(sse_stream_of(chunks.clone()));
            assert!(endless.next().now_or_never().is_none());
            drop(endless);
            // It was holding every byte: end the event and it hands all of them out.
            chunks.push(Bytes::from_static(b"\n\n"));
            let mut ended = Box::pin(sse_stream_of(chunks));
            let event = ended.next().now_or_never().flatten().unwrap().unwrap();
            assert_eq!(
                event.data.map(|data| data.len()),
                Some(total - "data: ".len())
            );
        }

        #[test]
        fn sse_stream_drops_a_last_event_without_its_blank_line_and_reel_keeps_it() {
            let bytes = Bytes::from_static(b"data: a\n\ndata: b");
            let body = stream::iter([Ok::<_, Infallible>(bytes.clone())]);
            let library: Vec<Option<String>> = SseStream::from_bytes_stream(body)
                .map(|event| event.unwrap().data)
                .collect::<Vec<_>>()
                .now_or_never()
                .unwrap();
            assert_eq!(library, [Some("a".to_owned())]);
            assert_eq!(parse_in_pieces(&[&bytes[..]]), ["a", "b"]);
        }

        #[test]
        fn sse_stream_refuses_fields_the_standard_ignores_or_reads() {
            // A field reel does not know, a field without a colon (the standard: the whole
            // line is the name, the value empty), a second `event` line (the standard:
            // the last one counts).
            for (stream, reel) in [
                (&b"foo: 1\ndata: a\n\n"[..], vec!["a"]),
                (b"data\n\n", vec![""]),
                (b"event: x\nevent: y\ndata: a\n\n", vec!["a"]),
            ] {
                let body = stream::iter([Ok::<_, Infallible>(Bytes::from_static(stream))]);
                let first = SseStream::from_bytes_stream(body)
                    .next()
                    .now_or_never()
                    .flatten()
                    .unwrap();
                assert!(first.is_err(), "{:?}", String::from_utf8_lossy(stream));
                assert_eq!(parse_in_pieces(&[stream]), reel);
            }
        }

        /// The memory each holds after `MiB` of one endless event: the process's resident
        /// size before and after (Linux). A measurement, not a check: run it alone,
        /// `cargo test -p reel-llm --lib -- --ignored --nocapture beside_sse_stream`.
        #[test]
        #[ignore = "a measurement: run alone, see its doc"]
        fn measure_the_memory_an_endless_event_takes() {
            fn resident_kib() -> usize {
                let status = std::fs::read_to_string("/proc/self/status").unwrap();
                status
                    .lines()
                    .find_map(|line| line.strip_prefix("VmRSS:"))
                    .and_then(|kib| kib.trim().trim_end_matches(" kB").trim().parse().ok())
                    .unwrap()
            }
            println!(
                "| input (one event, no blank line) | sse-stream 0.2.6 holds | reel (cap 64 MiB) holds |"
            );
            println!("|---|---|---|");
            for mib in [16usize, 64, 256] {
                let chunks = endless_event(mib << 20);
                let before = resident_kib();
                let mut endless = Box::pin(sse_stream_of(chunks.clone()));
                assert!(endless.next().now_or_never().is_none());
                let library = resident_kib().saturating_sub(before);
                drop(endless);
                let before = resident_kib();
                let mut parser = SseParser::new(64 << 20);
                let mut events = Vec::new();
                let mut refused = None;
                for chunk in &chunks {
                    if let Err(error) = parser.feed(chunk, &mut events) {
                        refused = Some(error);
                        break;
                    }
                }
                let reel = resident_kib().saturating_sub(before);
                drop(parser);
                let outcome = if refused.is_some() {
                    ", then EventTooLarge"
                } else {
                    ""
                };
                println!(
                    "| {mib} MiB | {:.1} MiB | {:.1} MiB{outcome} |",
                    library as f64 / 1024.0,
                    reel as f64 / 1024.0
                );
            }
        }
    }
}
