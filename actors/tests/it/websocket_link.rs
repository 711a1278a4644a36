//! The WebSocket link against the scripted loopback server (and a few raw TCP peers), on
//! real sockets. Every scenario runs twice: on live time and under paused time.

use std::time::Duration;

use bytes::Bytes;
use reel_actors::testing::{ClientFrame, SCRIPTED_API_KEY, SCRIPTED_BEARER_TOKEN, ScriptedServer};
use reel_actors::transport::{
    CONNECTION_REFUSED, CONNECTION_RESET, CertificateDer, Connector, DROPPED_WITHOUT_CLOSE,
    LinkError, LinkEvent, LinkFrame, LinkOptions, LinkReceiver, LinkSender, PrivateKeyDer,
    TlsSetupError, WebSocketConnector,
};
use reel_protocol::{ApiEndpoint, ClientMessageKind, FrameKind};
use serde_json::json;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpSocket};
use tokio::time::Instant;

/// Runs `$body` (an async block) once on live time and once under paused time.
macro_rules! both_clocks {
    ($name:ident, $body:expr) => {
        mod $name {
            use super::*;

            #[tokio::test]
            async fn live_time() {
                $body.await
            }

            #[tokio::test(start_paused = true)]
            async fn paused_time() {
                $body.await
            }
        }
    };
}

type Sender = Box<dyn LinkSender>;
type Receiver = Box<dyn LinkReceiver>;

const GOOGLE_AI_PATH: &str =
    "/ws/google.ai.generativelanguage.v1.GenerativeService.BidiGenerateContent";
const VERTEX_PATH: &str = "/ws/google.cloud.aiplatform.v1beta1.LlmBidiService/BidiGenerateContent";

/// Connects `connector` to `endpoint` on `server` and accepts the connection there.
async fn open_with(
    server: &mut ScriptedServer,
    connector: &WebSocketConnector,
    endpoint: &ApiEndpoint,
    options: LinkOptions,
) -> (Sender, Receiver, reel_actors::testing::ServerConn) {
    let request = endpoint.connect_request();
    let (link, conn) = tokio::join!(connector.connect(&request, &options), server.accept());
    let (sender, receiver) = link.unwrap();
    (sender, receiver, conn)
}

async fn open(
    server: &mut ScriptedServer,
    options: LinkOptions,
) -> (Sender, Receiver, reel_actors::testing::ServerConn) {
    let endpoint = server.endpoint();
    open_with(server, &WebSocketConnector::new(), &endpoint, options).await
}

fn frame(event: Option<LinkEvent>) -> LinkFrame {
    match event {
        Some(LinkEvent::Frame(frame)) => frame,
        other => panic!("expected a frame, got {other:?}"),
    }
}

fn self_signed() -> (CertificateDer<'static>, PrivateKeyDer<'static>) {
    let certified = rcgen::generate_simple_self_signed(vec!["127.0.0.1".to_owned()]).unwrap();
    let key = PrivateKeyDer::try_from(certified.signing_key.serialize_der()).unwrap();
    (certified.cert.der().clone(), key)
}

