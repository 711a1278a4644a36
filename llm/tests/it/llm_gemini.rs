//! The Gemini REST client against the loopback stand-in: what goes on the wire, what comes
//! back, and every way a call fails.

use std::time::Duration;

use futures_util::{FutureExt, StreamExt};
use reel_llm::gemini::GeminiLlm;
use reel_llm::testing::gemini_standin::{Answer, GeminiStandin, STANDIN_API_KEY};
use reel_llm::{BaseLlm, LlmChunk, LlmError, LlmRequest, LlmResponse, LlmUsage};
use rustls::pki_types::PrivateKeyDer;
use serde_json::{Value, json};

const MODEL: &str = "gemini-2.5-flash";

fn llm(standin: &GeminiStandin) -> GeminiLlm {
    standin.llm_builder(MODEL).build().unwrap()
}

fn text_event(text: &str) -> Value {
    json!({"candidates": [{"content": {"role": "model", "parts": [{"text": text}]}}]})
}

fn request() -> LlmRequest {
    LlmRequest::new(MODEL)
        .system("Answer in one word.")
        .user("Sky colour?")
        .model_turn("Blue.")
        .user("And at night?")
        .setting("temperature", json!(0.2))
}

fn request_body() -> Value {
    json!({
        "contents": [
            {"role": "user", "parts": [{"text": "Sky colour?"}]},
            {"role": "model", "parts": [{"text": "Blue."}]},
            {"role": "user", "parts": [{"text": "And at night?"}]}
        ],
        "systemInstruction": {"parts": [{"text": "Answer in one word."}]},
        "generationConfig": {"temperature": 0.2}
    })
}

/// The header names of a request, sorted.
fn header_names(headers: &[(String, String)]) -> Vec<&str> {
    let mut names: Vec<&str> = headers.iter().map(|(name, _)| name.as_str()).collect();
    names.sort_unstable();
    names
}

async fn next_chunk(stream: &mut reel_llm::LlmStream) -> LlmChunk {
    match stream.next().await {
        Some(Ok(chunk)) => chunk,
        other => panic!("expected a chunk, got {other:?}"),
    }
}

async fn next_error(stream: &mut reel_llm::LlmStream) -> String {
    match stream.next().await {
        Some(Err(error)) => error.to_string(),
        other => panic!("expected an error, got {other:?}"),
    }
}

#[tokio::test(start_paused = true)]
async fn generate_posts_the_request_with_the_key_in_a_header_and_reads_the_answer() {
    let standin = GeminiStandin::bind().await;
    standin.push(Answer::json(&json!({
        "candidates": [{
            "content": {"role": "model", "parts": [
                {"text": "Let me think about night skies.", "thought": true},
                {"text": "Black"},
                {"text": "."}
            ]},
            "finishReason": "STOP",
            "index": 0
        }],
        "usageMetadata": {
            "promptTokenCount": 21, "candidatesTokenCount": 2,
            "thoughtsTokenCount": 9, "totalTokenCount": 32
        },
        "modelVersion": "gemini-2.5-flash",
        "responseId": "abc"
    })));

    let answer = llm(&standin).generate(request()).await.unwrap();

    assert_eq!(
        answer,
        LlmResponse {
            text: "Black.".into(),
            finish_reason: Some("STOP".into()),
            usage: Some(LlmUsage {
                prompt_tokens: 21,
                response_tokens: 2,
                total_tokens: 32
            }),
            ..LlmResponse::default()
        }
    );
    let requests = standin.requests();
    assert_eq!(requests.len(), 1);
    let sent = &requests[0];
    assert_eq!(sent.method, "POST");
    assert_eq!(sent.path, "/v1beta/models/gemini-2.5-flash:generateContent");
    assert_eq!(sent.query, None);
    assert_eq!(sent.body, request_body());
    assert_eq!(
        header_names(&sent.headers),
        [
            "content-length",
            "content-type",
            "host",
            "user-agent",
            "x-goog-api-key"
        ]
    );
    assert_eq!(sent.header("x-goog-api-key"), Some(STANDIN_API_KEY));
    assert_eq!(sent.header("content-type"), Some("application/json"));
    assert_eq!(sent.header("user-agent"), Some("reel/0.1.0"));
    assert_eq!(
        sent.header("host"),
        Some(standin.local_addr().to_string().as_str())
    );
    let elsewhere = sent
        .headers
        .iter()
        .filter(|(name, _)| name != "x-goog-api-key")
        .any(|(_, value)| value.contains(STANDIN_API_KEY));
    assert!(!elsewhere && !sent.path.contains(STANDIN_API_KEY));
}

