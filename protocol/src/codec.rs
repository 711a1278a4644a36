//! Reading and writing frames: size limit, UTF-8, JSON, the message envelope.
//!
//! The happy path is one pass of serde_json over the bytes into the typed envelope. Only when
//! that fails is the frame looked at again, to tell the caller precisely what was wrong:
//! bad UTF-8, bad JSON, a wrong type at a JSON path, or no message key at all. A server
//! frame that is well-formed JSON with fields of the wrong type can also be read partially
//! ([`decode_server_partial`]): every field that reads is kept, every one that does not is a
//! [`FieldError`].

use serde::Serialize;
use serde::de::DeserializeOwned;

use crate::client::{ClientMessage, ClientMessageKind};
use crate::error::DecodeError;
use crate::field_error::FieldError;
use crate::lenient::Lenient;
use crate::server::{ServerMessage, ToolCall};
use crate::tool_call_frame;
use crate::wire::WireStruct;

/// The default largest frame accepted: 16 MiB.
pub const DEFAULT_MAX_FRAME_BYTES: usize = 16 * 1024 * 1024;

/// Limits applied when reading frames.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DecodeLimits {
    /// Frames larger than this are refused before any parsing.
    pub max_frame_bytes: usize,
}

impl Default for DecodeLimits {
    fn default() -> Self {
        DecodeLimits {
            max_frame_bytes: DEFAULT_MAX_FRAME_BYTES,
        }
    }
}

/// Reads a server frame (text or the bytes of a binary frame), with the default limits.
///
/// ```
/// let frame = br#"{"serverContent":{"turnComplete":true},"usageMetadata":{"totalTokenCount":15}}"#;
/// let message = reel_protocol::decode_server(frame).unwrap();
/// assert_eq!(message.server_content.unwrap().turn_complete, Some(true));
/// assert_eq!(message.usage_metadata.unwrap().total_token_count, Some(15));
/// ```
pub fn decode_server(frame: &[u8]) -> Result<ServerMessage, DecodeError> {
    decode_server_with(frame, DecodeLimits::default())
}

/// Reads a server frame with the given limits.
pub fn decode_server_with(
    frame: &[u8],
    limits: DecodeLimits,
) -> Result<ServerMessage, DecodeError> {
    // The message is read where it is returned, in the `Result`, by a function that fills
    // it: a `Result` returned by a reading function and returned again is copied (1.5 KB)
    // once more. (`decode_server_partial_with` has the same shape; a shared generic helper,
    // even always inlined, made LLVM inline the `toolCall` reader worse: +180
    // instructions a frame.)
    let mut result: Result<ServerMessage, DecodeError> = Ok(ServerMessage::default());
    let mut failed = None;
    if let Ok(message) = &mut result {
        failed = read_server(frame, limits, message).err();
    }
    if let Some(error) = failed {
        result = Err(error);
    }
    result
}

/// Fills `message` (the default) from `frame`: a `toolCall` by its short reader, anything
/// else in one pass of the general decoder.
fn read_server(
    frame: &[u8],
    limits: DecodeLimits,
    message: &mut ServerMessage,
) -> Result<(), DecodeError> {
    if read_tool_call(frame, limits, &mut message.tool_call) {
        return Ok(());
    }
    match read_object(frame, limits, message)? {
        Ok(()) if carries_a_message(message) => Ok(()),
        Ok(()) => Err(no_known_key(message)),
        Err(error) => Err(diagnose::<ServerMessage>(frame, &error)),
    }
}

/// A server frame read as far as it goes: the message with every field that decoded, and
/// one [`FieldError`] for each field that did not. A bad field reads as absent in
/// `message`; inside an array of messages (parts, function calls) the item holding it is
/// left out whole, and the items after it move up one place.
///
/// A frame whose fields all decode has no field errors and the same message
/// [`decode_server`] returns.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct PartialServerMessage {
    /// Every field that decoded.
    pub message: ServerMessage,
    /// The fields that did not, in the order of the frame.
    pub field_errors: Vec<FieldError>,
}

