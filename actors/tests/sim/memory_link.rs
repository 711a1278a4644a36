//! An in-memory link: a `Connector` whose connections are pairs of channels, with the
//! server's end handed to the simulated model.
//!
//! No socket, no thread: under a paused current-thread runtime, a run is a deterministic
//! interleaving of tasks. Every `connect` opens a fresh pair and queues the server's end
//! for the model to accept, the way a listening socket would.

use std::task::{Context, Poll};

use futures_util::future::BoxFuture;
use reel_actors::transport::{
    Connector, LinkError, LinkEvent, LinkFrame, LinkHalves, LinkOptions, LinkReceiver, LinkSender,
    TrySent,
};
use reel_protocol::ConnectRequest;
use tokio::sync::mpsc;

/// What the client sends over an in-memory link.
#[derive(Debug)]
pub enum Upstream {
    /// A data frame.
    Frame(LinkFrame),
    /// The client's close frame.
    Close(u16, String),
}

/// The client's side: opens links whose server ends go to the model.
pub struct MemoryConnector {
    accepted: mpsc::UnboundedSender<MemoryServerConn>,
}

/// The server's end of one in-memory link.
pub struct MemoryServerConn {
    /// What the client sends.
    pub upstream: mpsc::UnboundedReceiver<Upstream>,
    /// What the client receives.
    pub downstream: mpsc::UnboundedSender<LinkEvent>,
}

/// A connector and the queue of the server ends of the links it opens.
pub fn pair() -> (MemoryConnector, mpsc::UnboundedReceiver<MemoryServerConn>) {
    let (accepted, queue) = mpsc::unbounded_channel();
    (MemoryConnector { accepted }, queue)
}

impl Connector for MemoryConnector {
    fn connect(
        &self,
        _request: &ConnectRequest,
        _options: &LinkOptions,
    ) -> BoxFuture<'static, Result<LinkHalves, LinkError>> {
        let (up_tx, up_rx) = mpsc::unbounded_channel();
        let (down_tx, down_rx) = mpsc::unbounded_channel();
        let server = MemoryServerConn {
            upstream: up_rx,
            downstream: down_tx,
        };
        let opened = self.accepted.send(server).is_ok();
        Box::pin(async move {
            if !opened {
                return Err(LinkError::Connect {
                    url: "memory://sim".to_owned(),
                    message: "the simulated model is gone".to_owned(),
                });
            }
            let sender: Box<dyn LinkSender> = Box::new(MemorySender {
                up: up_tx,
                tries: 0,
                held: None,
            });
            let receiver: Box<dyn LinkReceiver> = Box::new(MemoryReceiver {
                down: down_rx,
                ended: false,
            });
            Ok((sender, receiver))
        })
    }
}

/// The client's sending half. Its writes without waiting (`try_send`, the application's
/// writes in place, decision 0091) take each of their three outcomes in turn, so every run
/// goes through all of them: written; not taken (the writer's task must send it); taken
/// but held until `flush` (a socket's unfinished flush: the frame reaches the model only
/// once the writer flushes, so a writer that forgets, or writes past it, loses or reorders
/// a frame the checks see).
struct MemorySender {
    up: mpsc::UnboundedSender<Upstream>,
    tries: u64,
    held: Option<LinkFrame>,
}

impl MemorySender {
    fn deliver(&self, frame: LinkFrame) -> Result<(), LinkError> {
        self.up
            .send(Upstream::Frame(frame))
            .map_err(|_| LinkError::Closed)
    }
}

impl LinkSender for MemorySender {
    fn send(&mut self, frame: LinkFrame) -> BoxFuture<'_, Result<(), LinkError>> {
        let sent = self.deliver(frame);
        Box::pin(async move { sent })
    }

    fn try_send(&mut self, frame: LinkFrame) -> TrySent {
        self.tries += 1;
        match self.tries % 3 {
            0 => TrySent::WouldWait(frame),
            1 => match self.deliver(frame) {
                Ok(()) => TrySent::Sent,
                Err(error) => TrySent::Failed(error),
            },
            _ => {
                self.held = Some(frame);
                TrySent::Unflushed
            }
        }
    }

    fn flush(&mut self) -> BoxFuture<'_, Result<(), LinkError>> {
        let flushed = self.held.take().map_or(Ok(()), |frame| self.deliver(frame));
        Box::pin(async move { flushed })
    }

    fn close(&mut self, code: u16, reason: String) -> BoxFuture<'_, Result<(), LinkError>> {
        // Closing a link the peer already closed succeeds.
        let _ = self.up.send(Upstream::Close(code, reason));
        Box::pin(async { Ok(()) })
    }
}

struct MemoryReceiver {
    down: mpsc::UnboundedReceiver<LinkEvent>,
    ended: bool,
}

impl LinkReceiver for MemoryReceiver {
    fn poll_recv(&mut self, cx: &mut Context<'_>) -> Poll<Option<LinkEvent>> {
        if self.ended {
            return Poll::Ready(None);
        }
        let event = match std::task::ready!(self.down.poll_recv(cx)) {
            Some(event) => event,
            // The model let go of the link without a word: a dropped connection.
            None => LinkEvent::Failed(LinkError::Io {
                message: "the simulated model dropped the link".to_owned(),
            }),
        };
        if !matches!(event, LinkEvent::Frame(_)) {
            self.ended = true;
        }
        Poll::Ready(Some(event))
    }
}
