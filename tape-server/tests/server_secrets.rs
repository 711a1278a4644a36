//! No credential reaches a log line: every tracing event and span of a replay server and a
//! recording proxy is captured while clients present keys in the query and in headers, and
//! none of them holds a key (the redacted URL does show that one was there).

mod server_support;

use reel_protocol::{Credential, Secret};
use reel_tape_server::{Outcome, TapeLibrary, TapeServer, Upstream};
use server_support::*;

// One thread: every task of both servers runs where the capture is the default subscriber.
#[tokio::test(flavor = "current_thread")]
async fn keys_never_reach_a_log_line() {
    let capture = LogCapture::default();
    let _guard = tracing::subscriber::set_default(capture.clone());

    let mut upstream =
        TapeServer::replay(TapeLibrary::new().with_entries("t", tape_of(&session())))
            .start()
            .await
            .unwrap();
    let dir = fresh_dir("secrets");
    let mut proxy = TapeServer::record(
        Upstream::new(&upstream.base_url())
            .unwrap()
            .with_credential(Credential::ApiKey(Secret::new("AIzaPROXYSECRET"))),
        &dir,
    )
    .start()
    .await
    .unwrap();

    let js_url = format!(
        "{}//ws/google.ai.generativelanguage.v1.GenerativeService.BidiGenerateContent?key=AIzaQUERYSECRET",
        proxy.base_url()
    );
    let mut client = Client::connect(&js_url).await;
    client.play(&session()).await;
    client.close().await;
    let python_url = format!(
        "{}//ws/google.ai.generativelanguage.v1.GenerativeService.BidiGenerateContent",
        upstream.base_url()
    );
    let mut client = Client::connect_with_headers(
        &python_url,
        &[
            ("x-goog-api-key", "AIzaHEADERSECRET"),
            ("authorization", "Bearer ya29.BEARERSECRET"),
        ],
    )
    .await;
    client.play(&session()).await;
    client.close().await;

    let recorded = proxy.next_report().await.unwrap();
    let Outcome::Recorded { path, .. } = &recorded.outcome else {
        panic!("{recorded:?}");
    };
    assert!(!std::fs::read_to_string(path).unwrap().contains("SECRET"));
    for _ in 0..2 {
        let report = upstream.next_report().await.unwrap();
        assert!(!report.to_string().contains("SECRET"));
    }
    proxy.shutdown().await;
    upstream.shutdown().await;

    let lines = capture.lines();
    assert!(
        lines.iter().any(|l| l.contains("?key=REDACTED")),
        "the redacted URL is logged: {lines:#?}"
    );
    assert!(
        lines.iter().any(|l| l.contains("tape server listening")),
        "{lines:#?}"
    );
    let leaks: Vec<&String> = lines.iter().filter(|l| l.contains("SECRET")).collect();
    assert!(leaks.is_empty(), "{leaks:#?}");
}
