//! Test support for reel and for applications built on it: a scripted Live server on a real
//! loopback socket.
//!
//! [`ScriptedServer`] listens on `127.0.0.1`, accepts any WebSocket upgrade on any path, and
//! hands each connection to the test as a [`ServerConn`] that plays the server's side by
//! hand: read what the client sent, answer, close with a code, or drop the connection.
//!
//! ```
//! use reel_actors::testing::ScriptedServer;
//! use reel_actors::transport::{Connector, LinkEvent, LinkFrame, LinkOptions, WebSocketConnector};
//! use serde_json::json;
//!
//! # #[tokio::main(flavor = "current_thread")] async fn main() {
//! let mut server = ScriptedServer::bind().await;
//! let request = server.endpoint().connect_request();
//! let options = LinkOptions::default();
//! let (link, mut conn) = tokio::join!(
//!     WebSocketConnector::new().connect(&request, &options),
//!     server.accept(),
//! );
//! let (mut sender, mut receiver) = link.unwrap();
//!
//! sender.send(LinkFrame::text(r#"{"setup":{}}"#)).await.unwrap();
//! assert_eq!(conn.recv_json().await, json!({"setup": {}}));
//!
//! conn.send_json(&json!({"setupComplete": {}})).await;
//! assert_eq!(
//!     receiver.recv().await,
//!     Some(LinkEvent::Frame(LinkFrame::text(r#"{"setupComplete":{}}"#)))
//! );
//! # }
//! ```
//!
//! The server uses no timers and runs on the test's own runtime, so tests may run under
//! `#[tokio::test(start_paused = true)]`: a loopback connect then takes no virtual time, and
//! timers (a connect or setup timeout) fire only when nothing is moving on the sockets. A
//! server on another runtime, thread or process would not be seen by tokio when it idles,
//! and the paused clock would jump to the next timer.

mod client_frame;

mod scripted_server;
mod server_conn;

pub use client_frame::ClientFrame;
/// The scripted Gemini REST server (from `reel-llm`'s `testing` feature).
pub use reel_llm::testing::gemini_standin;
pub use scripted_server::{SCRIPTED_API_KEY, SCRIPTED_BEARER_TOKEN, ScriptedServer};
pub use server_conn::ServerConn;
