//! A `streamGenerateContent?alt=sse` body as an [`LlmStream`]: one chunk per event, in
//! order, ending at the first error.

use std::collections::VecDeque;

use reel_protocol::Secret;

use super::answer::{Origin, read_chunk};
use super::client::Body;
use super::sse::SseParser;
use crate::{LlmChunk, LlmError, LlmStream};

/// Reads `body` (an answer that came with `status`) as server-sent events; each event's
/// data is one `GenerateContentResponse`. Events larger than `max_event_bytes` are refused.
pub(crate) fn event_stream(
    body: Body,
    status: u16,
    secret: Option<Secret>,
    max_event_bytes: usize,
) -> LlmStream {
    let events = Events {
        body,
        status,
        secret,
        parser: Some(SseParser::new(max_event_bytes)),
        ready: VecDeque::new(),
        deferred: None,
        handed_out: 0,
        failed: false,
    };
    Box::pin(futures_util::stream::unfold(
        events,
        |mut events| async move {
            let item = events.next().await?;
            Some((item, events))
        },
    ))
}

struct Events {
    body: Body,
    status: u16,
    secret: Option<Secret>,
    /// `None` once the body has ended or can no longer be read.
    parser: Option<SseParser>,
    /// The data of events read but not handed out yet.
    ready: VecDeque<String>,
    /// An error found while reading, handed out after the events completed before it.
    deferred: Option<LlmError>,
    /// How many events have been handed out.
    handed_out: usize,
    /// An error was handed out: the stream is over.
    failed: bool,
}

impl Events {
    async fn next(&mut self) -> Option<Result<LlmChunk, LlmError>> {
        if self.failed {
            return None;
        }
        let item = self.next_item().await;
        self.failed = matches!(item, Some(Err(_)));
        item
    }

    async fn next_item(&mut self) -> Option<Result<LlmChunk, LlmError>> {
        loop {
            if let Some(data) = self.ready.pop_front() {
                self.handed_out += 1;
                let number = self.handed_out;
                let origin = Origin {
                    url: self.body.url(),
                    status: self.status,
                    secret: self.secret.as_ref().map(Secret::expose),
                };
                return Some(read_chunk(data.as_bytes(), origin, || {
                    format!("event {number} of the stream")
                }));
            }
            if let Some(error) = self.deferred.take() {
                return Some(Err(error));
            }
            self.read_more().await?;
        }
    }

    /// Reads the next bytes of the body and queues the events they complete; at the end of
    /// the body, or on an error, drops the parser (noting the error in `deferred`). `None`
    /// once the parser is gone: there is nothing more to read.
    async fn read_more(&mut self) -> Option<()> {
        let parser = self.parser.as_mut()?;
        match self.body.next().await {
            Ok(Some(bytes)) => {
                let mut complete = Vec::new();
                let fed = parser.feed(&bytes, &mut complete);
                self.ready.extend(complete);
                if let Err(too_large) = fed {
                    self.parser = None;
                    self.deferred = Some(LlmError::Decode {
                        context: format!(
                            "event {} of the stream",
                            self.handed_out + self.ready.len() + 1
                        ),
                        reason: format!("it is larger than {} bytes", too_large.limit),
                    });
                }
            }
            Ok(None) => {
                let last = self.parser.take().and_then(SseParser::finish);
                if last.is_none() && self.handed_out == 0 && self.ready.is_empty() {
                    self.deferred = Some(LlmError::Decode {
                        context: "the stream".into(),
                        reason: "it ended without an event".into(),
                    });
                }
                self.ready.extend(last);
            }
            Err(error) => {
                self.parser = None;
                self.deferred = Some(error);
            }
        }
        Some(())
    }
}