/// Reads a server frame, keeping every field that decodes, with the default limits.
///
/// Where [`decode_server`] refuses a frame with one field of the wrong type (a string where
/// a number goes, base64 that is not base64), this keeps everything else the frame carries
/// and reports each bad field by its JSON path. A frame that is not a well-formed JSON
/// object, is too large, or has no known message and no bad field, is still a
/// [`DecodeError`]. A good frame costs the same as with [`decode_server`]: the lenient
/// second reading only happens when the first one failed.
///
/// ```
/// use reel_protocol::{FieldError, Found, decode_server_partial};
///
/// let frame = br#"{"serverContent":{"turnComplete":true,"modelTurn":{"parts":[{"inlineData":{"mimeType":"audio/pcm","data":"!!not base64"}}]}}}"#;
/// let partial = decode_server_partial(frame)?;
/// assert_eq!(partial.message.server_content.as_ref().unwrap().turn_complete, Some(true));
/// assert_eq!(
///     partial.field_errors,
///     [FieldError {
///         path: "serverContent.modelTurn.parts[0].inlineData.data".into(),
///         expected: "base64 text",
///         found: Found::String { chars: 12 },
///     }]
/// );
/// # Ok::<(), reel_protocol::DecodeError>(())
/// ```
pub fn decode_server_partial(frame: &[u8]) -> Result<PartialServerMessage, DecodeError> {
    decode_server_partial_with(frame, DecodeLimits::default())
}

/// Reads a server frame with the given limits, keeping every field that decodes (see
/// [`decode_server_partial`]).
pub fn decode_server_partial_with(
    frame: &[u8],
    limits: DecodeLimits,
) -> Result<PartialServerMessage, DecodeError> {
    // As in `decode_server_with`, the message is read where it is returned.
    let mut result: Result<PartialServerMessage, DecodeError> = Ok(PartialServerMessage::default());
    let mut failed = None;
    if let Ok(partial) = &mut result {
        failed = read_partial(frame, limits, partial).err();
    }
    if let Some(error) = failed {
        result = Err(error);
    }
    result
}

/// Fills `partial` from `frame`: in one pass when every field reads, else leniently.
fn read_partial(
    frame: &[u8],
    limits: DecodeLimits,
    partial: &mut PartialServerMessage,
) -> Result<(), DecodeError> {
    if read_tool_call(frame, limits, &mut partial.message.tool_call) {
        return Ok(());
    }
    if let Err(error) = read_object(frame, limits, &mut partial.message)? {
        let object = well_formed_object(frame, &error)?;
        partial.message = ServerMessage::default();
        let mut at = Lenient::default();
        ServerMessage::read_lenient(&object, &mut partial.message, &mut at);
        if at.errors.is_empty() {
            // What the parsed object cannot show (a key given twice under one spelling)
            // failed the frame: report it as the strict decoder does.
            return Err(invalid_field::<ServerMessage>(frame, &error));
        }
        partial.field_errors = at.errors;
    }
    if partial.field_errors.is_empty() && !carries_a_message(&partial.message) {
        return Err(no_known_key(&partial.message));
    }
    Ok(())
}

/// Reads a `toolCall` frame of the common shape into `place` with its short reader (see
/// [`crate::tool_call_frame`]); `false`, leaving `place` as it was, for every other frame
/// and for one over the limit.
fn read_tool_call(frame: &[u8], limits: DecodeLimits, place: &mut Option<ToolCall>) -> bool {
    // Most frames are not tool calls, and their first key says so in a few instructions:
    // every frame the short reader takes starts `{"t` once JSON whitespace is skipped.
    let mut start = frame
        .iter()
        .filter(|byte| !matches!(byte, b' ' | b'\t' | b'\n' | b'\r'));
    if (start.next(), start.next(), start.next()) != (Some(&b'{'), Some(&b'"'), Some(&b't')) {
        return false;
    }
    if frame.len() > limits.max_frame_bytes {
        return false;
    }
    match tool_call_frame::read(frame) {
        Some(call) => {
            *place = Some(call);
            true
        }
        None => false,
    }
}

