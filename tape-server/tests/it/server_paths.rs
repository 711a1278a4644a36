//! Paths and credentials: the Live paths of both APIs for any version (leading slash doubled
//! or not) are served, anything else gets HTTP 404 with a clear body; credentials in the
//! query or headers are accepted and never kept; nothing secret reaches a log line.

use crate::server_support;

use reel_actors::transport::{Connector, LinkError, LinkOptions, WebSocketConnector};
use reel_protocol::ApiEndpoint;
use reel_tape_server::{ConnectionReport, Outcome, TapeLibrary, TapeServer};
use server_support::*;
use tokio_tungstenite::tungstenite::Error as WsError;

async fn server() -> reel_tape_server::RunningServer {
    TapeServer::replay(TapeLibrary::new().with_entries("t", tape_of(&session())))
        .start()
        .await
        .unwrap()
}

#[tokio::test]
async fn a_wrong_path_gets_404_with_a_body_naming_the_served_paths() {
    let mut server = server().await;
    let url = format!("{}/ws/nope?key=AIzaSECRET", server.base_url());
    let Err(WsError::Http(response)) = tokio_tungstenite::connect_async(url.as_str()).await else {
        panic!("the upgrade was not refused");
    };
    assert_eq!(response.status().as_u16(), 404);
    let body = String::from_utf8(response.body().clone().unwrap()).unwrap();
    assert_eq!(
        body,
        "reel serve: no Live endpoint at /ws/nope\n\
         served paths (any API version, leading slashes doubled or not):\n  \
         /ws/google.ai.generativelanguage.<version>.GenerativeService.BidiGenerateContent\n  \
         /ws/google.ai.generativelanguage.<version>.GenerativeService.BidiGenerateContentConstrained\n  \
         /ws/google.cloud.aiplatform.<version>.LlmBidiService/BidiGenerateContent\n  \
         POST /<version>/models/<model>:generateContent, :streamGenerateContent (and the Vertex AI paths)\n  \
         GET /healthz\n"
    );
    assert_eq!(
        server.next_report().await.unwrap(),
        ConnectionReport {
            conn: 1,
            path: Some("/ws/nope?key=REDACTED".into()),
            test: None,
            outcome: Outcome::NotFound,
        }
    );

    // reel's own connector reports the refusal with its status.
    let request = ApiEndpoint::google_ai("AIzaSECRET")
        .with_base_url(&format!("{}/extra", server.base_url()))
        .connect_request();
    let error = WebSocketConnector::new()
        .connect(&request, &LinkOptions::default())
        .await
        .err()
        .unwrap();
    match error {
        LinkError::Handshake {
            status: Some(404),
            message,
            ..
        } => assert!(
            message.starts_with("HTTP 404 Not Found: reel serve: no Live endpoint at /extra/ws/"),
            "{message}"
        ),
        other => panic!("{other:?}"),
    }
}

#[tokio::test]
async fn every_live_path_is_served_and_credentials_are_never_kept() {
    let mut server = server().await;
    let base = server.base_url();
    let cases = [
        // The JS SDK: doubled slash, key in the query.
        (
            format!(
                "{base}//ws/google.ai.generativelanguage.v1.GenerativeService.BidiGenerateContent?key=AIzaSECRET"
            ),
            vec![],
            "//ws/google.ai.generativelanguage.v1.GenerativeService.BidiGenerateContent?key=REDACTED",
        ),
        // The Python SDK: doubled slash, key in a header.
        (
            format!(
                "{base}//ws/google.ai.generativelanguage.v1beta.GenerativeService.BidiGenerateContent"
            ),
            vec![("x-goog-api-key", "AIzaSECRET")],
            "//ws/google.ai.generativelanguage.v1beta.GenerativeService.BidiGenerateContent",
        ),
        // Ephemeral tokens.
        (
            format!(
                "{base}/ws/google.ai.generativelanguage.v1alpha.GenerativeService.BidiGenerateContentConstrained?access_token=auth_tokens/SECRET"
            ),
            vec![],
            "/ws/google.ai.generativelanguage.v1alpha.GenerativeService.BidiGenerateContentConstrained?access_token=REDACTED",
        ),
        // Vertex AI, bearer token.
        (
            format!("{base}/ws/google.cloud.aiplatform.v1.LlmBidiService/BidiGenerateContent"),
            vec![("authorization", "Bearer ya29.SECRET")],
            "/ws/google.cloud.aiplatform.v1.LlmBidiService/BidiGenerateContent",
        ),
    ];
    for (index, (url, headers, redacted)) in cases.into_iter().enumerate() {
        let mut client = Client::connect_with_headers(&url, &headers).await;
        client.play(&session()).await;
        client.close().await;
        let report = server.next_report().await.unwrap();
        assert_eq!(report.conn, index as u64 + 1);
        assert_eq!(report.path.as_deref(), Some(redacted));
        assert!(
            matches!(report.outcome, Outcome::Replayed { frames: 4, .. }),
            "{report:?}"
        );
        assert!(!format!("{report:?}").contains("SECRET"));
    }
}

/// Sends `request` on a raw socket and reads the whole answer.
async fn raw_http(addr: std::net::SocketAddr, request: &str) -> String {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let mut tcp = tokio::net::TcpStream::connect(addr).await.unwrap();
    tcp.write_all(request.as_bytes()).await.unwrap();
    let mut answer = String::new();
    tcp.read_to_string(&mut answer).await.unwrap();
    answer
}

#[tokio::test]
async fn plain_http_gets_404_or_426_too() {
    let mut server = server().await;
    let answer = raw_http(
        server.local_addr(),
        "GET /v1beta/models?key=AIzaSECRET HTTP/1.1\r\nHost: localhost\r\n\r\n",
    )
    .await;
    let body = "reel serve: no Live endpoint at /v1beta/models\n\
         served paths (any API version, leading slashes doubled or not):\n  \
         /ws/google.ai.generativelanguage.<version>.GenerativeService.BidiGenerateContent\n  \
         /ws/google.ai.generativelanguage.<version>.GenerativeService.BidiGenerateContentConstrained\n  \
         /ws/google.cloud.aiplatform.<version>.LlmBidiService/BidiGenerateContent\n  \
         POST /<version>/models/<model>:generateContent, :streamGenerateContent (and the Vertex AI paths)\n  \
         GET /healthz\n";
    assert_eq!(
        answer,
        format!(
            "HTTP/1.1 404 Not Found\r\ncontent-type: text/plain; charset=utf-8\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
            body.len()
        )
    );
    assert_eq!(
        server.next_report().await.unwrap(),
        ConnectionReport {
            conn: 1,
            path: Some("/v1beta/models?key=REDACTED".into()),
            test: None,
            outcome: Outcome::NotFound,
        }
    );

    let answer = raw_http(
        server.local_addr(),
        &format!("GET {LIVE_PATH} HTTP/1.1\r\nHost: localhost\r\n\r\n"),
    )
    .await;
    let body = format!(
        "reel serve: {LIVE_PATH} is a Live WebSocket endpoint; connect with a WebSocket client\n"
    );
    assert_eq!(
        answer,
        format!(
            "HTTP/1.1 426 Upgrade Required\r\ncontent-type: text/plain; charset=utf-8\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
            body.len()
        )
    );
    assert_eq!(
        server.next_report().await.unwrap().outcome,
        Outcome::NotWebSocket
    );
}
