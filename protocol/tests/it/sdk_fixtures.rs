//! Frames captured from the official SDKs (google-genai for Python, @google/genai for JS)
//! decode, and the same session sent by both SDKs reads as the same messages, whatever
//! casing and base64 alphabet each one used. Re-capture with
//! `scripts/capture-sdk-frames/run.sh`.

use reel_protocol::json::camel_case;
use std::path::{Path, PathBuf};

use reel_protocol::{ClientMessage, ClientMessageKind, decode_client, encode};
use serde_json::Value;

fn fixtures(sdk: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/sdk")
        .join(sdk)
}

/// The frames listed in an SDK's manifest, in order: (file, top-level key, bytes).
fn frames(sdk: &str) -> Vec<(String, String, Vec<u8>)> {
    let dir = fixtures(sdk);
    let manifest: Value =
        serde_json::from_slice(&std::fs::read(dir.join("manifest.json")).unwrap()).unwrap();
    manifest["frames"]
        .as_array()
        .unwrap()
        .iter()
        .map(|frame| {
            let file = frame["file"].as_str().unwrap().to_owned();
            let key = frame["top_level_key"].as_str().unwrap().to_owned();
            let bytes = std::fs::read(dir.join(&file)).unwrap();
            (file, key, bytes)
        })
        .collect()
}

fn decode_all(sdk: &str) -> Vec<ClientMessage> {
    frames(sdk)
        .into_iter()
        .map(|(file, key, bytes)| {
            let message = decode_client(&bytes)
                .unwrap_or_else(|e| panic!("{sdk}/{file} does not decode: {e}"));
            let kind = message.kind().unwrap();
            assert_eq!(
                kind.as_str(),
                camel_case(&key).into_owned(),
                "{sdk}/{file}: kind {kind:?} but the wire key was {key}"
            );
            assert!(
                message.extra.is_empty(),
                "{sdk}/{file}: unknown top-level keys"
            );
            message
        })
        .collect()
}

#[test]
fn every_python_sdk_frame_decodes() {
    let messages = decode_all("python");
    assert_eq!(messages.len(), 15);
}

#[test]
fn every_js_sdk_frame_decodes_and_re_encodes_to_the_same_json() {
    let messages = decode_all("js");
    assert_eq!(messages.len(), 14);
    for ((file, _, bytes), message) in frames("js").into_iter().zip(&messages) {
        let original: Value = serde_json::from_slice(&bytes).unwrap();
        let encoded: Value = serde_json::from_slice(&encode(message)).unwrap();
        assert_eq!(encoded, original, "js/{file}");
    }
}

#[test]
fn both_sdks_send_the_same_session() {
    let python = decode_all("python");
    let js = decode_all("js");
    // Frames 1–13 are the same calls in both clients. Python's 14th frame comes from the
    // deprecated `session.send()` (it has no JS counterpart); its 15th is JS's 14th.
    for (index, (py, js)) in python.iter().zip(&js).take(13).enumerate() {
        assert_eq!(py, js, "frame {:02}", index + 1);
    }
    assert_eq!(python[14], js[13]);
    assert_eq!(python[13].kind(), Some(ClientMessageKind::RealtimeInput));
}

#[test]
fn sdk_frames_carry_what_the_session_sent() {
    let python = decode_all("python");
    let setup = python[0].setup.as_ref().unwrap();
    assert_eq!(
        setup.model.as_deref(),
        Some("models/gemini-live-2.5-flash-native-audio")
    );
    let generation = setup.generation_config.as_ref().unwrap();
    let voice = generation
        .speech_config
        .as_ref()
        .and_then(|s| s.voice_config.as_ref())
        .and_then(|v| v.prebuilt_voice_config.as_ref())
        .and_then(|p| p.voice_name.as_deref());
    assert_eq!(voice, Some("Kore"));
    let compression = setup.context_window_compression.as_ref().unwrap();
    assert_eq!(compression.trigger_tokens.unwrap().0, 25600);
    let detection = setup
        .realtime_input_config
        .as_ref()
        .and_then(|r| r.automatic_activity_detection.as_ref())
        .unwrap();
    assert_eq!(detection.silence_duration_ms, Some(500));

    let response = &python[2]
        .tool_response
        .as_ref()
        .unwrap()
        .function_responses
        .as_ref()
        .unwrap()[0];
    assert_eq!(response.id.as_deref(), Some("call-1"));
    assert_eq!(response.response, Some(serde_json::json!({"temp_c": 21})));

    // 50 ms and 100 ms of 16 kHz PCM16 audio, from URL-safe base64.
    let audio = |message: &ClientMessage| {
        message
            .realtime_input
            .as_ref()
            .unwrap()
            .audio
            .as_ref()
            .unwrap()
            .bytes()
            .len()
    };
    assert_eq!(audio(&python[5]), 1600);
    assert_eq!(audio(&python[12]), 3200);
}
