//! `SessionConfig` writes byte-identical setup frames, checked against golden files.
//! After an intended change, re-bless with `REEL_BLESS=1 cargo test -p reel-protocol --test it setup_golden::`.

use std::path::Path;

use reel_protocol::{
    ActivityHandling, AutomaticActivityDetection, EndSensitivity, FunctionDeclaration, Platform,
    SessionConfig, StartSensitivity, decode_client,
};
use serde_json::json;

fn weather() -> FunctionDeclaration {
    FunctionDeclaration {
        name: Some("get_weather".into()),
        description: Some("Get the current weather for a city.".into()),
        parameters: Some(json!({
            "type": "object",
            "properties": {"city": {"type": "string", "description": "City name"}},
            "required": ["city"]
        })),
        ..FunctionDeclaration::default()
    }
}

fn book() -> FunctionDeclaration {
    FunctionDeclaration {
        name: Some("book_table".into()),
        description: Some("Book a table.".into()),
        parameters: Some(json!({
            "type": "object",
            "properties": {"people": {"type": "integer"}, "time": {"type": "string"}},
            "required": ["people", "time"]
        })),
        ..FunctionDeclaration::default()
    }
}

fn full_config() -> SessionConfig {
    SessionConfig::new("gemini-live-2.5-flash-native-audio")
        .voice("Kore")
        .language("en-US")
        .temperature(0.7)
        .max_output_tokens(1024)
        .thinking_budget(1024)
        .include_thoughts()
        .affective_dialog(true)
        .system_instruction("You are a helpful weather assistant.")
        .function(weather())
        .function(book())
        .non_blocking("get_weather")
        .google_search()
        .input_transcription()
        .output_transcription()
        .vad(AutomaticActivityDetection {
            disabled: Some(false),
            start_of_speech_sensitivity: Some(StartSensitivity::Low),
            end_of_speech_sensitivity: Some(EndSensitivity::Low),
            prefix_padding_ms: Some(20),
            silence_duration_ms: Some(500),
            ..AutomaticActivityDetection::default()
        })
        .session_resume_from("handle-1")
        .context_compression(25600, 12800)
        .proactive_audio(true)
}

fn vertex() -> Platform {
    Platform::Vertex {
        project: "my-project".into(),
        location: "us-central1".into(),
    }
}

fn check_golden(name: &str, frame: &[u8]) {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/golden")
        .join(name);
    if std::env::var_os("REEL_BLESS").is_some() {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, frame).unwrap();
    }
    let golden = std::fs::read(&path)
        .unwrap_or_else(|e| panic!("{}: {e} (bless with REEL_BLESS=1)", path.display()));
    assert_eq!(
        String::from_utf8_lossy(frame),
        String::from_utf8_lossy(&golden),
        "{name} differs from its golden file"
    );
}

#[test]
fn minimal_setup_matches_its_golden_file() {
    check_golden(
        "setup_minimal.json",
        &SessionConfig::default().setup_frame(&Platform::GoogleAi),
    );
}

#[test]
fn full_google_ai_setup_matches_its_golden_file() {
    check_golden(
        "setup_full_google_ai.json",
        &full_config().setup_frame(&Platform::GoogleAi),
    );
}

#[test]
fn full_vertex_setup_strips_what_vertex_rejects() {
    let frame = full_config().setup_frame(&vertex());
    check_golden("setup_full_vertex.json", &frame);
    let setup = decode_client(&frame).unwrap().setup.unwrap();
    assert_eq!(
        setup.model.as_deref(),
        Some(
            "projects/my-project/locations/us-central1/publishers/google/models/gemini-live-2.5-flash-native-audio"
        )
    );
    assert_eq!(setup.generation_config.unwrap().thinking_config, None);
    let declarations = setup.tools.unwrap()[0]
        .function_declarations
        .clone()
        .unwrap();
    assert!(declarations.iter().all(|d| d.behavior.is_none()));
}

#[test]
fn equal_configs_give_identical_bytes_whatever_the_declaration_order() {
    let a = SessionConfig::default()
        .function(weather())
        .function(book());
    let b = SessionConfig::default()
        .function(book())
        .function(weather());
    assert_eq!(
        a.setup_frame(&Platform::GoogleAi),
        b.setup_frame(&Platform::GoogleAi)
    );
    let frames: Vec<Vec<u8>> = (0..5)
        .map(|_| full_config().setup_frame(&Platform::GoogleAi))
        .collect();
    assert!(frames.windows(2).all(|w| w[0] == w[1]));
    assert_eq!(a.function_names(), ["book_table", "get_weather"]);
}

#[test]
fn config_knobs_land_where_the_protocol_puts_them() {
    let config = SessionConfig::default()
        .text_only()
        .manual_activity_detection()
        .session_resume(true);
    assert!(!config.server_vad());
    let frame: serde_json::Value =
        serde_json::from_slice(&config.setup_frame(&Platform::GoogleAi)).unwrap();
    assert_eq!(
        frame,
        json!({"setup": {
            "model": "models/gemini-live-2.5-flash-native-audio",
            "generationConfig": {"responseModalities": ["TEXT"]},
            "sessionResumption": {},
            "realtimeInputConfig": {"automaticActivityDetection": {"disabled": true}}
        }})
    );
    let encoder = config.command_encoder(&Platform::GoogleAi);
    assert!(!encoder.automatic_activity_detection);
    let handling = reel_protocol::RealtimeInputConfig {
        activity_handling: Some(ActivityHandling::NoInterruption),
        ..Default::default()
    };
    assert_eq!(
        serde_json::to_string(&handling).unwrap(),
        r#"{"activityHandling":"NO_INTERRUPTION"}"#
    );
}
