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
//! each at most once) and builds the [`ToolCall`] directly. `args` is checked by the cursor
//! ([`Reader::json_text`]) and kept as its text ([`Args`], decision 0073): no value tree is
//! built. Anything else — another field (`partialArgs`, `willContinue`, an unknown one), a
//! `null`, a `\u` escape, a key given twice in an object of `args`, `args` nested deeper
//! than [`MAX_ARGS_DEPTH`], a number serde_json refuses — makes it answer `None`, and the
//! general decoder reads the frame (tested frame by frame against it in
//! `tests/it/tool_call_frames.rs`).

use crate::args::Args;
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
                b"args" if call.args.is_none() => call.args = Some(self.args()?),
                _ => return None,
            }
            if !self.more(b'}')? {
                return Some(call);
            }
        }
    }

    /// Any JSON value but `null` (which the general decoder reads as an absent field),
    /// checked where it stands and kept as its text.
    fn args(&mut self) -> Option<Args> {
        if self.peek()? == b'n' {
            return None;
        }
        self.json_text(MAX_ARGS_DEPTH).map(Args::from_checked)
    }
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
        assert!(!args.value_built(), "decoding builds no value tree");
        assert_eq!(args, &json!({"unit": "celsius", "city": "London"}));
        assert_eq!(args.json(), r#"{"unit": "celsius", "city": "London"}"#);
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
            r#"{"toolCall":{"functionCalls":[{"args":{"a":1,"a":2}}]}}"#,
            r#"{"toolCall":{"functionCalls":[{"args":{"a":"\u0041"}}]}}"#,
            r#"{"toolCall":{"functionCalls":[{"args":{"a":1e999}}]}}"#,
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