both_clocks!(text_and_binary_frames_cross_both_ways, async {
    let mut server = ScriptedServer::bind().await;
    let (mut sender, mut receiver, mut conn) = open(&mut server, LinkOptions::default()).await;

    let setup = r#"{"setup":{"model":"models/gemini-live-2.5-flash"}}"#;
    sender.send(LinkFrame::text(setup)).await.unwrap();
    sender
        .send(LinkFrame::binary(vec![0u8, 1, 2, 255]))
        .await
        .unwrap();
    let text = conn.recv().await.unwrap();
    assert_eq!(
        text,
        ClientFrame {
            kind: FrameKind::Text,
            bytes: Bytes::from(setup)
        }
    );
    assert_eq!(
        text.json().unwrap(),
        json!({"setup": {"model": "models/gemini-live-2.5-flash"}})
    );
    assert_eq!(
        text.message().unwrap().kind(),
        Some(ClientMessageKind::Setup)
    );
    assert_eq!(
        conn.recv().await,
        Some(ClientFrame {
            kind: FrameKind::Binary,
            bytes: Bytes::from_static(&[0, 1, 2, 255])
        })
    );

    conn.send_json(&json!({"setupComplete": {}})).await;
    conn.send_binary(&b"{\"vertex\":true}"[..]).await;
    conn.send_text("plain").await;
    assert_eq!(
        frame(receiver.recv().await),
        LinkFrame::text(r#"{"setupComplete":{}}"#)
    );
    assert_eq!(
        frame(receiver.recv().await),
        LinkFrame::binary(&b"{\"vertex\":true}"[..])
    );
    assert_eq!(frame(receiver.recv().await), LinkFrame::text("plain"));
});

both_clocks!(many_frames_keep_their_order_both_ways, async {
    let mut server = ScriptedServer::bind().await;
    let (mut sender, mut receiver, mut conn) = open(&mut server, LinkOptions::default()).await;
    for n in 0..200 {
        sender.send(LinkFrame::text(format!("c{n}"))).await.unwrap();
        conn.send_binary(format!("s{n}").into_bytes()).await;
    }
    for n in 0..200 {
        assert_eq!(conn.recv().await.unwrap().text(), Some(&*format!("c{n}")));
        assert_eq!(
            frame(receiver.recv().await),
            LinkFrame::binary(format!("s{n}").into_bytes())
        );
    }
});

both_clocks!(the_api_key_arrives_in_the_query, async {
    let mut server = ScriptedServer::bind().await;
    let (_sender, _receiver, conn) = open(&mut server, LinkOptions::default()).await;
    assert_eq!(conn.path(), GOOGLE_AI_PATH);
    assert_eq!(conn.query(), Some("key=reel-scripted-key"));
    assert_eq!(conn.query_param("key"), Some(SCRIPTED_API_KEY));
    assert_eq!(conn.header("authorization"), None);
});

both_clocks!(the_bearer_token_arrives_in_a_header, async {
    let mut server = ScriptedServer::bind().await;
    let endpoint = server.vertex_endpoint();
    let (_sender, _receiver, conn) = open_with(
        &mut server,
        &WebSocketConnector::new(),
        &endpoint,
        LinkOptions::default(),
    )
    .await;
    assert_eq!(conn.path(), VERTEX_PATH);
    assert_eq!(conn.query(), None);
    let expected = format!("Bearer {SCRIPTED_BEARER_TOKEN}");
    assert_eq!(conn.header("Authorization"), Some(expected.as_str()));
    assert!(
        conn.headers()
            .iter()
            .any(|(name, value)| name == "authorization" && *value == expected)
    );
});

both_clocks!(
    a_server_close_reaches_the_client_with_code_and_reason,
    async {
        let mut server = ScriptedServer::bind().await;
        let (mut sender, mut receiver, mut conn) = open(&mut server, LinkOptions::default()).await;
        conn.close(1007, "bad setup").await;
        assert_eq!(
            receiver.recv().await,
            Some(LinkEvent::Closed {
                code: Some(1007),
                reason: Some("bad setup".to_owned())
            })
        );
        assert_eq!(receiver.recv().await, None);
        assert_eq!(receiver.recv().await, None);
        // The client answered the close with the same code, as RFC 6455 asks.
        assert_eq!(
            conn.expect_closed().await,
            Some((1007, "bad setup".to_owned()))
        );
        assert_eq!(
            sender.send(LinkFrame::text("too late")).await,
            Err(LinkError::Closed)
        );
        assert_eq!(sender.close(1000, String::new()).await, Ok(()));
    }
);

both_clocks!(a_close_without_reason_has_only_a_code, async {
    let mut server = ScriptedServer::bind().await;
    let (_sender, mut receiver, mut conn) = open(&mut server, LinkOptions::default()).await;
    conn.close(1000, "").await;
    assert_eq!(
        receiver.recv().await,
        Some(LinkEvent::Closed {
            code: Some(1000),
            reason: None
        })
    );
});

both_clocks!(a_client_close_reaches_the_server_and_is_answered, async {
    let mut server = ScriptedServer::bind().await;
    let (mut sender, mut receiver, mut conn) = open(&mut server, LinkOptions::default()).await;
    sender.send(LinkFrame::text("before")).await.unwrap();
    sender.close(1000, "bye".to_owned()).await.unwrap();
    assert_eq!(conn.recv().await.unwrap().text(), Some("before"));
    assert_eq!(conn.recv().await, None);
    assert_eq!(conn.expect_closed().await, Some((1000, "bye".to_owned())));
    assert_eq!(
        receiver.recv().await,
        Some(LinkEvent::Closed {
            code: Some(1000),
            reason: Some("bye".to_owned())
        })
    );
    assert_eq!(receiver.recv().await, None);
});

both_clocks!(a_long_close_reason_is_cut_to_fit_a_close_frame, async {
    let mut server = ScriptedServer::bind().await;
    let (mut sender, _receiver, mut conn) = open(&mut server, LinkOptions::default()).await;
    sender.close(4000, "é".repeat(100)).await.unwrap();
    assert_eq!(conn.expect_closed().await, Some((4000, "é".repeat(61))));
});

both_clocks!(
    an_abrupt_drop_fails_the_link_after_the_frames_already_sent,
    async {
        let mut server = ScriptedServer::bind().await;
        let (_sender, mut receiver, mut conn) = open(&mut server, LinkOptions::default()).await;
        conn.send_text("last words").await;
        conn.drop_connection();
        assert_eq!(frame(receiver.recv().await), LinkFrame::text("last words"));
        assert_eq!(
            receiver.recv().await,
            Some(LinkEvent::Failed(LinkError::Io {
                message: DROPPED_WITHOUT_CLOSE.to_owned()
            }))
        );
        assert_eq!(receiver.recv().await, None);
    }
);

both_clocks!(a_reset_fails_the_link, async {
    let mut server = ScriptedServer::bind().await;
    let (_sender, mut receiver, conn) = open(&mut server, LinkOptions::default()).await;
    conn.reset_connection();
    assert_eq!(
        receiver.recv().await,
        Some(LinkEvent::Failed(LinkError::Io {
            message: CONNECTION_RESET.to_owned()
        }))
    );
    assert_eq!(receiver.recv().await, None);
});

both_clocks!(an_inbound_frame_over_the_limit_fails_the_link, async {
    let mut server = ScriptedServer::bind().await;
    let options = LinkOptions {
        max_frame_bytes: 1024,
        ..LinkOptions::default()
    };
    let (mut sender, mut receiver, mut conn) = open(&mut server, options).await;
    conn.send_binary(vec![7u8; 1024]).await;
    conn.send_binary(vec![7u8; 1025]).await;
    assert_eq!(frame(receiver.recv().await).bytes.len(), 1024);
    assert_eq!(
        receiver.recv().await,
        Some(LinkEvent::Failed(LinkError::FrameTooLarge {
            size: 1025,
            limit: 1024
        }))
    );
    assert_eq!(receiver.recv().await, None);
    // The owner closes with 1009 (message too big); the server sees it.
    sender
        .close(1009, "frame too large".to_owned())
        .await
        .unwrap();
    assert_eq!(
        conn.expect_closed().await,
        Some((1009, "frame too large".to_owned()))
    );
});

both_clocks!(an_oversized_text_frame_fails_the_link_too, async {
    let mut server = ScriptedServer::bind().await;
    let options = LinkOptions {
        max_frame_bytes: 16,
        ..LinkOptions::default()
    };
    let (_sender, mut receiver, mut conn) = open(&mut server, options).await;
    conn.send_text(&"x".repeat(17)).await;
    assert_eq!(
        receiver.recv().await,
        Some(LinkEvent::Failed(LinkError::FrameTooLarge {
            size: 17,
            limit: 16
        }))
    );
});

both_clocks!(
    an_outbound_frame_over_the_limit_is_refused_and_the_link_lives_on,
    async {
        let mut server = ScriptedServer::bind().await;
        let options = LinkOptions {
            max_frame_bytes: 1024,
            ..LinkOptions::default()
        };
        let (mut sender, _receiver, mut conn) = open(&mut server, options).await;
        assert_eq!(
            sender.send(LinkFrame::binary(vec![1u8; 1025])).await,
            Err(LinkError::FrameTooLarge {
                size: 1025,
                limit: 1024
            })
        );
        sender
            .send(LinkFrame::binary(vec![1u8; 1024]))
            .await
            .unwrap();
        assert_eq!(conn.recv().await.unwrap().bytes.len(), 1024);
    }
);

both_clocks!(a_text_frame_that_is_not_utf8_is_refused, async {
    let mut server = ScriptedServer::bind().await;
    let (mut sender, _receiver, mut conn) = open(&mut server, LinkOptions::default()).await;
    assert_eq!(
        sender
            .send(LinkFrame::new(FrameKind::Text, vec![0xff, 0xfe]))
            .await,
        Err(LinkError::InvalidText { size: 2 })
    );
    sender.send(LinkFrame::text("still open")).await.unwrap();
    assert_eq!(conn.recv().await.unwrap().text(), Some("still open"));
});

both_clocks!(pings_are_answered_and_never_surface, async {
    let mut server = ScriptedServer::bind().await;
    let (_sender, mut receiver, mut conn) = open(&mut server, LinkOptions::default()).await;
    let server_side = async {
        assert!(conn.ping(&b"are you there"[..]).await);
        conn.send_text("after the ping").await;
    };
    let (_, event) = tokio::join!(server_side, receiver.recv());
    assert_eq!(frame(event), LinkFrame::text("after the ping"));
});

both_clocks!(frames_read_while_waiting_for_a_pong_are_kept, async {
    let mut server = ScriptedServer::bind().await;
    let (mut sender, mut receiver, mut conn) = open(&mut server, LinkOptions::default()).await;
    sender.send(LinkFrame::text("one")).await.unwrap();
    let server_side = async {
        assert!(conn.ping(&b"p"[..]).await);
        conn.send_text("done").await;
    };
    let (_, event) = tokio::join!(server_side, receiver.recv());
    assert_eq!(frame(event), LinkFrame::text("done"));
    assert_eq!(conn.recv().await.unwrap().text(), Some("one"));
});

both_clocks!(a_closed_port_is_a_connect_error_without_the_key, async {
    // Bound but not listening: the port stays ours and refuses connections.
    let socket = TcpSocket::new_v4().unwrap();
    socket.bind("127.0.0.1:0".parse().unwrap()).unwrap();
    let addr = socket.local_addr().unwrap();
    let request = ApiEndpoint::google_ai("AIzaTOPSECRET")
        .with_base_url(&format!("ws://{addr}"))
        .connect_request();
    let error = WebSocketConnector::new()
        .connect(&request, &LinkOptions::default())
        .await
        .err()
        .unwrap();
    let url = format!("ws://{addr}{GOOGLE_AI_PATH}?key=REDACTED");
    assert_eq!(
        error,
        LinkError::Connect {
            url: url.clone(),
            message: CONNECTION_REFUSED.to_owned()
        }
    );
    assert_eq!(
        error.to_string(),
        format!("could not connect to {url}: connection refused")
    );
    assert!(!format!("{error} {error:?}").contains("TOPSECRET"));
});

both_clocks!(a_refused_bearer_connect_does_not_show_the_token, async {
    let socket = TcpSocket::new_v4().unwrap();
    socket.bind("127.0.0.1:0".parse().unwrap()).unwrap();
    let addr = socket.local_addr().unwrap();
    let request = ApiEndpoint::vertex("p", "us-central1", "ya29.TOPSECRET")
        .with_base_url(&format!("ws://{addr}"))
        .connect_request();
    let error = WebSocketConnector::new()
        .connect(&request, &LinkOptions::default())
        .await
        .err()
        .unwrap();
    assert!(matches!(error, LinkError::Connect { .. }), "{error:?}");
    assert!(!format!("{error} {error:?}").contains("TOPSECRET"));
});

/// A raw TCP peer that reads one HTTP request and answers `response`.
async fn http_responder(response: &'static str) -> std::net::SocketAddr {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move {
        let (mut tcp, _) = listener.accept().await.unwrap();
        let mut request = Vec::new();
        let mut buffer = [0u8; 1024];
        while !request.ends_with(b"\r\n\r\n") {
            let read = tcp.read(&mut buffer).await.unwrap();
            assert!(read > 0, "the client hung up mid-request");
            request.extend_from_slice(&buffer[..read]);
        }
        tcp.write_all(response.as_bytes()).await.unwrap();
        tcp.shutdown().await.unwrap();
    });
    addr
}

