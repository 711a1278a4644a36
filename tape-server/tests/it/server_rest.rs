//! REST beside Live: `generateContent` and `streamGenerateContent` on the tape server's port,
//! answered from cassettes (`<test>.cassette.json`), recorded through an upstream (itself a
//! tape server answering from a cassette), and refused with the API's error shape when no
//! recorded call matches. Real HTTP/1.1 on loopback sockets.

use crate::server_support;

use reel_recorder::cassette::{CassetteFile, DEFAULT_MAX_CASSETTE_BYTES, Interaction};
use reel_recorder::llm_tape::RecordedChunk;
use reel_recorder::trace::Timestamp;
use reel_tape_server::{
    CassetteLibrary, Outcome, RestMethod, RestReport, RestResult, RunningServer, TapeLibrary,
    TapeServer, Upstream,
};
use serde_json::{Value, json};
use server_support::*;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

const GENERATE: &str = "/v1beta/models/gemini-2.5-flash:generateContent";
const STREAM: &str = "/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse";

fn ask(text: &str) -> Value {
    json!({"contents": [{"role": "user", "parts": [{"text": text}]}]})
}

fn answer_piece(text: &str, finish: bool) -> Value {
    let mut candidate = json!({"content": {"role": "model", "parts": [{"text": text}]}});
    if finish {
        candidate["finishReason"] = json!("STOP");
    }
    json!({"candidates": [candidate], "modelVersion": "gemini-2.5-flash"})
}

fn raw_chunk(raw: Value) -> RecordedChunk {
    RecordedChunk {
        raw: Some(raw),
        ..RecordedChunk::text(0, "")
    }
}

fn interaction(method: RestMethod, body: Value, pieces: Vec<Value>) -> Interaction {
    let request = json!({"method": method.as_str(), "model": "gemini-2.5-flash", "body": body});
    Interaction {
        request: request.as_object().unwrap().clone(),
        response: pieces.into_iter().map(raw_chunk).collect(),
        recorded_at: Timestamp::from_epoch_ms(T0),
        usage: None,
        duration_ns: None,
        failure: None,
    }
}

/// A cassette with one `generateContent` and one streamed call.
fn weather_cassette() -> CassetteFile {
    let mut cassette = CassetteFile::new();
    cassette.interactions = vec![
        interaction(
            RestMethod::Generate,
            ask("Weather in Paris?"),
            vec![answer_piece("Sunny.", true)],
        ),
        interaction(
            RestMethod::Stream,
            ask("Tell me more"),
            vec![answer_piece("Warm ", false), answer_piece("and dry.", true)],
        ),
    ];
    cassette
}

/// One HTTP/1.1 exchange: the status, the head and the body as received.
async fn post(
    server: &RunningServer,
    target: &str,
    headers: &[(&str, &str)],
    body: &str,
) -> (u16, String, String) {
    let mut tcp = TcpStream::connect(server.local_addr()).await.unwrap();
    let mut request = format!(
        "POST {target} HTTP/1.1\r\nhost: localhost\r\ncontent-type: application/json\r\ncontent-length: {}\r\n",
        body.len()
    );
    for (name, value) in headers {
        request.push_str(&format!("{name}: {value}\r\n"));
    }
    request.push_str("\r\n");
    request.push_str(body);
    tcp.write_all(request.as_bytes()).await.unwrap();
    let mut answer = String::new();
    tcp.read_to_string(&mut answer).await.unwrap();
    let (head, body) = answer.split_once("\r\n\r\n").unwrap();
    let status = head[9..12].parse().unwrap();
    (status, head.to_owned(), body.to_owned())
}

async fn rest_report(server: &mut RunningServer) -> (Option<String>, RestReport) {
    let report = server.next_report().await.unwrap();
    match report.outcome {
        Outcome::Rest(rest) => (report.test, rest),
        other => panic!("not a REST call: {other:?}"),
    }
}

