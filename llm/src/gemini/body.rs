//! The JSON body of a `generateContent` call, built from an [`LlmRequest`].

use reel_protocol::{Content, Tool};
use serde::Serialize;
use serde_json::Value;

use crate::LlmRequest;

/// `GenerateContentRequest` in the REST API's camelCase.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Body<'a> {
    contents: &'a [Content],
    #[serde(skip_serializing_if = "<[Tool]>::is_empty")]
    tools: &'a [Tool],
    #[serde(skip_serializing_if = "Option::is_none")]
    system_instruction: Option<Instruction<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    generation_config: Option<&'a Value>,
}

/// `systemInstruction`: a content of one text part, with no role.
#[derive(Serialize)]
struct Instruction<'a> {
    parts: [TextPart<'a>; 1],
}

#[derive(Serialize)]
struct TextPart<'a> {
    text: &'a str,
}

/// The body to send for `request`: `contents`, then `tools`, `systemInstruction` and
/// `generationConfig` when the request has them.
pub(crate) fn request_body(request: &LlmRequest) -> Vec<u8> {
    let body = Body {
        contents: &request.contents,
        tools: &request.tools,
        system_instruction: request
            .system_instruction
            .as_deref()
            .map(|text| Instruction {
                parts: [TextPart { text }],
            }),
        generation_config: request.generation_config.as_ref(),
    };
    reel_protocol::encode(&body)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn body(request: &LlmRequest) -> Value {
        serde_json::from_slice(&request_body(request)).unwrap()
    }

    #[test]
    fn a_bare_request_sends_only_contents() {
        assert_eq!(
            body(&LlmRequest::new("m").user("hi")),
            json!({"contents": [{"role": "user", "parts": [{"text": "hi"}]}]})
        );
        assert_eq!(body(&LlmRequest::new("m")), json!({"contents": []}));
    }

    #[test]
    fn system_instruction_and_generation_config_are_camel_case() {
        let request = LlmRequest::new("m")
            .system("be brief")
            .user("hi")
            .model_turn("hello")
            .setting("temperature", json!(0.5));
        assert_eq!(
            String::from_utf8(request_body(&request)).unwrap(),
            r#"{"contents":[{"role":"user","parts":[{"text":"hi"}]},{"role":"model","parts":[{"text":"hello"}]}],"systemInstruction":{"parts":[{"text":"be brief"}]},"generationConfig":{"temperature":0.5}}"#
        );
    }
}