both_clocks!(an_http_404_is_a_handshake_refusal_with_its_status, async {
    // The body echoes the key, as a careless server might: it must not reach the error.
    let addr = http_responder(
        "HTTP/1.1 404 Not Found\r\nContent-Length: 35\r\nConnection: close\r\n\r\nno such method (key=AIzaTOPSECRET)",
    )
    .await;
    let request = ApiEndpoint::google_ai("AIzaTOPSECRET")
        .with_base_url(&format!("ws://{addr}"))
        .connect_request();
    let error = WebSocketConnector::new()
        .connect(&request, &LinkOptions::default())
        .await
        .err()
        .unwrap();
    assert_eq!(
        error,
        LinkError::Handshake {
            url: format!("ws://{addr}{GOOGLE_AI_PATH}?key=REDACTED"),
            status: Some(404),
            message: "HTTP 404 Not Found: no such method (key=REDACTED)".to_owned()
        }
    );
    assert!(!format!("{error} {error:?}").contains("TOPSECRET"));
});

both_clocks!(an_http_401_without_body_is_a_handshake_refusal, async {
    let addr = http_responder(
        "HTTP/1.1 401 Unauthorized\r\nContent-Length: 0\r\nConnection: close\r\n\r\n",
    )
    .await;
    let request = ApiEndpoint::vertex("p", "us-central1", "ya29.TOPSECRET")
        .with_base_url(&format!("ws://{addr}"))
        .connect_request();
    let error = WebSocketConnector::new()
        .connect(&request, &LinkOptions::default())
        .await
        .err()
        .unwrap();
    assert_eq!(
        error,
        LinkError::Handshake {
            url: format!("ws://{addr}{VERTEX_PATH}"),
            status: Some(401),
            message: "HTTP 401 Unauthorized".to_owned()
        }
    );
});

