//! Content and its parts: what both sides say to each other (text, media, function calls).

use bytes::Bytes;
use serde_json::Value;

use crate::scalars::Base64Data;
use crate::wire::{wire_enum, wire_struct};

wire_struct! {
    /// A turn of conversation: a role and its parts.
    pub struct Content {
        /// `user`, `model` or `system`.
        role: String = "role",
        /// The parts, in order.
        parts: Vec<Part> = "parts",
    }
}

wire_struct! {
    /// One piece of content. Exactly one of the data fields is normally set; a part kind this
    /// version does not know is kept in `extra`, and [`Part::kind`] reports it.
    pub struct Part {
        /// Plain text (or, with `thought`, the model's reasoning).
        text: String = "text",
        /// Marks `text` as a thought summary rather than an answer.
        thought: bool = "thought",
        /// Opaque signature the model attaches to thoughts.
        thought_signature: String = "thoughtSignature" | "thought_signature",
        /// Inline bytes with a MIME type (audio, images).
        inline_data: Blob = "inlineData" | "inline_data",
        /// A reference to a stored file.
        file_data: FileData = "fileData" | "file_data",
        /// A function call inside content.
        function_call: FunctionCall = "functionCall" | "function_call",
        /// A function response inside content.
        function_response: FunctionResponse = "functionResponse" | "function_response",
        /// Code the model wrote for the code-execution tool.
        executable_code: ExecutableCode = "executableCode" | "executable_code",
        /// The result of running `executable_code`.
        code_execution_result: CodeExecutionResult = "codeExecutionResult" | "code_execution_result",
        /// Video offsets for video parts.
        video_metadata: Value = "videoMetadata" | "video_metadata",
    }
}

