//! The fluent chain sends exactly the setup frame the equivalent runtime
//! `LiveSessionBuilder` sends: compared byte for byte on both platforms, against a golden
//! text, and on the wire.

use std::time::Duration;

use reel_actors::LiveSessionBuilder;
use reel_actors::phases::{Phase, PhaseMachine};
use reel_actors::testing::ScriptedServer;
use reel_fluent::{Live, LiveBuilder};
use reel_protocol::{ApiEndpoint, AutomaticActivityDetection, Platform, Scheduling, SessionConfig};
use reel_tools::{SimpleTool, ToolDispatcher, TypedTool};
use serde::Deserialize;
use serde_json::json;

#[derive(Deserialize, schemars::JsonSchema)]
struct BookingArgs {
    /// How many people.
    party_size: u8,
    /// When, e.g. "19:30".
    time: String,
}

fn book_table() -> TypedTool {
    TypedTool::new(
        "book_table",
        "Books a table.",
        |args: BookingArgs, _ctx| async move { Ok(json!({"booked": args.party_size, "at": args.time})) },
    )
}

fn search_flights() -> SimpleTool {
    SimpleTool::new(
        "search_flights",
        "Searches flights.",
        None,
        |_args, _ctx| async { Ok(json!([])) },
    )
}

fn vad() -> AutomaticActivityDetection {
    AutomaticActivityDetection {
        prefix_padding_ms: Some(100),
        silence_duration_ms: Some(500),
        ..AutomaticActivityDetection::default()
    }
}

/// Every setup knob of the chain, tools registered out of order, a background tool and a
/// tool timeout (which does not reach the setup), and phases.
fn fluent() -> LiveBuilder {
    Live::builder()
        .model("gemini-live-2.5-flash-native-audio")
        .voice("Kore")
        .instruction("Overridden by the initial phase.")
        .temperature(0.4)
        .transcription(true, true)
        .vad(vad())
        .affective_dialog(true)
        .include_thoughts()
        .context_compression(4000, 2000)
        .session_resume(true)
        .tool(search_flights())
        .tool(book_table())
        .tool_background_with_scheduling("search_flights", Scheduling::Silent)
        .tool_timeout("book_table", Duration::from_secs(5))
        .phase("greeting", |p| {
            p.instruction("Greet the caller.")
                .tools(["book_table"])
                .transition("travel", |s| s.contains("app:destination"))
        })
        .phase("travel", |p| p.instruction("Find a flight.").terminal())
}

/// The same session, written on the runtime's API.
fn runtime(endpoint: ApiEndpoint) -> LiveSessionBuilder {
    let config = SessionConfig::new("gemini-live-2.5-flash-native-audio")
        .voice("Kore")
        .system_instruction("Overridden by the initial phase.")
        .temperature(0.4)
        .input_transcription()
        .output_transcription()
        .vad(vad())
        .affective_dialog(true)
        .include_thoughts()
        .context_compression(4000, 2000)
        .session_resume(true);
    let mut tools = ToolDispatcher::new();
    tools.register(search_flights()).unwrap();
    tools.register(book_table()).unwrap();
    tools
        .set_background("search_flights", Scheduling::Silent)
        .unwrap();
    tools
        .set_timeout("book_table", Duration::from_secs(5))
        .unwrap();
    let phases = PhaseMachine::builder("greeting")
        .phase(
            Phase::new("greeting")
                .instruction("Greet the caller.")
                .tools(["book_table"])
                .transition("travel", |s| s.contains("app:destination")),
        )
        .phase(
            Phase::new("travel")
                .instruction("Find a flight.")
                .terminal(),
        )
        .build()
        .unwrap();
    LiveSessionBuilder::new(config, endpoint)
        .dispatcher(tools)
        .phases(phases)
}

const GOLDEN: &str = concat!(
    r#"{"setup":{"model":"models/gemini-live-2.5-flash-native-audio","#,
    r#""generationConfig":{"responseModalities":["AUDIO"],"temperature":0.4,"#,
    r#""speechConfig":{"voiceConfig":{"prebuiltVoiceConfig":{"voiceName":"Kore"}}},"#,
    r#""thinkingConfig":{"includeThoughts":true},"enableAffectiveDialog":true},"#,
    r#""systemInstruction":{"parts":[{"text":"Greet the caller."}]},"#,
    r#""tools":[{"functionDeclarations":["#,
    r#"{"name":"book_table","description":"Books a table.","parameters":{"type":"object","properties":{"#,
    r#""party_size":{"type":"integer","description":"How many people.","minimum":0,"maximum":255},"#,
    r#""time":{"type":"string","description":"When, e.g. \"19:30\"."}},"required":["party_size","time"]}},"#,
    r#"{"name":"search_flights","description":"Searches flights.","behavior":"NON_BLOCKING"}]}],"#,
    r#""sessionResumption":{},"inputAudioTranscription":{},"outputAudioTranscription":{},"#,
    r#""realtimeInputConfig":{"automaticActivityDetection":{"prefixPaddingMs":100,"silenceDurationMs":500}},"#,
    r#""contextWindowCompression":{"triggerTokens":4000,"slidingWindow":{"targetTokens":2000}}}}"#
);

#[test]
fn the_chain_resolves_to_the_runtime_builders_setup_on_both_platforms() {
    let fluent = fluent().session_config().unwrap();
    let runtime = runtime(ApiEndpoint::offline()).resolved_config().unwrap();
    let vertex = Platform::Vertex {
        project: "reel-test".into(),
        location: "us-central1".into(),
    };
    for platform in [Platform::GoogleAi, vertex] {
        assert_eq!(
            String::from_utf8(fluent.setup_frame(&platform)).unwrap(),
            String::from_utf8(runtime.setup_frame(&platform)).unwrap(),
            "{platform:?}"
        );
    }
    assert_eq!(
        String::from_utf8(fluent.setup_frame(&Platform::GoogleAi)).unwrap(),
        GOLDEN
    );
}

#[test]
fn a_dispatcher_given_whole_resolves_like_tools_given_one_by_one() {
    let mut tools = ToolDispatcher::new().with_timeout(Duration::from_secs(9));
    tools.register(search_flights()).unwrap();
    tools.register(book_table()).unwrap();
    tools
        .set_background("search_flights", Scheduling::Silent)
        .unwrap();
    let whole = Live::builder().tools(tools).session_config().unwrap();
    let one_by_one = Live::builder()
        .tool(book_table())
        .tool(search_flights())
        .tool_background_with_scheduling("search_flights", Scheduling::Silent)
        .session_config()
        .unwrap();
    assert_eq!(
        whole.setup_frame(&Platform::GoogleAi),
        one_by_one.setup_frame(&Platform::GoogleAi)
    );
}

#[tokio::test(start_paused = true)]
async fn the_setup_on_the_wire_is_the_runtime_builders() {
    let mut server = ScriptedServer::bind().await;
    let expected = runtime(server.endpoint())
        .resolved_config()
        .unwrap()
        .setup_frame(&Platform::GoogleAi);
    let endpoint = server.endpoint();
    let script = async {
        let mut conn = server.accept().await;
        let setup = conn.recv().await.unwrap();
        conn.send_json(&json!({"setupComplete": {}})).await;
        (conn, setup)
    };
    let (handle, (mut conn, setup)) = tokio::join!(fluent().connect(endpoint), script);
    let handle = handle.unwrap();
    assert_eq!(setup.bytes, expected);
    assert_eq!(setup.text(), Some(GOLDEN));
    let (end, _) = tokio::join!(handle.disconnect(), conn.expect_closed());
    assert_eq!(end.reason, "closed with code 1000: client disconnect");
}
