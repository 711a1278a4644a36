//! How client frames are matched: canonical (casing, key order, spacing and base64
//! alphabet never matter), strict, and loose with the built-in or a file's rules.

use crate::server_support;

use reel_protocol::json::PathDiff;
use reel_tape_server::{
    CLOSE_INVALID_FRAME, CLOSE_MISMATCH, Expected, IGNORED, IgnoreRule, MatchRules, Matching,
    Outcome, TapeLibrary, TapeServer,
};
use serde_json::json;
use server_support::*;

/// Audio whose base64 holds `+` and `/` in the standard alphabet (`-` and `_` URL-safe).
const AUDIO: &str =
    r#"{"realtimeInput":{"audio":{"mimeType":"audio/pcm;rate=16000","data":"+/8A+w=="}}}"#;
const HEARD: &str = r#"{"serverContent":{"inputTranscription":{"text":"hm"}}}"#;

fn voice_session() -> Vec<Exchange> {
    vec![
        Exchange {
            client: SETUP,
            server: vec![SETUP_COMPLETE],
        },
        Exchange {
            client: AUDIO,
            server: vec![HEARD],
        },
        Exchange {
            client: HELLO,
            server: vec![HI, THERE, TURN_COMPLETE],
        },
    ]
}

async fn server(matching: Matching) -> reel_tape_server::RunningServer {
    TapeServer::replay(TapeLibrary::new().with_entries("voice", tape_of(&voice_session())))
        .matching(matching)
        .start()
        .await
        .unwrap()
}

#[tokio::test]
async fn python_sdk_frames_match_a_camel_case_tape_strictly() {
    let mut server = server(Matching::Strict).await;
    let mut client = Client::connect(&server.live_url()).await;
    // What google-genai writes: `json.dumps` spacing, snake_case keys where a pydantic
    // object was dumped, URL-safe base64, keys in another order.
    let python_setup = r#"{"setup": {"generationConfig": {"responseModalities": ["TEXT"]}, "model": "models/gemini-live-2.5-flash", "tools": [{"functionDeclarations": [{"name": "get_weather", "description": "Get weather", "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}]}]}}"#;
    let python_audio = r#"{"realtime_input": {"audio": {"data": "-_8A-w==", "mime_type": "audio/pcm;rate=16000"}}}"#;
    let python_hello = r#"{"client_content": {"turns": [{"parts": [{"text": "Hello"}], "role": "user"}], "turnComplete": true}}"#;
    client.send(python_setup).await;
    assert_eq!(client.texts(1).await, [SETUP_COMPLETE]);
    client.send(python_audio).await;
    assert_eq!(client.texts(1).await, [HEARD]);
    client.send(python_hello).await;
    assert_eq!(client.texts(3).await, [HI, THERE, TURN_COMPLETE]);
    client.close().await;
    assert!(matches!(
        server.next_report().await.unwrap().outcome,
        Outcome::Replayed { frames: 3, .. }
    ));
}

const OTHER_AUDIO: &str =
    r#"{"realtimeInput":{"audio":{"mimeType":"audio/pcm;rate=16000","data":"AAECAw=="}}}"#;

#[tokio::test]
async fn strict_matching_refuses_other_audio_bytes() {
    let mut server = server(Matching::Strict).await;
    let mut client = Client::connect(&server.live_url()).await;
    client.play(&voice_session()[..1]).await;
    client.send(OTHER_AUDIO).await;
    assert_eq!(
        client.next().await,
        Seen::Close(
            Some(CLOSE_MISMATCH),
            "reel: frame 2 does not match the tape at realtimeInput.audio.data".into()
        )
    );
    let report = server.next_report().await.unwrap();
    let Outcome::Diverged(mismatch) = report.outcome else {
        panic!("{report:?}");
    };
    assert_eq!(
        mismatch.expected,
        Expected::Frame {
            seq: 3,
            diffs: vec![PathDiff {
                path: "realtimeInput.audio.data".into(),
                expected: Some(json!("+/8A+w==")),
                actual: Some(json!("AAECAw==")),
            }],
        }
    );
}