async fn replay_server(dir: &std::path::Path) -> RunningServer {
    write_tape(&dir.join("t1.wire.jsonl"), &tape_of(&session()));
    TapeServer::replay(TapeLibrary::open(dir).unwrap())
        .cassettes(CassetteLibrary::open_dir(dir).unwrap())
        .start()
        .await
        .unwrap()
}

#[tokio::test]
async fn recorded_calls_are_answered_as_the_api_sent_them() {
    let dir = fresh_dir("rest-replay");
    weather_cassette()
        .write(dir.join("t1.cassette.json"), DEFAULT_MAX_CASSETTE_BYTES)
        .unwrap();
    let mut server = replay_server(&dir).await;
    let cassette = dir.join("t1.cassette.json").display().to_string();

    let (status, head, body) = post(
        &server,
        GENERATE,
        &[("x-reel-test", "t1"), ("x-goog-api-key", "AIzaSECRET")],
        &ask("Weather in Paris?").to_string(),
    )
    .await;
    assert_eq!(status, 200, "{head}");
    assert!(head.contains("content-type: application/json"), "{head}");
    assert_eq!(
        serde_json::from_str::<Value>(&body).unwrap(),
        answer_piece("Sunny.", true)
    );
    assert_eq!(
        rest_report(&mut server).await,
        (
            Some("t1".into()),
            RestReport {
                method: RestMethod::Generate,
                model: "gemini-2.5-flash".into(),
                result: RestResult::Replayed {
                    cassette: cassette.clone(),
                    index: 0,
                    chunks: 1
                },
            }
        )
    );

    // A stream, as server-sent events; the query names the test here.
    let target = format!("{STREAM}&reel_test=t1");
    let (status, head, body) = post(&server, &target, &[], &ask("Tell me more").to_string()).await;
    assert_eq!(status, 200);
    assert!(head.contains("content-type: text/event-stream"), "{head}");
    assert_eq!(
        body,
        format!(
            "data: {}\r\n\r\ndata: {}\r\n\r\n",
            answer_piece("Warm ", false),
            answer_piece("and dry.", true)
        )
    );
    let (_, report) = rest_report(&mut server).await;
    assert_eq!(
        report.result,
        RestResult::Replayed {
            cassette,
            index: 1,
            chunks: 2
        }
    );
}

#[tokio::test]
async fn a_call_no_recording_matches_gets_the_apis_error_shape_naming_the_difference() {
    let dir = fresh_dir("rest-miss");
    weather_cassette()
        .write(dir.join("t1.cassette.json"), DEFAULT_MAX_CASSETTE_BYTES)
        .unwrap();
    let mut server = replay_server(&dir).await;
    let (status, _, body) = post(
        &server,
        GENERATE,
        &[("x-reel-test", "t1")],
        &ask("Weather in Rome?").to_string(),
    )
    .await;
    assert_eq!(status, 400);
    let cassette = dir.join("t1.cassette.json").display().to_string();
    assert_eq!(
        serde_json::from_str::<Value>(&body).unwrap(),
        json!({"error": {
            "code": 400,
            "status": "FAILED_PRECONDITION",
            "message": format!("reel: no recorded generateContent call of test t1 matches this request; the closest ({cassette}, call 1) differs at body.contents[0].parts[0].text"),
        }})
    );
    let (_, report) = rest_report(&mut server).await;
    let value = reel_tape_server::ConnectionReport {
        conn: 1,
        path: None,
        test: Some("t1".into()),
        outcome: Outcome::Rest(report),
    }
    .to_json();
    assert_eq!(value["outcome"], "rest_no_match");
    assert_eq!(
        value["closest"],
        json!({"cassette": cassette, "call": 1, "first_mismatch": {"path": "body.contents[0].parts[0].text", "expected": "Weather in Paris?", "actual": "Weather in Rome?"}})
    );

    // Another test's calls are not this test's.
    let (status, _, _) = post(
        &server,
        GENERATE,
        &[("x-reel-test", "t2")],
        &ask("Weather in Paris?").to_string(),
    )
    .await;
    assert_eq!(status, 400);
}

