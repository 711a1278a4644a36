//! The ways to start: `connect_vertex` and `connect_google_ai` open the platform's URL
//! with its credential, and `session_resume_from` presents the handle in the setup.
//!
//! The real hosts are never reached: a connector records what the session asked to open
//! and opens the same path, with the same credential, on a loopback server instead.

use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex};

use reel_actors::testing::ScriptedServer;
use reel_actors::transport::{Connector, LinkError, LinkHalves, LinkOptions, WebSocketConnector};
use reel_fluent::Live;
use reel_protocol::{ApiEndpoint, ConnectRequest, FrameKind};
use serde_json::json;

/// The requests a [`Redirect`] was asked to open: each redacted URL with its headers.
type Asked = Arc<Mutex<Vec<(String, Vec<(String, String)>)>>>;

/// Records each request (its redacted URL and its headers, values shown) and opens
/// `loopback` instead.
struct Redirect {
    loopback: ConnectRequest,
    asked: Asked,
}

impl Connector for Redirect {
    fn connect(
        &self,
        request: &ConnectRequest,
        options: &LinkOptions,
    ) -> Pin<Box<dyn Future<Output = Result<LinkHalves, LinkError>> + Send>> {
        let headers = request
            .headers
            .iter()
            .map(|(name, value)| (name.clone(), value.expose().to_owned()))
            .collect();
        self.asked
            .lock()
            .unwrap()
            .push((request.redacted_url(), headers));
        WebSocketConnector::new().connect(&self.loopback, options)
    }
}

fn redirect(loopback: &ApiEndpoint) -> (Arc<Redirect>, Asked) {
    let asked = Asked::default();
    let connector = Arc::new(Redirect {
        loopback: loopback.connect_request(),
        asked: Arc::clone(&asked),
    });
    (connector, asked)
}

#[tokio::test]
async fn connect_vertex_opens_the_regional_host_with_a_bearer_token() {
    let mut server = ScriptedServer::bind().await;
    let loopback =
        ApiEndpoint::vertex("reel-test", "europe-west4", "token-1").with_base_url(&server.url());
    let (connector, asked) = redirect(&loopback);
    let builder = Live::builder()
        .model("gemini-live-2.5-flash")
        .text_only()
        .session_resume_from("handle-7")
        .customize(move |session| session.connector(connector.clone()));
    let script = async {
        let mut conn = server.accept().await;
        let setup = conn.recv().await.unwrap();
        conn.send_json(&json!({"setupComplete": {}})).await;
        (conn, setup)
    };
    let (handle, (mut conn, setup)) = tokio::join!(
        builder.connect_vertex("reel-test", "europe-west4", "token-1"),
        script
    );
    let handle = handle.unwrap();
    assert_eq!(
        *asked.lock().unwrap(),
        [(
            "wss://europe-west4-aiplatform.googleapis.com/ws/google.cloud.aiplatform.v1beta1.LlmBidiService/BidiGenerateContent".to_owned(),
            vec![("Authorization".to_owned(), "Bearer token-1".to_owned())]
        )]
    );
    assert_eq!(conn.header("authorization"), Some("Bearer token-1"));
    // Vertex AI: binary frames, the model as a resource name, the resumption handle.
    assert_eq!(setup.kind, FrameKind::Binary);
    assert_eq!(
        setup.json().unwrap(),
        json!({"setup": {
            "model": "projects/reel-test/locations/europe-west4/publishers/google/models/gemini-live-2.5-flash",
            "generationConfig": {"responseModalities": ["TEXT"]},
            "sessionResumption": {"handle": "handle-7"}
        }})
    );
    let (end, _) = tokio::join!(handle.disconnect(), conn.expect_closed());
    assert_eq!(end.reason, "closed with code 1000: client disconnect");
}

#[tokio::test]
async fn connect_google_ai_opens_the_api_with_the_key_and_never_shows_it() {
    let mut server = ScriptedServer::bind().await;
    let loopback = ApiEndpoint::google_ai("key-1").with_base_url(&server.url());
    let (connector, asked) = redirect(&loopback);
    let builder = Live::builder()
        .text_only()
        .customize(move |session| session.connector(connector.clone()));
    let script = async {
        let mut conn = server.accept().await;
        conn.recv().await.unwrap();
        conn.send_json(&json!({"setupComplete": {}})).await;
        conn
    };
    let (handle, mut conn) = tokio::join!(builder.connect_google_ai("key-1"), script);
    let handle = handle.unwrap();
    assert_eq!(
        *asked.lock().unwrap(),
        [(
            "wss://generativelanguage.googleapis.com/ws/google.ai.generativelanguage.v1.GenerativeService.BidiGenerateContent?key=REDACTED".to_owned(),
            vec![]
        )]
    );
    assert_eq!(conn.query_param("key"), Some("key-1"));
    let (end, _) = tokio::join!(handle.disconnect(), conn.expect_closed());
    assert_eq!(end.reason, "closed with code 1000: client disconnect");
}