#[tokio::test]
async fn loose_matching_ignores_audio_bytes_but_not_their_presence() {
    let mut server = server(Matching::loose()).await;
    let mut client = Client::connect(&server.live_url()).await;
    client.play(&voice_session()[..1]).await;
    client.send(OTHER_AUDIO).await;
    assert_eq!(client.texts(1).await, [HEARD]);
    client.play(&voice_session()[2..]).await;
    client.close().await;
    assert!(matches!(
        server.next_report().await.unwrap().outcome,
        Outcome::Replayed { frames: 3, .. }
    ));

    // Audio without its data is not audio with data.
    let mut client = Client::connect(&server.live_url()).await;
    client.play(&voice_session()[..1]).await;
    client
        .send(r#"{"realtimeInput":{"audio":{"mimeType":"audio/pcm;rate=16000"}}}"#)
        .await;
    assert_eq!(
        client.next().await,
        Seen::Close(
            Some(CLOSE_MISMATCH),
            "reel: frame 2 does not match the tape at realtimeInput.audio.data".into()
        )
    );
    let report = server.next_report().await.unwrap();
    let Outcome::Diverged(mismatch) = report.outcome else {
        panic!("{report:?}");
    };
    assert_eq!(
        mismatch.expected,
        Expected::Frame {
            seq: 3,
            diffs: vec![PathDiff {
                path: "realtimeInput.audio.data".into(),
                expected: Some(json!(IGNORED)),
                actual: None,
            }],
        }
    );
}

#[tokio::test]
async fn rules_from_a_file_ignore_what_they_name() {
    let dir = fresh_dir("rules-file");
    let rules_path = dir.join("rules.json");
    std::fs::write(
        &rules_path,
        r#"{"defaults": false, "ignore": [{"path": "toolResponse.functionResponses[*].response.fetched_at", "note": "wall-clock time"}]}"#,
    )
    .unwrap();
    let rules = MatchRules::from_file(&rules_path).unwrap();
    assert_eq!(rules.ignore.len(), 1);
    assert_eq!(
        rules.effective(),
        vec![IgnoreRule {
            path: "toolResponse.functionResponses[*].response.fetched_at".into(),
            ignore: reel_tape_server::Ignore::Value,
            note: Some("wall-clock time".into()),
        }]
    );
    let timed_response = r#"{"toolResponse":{"functionResponses":[{"id":"call-1","name":"get_weather","response":{"temp_c":21,"fetchedAt":"2025-01-01T00:00:00Z"}}]}}"#;
    let tool_session = vec![
        Exchange {
            client: SETUP,
            server: vec![SETUP_COMPLETE],
        },
        Exchange {
            client: WEATHER,
            server: vec![TOOL_CALL],
        },
        Exchange {
            client: timed_response,
            server: vec![ANSWER, DONE],
        },
    ];
    let mut server =
        TapeServer::replay(TapeLibrary::new().with_entries("tool", tape_of(&tool_session)))
            .matching(Matching::Loose(rules))
            .start()
            .await
            .unwrap();
    let mut client = Client::connect(&server.live_url()).await;
    client.play(&tool_session[..2]).await;
    client
        .send(&timed_response.replace("2025-01-01T00:00:00Z", "2026-06-30T12:00:00Z"))
        .await;
    assert_eq!(client.texts(2).await, [ANSWER, DONE]);
    client.close().await;
    assert!(matches!(
        server.next_report().await.unwrap().outcome,
        Outcome::Replayed { frames: 3, .. }
    ));

    // Ids still matter.
    let mut client = Client::connect(&server.live_url()).await;
    client.play(&tool_session[..2]).await;
    client
        .send(&timed_response.replace("call-1", "call-9"))
        .await;
    assert_eq!(
        client.next().await,
        Seen::Close(
            Some(CLOSE_MISMATCH),
            "reel: frame 3 does not match the tape at toolResponse.functionResponses[0].id".into()
        )
    );
    assert!(matches!(
        server.next_report().await.unwrap().outcome,
        Outcome::Diverged(_)
    ));
}

#[tokio::test]
async fn a_bad_rules_file_is_refused_with_its_position() {
    let dir = fresh_dir("rules-bad");
    let path = dir.join("rules.json");
    std::fs::write(&path, "{\"ignore\": [\"a[x]\"]}").unwrap();
    assert_eq!(
        MatchRules::from_file(&path).unwrap_err().to_string(),
        "match rule: `a[x]` is not a JSON path: a bracket must hold an index or `*` and be closed"
    );
    std::fs::write(&path, "{\"ignore\": 3}").unwrap();
    assert_eq!(
        MatchRules::from_file(&path).unwrap_err().to_string(),
        format!(
            "{} line 1 column 12 is not valid match rules: invalid type: integer `3`, expected a sequence",
            path.display()
        )
    );
}

#[tokio::test]
async fn a_frame_that_is_not_a_live_frame_closes_1007() {
    let mut server = server(Matching::Strict).await;
    let mut client = Client::connect(&server.live_url()).await;
    client.play(&voice_session()[..1]).await;
    client.send("{not json").await;
    assert_eq!(
        client.next().await,
        Seen::Close(
            Some(CLOSE_INVALID_FRAME),
            "reel: frame 2 is not a Live client frame".into()
        )
    );
    assert_eq!(
        server.next_report().await.unwrap().outcome,
        Outcome::InvalidFrame {
            frame: 2,
            error: reel_protocol::decode_client(b"{not json")
                .unwrap_err()
                .to_string(),
        }
    );
}