#[tokio::test]
async fn calls_are_recorded_through_the_upstream_and_answered_again_byte_for_byte() {
    // The upstream answers from a cassette of its own (shared: no test name).
    let api_dir = fresh_dir("rest-api");
    weather_cassette()
        .write(
            api_dir.join("rest.cassette.json"),
            DEFAULT_MAX_CASSETTE_BYTES,
        )
        .unwrap();
    let api = TapeServer::replay(TapeLibrary::new().with_entries("live", tape_of(&session())))
        .cassettes(CassetteLibrary::open_dir(&api_dir).unwrap())
        .start()
        .await
        .unwrap();
    let dir = fresh_dir("rest-record");
    let mut proxy = TapeServer::record(Upstream::new(&api.base_url()).unwrap(), &dir)
        .start()
        .await
        .unwrap();
    let generate = ask("Weather in Paris?").to_string();
    let stream = ask("Tell me more").to_string();
    let (status, _, first) = post(&proxy, GENERATE, &[("x-reel-test", "w")], &generate).await;
    assert_eq!(status, 200);
    assert_eq!(
        serde_json::from_str::<Value>(&first).unwrap(),
        answer_piece("Sunny.", true)
    );
    let (status, _, events) = post(&proxy, STREAM, &[("x-reel-test", "w")], &stream).await;
    assert_eq!(status, 200);
    let cassette = dir.join("w.cassette.json");
    for (index, chunks) in [(0, 1), (1, 2)] {
        let (_, report) = rest_report(&mut proxy).await;
        assert_eq!(
            report.result,
            RestResult::Recorded {
                cassette: cassette.display().to_string(),
                index,
                chunks
            }
        );
    }
    let recorded = CassetteFile::read(&cassette, DEFAULT_MAX_CASSETTE_BYTES).unwrap();
    assert_eq!(recorded.interactions.len(), 2);
    assert_eq!(
        Value::Object(recorded.interactions[0].request.clone()),
        json!({"method": "generateContent", "model": "gemini-2.5-flash", "body": ask("Weather in Paris?")})
    );
    let texts: Vec<(&str, Option<&str>)> = recorded.interactions[1]
        .response
        .iter()
        .map(|c| (c.text.as_str(), c.finish_reason.as_deref()))
        .collect();
    assert_eq!(texts, [("Warm ", None), ("and dry.", Some("STOP"))]);

    // Replayed from the new cassette, with the upstream gone: the same bytes.
    drop(api);
    let mut replay =
        TapeServer::replay(TapeLibrary::new().with_entries("live", tape_of(&session())))
            .cassettes(CassetteLibrary::open_dir(&dir).unwrap())
            .start()
            .await
            .unwrap();
    assert_eq!(
        post(&replay, GENERATE, &[("x-reel-test", "w")], &generate)
            .await
            .2,
        first
    );
    assert_eq!(
        post(&replay, STREAM, &[("x-reel-test", "w")], &stream)
            .await
            .2,
        events
    );
    assert!(matches!(
        rest_report(&mut replay).await.1.result,
        RestResult::Replayed { index: 0, .. }
    ));
}

#[tokio::test]
async fn bodies_that_cannot_be_a_call_are_refused_with_a_reason() {
    let dir = fresh_dir("rest-bad");
    let mut server = replay_server(&dir).await;
    let (status, _, body) = post(&server, GENERATE, &[], "not json").await;
    assert_eq!(status, 400);
    assert!(
        body.contains("reel: the request body is not JSON"),
        "{body}"
    );
    assert!(matches!(
        rest_report(&mut server).await.1.result,
        RestResult::Refused { status: 400, .. }
    ));
    // A chunked body: no length to read.
    let mut tcp = TcpStream::connect(server.local_addr()).await.unwrap();
    tcp.write_all(
        format!("POST {GENERATE} HTTP/1.1\r\nhost: localhost\r\ntransfer-encoding: chunked\r\n\r\n2\r\n{{}}\r\n0\r\n\r\n")
            .as_bytes(),
    )
    .await
    .unwrap();
    let mut answer = String::new();
    tcp.read_to_string(&mut answer).await.unwrap();
    assert!(
        answer.starts_with("HTTP/1.1 411 Length Required\r\n"),
        "{answer}"
    );
    assert!(matches!(
        rest_report(&mut server).await.1.result,
        RestResult::Refused { status: 411, .. }
    ));
}