#[tokio::test(start_paused = true)]
async fn generate_stream_asks_for_sse_and_yields_one_chunk_per_event() {
    let standin = GeminiStandin::bind().await;
    standin.push(Answer::sse([
        json!({"candidates": [{"content": {"role": "model", "parts": [
            {"text": "Thinking…", "thought": true}
        ]}}]}),
        text_event("Dark"),
        json!({"candidates": [{"content": {"role": "model", "parts": [{"text": " blue"}]}}],
               "usageMetadata": {"promptTokenCount": 21, "totalTokenCount": 21}}),
        json!({"candidates": [{"content": {"role": "model", "parts": [{"text": "."}]},
                               "finishReason": "STOP"}],
               "usageMetadata": {"promptTokenCount": 21, "candidatesTokenCount": 3,
                                 "totalTokenCount": 24}}),
    ]));

    let mut stream = llm(&standin).generate_stream(request()).await.unwrap();
    let mut chunks = Vec::new();
    while let Some(chunk) = stream.next().await {
        chunks.push(chunk.unwrap());
    }

    assert_eq!(
        chunks,
        [
            LlmChunk::text(""),
            LlmChunk::text("Dark"),
            LlmChunk {
                text: " blue".into(),
                finish_reason: None,
                usage: Some(LlmUsage {
                    prompt_tokens: 21,
                    response_tokens: 0,
                    total_tokens: 21
                }),
                ..LlmChunk::default()
            },
            LlmChunk {
                text: ".".into(),
                finish_reason: Some("STOP".into()),
                usage: Some(LlmUsage {
                    prompt_tokens: 21,
                    response_tokens: 3,
                    total_tokens: 24
                }),
                ..LlmChunk::default()
            },
        ]
    );
    let sent = &standin.requests()[0];
    assert_eq!(
        sent.path,
        "/v1beta/models/gemini-2.5-flash:streamGenerateContent"
    );
    assert_eq!(sent.query.as_deref(), Some("alt=sse"));
    assert_eq!(sent.header("x-goog-api-key"), Some(STANDIN_API_KEY));
    assert_eq!(sent.body, request_body());
}

#[tokio::test]
async fn events_split_across_writes_come_out_whole_and_in_order() {
    let standin = GeminiStandin::bind().await;
    let second = r#"{"candidates": [{"content": {"parts": [{"text": "wor"#;
    standin.push(
        Answer::stream()
            // A comment, then the first event whole and the start of the second.
            .write(format!(
                ": keep-alive\r\ndata: {}\r\n\r\ndata: {second}",
                text_event("hello ")
            ))
            .pause()
            // The rest of the second, with its CR LF split from the blank line.
            .write("ld\"}]}}]}\r")
            .pause()
            // A third event whose JSON spans two data lines, LF line ends.
            .write("\n\r\ndata: {\"candidates\": [{\"content\": {\"parts\":\ndata: [{\"text\": \"!\"}]}, \"finishReason\": \"STOP\"}]}\n\n"),
    );

    let mut stream = llm(&standin).generate_stream(request()).await.unwrap();

    assert_eq!(next_chunk(&mut stream).await, LlmChunk::text("hello "));
    // The second event's end has not been written yet: nothing more can come out.
    assert!(stream.next().now_or_never().is_none());
    standin.resume();
    assert!(stream.next().now_or_never().is_none());
    standin.resume();
    assert_eq!(next_chunk(&mut stream).await, LlmChunk::text("world"));
    assert_eq!(
        next_chunk(&mut stream).await,
        LlmChunk {
            text: "!".into(),
            finish_reason: Some("STOP".into()),
            usage: None,
            ..LlmChunk::default()
        }
    );
    assert!(stream.next().await.is_none());
}