#[tokio::test(start_paused = true)]
async fn a_server_that_never_answers_times_out_after_exactly_the_timeout() {
    // Listening, so TCP connects, but never accepting, so the upgrade is never answered.
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let request = ApiEndpoint::google_ai("AIzaTOPSECRET")
        .with_base_url(&format!("ws://{addr}"))
        .connect_request();
    for seconds in [10, 3] {
        let options = LinkOptions {
            connect_timeout: Duration::from_secs(seconds),
            ..LinkOptions::default()
        };
        let start = Instant::now();
        let error = WebSocketConnector::new()
            .connect(&request, &options)
            .await
            .err()
            .unwrap();
        assert_eq!(start.elapsed(), Duration::from_secs(seconds));
        assert_eq!(
            error,
            LinkError::ConnectTimeout {
                url: format!("ws://{addr}{GOOGLE_AI_PATH}?key=REDACTED"),
                after: Duration::from_secs(seconds)
            }
        );
        assert!(!error.to_string().contains("TOPSECRET"));
    }
    drop(listener);
}

#[tokio::test(start_paused = true)]
async fn under_paused_time_a_loopback_connect_takes_no_virtual_time() {
    let mut server = ScriptedServer::bind().await;
    let (cert, key) = self_signed();
    let mut tls_server = ScriptedServer::bind_tls(vec![cert.clone()], key).await;
    let trusting = WebSocketConnector::new()
        .with_root_certificates(vec![cert])
        .unwrap();
    let start = Instant::now();
    for _ in 0..20 {
        let _plain = open(&mut server, LinkOptions::default()).await;
        let endpoint = tls_server.endpoint();
        let _tls = open_with(
            &mut tls_server,
            &trusting,
            &endpoint,
            LinkOptions::default(),
        )
        .await;
    }
    assert_eq!(start.elapsed(), Duration::ZERO);
}