/// Whether a server frame holds any message this version knows.
fn carries_a_message(message: &ServerMessage) -> bool {
    message.setup_complete.is_some()
        || message.server_content.is_some()
        || message.tool_call.is_some()
        || message.tool_call_cancellation.is_some()
        || message.go_away.is_some()
        || message.session_resumption_update.is_some()
        || message.usage_metadata.is_some()
        || message.voice_activity.is_some()
        || message.voice_activity_detection_signal.is_some()
}

fn no_known_key(message: &ServerMessage) -> DecodeError {
    DecodeError::NoKnownKey {
        found: message.extra.keys().cloned().collect(),
        expected: ServerMessage::FIELDS,
    }
}

/// Reads a client frame (either key casing), with the default limits. The frame must carry
/// exactly one message.
///
/// ```
/// let frame = br#"{"client_content":{"turns":[{"role":"user","parts":[{"text":"Hi"}]}],"turn_complete":true}}"#;
/// let message = reel_protocol::decode_client(frame).unwrap();
/// assert_eq!(message.kind(), Some(reel_protocol::ClientMessageKind::ClientContent));
/// ```
pub fn decode_client(frame: &[u8]) -> Result<ClientMessage, DecodeError> {
    decode_client_with(frame, DecodeLimits::default())
}

/// Reads a client frame with the given limits.
pub fn decode_client_with(
    frame: &[u8],
    limits: DecodeLimits,
) -> Result<ClientMessage, DecodeError> {
    CLIENT_DECODES.set(CLIENT_DECODES.get().wrapping_add(1));
    let message: ClientMessage = decode_object(frame, limits)?;
    // The kinds are listed (a vector) only to report a frame that carries several.
    match message.kind_count() {
        1 => Ok(message),
        0 => Err(DecodeError::NoKnownKey {
            found: message.extra.keys().cloned().collect(),
            expected: ClientMessage::FIELDS,
        }),
        _ => Err(DecodeError::SeveralMessages {
            found: message
                .kinds()
                .into_iter()
                .map(ClientMessageKind::as_str)
                .collect(),
        }),
    }
}

thread_local! {
    /// How many client frames this thread has decoded ([`client_decodes_on_this_thread`]).
    static CLIENT_DECODES: std::cell::Cell<u64> = const { std::cell::Cell::new(0) };
}

/// How many client frames this thread has decoded so far ([`decode_client`],
/// [`decode_client_with`]), whatever the outcome: what a test or a profile reads to hold a
/// path to its count of decodes (a replay on a current-thread runtime decodes on one
/// thread). A thread's own counter, so parallel tests do not see each other's.
///
/// ```
/// use reel_protocol::{client_decodes_on_this_thread, decode_client};
///
/// let before = client_decodes_on_this_thread();
/// let _ = decode_client(br#"{"setup":{}}"#);
/// let _ = decode_client(b"not json");
/// assert_eq!(client_decodes_on_this_thread() - before, 2);
/// ```
pub fn client_decodes_on_this_thread() -> u64 {
    CLIENT_DECODES.get()
}

/// Writes any wire value as compact JSON (lowerCamelCase keys, known fields in declaration
/// order, then unknown ones by key).
pub fn encode<T: Serialize>(value: &T) -> Vec<u8> {
    // Serializing these types into a Vec cannot fail: every map key is a string and no
    // Serialize impl in this crate returns an error, so an error here is unreachable.
    serde_json::to_vec(value).unwrap_or_default()
}

/// Parses `frame` into `T`, turning any failure into the precise [`DecodeError`].
///
/// The message is read in place, in the `Result` that is returned (see [`WireStruct`]);
/// otherwise this is `serde_json::from_slice`.
fn decode_object<T: WireStruct + DeserializeOwned>(
    frame: &[u8],
    limits: DecodeLimits,
) -> Result<T, DecodeError> {
    let mut result: Result<T, DecodeError> = Ok(T::default());
    let mut failed = None;
    if let Ok(value) = &mut result {
        failed = match read_object(frame, limits, value) {
            Ok(Ok(())) => None,
            Ok(Err(error)) => Some(diagnose::<T>(frame, &error)),
            Err(error) => Some(error),
        };
    }
    if let Some(error) = failed {
        result = Err(error);
    }
    result
}

