//! What goes into a model call and what comes out of it.

use reel_protocol::{Content, FunctionCall, FunctionDeclaration, FunctionResponse, Part, Tool};
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// One model call: the model, an optional system instruction, the conversation so far (its
/// turns may hold function calls and function responses), the tools the model may call and
/// optional generation settings.
///
/// Serialized in the Gemini REST API's camelCase, so a recorded request reads like the
/// body that was sent.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct LlmRequest {
    /// The model to ask (`gemini-2.5-flash`, or `models/gemini-2.5-flash`).
    pub model: String,
    /// The system instruction, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub system_instruction: Option<String>,
    /// The conversation, oldest turn first.
    #[serde(default)]
    pub contents: Vec<Content>,
    /// The tools offered to the model (`tools: [{functionDeclarations: [...]}]`), if any.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tools: Vec<Tool>,
    /// `generationConfig` as the REST API takes it (temperature, `responseMimeType`,
    /// `responseSchema`, …), if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub generation_config: Option<Value>,
}

impl LlmRequest {
    /// A request to `model` with nothing in it yet.
    pub fn new(model: impl Into<String>) -> Self {
        LlmRequest {
            model: model.into(),
            system_instruction: None,
            contents: Vec::new(),
            tools: Vec::new(),
            generation_config: None,
        }
    }

    /// Offers the model the functions `declarations` (one `tools` entry holding them all;
    /// nothing is added when there are none).
    pub fn functions(mut self, declarations: Vec<FunctionDeclaration>) -> Self {
        if !declarations.is_empty() {
            self.tools.push(Tool {
                function_declarations: Some(declarations),
                ..Tool::default()
            });
        }
        self
    }

    /// Appends a whole turn (a model turn holding function calls, a user turn holding
    /// function responses, …).
    pub fn content(mut self, content: Content) -> Self {
        self.contents.push(content);
        self
    }

    /// Appends the user turn answering function calls: one `functionResponse` part per
    /// response, in the order given.
    pub fn function_responses(self, responses: Vec<FunctionResponse>) -> Self {
        let parts = responses
            .into_iter()
            .map(|response| Part {
                function_response: Some(response),
                ..Part::default()
            })
            .collect();
        self.content(Content {
            role: Some("user".to_owned()),
            parts: Some(parts),
            ..Content::default()
        })
    }

    /// Sets the system instruction.
    pub fn system(mut self, instruction: impl Into<String>) -> Self {
        self.system_instruction = Some(instruction.into());
        self
    }

    /// Appends a user turn holding `text`.
    pub fn user(self, text: impl Into<String>) -> Self {
        self.turn("user", text)
    }

    /// Appends a model turn holding `text`.
    pub fn model_turn(self, text: impl Into<String>) -> Self {
        self.turn("model", text)
    }

    /// Asks for JSON matching `schema` (`responseMimeType: application/json` and
    /// `responseSchema`), keeping any other generation settings.
    pub fn json_schema(mut self, schema: Value) -> Self {
        let mut config = match self.generation_config.take() {
            Some(Value::Object(map)) => map,
            _ => serde_json::Map::new(),
        };
        config.insert("responseMimeType".into(), Value::from("application/json"));
        config.insert("responseSchema".into(), schema);
        self.generation_config = Some(Value::Object(config));
        self
    }

    /// Sets one generation setting (`temperature`, `maxOutputTokens`, …).
    pub fn setting(mut self, key: impl Into<String>, value: Value) -> Self {
        let mut config = match self.generation_config.take() {
            Some(Value::Object(map)) => map,
            _ => serde_json::Map::new(),
        };
        config.insert(key.into(), value);
        self.generation_config = Some(Value::Object(config));
        self
    }

    /// The text of the last user turn that has text, its text parts joined (a turn of
    /// function responses only is passed over).
    pub fn last_user_text(&self) -> Option<String> {
        let has_text = |content: &&Content| {
            content
                .parts
                .iter()
                .flatten()
                .any(|part| part.text.is_some())
        };
        let user_turns = self
            .contents
            .iter()
            .rev()
            .filter(|content| content.role.as_deref() == Some("user"));
        let turn = user_turns
            .clone()
            .find(has_text)
            .or_else(|| user_turns.clone().next())?;
        Some(
            turn.parts
                .iter()
                .flatten()
                .filter_map(|part| part.text.as_deref())
                .collect(),
        )
    }

    fn turn(mut self, role: &str, text: impl Into<String>) -> Self {
        let part = Part {
            text: Some(text.into()),
            ..Part::default()
        };
        self.contents.push(Content {
            role: Some(role.to_owned()),
            parts: Some(vec![part]),
            ..Content::default()
        });
        self
    }
}

/// Token usage of one call.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct LlmUsage {
    /// Tokens in the prompt.
    pub prompt_tokens: u64,
    /// Tokens in the answer.
    pub response_tokens: u64,
    /// All tokens billed (prompt, answer, thoughts).
    pub total_tokens: u64,
}

/// One piece of a streamed answer.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct LlmChunk {
    /// The text this chunk adds (may be empty).
    pub text: String,
    /// Why the model stopped, on the chunk that ends the answer (`STOP`, `MAX_TOKENS`, …).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub finish_reason: Option<String>,
    /// Usage so far, when the chunk reports it (the API sends it on the last chunks).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub usage: Option<LlmUsage>,
    /// The function calls this chunk carries, in order (`parts: [{functionCall: …}]`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub function_calls: Vec<FunctionCall>,
}

impl LlmChunk {
    /// A chunk carrying only `text`.
    pub fn text(text: impl Into<String>) -> Self {
        LlmChunk {
            text: text.into(),
            ..LlmChunk::default()
        }
    }
}

/// A whole answer.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct LlmResponse {
    /// The answer text: every chunk's text, in order.
    pub text: String,
    /// Why the model stopped, if it said.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub finish_reason: Option<String>,
    /// Token usage, if reported.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub usage: Option<LlmUsage>,
    /// The functions the model asks the caller to call, in the order it asked (every
    /// chunk's, in order). Answer them with [`LlmRequest::function_responses`] after
    /// appending [`LlmResponse::model_content`].
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub function_calls: Vec<FunctionCall>,
}

impl LlmResponse {
    /// The answer as a model turn of the conversation: its text (when there is any) and
    /// then one `functionCall` part per function call, in order.
    pub fn model_content(&self) -> Content {
        let text = (!self.text.is_empty()).then(|| Part::text(self.text.clone()));
        let calls = self.function_calls.iter().map(|call| Part {
            function_call: Some(call.clone()),
            ..Part::default()
        });
        Content {
            role: Some("model".to_owned()),
            parts: Some(text.into_iter().chain(calls).collect()),
            ..Content::default()
        }
    }

    /// Parses the answer text as JSON (for calls made with [`LlmRequest::json_schema`]).
    /// A fenced block (```json … ```) is unwrapped first, as models sometimes add one.
    pub fn json(&self) -> Result<Value, serde_json::Error> {
        let text = self.text.trim();
        let text = text
            .strip_prefix("```json")
            .or_else(|| text.strip_prefix("```"))
            .and_then(|inner| inner.strip_suffix("```"))
            .unwrap_or(text);
        serde_json::from_str(text.trim())
    }
}