both_clocks!(wss_works_with_a_trusted_self_signed_certificate, async {
    let (cert, key) = self_signed();
    let mut server = ScriptedServer::bind_tls(vec![cert.clone()], key).await;
    assert!(server.url().starts_with("wss://127.0.0.1:"));
    let connector = WebSocketConnector::new()
        .with_root_certificates(vec![cert])
        .unwrap();
    let endpoint = server.endpoint();
    let (mut sender, mut receiver, mut conn) =
        open_with(&mut server, &connector, &endpoint, LinkOptions::default()).await;
    assert_eq!(conn.query_param("key"), Some(SCRIPTED_API_KEY));
    sender.send(LinkFrame::text("over tls")).await.unwrap();
    assert_eq!(conn.recv().await.unwrap().text(), Some("over tls"));
    conn.send_text("back").await;
    assert_eq!(frame(receiver.recv().await), LinkFrame::text("back"));
    conn.drop_connection();
    assert_eq!(
        receiver.recv().await,
        Some(LinkEvent::Failed(LinkError::Io {
            message: DROPPED_WITHOUT_CLOSE.to_owned()
        }))
    );
});

both_clocks!(wss_refuses_an_untrusted_certificate, async {
    let (cert, key) = self_signed();
    let server = ScriptedServer::bind_tls(vec![cert], key).await;
    let request = server.endpoint().connect_request();
    let error = WebSocketConnector::new()
        .connect(&request, &LinkOptions::default())
        .await
        .err()
        .unwrap();
    assert_eq!(
        error,
        LinkError::Connect {
            url: format!("{}{GOOGLE_AI_PATH}?key=REDACTED", server.url()),
            message: "invalid peer certificate: UnknownIssuer".to_owned()
        }
    );
});

