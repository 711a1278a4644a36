//! `toolCall` frames read without the general decoder's layers.
//!
//! Live asks for tools with one shape of frame:
//!
//! ```text
//! {"toolCall":{"functionCalls":[{"id":"…","name":"…","args":{…}}, …]}}
//! ```
//!
//! The general decoder reads it through four levels of wire structs, each key matched
//! against every field's spellings, into a message of over a kilobyte. This reader accepts
//! that shape (either key spelling, any whitespace, `id`, `name` and `args` in any order,
//! each at most once) and builds the [`ToolCall`] directly. `args` of the common kinds is
//! built by the cursor ([`Reader::value`]) and anything else by serde_json's own `Value`
//! reader where it stands: the same value either way, key order included.
//! Anything else — another field (`partialArgs`, `willContinue`, an unknown one), a `null`,
//! a `\u` escape in an id or name, `args` nested deeper than [`MAX_ARGS_DEPTH`] — makes it
//! answer `None`, and the general decoder reads the frame (tested frame by frame against it
//! in `tests/it/tool_call_frames.rs`).

use serde_json::Value;

use crate::content::FunctionCall;
use crate::server::ToolCall;
use crate::short_reader::Reader;
use crate::wire::Extra;

/// The deepest `args` this reader takes. The general decoder reads the whole frame under
/// serde_json's limit of 128 nested levels, four of which are above `args`; anything near
/// that limit is left to it, so both agree on what is too deep.
pub(crate) const MAX_ARGS_DEPTH: usize = 100;

/// Reads `frame` if it is a `toolCall` frame of the common shape; `None` for anything else.
pub(crate) fn read(frame: &[u8]) -> Option<ToolCall> {
    // A tool call is a short frame of several strings: one UTF-8 check for all of them.
    let mut reader = Reader::of_text(std::str::from_utf8(frame).ok()?);
    reader.byte(b'{')?;
    reader.key(&[b"toolCall", b"tool_call"])?;
    reader.byte(b'{')?;
    reader.key(&[b"functionCalls", b"function_calls"])?;
    reader.byte(b'[')?;
    // Two calls fit without growing (a frame of one wastes a slot, not an allocation).
    let mut calls = Vec::with_capacity(2);
    if !reader.empty(b']')? {
        loop {
            calls.push(reader.function_call()?);
            if !reader.more(b']')? {
                break;
            }
        }
    }
    reader.byte(b'}')?;
    reader.byte(b'}')?;
    reader.at_end().then(|| ToolCall {
        function_calls: Some(calls),
        extra: Extra::default(),
    })
}

/// The grammar of a call.
impl Reader<'_> {
    /// `{"id": "…", "name": "…", "args": …}`, each optional, any order.
    fn function_call(&mut self) -> Option<FunctionCall> {
        let mut call = FunctionCall::default();
        self.byte(b'{')?;
        if self.empty(b'}')? {
            return Some(call);
        }
        loop {
            let key = self.plain()?;
            self.byte(b':')?;
            match key {
                b"id" if call.id.is_none() => call.id = Some(self.string()?),
                b"name" if call.name.is_none() => call.name = Some(self.string()?),
                b"args" if call.args.is_none() => call.args = Some(self.json_value()?),
                _ => return None,
            }
            if !self.more(b'}')? {
                return Some(call);
            }
        }
    }

    /// Any JSON value but `null` (which the general decoder reads as an absent field), read
    /// by serde_json where it stands.
    fn json_value(&mut self) -> Option<Value> {
        if self.peek()? == b'n' {
            return None;
        }
        // Arguments of the common kinds are built here (no float, no `\u`, not deep); the
        // rest by serde_json from the same place.
        let start = self.clone();
        if let Some(value) = self.value(0) {
            return Some(value);
        }
        *self = start;
        // serde_json's reader of text, which trusts the frame's check: its byte reader
        // would check each string on its own, which costs more.
        let rest = self.rest_str()?;
        let mut values = serde_json::Deserializer::from_str(rest).into_iter::<Value>();
        let value = values.next()?.ok()?;
        let len = values.byte_offset();
        // A value of `len` bytes nests at most `len / 2` levels: only a long one is measured.
        if len / 2 > MAX_ARGS_DEPTH && depth(&value) > MAX_ARGS_DEPTH {
            return None;
        }
        self.skip(len);
        Some(value)
    }
}

/// How many arrays and objects deep `value` nests (a scalar: 0).
fn depth(value: &Value) -> usize {
    let inner = match value {
        Value::Array(items) => items.iter().map(depth).max(),
        Value::Object(members) => members.values().map(depth).max(),
        _ => return 0,
    };
    1 + inner.unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn reads_the_calls_with_their_arguments_in_order() {
        let frame = br#" {"tool_call": {"functionCalls": [
            {"name": "get_weather", "args": {"unit": "celsius", "city": "London"}, "id": "c\"1"},
            {"id": "c2", "name": "ping"},
            {}
        ]}} "#;
        let call = read(frame).unwrap();
        let calls = call.function_calls.unwrap();
        assert_eq!(calls.len(), 3);
        assert_eq!(calls[0].id.as_deref(), Some("c\"1"));
        assert_eq!(calls[0].name.as_deref(), Some("get_weather"));
        let args = calls[0].args.as_ref().unwrap();
        assert_eq!(args, &json!({"unit": "celsius", "city": "London"}));
        assert_eq!(
            serde_json::to_string(args).unwrap(),
            r#"{"unit":"celsius","city":"London"}"#
        );
        assert_eq!(calls[1].args, None);
        assert_eq!(calls[2], FunctionCall::default());
        assert_eq!(
            read(br#"{"toolCall":{"functionCalls":[]}}"#)
                .unwrap()
                .function_calls,
            Some(vec![])
        );
    }

    #[test]
    fn leaves_everything_else_to_the_general_decoder() {
        for frame in [
            r#"{"toolCall":{"functionCalls":[{"id":"1","args":null}]}}"#,
            r#"{"toolCall":{"functionCalls":[{"id":"1","id":"2"}]}}"#,
            r#"{"toolCall":{"functionCalls":[{"id":"1","willContinue":true}]}}"#,
            r#"{"toolCall":{"functionCalls":[{"id":"\u0031"}]}}"#,
            r#"{"toolCall":{"functionCalls":[{"id":1}]}}"#,
            r#"{"toolCall":{"functionCalls":[{"args":{"a":1}x}]}}"#,
            r#"{"toolCall":{"functionCalls":[{"args":{"a":}}]}}"#,
            r#"{"toolCall":{"functionCalls":[]},"usageMetadata":{}}"#,
            r#"{"toolCall":{"functionCalls":[],"x":1}}"#,
            r#"{"toolCall":{"functionCalls":[]}} ]"#,
            r#"{"toolCallCancellation":{"ids":["1"]}}"#,
        ] {
            assert!(read(frame.as_bytes()).is_none(), "{frame}");
        }
        let nested = |levels: usize| {
            format!(
                r#"{{"toolCall":{{"functionCalls":[{{"args":{}{}}}]}}}}"#,
                "[".repeat(levels),
                "]".repeat(levels)
            )
        };
        assert!(read(nested(MAX_ARGS_DEPTH + 1).as_bytes()).is_none());
        assert!(read(nested(MAX_ARGS_DEPTH).as_bytes()).is_some());
    }
}