#[tokio::test(start_paused = true)]
async fn generate_and_generate_stream_send_the_same_body_to_their_own_methods() {
    let standin = GeminiStandin::bind().await;
    standin.push(Answer::json(&text_event("a")));
    standin.push(Answer::sse([text_event("a")]));
    let llm = llm(&standin);

    let whole = llm.generate(request()).await.unwrap();
    let streamed = reel_llm::collect_stream(llm.generate_stream(request()).await.unwrap())
        .await
        .unwrap();

    assert_eq!(whole, streamed);
    let requests = standin.requests();
    let targets: Vec<(&str, Option<&str>)> = requests
        .iter()
        .map(|sent| (sent.path.as_str(), sent.query.as_deref()))
        .collect();
    assert_eq!(
        targets,
        [
            ("/v1beta/models/gemini-2.5-flash:generateContent", None),
            (
                "/v1beta/models/gemini-2.5-flash:streamGenerateContent",
                Some("alt=sse")
            ),
        ]
    );
    assert_eq!(requests[0].body, requests[1].body);
}

#[tokio::test(start_paused = true)]
async fn the_request_names_the_model_with_or_without_its_prefix() {
    let standin = GeminiStandin::bind().await;
    for _ in 0..3 {
        standin.push(Answer::json(&text_event("ok")));
    }
    let llm = llm(&standin);

    llm.generate(LlmRequest::new("models/gemini-2.0-flash").user("a"))
        .await
        .unwrap();
    llm.generate(LlmRequest::new("gemini-2.5-pro").user("b"))
        .await
        .unwrap();
    llm.generate(LlmRequest::new("").user("c")).await.unwrap();

    let paths: Vec<String> = standin.requests().into_iter().map(|r| r.path).collect();
    assert_eq!(
        paths,
        [
            "/v1beta/models/gemini-2.0-flash:generateContent",
            "/v1beta/models/gemini-2.5-pro:generateContent",
            "/v1beta/models/gemini-2.5-flash:generateContent",
        ]
    );
    assert_eq!(llm.model_id(), MODEL);
}

#[tokio::test(start_paused = true)]
async fn an_error_status_is_an_http_error_with_the_api_message_and_no_key() {
    let standin = GeminiStandin::bind().await;
    standin.push(Answer::api_error(
        429,
        "RESOURCE_EXHAUSTED",
        "Quota exceeded for quota metric 'Generate Content API requests per minute'.",
    ));
    standin.push(Answer::api_error(
        400,
        "INVALID_ARGUMENT",
        &format!("API key not valid: {STANDIN_API_KEY}"),
    ));
    standin.push(Answer::status(
        502,
        "text/html",
        "<html><body>Bad gateway</body></html>",
    ));
    let llm = llm(&standin);
    let base = standin.base_url();

    let quota = llm.generate(request()).await.unwrap_err();
    let echoed = llm.generate_stream(request()).await.err().unwrap();
    let proxy = llm.generate(request()).await.unwrap_err();

    assert_eq!(
        quota.to_string(),
        format!(
            "the model API answered 429 for {base}/v1beta/models/gemini-2.5-flash:generateContent: \
             Quota exceeded for quota metric 'Generate Content API requests per minute'."
        )
    );
    assert!(matches!(quota, LlmError::Http { status: 429, .. }));
    assert_eq!(
        echoed.to_string(),
        format!(
            "the model API answered 400 for \
             {base}/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse: \
             API key not valid: REDACTED"
        )
    );
    assert_eq!(
        proxy.to_string(),
        format!(
            "the model API answered 502 for {base}/v1beta/models/gemini-2.5-flash:generateContent: \
             <html><body>Bad gateway</body></html>"
        )
    );
}

#[tokio::test(start_paused = true)]
async fn a_blocked_prompt_is_blocked_in_both_calls() {
    let standin = GeminiStandin::bind().await;
    let blocked = json!({
        "promptFeedback": {"blockReason": "PROHIBITED_CONTENT"},
        "usageMetadata": {"promptTokenCount": 7, "totalTokenCount": 7}
    });
    standin.push(Answer::json(&blocked));
    standin.push(Answer::sse([blocked]));
    let llm = llm(&standin);

    let error = llm.generate(request()).await.unwrap_err();
    let mut stream = llm.generate_stream(request()).await.unwrap();

    let expected = "the model refused the request: PROHIBITED_CONTENT";
    assert_eq!(error.to_string(), expected);
    assert!(matches!(error, LlmError::Blocked { .. }));
    assert_eq!(next_error(&mut stream).await, expected);
    assert!(stream.next().await.is_none());
}