both_clocks!(a_pem_file_of_trusted_certificates_can_be_loaded, async {
    let certified = rcgen::generate_simple_self_signed(vec!["127.0.0.1".to_owned()]).unwrap();
    let dir = scratch_dir();
    let pem = dir.join("trusted.pem");
    std::fs::write(&pem, certified.cert.pem()).unwrap();
    let key = PrivateKeyDer::try_from(certified.signing_key.serialize_der()).unwrap();
    let mut server = ScriptedServer::bind_tls(vec![certified.cert.der().clone()], key).await;
    let connector = WebSocketConnector::new()
        .with_root_certificates_pem(&pem)
        .unwrap();
    let endpoint = server.endpoint();
    let (mut sender, _receiver, mut conn) =
        open_with(&mut server, &connector, &endpoint, LinkOptions::default()).await;
    sender.send(LinkFrame::text("pem")).await.unwrap();
    assert_eq!(conn.recv().await.unwrap().text(), Some("pem"));

    let empty = dir.join("empty.pem");
    std::fs::write(&empty, "").unwrap();
    assert_eq!(
        WebSocketConnector::new()
            .with_root_certificates_pem(&empty)
            .err(),
        Some(TlsSetupError::NoCertificates {
            path: empty.display().to_string()
        })
    );
    let missing = dir.join("missing.pem");
    assert!(matches!(
        WebSocketConnector::new().with_root_certificates_pem(&missing).err(),
        Some(TlsSetupError::ReadPem { path, .. }) if path == missing.display().to_string()
    ));
    std::fs::remove_dir_all(&dir).unwrap();
});

/// A fresh directory for this test run (the live and paused variants run in parallel).
fn scratch_dir() -> std::path::PathBuf {
    static NEXT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let dir = std::env::temp_dir().join(format!("reel-websocket-link-{}-{n}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

both_clocks!(
    connections_are_handed_out_in_order_and_the_server_stops_on_drop,
    async {
        let mut server = ScriptedServer::bind().await;
        let request = server.endpoint().connect_request();
        let connector = WebSocketConnector::new();
        let options = LinkOptions::default();
        let (first, second) = tokio::join!(
            connector.connect(&request, &options),
            connector.connect(&request, &options)
        );
        let (mut first, _first_rx) = first.unwrap();
        let (mut second, _second_rx) = second.unwrap();
        let mut a = server.accept().await;
        let mut b = server.accept().await;
        first.send(LinkFrame::text("1")).await.unwrap();
        second.send(LinkFrame::text("2")).await.unwrap();
        let mut got = vec![
            a.recv().await.unwrap().text().unwrap().to_owned(),
            b.recv().await.unwrap().text().unwrap().to_owned(),
        ];
        got.sort();
        assert_eq!(got, ["1", "2"]);
        assert!(server.try_accept().is_none());

        let addr = server.local_addr();
        drop(server);
        // The accept loop is aborted; it (and its listener) is gone once the scheduler has run
        // it, which a single yield allows on this single-threaded runtime.
        tokio::task::yield_now().await;
        let refused = tokio::net::TcpStream::connect(addr).await.err().unwrap();
        assert_eq!(refused.kind(), std::io::ErrorKind::ConnectionRefused);
        // Accepted connections outlive the server.
        a.send_text("still here").await;
    }
);