/// Reads `frame` into `place` (`T::default()`) in one pass. The outer error is a frame
/// refused before parsing (too large, empty); the inner one is the parser's.
fn read_object<T: WireStruct>(
    frame: &[u8],
    limits: DecodeLimits,
    place: &mut T,
) -> Result<Result<(), serde_json::Error>, DecodeError> {
    if frame.len() > limits.max_frame_bytes {
        return Err(DecodeError::TooLarge {
            size: frame.len(),
            limit: limits.max_frame_bytes,
        });
    }
    if frame.iter().all(u8::is_ascii_whitespace) {
        return Err(DecodeError::Empty);
    }
    // One UTF-8 check of the whole frame, then a reader that trusts it: serde_json's byte
    // reader checks every string on its own, which costs more than the frame's whole check
    // for the handful of short strings a frame has. A frame that is not UTF-8 is read by
    // the byte reader, which reports where.
    Ok(match std::str::from_utf8(frame) {
        Ok(text) => {
            let mut deserializer = serde_json::Deserializer::from_str(text);
            T::read_into(&mut deserializer, place).and_then(|()| deserializer.end())
        }
        Err(_) => {
            let mut deserializer = serde_json::Deserializer::from_slice(frame);
            T::read_into(&mut deserializer, place).and_then(|()| deserializer.end())
        }
    })
}

/// Works out what was wrong with a frame that did not parse.
fn diagnose<T: DeserializeOwned>(frame: &[u8], error: &serde_json::Error) -> DecodeError {
    match well_formed_object(frame, error) {
        Ok(_) => invalid_field::<T>(frame, error),
        Err(error) => error,
    }
}

/// The frame as a parsed JSON object, when the parse failed on a value of the wrong type in
/// a well-formed object; otherwise the error that says why the frame is not one.
fn well_formed_object(
    frame: &[u8],
    error: &serde_json::Error,
) -> Result<serde_json::Map<String, serde_json::Value>, DecodeError> {
    if let Err(utf8) = std::str::from_utf8(frame) {
        return Err(DecodeError::InvalidUtf8 {
            offset: utf8.valid_up_to(),
        });
    }
    if error.is_syntax() || error.is_eof() {
        return Err(DecodeError::InvalidJson {
            line: error.line(),
            column: error.column(),
            message: strip_position(error),
        });
    }
    // A wrong type stopped the parse. Is the rest of the frame well-formed JSON (a syntax
    // error after the wrong type is still bad JSON), and is it an object at all?
    match serde_json::from_slice::<serde_json::Value>(frame) {
        Ok(serde_json::Value::Object(object)) => Ok(object),
        Ok(other) => Err(DecodeError::NotAnObject {
            found: json_kind(&other),
        }),
        Err(syntax) => Err(DecodeError::InvalidJson {
            line: syntax.line(),
            column: syntax.column(),
            message: strip_position(&syntax),
        }),
    }
}

/// The first field of the wrong type, found by parsing again with the path tracked.
fn invalid_field<T: DeserializeOwned>(frame: &[u8], error: &serde_json::Error) -> DecodeError {
    let mut deserializer = serde_json::Deserializer::from_slice(frame);
    match serde_path_to_error::deserialize::<_, T>(&mut deserializer) {
        Err(tracked) => DecodeError::InvalidField {
            path: tracked.path().to_string(),
            message: strip_position(tracked.inner()),
        },
        // Unreachable in practice (the first parse failed); report the first error as is.
        Ok(_) => DecodeError::InvalidField {
            path: ".".into(),
            message: strip_position(error),
        },
    }
}

/// serde_json's message without its " at line L column C" suffix (reported separately).
fn strip_position(error: &serde_json::Error) -> String {
    let text = error.to_string();
    match text.rfind(" at line ") {
        Some(at) => text[..at].to_owned(),
        None => text,
    }
}

fn json_kind(value: &serde_json::Value) -> &'static str {
    match value {
        serde_json::Value::Null => "null",
        serde_json::Value::Bool(_) => "boolean",
        serde_json::Value::Number(_) => "number",
        serde_json::Value::String(_) => "string",
        serde_json::Value::Array(_) => "array",
        serde_json::Value::Object(_) => "object",
    }
}
