//! Shared pieces of the tape server tests: a small recorded session, tape files, a plain
//! tokio-tungstenite client on a real loopback socket, and a tracing capture.

#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use futures_util::{SinkExt, StreamExt};
use reel_recorder::wire_log::{CloseMark, Direction, WireEntry};
use tokio::net::TcpStream;
use tokio_tungstenite::tungstenite::client::IntoClientRequest;
use tokio_tungstenite::tungstenite::protocol::Message;
use tokio_tungstenite::tungstenite::protocol::frame::CloseFrame;
use tokio_tungstenite::tungstenite::protocol::frame::coding::CloseCode;
use tokio_tungstenite::{MaybeTlsStream, WebSocketStream};

pub const T0: u64 = 1_718_000_000_000;

pub const LIVE_PATH: &str =
    "/ws/google.ai.generativelanguage.v1.GenerativeService.BidiGenerateContent";

pub const SETUP: &str = r#"{"setup":{"model":"models/gemini-live-2.5-flash","generationConfig":{"responseModalities":["TEXT"]},"tools":[{"functionDeclarations":[{"name":"get_weather","description":"Get weather","parameters":{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}}]}]}}"#;
pub const SETUP_COMPLETE: &str = r#"{"setupComplete":{}}"#;
pub const HELLO: &str = r#"{"clientContent":{"turns":[{"role":"user","parts":[{"text":"Hello"}]}],"turnComplete":true}}"#;
pub const HI: &str = r#"{"serverContent":{"modelTurn":{"parts":[{"text":"Hi "}]}}}"#;
pub const THERE: &str = r#"{"serverContent":{"modelTurn":{"parts":[{"text":"there!"}]}}}"#;
pub const TURN_COMPLETE: &str = r#"{"serverContent":{"turnComplete":true}}"#;
pub const WEATHER: &str = r#"{"clientContent":{"turns":[{"role":"user","parts":[{"text":"Weather in London?"}]}],"turnComplete":true}}"#;
pub const TOOL_CALL: &str = r#"{"toolCall":{"functionCalls":[{"id":"call-1","name":"get_weather","args":{"city":"London"}}]}}"#;
pub const TOOL_RESPONSE: &str = r#"{"toolResponse":{"functionResponses":[{"id":"call-1","name":"get_weather","response":{"temp_c":21}}]}}"#;
pub const ANSWER: &str =
    r#"{"serverContent":{"modelTurn":{"parts":[{"text":"It is 21 C in London."}]}}}"#;
pub const DONE: &str =
    r#"{"serverContent":{"turnComplete":true},"usageMetadata":{"totalTokenCount":42}}"#;

/// One line of a scripted session: a client frame and what the server answered.
pub struct Exchange {
    pub client: &'static str,
    pub server: Vec<&'static str>,
}

/// The session: setup, a text turn, a tool call and its answer.
pub fn session() -> Vec<Exchange> {
    vec![
        Exchange {
            client: SETUP,
            server: vec![SETUP_COMPLETE],
        },
        Exchange {
            client: HELLO,
            server: vec![HI, THERE, TURN_COMPLETE],
        },
        Exchange {
            client: WEATHER,
            server: vec![TOOL_CALL],
        },
        Exchange {
            client: TOOL_RESPONSE,
            server: vec![ANSWER, DONE],
        },
    ]
}

/// A wire log of `exchanges` on one connection, 100 ms between entries, ending with the
/// client's close (1000).
pub fn tape_of(exchanges: &[Exchange]) -> Vec<WireEntry> {
    let mut entries = Vec::new();
    let mut seq = 0u64;
    let mut push = |entries: &mut Vec<WireEntry>, dir, payload: &str| {
        seq += 1;
        entries.push(WireEntry::frame(
            seq,
            dir,
            T0 + seq * 100,
            payload.as_bytes().to_vec(),
            None,
            false,
        ));
    };
    for exchange in exchanges {
        push(&mut entries, Direction::Out, exchange.client);
        for frame in &exchange.server {
            push(&mut entries, Direction::In, frame);
        }
    }
    let seq = entries.len() as u64 + 1;
    entries.push(WireEntry::close_mark(
        seq,
        T0 + seq * 100,
        None,
        CloseMark {
            code: Some(1000),
            reason: None,
            client: true,
        },
    ));
    entries
}

/// The setup exchange, then the client says [`HELLO`] and the server closes with 1008
/// `Quota exceeded` (100 ms between entries).
pub fn quota_tape() -> Vec<WireEntry> {
    let mut entries = tape_of(&session()[..1]);
    entries.pop();
    entries.push(WireEntry::frame(
        3,
        Direction::Out,
        T0 + 300,
        HELLO.as_bytes().to_vec(),
        None,
        false,
    ));
    entries.push(WireEntry::close_mark(
        4,
        T0 + 400,
        None,
        CloseMark {
            code: Some(1008),
            reason: Some("Quota exceeded".into()),
            client: false,
        },
    ));
    entries
}

