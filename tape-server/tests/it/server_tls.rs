//! TLS: a self-signed certificate for localhost, trusted by the client, serves `wss://`;
//! a recording proxy reaches a `wss://` upstream that trusts it the same way.

use crate::server_support;

use reel_actors::transport::{
    Connector, LinkError, LinkEvent, LinkFrame, LinkOptions, WebSocketConnector,
};
use reel_protocol::ApiEndpoint;
use reel_recorder::read_wire_log;
use reel_tape_server::{
    Outcome, SelfSignedCertificate, TapeLibrary, TapeServer, TlsIdentity, Upstream,
};
use server_support::*;

#[tokio::test]
async fn a_self_signed_certificate_serves_wss_to_a_client_that_trusts_it() {
    let certificate = SelfSignedCertificate::generate().unwrap();
    let dir = fresh_dir("tls-files");
    let files = certificate.write_to(&dir).unwrap();
    assert_eq!(files.cert, dir.join("cert.pem"));
    assert_eq!(
        files.trust_hints()[..2],
        [
            format!(
                "Python (google-genai): export SSL_CERT_FILE={}",
                files.cert.display()
            ),
            format!(
                "Node (@google/genai): export NODE_EXTRA_CA_CERTS={}",
                files.cert.display()
            ),
        ]
    );
    // The server reads the files the way `reel serve --tls-cert --tls-key` does.
    let identity = TlsIdentity::from_pem_files(&files.cert, &files.key).unwrap();
    let mut server = TapeServer::replay(TapeLibrary::new().with_entries("t", tape_of(&session())))
        .tls(identity)
        .start()
        .await
        .unwrap();
    assert!(server.base_url().starts_with("wss://127.0.0.1:"));

    let request = ApiEndpoint::google_ai("AIzaKEY")
        .with_base_url(&server.base_url())
        .connect_request();
    let connector = WebSocketConnector::new()
        .with_root_certificates(vec![certificate.certificate()])
        .unwrap();
    let (mut sender, mut receiver) = connector
        .connect(&request, &LinkOptions::default())
        .await
        .unwrap();
    for exchange in session() {
        sender.send(LinkFrame::text(exchange.client)).await.unwrap();
        for expected in exchange.server {
            assert_eq!(
                receiver.recv().await,
                Some(LinkEvent::Frame(LinkFrame::text(expected)))
            );
        }
    }
    sender.close(1000, String::new()).await.unwrap();
    assert_eq!(
        receiver.recv().await,
        Some(LinkEvent::Closed {
            code: Some(1000),
            reason: None
        })
    );
    assert!(matches!(
        server.next_report().await.unwrap().outcome,
        Outcome::Replayed { frames: 4, .. }
    ));

    // A client that does not trust the certificate is refused by its own TLS check.
    let error = WebSocketConnector::new()
        .connect(&request, &LinkOptions::default())
        .await
        .err()
        .unwrap();
    assert!(
        matches!(&error, LinkError::Connect { message, .. } if message.contains("certificate")),
        "{error:?}"
    );
    let report = server.next_report().await.unwrap();
    assert!(matches!(report.outcome, Outcome::Failed(_)), "{report:?}");
}

#[tokio::test]
async fn a_proxy_records_through_a_wss_upstream() {
    let certificate = SelfSignedCertificate::generate().unwrap();
    let upstream = TapeServer::replay(TapeLibrary::new().with_entries("t", tape_of(&session())))
        .tls(certificate.identity().clone())
        .start()
        .await
        .unwrap();
    let dir = fresh_dir("tls-proxy");
    let mut proxy = TapeServer::record(
        Upstream::new(&upstream.base_url())
            .unwrap()
            .with_root_certificates(vec![certificate.certificate()]),
        &dir,
    )
    .start()
    .await
    .unwrap();
    let mut client = Client::connect(&proxy.live_url()).await;
    client.play(&session()).await;
    client.close().await;
    let Outcome::Recorded { path, .. } = proxy.next_report().await.unwrap().outcome else {
        panic!("not recorded");
    };
    assert_eq!(
        shape(&read_wire_log(&path).unwrap()),
        shape(&tape_of(&session()))
    );
}