#[tokio::test]
async fn an_upstream_that_breaks_off_mid_stream_leaves_the_client_what_arrived_and_records_nothing()
{
    // An "API" that answers the head and one event, then drops the connection.
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let event = format!("data: {}\r\n\r\n", answer_piece("Warm ", false));
    let head =
        "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n\r\n";
    let first_chunk = format!("{:x}\r\n{event}\r\n", event.len());
    let api = tokio::spawn(async move {
        let (mut tcp, _) = listener.accept().await.unwrap();
        let mut request = vec![0u8; 4096];
        let _ = tcp.read(&mut request).await.unwrap();
        tcp.write_all(format!("{head}{first_chunk}").as_bytes())
            .await
            .unwrap();
    });
    let dir = fresh_dir("rest-broken");
    let mut proxy = TapeServer::record(
        Upstream::new(&format!("ws://127.0.0.1:{port}")).unwrap(),
        &dir,
    )
    .start()
    .await
    .unwrap();
    let (status, _, body) = post(
        &proxy,
        STREAM,
        &[("x-reel-test", "b")],
        &ask("Hi").to_string(),
    )
    .await;
    api.await.unwrap();
    // The client got the head and the event that arrived, then the connection ended.
    assert_eq!(status, 200);
    assert!(body.contains("Warm "), "{body}");
    let (_, report) = rest_report(&mut proxy).await;
    assert_eq!(
        report.result,
        RestResult::UpstreamFailed {
            message: format!(
                "the upstream ws://127.0.0.1:{port}/ broke off its answer: the upstream closed before the answer's last chunk"
            )
        }
    );
    assert!(!dir.join("b.cassette.json").exists());
}

#[tokio::test]
async fn a_chunked_upstream_answer_reaches_the_client_byte_for_byte_chunk_framing_included() {
    // An "API" with framing of its own: header names as it spells them, a header reel does
    // not know, upper-case chunk sizes, an event split across two chunks and two events in
    // one.
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let first = format!("data: {}\r\n\r\n", answer_piece("Warm ", false));
    let second = format!("data: {}\r\n\r\n", answer_piece("and dry.", true));
    let events = format!("{first}{second}");
    let (a, b) = events.split_at(first.len() / 2);
    let mut upstream_answer = "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nX-Goog-Upstream: kept as sent\r\nTransfer-Encoding: chunked\r\n\r\n".to_owned();
    for piece in [a, b] {
        upstream_answer.push_str(&format!("{:X}\r\n{piece}\r\n", piece.len()));
    }
    upstream_answer.push_str("0\r\n\r\n");
    let sent = upstream_answer.clone();
    let api = tokio::spawn(async move {
        let (mut tcp, _) = listener.accept().await.unwrap();
        let mut request = vec![0u8; 4096];
        let _ = tcp.read(&mut request).await.unwrap();
        tcp.write_all(sent.as_bytes()).await.unwrap();
    });
    let dir = fresh_dir("rest-verbatim");
    let mut proxy = TapeServer::record(
        Upstream::new(&format!("ws://127.0.0.1:{port}")).unwrap(),
        &dir,
    )
    .start()
    .await
    .unwrap();
    let (_, head, body) = post(
        &proxy,
        STREAM,
        &[("x-reel-test", "v")],
        &ask("Tell me more").to_string(),
    )
    .await;
    api.await.unwrap();
    assert_eq!(format!("{head}\r\n\r\n{body}"), upstream_answer);
    // And a decoded copy went into the cassette, one chunk per event.
    let (_, report) = rest_report(&mut proxy).await;
    assert_eq!(
        report.result,
        RestResult::Recorded {
            cassette: dir.join("v.cassette.json").display().to_string(),
            index: 0,
            chunks: 2
        }
    );
}