#[tokio::test(start_paused = true)]
async fn an_event_that_is_not_json_is_a_decode_error_naming_the_event() {
    let standin = GeminiStandin::bind().await;
    standin.push(
        Answer::sse([text_event("one")])
            .write("data: {\"candidates\": [\r\n\r\n")
            .event(&text_event("never read")),
    );
    standin.push(Answer::status(200, "application/json", "not json"));
    let llm = llm(&standin);

    let mut stream = llm.generate_stream(request()).await.unwrap();
    assert_eq!(next_chunk(&mut stream).await, LlmChunk::text("one"));
    assert_eq!(
        next_error(&mut stream).await,
        "could not read the model's answer (event 2 of the stream): \
         EOF while parsing a list at line 1 column 16"
    );
    assert!(stream.next().await.is_none());
    assert_eq!(
        llm.generate(request()).await.unwrap_err().to_string(),
        "could not read the model's answer (the response body): \
         expected ident at line 1 column 2"
    );
}

#[tokio::test(start_paused = true)]
async fn answers_over_the_size_limit_are_refused_after_what_came_before() {
    let standin = GeminiStandin::bind().await;
    let big = text_event(&"x".repeat(200));
    // The first event fits; the second goes over the limit in the same write.
    standin
        .push(Answer::stream().write(format!("data: {}\n\ndata: {big}\n\n", text_event("small"))));
    standin.push(Answer::json(&big));
    let llm = standin
        .llm_builder(MODEL)
        .max_answer_bytes(100)
        .build()
        .unwrap();

    let mut stream = llm.generate_stream(request()).await.unwrap();
    assert_eq!(next_chunk(&mut stream).await, LlmChunk::text("small"));
    assert_eq!(
        next_error(&mut stream).await,
        "could not read the model's answer (event 2 of the stream): it is larger than 100 bytes"
    );
    assert!(stream.next().await.is_none());
    assert_eq!(
        llm.generate(request()).await.unwrap_err().to_string(),
        "could not read the model's answer (the response body): it is larger than 100 bytes"
    );
}

#[tokio::test(start_paused = true)]
async fn a_stream_without_events_is_a_decode_error() {
    let standin = GeminiStandin::bind().await;
    standin.push(Answer::stream().write(": nothing but a comment\n\n"));

    let mut stream = llm(&standin).generate_stream(request()).await.unwrap();

    assert_eq!(
        next_error(&mut stream).await,
        "could not read the model's answer (the stream): it ended without an event"
    );
    assert!(stream.next().await.is_none());
}

#[tokio::test(start_paused = true)]
async fn a_stream_cut_midway_gives_its_chunks_then_a_transport_error() {
    let standin = GeminiStandin::bind().await;
    standin.push(Answer::sse([text_event("half")]).write("data: {").cut());
    standin.push(Answer::json(&text_event("whole")).cut());
    let llm = llm(&standin);

    let mut stream = llm.generate_stream(request()).await.unwrap();

    assert_eq!(next_chunk(&mut stream).await, LlmChunk::text("half"));
    assert_eq!(
        next_error(&mut stream).await,
        format!(
            "could not reach the model API at \
             {}/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse: \
             error reading a body from connection: unexpected EOF during chunk size line",
            standin.base_url()
        )
    );
    assert!(stream.next().await.is_none());
    assert_eq!(
        llm.generate(request()).await.unwrap_err().to_string(),
        format!(
            "could not reach the model API at \
             {}/v1beta/models/gemini-2.5-flash:generateContent: \
             error reading a body from connection: unexpected EOF during chunk size line",
            standin.base_url()
        )
    );
}

#[tokio::test(start_paused = true)]
async fn a_silent_server_runs_into_the_read_timeout() {
    let standin = GeminiStandin::bind().await;
    standin.push(Answer::hang());
    standin.push(Answer::sse([text_event("first")]).pause());
    let llm = standin
        .llm_builder(MODEL)
        .read_timeout(Duration::from_secs(30))
        .build()
        .unwrap();
    let base = standin.base_url();

    let started = tokio::time::Instant::now();
    let silent = llm.generate(request()).await.unwrap_err();
    assert_eq!(started.elapsed(), Duration::from_secs(30));
    let mut stream = llm.generate_stream(request()).await.unwrap();
    assert_eq!(next_chunk(&mut stream).await, LlmChunk::text("first"));
    let stalled = next_error(&mut stream).await;

    assert_eq!(
        silent.to_string(),
        format!(
            "could not reach the model API at {base}/v1beta/models/gemini-2.5-flash:generateContent: \
             no answer within 30s"
        )
    );
    assert_eq!(
        stalled,
        format!(
            "could not reach the model API at \
             {base}/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse: \
             nothing arrived for 30s"
        )
    );
    assert_eq!(started.elapsed(), Duration::from_secs(60));
}

