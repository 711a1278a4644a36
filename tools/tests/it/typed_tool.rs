//! `TypedTool`: typed arguments, the schema generated from them, and serde's own message
//! when the model's arguments do not fit.

use reel_actors::state::State;
use reel_tools::ToolError;
use serde_json::json;

use crate::tool_calls::{call, dispatcher, run, wire};

#[test]
fn typed_tool_schema_is_the_golden_one() {
    let declaration = book_table_declaration();
    assert_eq!(
        declaration,
        concat!(
            r#"{"name":"book_table","description":"Books a table.","parameters":{"#,
            r#""type":"object","description":"Book a table at the restaurant.","properties":{"#,
            r#""party_size":{"type":"integer","description":"Number of guests.","minimum":0,"maximum":255},"#,
            r#""time":{"type":"string","description":"Time in 24-hour format, e.g. \"19:30\"."},"#,
            r#""seating":{"type":"string","description":"Where to sit.","enum":["indoor","terrace"]},"#,
            r#""note":{"type":"string","description":"Anything the restaurant should know.","nullable":true}"#,
            r#"},"required":["party_size","time","seating"]}}"#
        )
    );
}

fn book_table_declaration() -> String {
    let tools = dispatcher();
    let declarations = tools.declarations();
    serde_json::to_string(&declarations[0]).unwrap_or_default()
}

#[tokio::test(start_paused = true)]
async fn a_typed_tool_gets_typed_args_and_its_writes_commit() {
    let tools = dispatcher();
    let state = State::new();
    let outcome = run(
        &tools,
        &call(
            "fc_3",
            "book_table",
            json!({ "party_size": 4, "time": "19:30", "seating": "terrace" }),
        ),
        &state,
    )
    .await;
    assert_eq!(
        outcome.result,
        Ok(json!({ "confirmation": "T-4-19:30", "seating": "terrace" }))
    );
    assert_eq!(state.get_raw("app:booking_time"), Some(json!("19:30")));
}

#[tokio::test(start_paused = true)]
async fn bad_args_carry_serdes_message() {
    let tools = dispatcher();
    let state = State::new();
    let missing = run(&tools, &call("fc_5", "get_weather", json!({})), &state).await;
    assert_eq!(
        missing.result,
        Err(ToolError::InvalidArgs {
            tool: "get_weather".into(),
            message: "missing field `city`".into(),
        })
    );
    assert_eq!(
        wire(&missing.to_response(&tools.mode("get_weather"))),
        r#"{"id":"fc_5","name":"get_weather","response":{"error":"invalid arguments for tool `get_weather`: missing field `city`"}}"#
    );
    let wrong_type = run(
        &tools,
        &call(
            "fc_6",
            "book_table",
            json!({ "party_size": "four", "time": "19:30", "seating": "indoor" }),
        ),
        &state,
    )
    .await;
    assert_eq!(
        wrong_type.result,
        Err(ToolError::InvalidArgs {
            tool: "book_table".into(),
            message: r#"party_size: invalid type: string "four", expected u8"#.into(),
        })
    );
    let bad_variant = run(
        &tools,
        &call(
            "fc_7",
            "book_table",
            json!({ "party_size": 2, "time": "19:30", "seating": "roof" }),
        ),
        &state,
    )
    .await;
    assert_eq!(
        bad_variant.result,
        Err(ToolError::InvalidArgs {
            tool: "book_table".into(),
            message: "seating: unknown variant `roof`, expected `indoor` or `terrace`".into(),
        })
    );
}

/// The call of a `toolCall` frame, its `args` kept as the frame's text (decision 0073).
fn framed_call(args: &str) -> reel_protocol::FunctionCall {
    let frame = format!(
        r#"{{"toolCall":{{"functionCalls":[{{"id":"fc_9","name":"book_table","args":{args}}}]}}}}"#
    );
    let message = reel_protocol::decode_server(frame.as_bytes()).unwrap_or_default();
    let calls = message.tool_call.and_then(|call| call.function_calls);
    let call = calls.and_then(|calls| calls.into_iter().next());
    let call = call.unwrap_or_default();
    assert_eq!(call.args.as_ref().map(|args| args.json()), Some(args));
    call
}

#[tokio::test(start_paused = true)]
async fn args_read_from_the_frame_s_text_act_as_the_value_does() {
    let tools = dispatcher();
    let state = State::new();
    let spaced = r#"{ "party_size" : 4, "time": "19:30", "seating": "terrace", "note": null }"#;
    let booked = run(&tools, &framed_call(spaced), &state).await;
    assert_eq!(
        booked.result,
        Ok(json!({ "confirmation": "T-4-19:30", "seating": "terrace" }))
    );
    // Errors carry the value's message, path included, no line or column.
    let four = r#"{"party_size": "four", "time": "19:30", "seating": "indoor"}"#;
    let wrong_type = run(&tools, &framed_call(four), &state).await;
    assert_eq!(
        wrong_type.result,
        Err(ToolError::InvalidArgs {
            tool: "book_table".into(),
            message: r#"party_size: invalid type: string "four", expected u8"#.into(),
        })
    );
    let missing = run(&tools, &framed_call(r#"{"party_size": 2}"#), &state).await;
    assert_eq!(
        missing.result,
        Err(ToolError::InvalidArgs {
            tool: "book_table".into(),
            message: "missing field `time`".into(),
        })
    );
}