/// A fresh, empty directory for one test.
pub fn fresh_dir(name: &str) -> PathBuf {
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let n = NEXT.fetch_add(1, Ordering::Relaxed);
    let dir = std::env::temp_dir().join(format!("reel-server-{name}-{}-{n}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Writes `entries` as a wire log at `path`.
pub fn write_tape(path: &Path, entries: &[WireEntry]) {
    let mut text = String::new();
    for entry in entries {
        text.push_str(&serde_json::to_string(entry).unwrap());
        text.push('\n');
    }
    std::fs::write(path, text).unwrap();
}

/// What the client saw next.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Seen {
    Text(String),
    Binary(Vec<u8>),
    Close(Option<u16>, String),
    End,
}

/// A plain WebSocket client.
pub struct Client {
    ws: WebSocketStream<MaybeTlsStream<TcpStream>>,
}

impl Client {
    /// Connects to `url` (full URL, path included).
    pub async fn connect(url: &str) -> Client {
        Client::connect_with_headers(url, &[]).await
    }

    /// Connects to `url` with extra headers.
    pub async fn connect_with_headers(url: &str, headers: &[(&'static str, &str)]) -> Client {
        let mut request = url.into_client_request().unwrap();
        for (name, value) in headers {
            request.headers_mut().insert(*name, value.parse().unwrap());
        }
        let (ws, _) = tokio_tungstenite::connect_async(request).await.unwrap();
        Client { ws }
    }

    pub async fn send(&mut self, text: &str) {
        self.ws.send(Message::text(text)).await.unwrap();
    }

    pub async fn send_binary(&mut self, bytes: &[u8]) {
        self.ws.send(Message::binary(bytes.to_vec())).await.unwrap();
    }

    /// The next data frame or close (pings and pongs skipped).
    pub async fn next(&mut self) -> Seen {
        loop {
            return match self.ws.next().await {
                Some(Ok(Message::Text(text))) => Seen::Text(text.as_str().to_owned()),
                Some(Ok(Message::Binary(bytes))) => Seen::Binary(bytes.to_vec()),
                Some(Ok(Message::Close(frame))) => {
                    // Send the answering close tungstenite queued, as a real client would.
                    let _ = self.ws.flush().await;
                    match frame {
                        Some(frame) => {
                            Seen::Close(Some(frame.code.into()), frame.reason.as_str().to_owned())
                        }
                        None => Seen::Close(None, String::new()),
                    }
                }
                Some(Ok(_)) => continue,
                Some(Err(_)) | None => Seen::End,
            };
        }
    }

    /// The next `n` frames, which must be text.
    pub async fn texts(&mut self, n: usize) -> Vec<String> {
        let mut texts = Vec::new();
        for _ in 0..n {
            match self.next().await {
                Seen::Text(text) => texts.push(text),
                other => panic!("expected a text frame, got {other:?} after {texts:?}"),
            }
        }
        texts
    }

    /// Plays `exchanges`, asserting every server frame exactly.
    pub async fn play(&mut self, exchanges: &[Exchange]) {
        for exchange in exchanges {
            self.send(exchange.client).await;
            let got = self.texts(exchange.server.len()).await;
            assert_eq!(got, exchange.server, "answers to {}", exchange.client);
        }
    }

    /// Closes with 1000 and waits for the server's answer.
    pub async fn close(mut self) {
        let frame = CloseFrame {
            code: CloseCode::Normal,
            reason: "".into(),
        };
        self.ws.close(Some(frame)).await.unwrap();
        while let Some(Ok(_)) = self.ws.next().await {}
    }

    /// Drops the connection without a close frame.
    pub fn drop_connection(self) {
        drop(self);
    }
}

/// A tracing subscriber that keeps every event and span field as text, for checking that
/// nothing secret is logged.
#[derive(Clone, Default)]
pub struct LogCapture {
    lines: Arc<Mutex<Vec<String>>>,
    next_id: Arc<AtomicU64>,
}

impl LogCapture {
    pub fn lines(&self) -> Vec<String> {
        self.lines.lock().unwrap().clone()
    }
}

struct Fields(String);

impl tracing::field::Visit for Fields {
    fn record_debug(&mut self, field: &tracing::field::Field, value: &dyn std::fmt::Debug) {
        self.0.push_str(&format!(" {}={:?}", field.name(), value));
    }
}

impl tracing::Subscriber for LogCapture {
    fn enabled(&self, _: &tracing::Metadata<'_>) -> bool {
        true
    }

    fn new_span(&self, span: &tracing::span::Attributes<'_>) -> tracing::span::Id {
        let mut fields = Fields(format!("span {}", span.metadata().name()));
        span.record(&mut fields);
        self.lines.lock().unwrap().push(fields.0);
        tracing::span::Id::from_u64(self.next_id.fetch_add(1, Ordering::Relaxed) + 1)
    }

    fn record(&self, _: &tracing::span::Id, values: &tracing::span::Record<'_>) {
        let mut fields = Fields("record".to_owned());
        values.record(&mut fields);
        self.lines.lock().unwrap().push(fields.0);
    }

    fn record_follows_from(&self, _: &tracing::span::Id, _: &tracing::span::Id) {}

    fn event(&self, event: &tracing::Event<'_>) {
        let mut fields = Fields(format!("event {}", event.metadata().level()));
        event.record(&mut fields);
        self.lines.lock().unwrap().push(fields.0);
    }

    fn enter(&self, _: &tracing::span::Id) {}

    fn exit(&self, _: &tracing::span::Id) {}
}

/// The (direction, payload, close mark) of each entry: a recording compared without its
/// sequence numbers and times.
pub fn shape(entries: &[WireEntry]) -> Vec<(Direction, String, Option<CloseMark>)> {
    entries
        .iter()
        .map(|e| {
            (
                e.dir,
                String::from_utf8_lossy(&e.payload).into_owned(),
                e.close.clone(),
            )
        })
        .collect()
}