#[tokio::test(start_paused = true)]
async fn nothing_listening_is_a_transport_error() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    drop(listener);
    let llm = GeminiLlm::builder(MODEL)
        .api_key("k")
        .base_url(&base)
        .build()
        .unwrap();

    let error = llm.generate(request()).await.unwrap_err();

    assert_eq!(
        error.to_string(),
        format!(
            "could not reach the model API at {base}/v1beta/models/gemini-2.5-flash:generateContent: \
             client error (Connect): tcp connect error: Connection refused (os error 111)"
        )
    );
}

#[tokio::test(start_paused = true)]
async fn the_key_comes_from_the_first_variable_set() {
    let standin = GeminiStandin::bind().await;
    standin.push(Answer::json(&text_event("ok")));
    let vars = |name: &str| match name {
        "GEMINI_API_KEY" => Some("  ".to_owned()),
        "GOOGLE_GENAI_API_KEY" => Some("genai-key".to_owned()),
        "GOOGLE_API_KEY" => Some("google-key".to_owned()),
        _ => None,
    };

    let llm = GeminiLlm::builder_from_vars(MODEL, vars)
        .unwrap()
        .base_url(standin.base_url())
        .build()
        .unwrap();
    llm.generate(request()).await.unwrap();

    assert_eq!(
        standin.requests()[0].header("x-goog-api-key"),
        Some("genai-key")
    );
    assert_eq!(
        GeminiLlm::from_vars(MODEL, vars).unwrap().base_url(),
        "https://generativelanguage.googleapis.com"
    );
}

#[tokio::test(start_paused = true)]
async fn the_sdks_base_url_variable_points_calls_at_a_local_server_without_a_key() {
    let standin = GeminiStandin::bind().await;
    standin.push(Answer::json(&text_event("ok")));
    let base = standin.base_url();
    let vars = move |name: &str| (name == "GOOGLE_GEMINI_BASE_URL").then(|| base.clone());

    let llm = GeminiLlm::from_vars(MODEL, vars).unwrap();
    assert_eq!(llm.base_url(), standin.base_url());
    llm.generate(request()).await.unwrap();

    let requests = standin.requests();
    assert_eq!(
        requests[0].path,
        "/v1beta/models/gemini-2.5-flash:generateContent"
    );
    assert_eq!(requests[0].header("x-goog-api-key"), None);
    let bad = GeminiLlm::from_vars(MODEL, |name: &str| {
        (name == "GOOGLE_GEMINI_BASE_URL").then(|| "localhost:1".to_owned())
    })
    .unwrap_err();
    assert!(matches!(bad, LlmError::Endpoint(_)), "{bad:?}");
}

#[test]
fn no_key_is_a_missing_api_key_error() {
    let error = GeminiLlm::from_vars(MODEL, |_| None).unwrap_err();
    assert_eq!(
        error.to_string(),
        "no API key for the Gemini API: set GEMINI_API_KEY (or GOOGLE_GENAI_API_KEY / GOOGLE_API_KEY)"
    );
    assert!(matches!(error, LlmError::MissingApiKey { .. }));

    let vertex_without_token = |name: &str| match name {
        "GOOGLE_GENAI_USE_VERTEXAI" => Some("true".to_owned()),
        "GOOGLE_CLOUD_PROJECT" => Some("p".to_owned()),
        _ => None,
    };
    assert_eq!(
        GeminiLlm::from_vars(MODEL, vertex_without_token)
            .unwrap_err()
            .to_string(),
        "no API key for the Gemini API: set GOOGLE_ACCESS_TOKEN (for Vertex AI)"
    );
}

#[test]
fn an_unusable_base_url_is_an_error_naming_the_variable() {
    let vars = |name: &str| match name {
        "GEMINI_API_KEY" => Some("k".to_owned()),
        "GOOGLE_GEMINI_BASE_URL" => Some("ftp://h".to_owned()),
        _ => None,
    };
    let error = GeminiLlm::from_vars(MODEL, vars).unwrap_err();
    assert_eq!(
        error.to_string(),
        "GOOGLE_GEMINI_BASE_URL=ftp://h is not a usable base URL: the scheme is not http, \
         https, ws or wss"
    );
    assert!(matches!(error, LlmError::Endpoint(_)), "{error:?}");
}