/// What a [`Part`] holds, seen by reference.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum PartKind<'a> {
    /// Answer text.
    Text(&'a str),
    /// Thought text (`thought: true`).
    Thought(&'a str),
    /// Inline bytes.
    InlineData(&'a Blob),
    /// A stored file reference.
    FileData(&'a FileData),
    /// A function call.
    FunctionCall(&'a FunctionCall),
    /// A function response.
    FunctionResponse(&'a FunctionResponse),
    /// Code for the code-execution tool.
    ExecutableCode(&'a ExecutableCode),
    /// A code-execution result.
    CodeExecutionResult(&'a CodeExecutionResult),
    /// No known data field: the unknown fields it carries (possibly none).
    Unknown(&'a crate::wire::Extra),
}

impl Part {
    /// A text part.
    pub fn text(text: impl Into<String>) -> Self {
        Part {
            text: Some(text.into()),
            ..Part::default()
        }
    }

    /// An inline-data part.
    pub fn inline_data(mime_type: impl Into<String>, data: impl Into<Bytes>) -> Self {
        Part {
            inline_data: Some(Blob::new(mime_type, data)),
            ..Part::default()
        }
    }

    /// What this part holds; the first known data field wins, in the order of [`PartKind`].
    pub fn kind(&self) -> PartKind<'_> {
        if let Some(text) = &self.text {
            return if self.thought == Some(true) {
                PartKind::Thought(text)
            } else {
                PartKind::Text(text)
            };
        }
        if let Some(blob) = &self.inline_data {
            return PartKind::InlineData(blob);
        }
        if let Some(file) = &self.file_data {
            return PartKind::FileData(file);
        }
        if let Some(call) = &self.function_call {
            return PartKind::FunctionCall(call);
        }
        if let Some(response) = &self.function_response {
            return PartKind::FunctionResponse(response);
        }
        if let Some(code) = &self.executable_code {
            return PartKind::ExecutableCode(code);
        }
        if let Some(result) = &self.code_execution_result {
            return PartKind::CodeExecutionResult(result);
        }
        PartKind::Unknown(&self.extra)
    }
}

impl Content {
    /// A content of one role made of text parts.
    pub fn new(role: impl Into<String>, parts: Vec<Part>) -> Self {
        Content {
            role: Some(role.into()),
            parts: Some(parts),
            ..Content::default()
        }
    }

    /// A user turn holding one text part.
    pub fn user_text(text: impl Into<String>) -> Self {
        Content::new("user", vec![Part::text(text)])
    }

    /// A model turn holding one text part.
    pub fn model_text(text: impl Into<String>) -> Self {
        Content::new("model", vec![Part::text(text)])
    }

    /// The parts, or an empty slice when there are none.
    pub fn parts(&self) -> &[Part] {
        self.parts.as_deref().unwrap_or_default()
    }
}

wire_struct! {
    /// Bytes with a MIME type, carried as base64.
    pub struct Blob {
        /// e.g. `audio/pcm;rate=16000`, `image/jpeg`.
        mime_type: String = "mimeType" | "mime_type",
        /// The bytes, base64 on the wire (16-bit little-endian samples for `audio/pcm`).
        data: Base64Data = "data",
        /// A display name (rarely used in Live).
        display_name: String = "displayName" | "display_name",
    }
}

impl Blob {
    /// A blob of `data` with the given MIME type.
    pub fn new(mime_type: impl Into<String>, data: impl Into<Bytes>) -> Self {
        Blob {
            mime_type: Some(mime_type.into()),
            data: Some(Base64Data(data.into())),
            ..Blob::default()
        }
    }

    /// The bytes, or empty when absent. Cheap: [`Bytes`] is reference counted.
    pub fn bytes(&self) -> Bytes {
        self.data.as_ref().map(|d| d.0.clone()).unwrap_or_default()
    }

    /// The sample rate its MIME type names (`audio/pcm;rate=24000` → 24000), if it names a
    /// positive one.
    ///
    /// ```
    /// use reel_protocol::Blob;
    ///
    /// assert_eq!(Blob::new("audio/pcm;rate=16000", vec![]).pcm_rate(), Some(16_000));
    /// assert_eq!(Blob::new("audio/pcm", vec![]).pcm_rate(), None);
    /// ```
    pub fn pcm_rate(&self) -> Option<u32> {
        self.mime_type
            .as_deref()?
            .split(';')
            .find_map(|param| param.trim().strip_prefix("rate="))
            .and_then(|rate| rate.parse().ok())
            .filter(|rate: &u32| *rate > 0)
    }

    /// How long it plays as 16-bit mono PCM at its rate (else `default_rate`), in ms.
    pub fn pcm_ms(&self, default_rate: u32) -> f64 {
        let bytes = self.data.as_ref().map_or(0, |d| d.0.len());
        let rate = self.pcm_rate().unwrap_or(default_rate).max(1);
        bytes as f64 / 2.0 / f64::from(rate) * 1000.0
    }
}

wire_struct! {
    /// A reference to a file by URI.
    pub struct FileData {
        /// MIME type of the file.
        mime_type: String = "mimeType" | "mime_type",
        /// Where the file is.
        file_uri: String = "fileUri" | "file_uri",
        /// A display name.
        display_name: String = "displayName" | "display_name",
    }
}

wire_struct! {
    /// The model asks the client to call a function.
    pub struct FunctionCall {
        /// The call id; the response must carry the same id.
        id: String = "id",
        /// The function name as declared in setup.
        name: String = "name",
        /// The arguments, a JSON object: kept as the frame's JSON text, read into a value
        /// or a typed struct when asked ([`Args`](crate::Args), decision 0073).
        args: crate::Args = "args",
        /// Streamed arguments, when the model sends them piece by piece.
        partial_args: Value = "partialArgs" | "partial_args",
        /// More pieces of this call follow.
        will_continue: bool = "willContinue" | "will_continue",
    }
}

wire_struct! {
    /// The client's answer to a [`FunctionCall`].
    pub struct FunctionResponse {
        /// The id of the call answered.
        id: String = "id",
        /// The function name, as in the call.
        name: String = "name",
        /// The result, a JSON object.
        response: Value = "response",
        /// For non-blocking functions: when the model should take the result in.
        scheduling: Scheduling = "scheduling",
        /// For non-blocking functions: more responses to this call will follow.
        will_continue: bool = "willContinue" | "will_continue",
        /// Media parts of the response.
        parts: Value = "parts",
    }
}

wire_enum! {
    /// When the model takes in the response of a non-blocking function.
    pub enum Scheduling {
        Unspecified = "SCHEDULING_UNSPECIFIED",
        /// Add the result to the context; do not interrupt or prompt a reply.
        Silent = "SILENT",
        /// Take it in when the model is idle.
        WhenIdle = "WHEN_IDLE",
        /// Interrupt what the model is saying and take it in now.
        Interrupt = "INTERRUPT",
    }
}

wire_struct! {
    /// Code generated by the model for the code-execution tool.
    pub struct ExecutableCode {
        /// The language, e.g. `PYTHON`.
        language: String = "language",
        /// The source, as the model wrote it.
        code: String = "code",
    }
}

wire_struct! {
    /// The outcome of running [`ExecutableCode`].
    pub struct CodeExecutionResult {
        /// e.g. `OUTCOME_OK`.
        outcome: String = "outcome",
        /// Standard output, or the error.
        output: String = "output",
    }
}

impl FunctionResponse {
    /// A response to the call `id` of function `name`.
    pub fn new(id: impl Into<String>, name: impl Into<String>, response: Value) -> Self {
        FunctionResponse {
            id: Some(id.into()),
            name: Some(name.into()),
            response: Some(response),
            ..FunctionResponse::default()
        }
    }
}