#[tokio::test(start_paused = true)]
async fn vertex_calls_its_own_path_with_a_bearer_token() {
    let standin = GeminiStandin::bind().await;
    standin.push(Answer::json(&text_event("ok")));
    standin.push(Answer::sse([text_event("ok")]));
    let vars = |name: &str| match name {
        "GOOGLE_GENAI_USE_VERTEXAI" => Some("1".to_owned()),
        "GOOGLE_CLOUD_PROJECT" => Some("reel-test".to_owned()),
        "GOOGLE_CLOUD_LOCATION" => Some("europe-west4".to_owned()),
        "GOOGLE_ACCESS_TOKEN" => Some("ya29.token".to_owned()),
        "GEMINI_API_KEY" => Some("unused".to_owned()),
        _ => None,
    };
    let builder = GeminiLlm::builder_from_vars(MODEL, vars).unwrap();
    assert_eq!(
        builder.clone().build().unwrap().base_url(),
        "https://europe-west4-aiplatform.googleapis.com"
    );
    let llm = builder.base_url(standin.base_url()).build().unwrap();

    llm.generate(request()).await.unwrap();
    reel_llm::collect_stream(llm.generate_stream(request()).await.unwrap())
        .await
        .unwrap();

    let requests = standin.requests();
    let path =
        "/v1/projects/reel-test/locations/europe-west4/publishers/google/models/gemini-2.5-flash";
    assert_eq!(requests[0].path, format!("{path}:generateContent"));
    assert_eq!(requests[1].path, format!("{path}:streamGenerateContent"));
    assert_eq!(requests[1].query.as_deref(), Some("alt=sse"));
    for sent in &requests {
        assert_eq!(sent.header("authorization"), Some("Bearer ya29.token"));
        assert_eq!(sent.header("x-goog-api-key"), None);
        assert_eq!(sent.body, request_body());
    }
}

fn self_signed() -> rcgen::CertifiedKey<rcgen::KeyPair> {
    rcgen::generate_simple_self_signed(vec!["127.0.0.1".to_owned()]).unwrap()
}

#[tokio::test]
async fn tls_works_with_a_custom_root_and_fails_without_it() {
    let certified = self_signed();
    let key = PrivateKeyDer::try_from(certified.signing_key.serialize_der()).unwrap();
    let standin = GeminiStandin::bind_tls(vec![certified.cert.der().clone()], key).await;
    standin.push(Answer::sse([text_event("over TLS")]));
    let base = standin.base_url();
    assert!(base.starts_with("https://127.0.0.1:"));

    let trusting = GeminiLlm::builder(MODEL)
        .api_key("k")
        .base_url(&base)
        .root_certificates_pem(certified.cert.pem())
        .build()
        .unwrap();
    let answer = reel_llm::collect_stream(trusting.generate_stream(request()).await.unwrap())
        .await
        .unwrap();
    let untrusting = GeminiLlm::builder(MODEL)
        .api_key("k")
        .base_url(&base)
        .build()
        .unwrap();
    let refused = untrusting.generate(request()).await.unwrap_err();

    assert_eq!(answer.text, "over TLS");
    assert_eq!(standin.requests()[0].header("x-goog-api-key"), Some("k"));
    assert_eq!(standin.requests().len(), 1);
    assert_eq!(
        refused.to_string(),
        format!(
            "could not reach the model API at {base}/v1beta/models/gemini-2.5-flash:generateContent: \
             client error (Connect): invalid peer certificate: UnknownIssuer"
        )
    );
}

#[tokio::test(start_paused = true)]
async fn an_unscripted_request_gets_an_api_error_saying_so() {
    let standin = GeminiStandin::bind().await;

    let error = llm(&standin).generate(request()).await.unwrap_err();

    assert_eq!(
        error.to_string(),
        format!(
            "the model API answered 500 for {}/v1beta/models/gemini-2.5-flash:generateContent: \
             gemini stand-in: no answer scripted for POST /v1beta/models/gemini-2.5-flash:generateContent",
            standin.base_url()
        )
    );
}
