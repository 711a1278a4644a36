//! [`ClientKeys`]: which messages a client frame's top-level keys name, read without
//! decoding the frame.
//!
//! A replay asks of most recorded client frames one question: is this a setup, a tool
//! response, client content…? Decoding the whole frame to answer it (a setup with its tool
//! schemas is hundreds of bytes of nested JSON) costs far more than reading its top-level
//! keys. A valid client frame carries exactly one message, under that message's key
//! ([`crate::decode_client`]), so a frame none of whose top-level keys names a kind
//! certainly does not decode to that kind: [`may_carry`] answers `false` then without a
//! decode, and a caller decodes only the frames that may be what it looks for.

use crate::client::ClientMessageKind;
use crate::short_reader::Reader;

/// How deep a top-level value may nest for [`ClientKeys::peek`] to step over it; a deeper
/// one leaves the frame to the decoder.
const MAX_VALUE_DEPTH: usize = 128;

/// Every message key, in either spelling the decoder accepts, with its kind.
const SPELLINGS: [(&[u8], ClientMessageKind); 9] = [
    (b"setup", ClientMessageKind::Setup),
    (b"clientContent", ClientMessageKind::ClientContent),
    (b"client_content", ClientMessageKind::ClientContent),
    (b"realtimeInput", ClientMessageKind::RealtimeInput),
    (b"realtime_input", ClientMessageKind::RealtimeInput),
    (b"toolResponse", ClientMessageKind::ToolResponse),
    (b"tool_response", ClientMessageKind::ToolResponse),
    (b"contextUpdate", ClientMessageKind::ContextUpdate),
    (b"context_update", ClientMessageKind::ContextUpdate),
];

/// The message kinds a client frame's top-level keys name (unknown keys aside).
///
/// ```
/// use reel_protocol::{ClientKeys, ClientMessageKind};
///
/// let keys = ClientKeys::peek(br#"{"toolResponse":{"functionResponses":[]}}"#).unwrap();
/// assert!(keys.contains(ClientMessageKind::ToolResponse));
/// assert!(!keys.contains(ClientMessageKind::ClientContent));
/// // Not an object the peek can read: no answer, the frame is for the decoder.
/// assert_eq!(ClientKeys::peek(b"[1, 2]"), None);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ClientKeys {
    /// One bit per [`ClientMessageKind`], at [`bit`].
    bits: u8,
}

impl ClientKeys {
    /// The kinds `frame`'s top-level keys name, when `frame` is a JSON object whose keys
    /// the peek can read exactly: `None` for anything else (a key with an escape, a string
    /// with a `\u` escape, nesting deeper than 128, bad JSON), which only the decoder can
    /// judge.
    pub fn peek(frame: &[u8]) -> Option<ClientKeys> {
        let mut reader = Reader::new(frame);
        reader.byte(b'{')?;
        let mut keys = ClientKeys::default();
        if reader.empty(b'}')? {
            return Some(keys);
        }
        loop {
            // A key without escapes: its bytes are the key the decoder compares.
            let key = reader.plain()?;
            if let Some((_, kind)) = SPELLINGS.iter().find(|(name, _)| *name == key) {
                keys.bits |= bit(*kind);
            }
            reader.byte(b':')?;
            reader.json_text(MAX_VALUE_DEPTH)?;
            if !reader.more(b'}')? {
                break;
            }
        }
        reader.at_end().then_some(keys)
    }

    /// Whether a top-level key names `kind`.
    pub fn contains(self, kind: ClientMessageKind) -> bool {
        self.bits & bit(kind) != 0
    }

    /// Whether no top-level key names a kind.
    pub fn is_empty(self) -> bool {
        self.bits == 0
    }
}

/// Whether `frame` may decode to a message of one of `kinds`: `false` only when it
/// certainly does not (its top-level keys, read by [`ClientKeys::peek`], name none of
/// them), so that `decode_client(frame).is_ok_and(|m| kinds.contains(&m.kind()))` can be
/// skipped; `true` when it may, and only a decode tells.
///
/// ```
/// use reel_protocol::{ClientMessageKind, client_frame_may_be};
///
/// let app = [ClientMessageKind::ClientContent, ClientMessageKind::RealtimeInput];
/// assert!(!client_frame_may_be(br#"{"setup":{"model":"m"}}"#, &app));
/// assert!(client_frame_may_be(br#"{"realtime_input":{"audio":{}}}"#, &app));
/// // Unreadable by the peek: only the decoder can tell.
/// assert!(client_frame_may_be(br#"{"\u0073etup":{}}"#, &app));
/// ```
pub fn client_frame_may_be(frame: &[u8], kinds: &[ClientMessageKind]) -> bool {
    match ClientKeys::peek(frame) {
        Some(keys) => kinds.iter().any(|kind| keys.contains(*kind)),
        None => true,
    }
}

/// The bit of `kind` in [`ClientKeys`].
fn bit(kind: ClientMessageKind) -> u8 {
    match kind {
        ClientMessageKind::Setup => 1,
        ClientMessageKind::ClientContent => 1 << 1,
        ClientMessageKind::RealtimeInput => 1 << 2,
        ClientMessageKind::ToolResponse => 1 << 3,
        ClientMessageKind::ContextUpdate => 1 << 4,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::decode_client;
    use ClientMessageKind::*;

    const ALL: [ClientMessageKind; 5] = [
        Setup,
        ClientContent,
        RealtimeInput,
        ToolResponse,
        ContextUpdate,
    ];

    fn kinds(frame: &str) -> Option<Vec<ClientMessageKind>> {
        let keys = ClientKeys::peek(frame.as_bytes())?;
        Some(ALL.into_iter().filter(|k| keys.contains(*k)).collect())
    }

    #[test]
    fn names_the_kinds_of_the_top_level_keys_only() {
        assert_eq!(kinds(r#"{"setup":{"model":"m"}}"#), Some(vec![Setup]));
        assert_eq!(
            kinds(r#" { "tool_response" : {"functionResponses":[{"id":"a"}]} } "#),
            Some(vec![ToolResponse])
        );
        // A nested key of the same name is no message.
        assert_eq!(
            kinds(r#"{"contextUpdate":{"setup":{},"clientContent":[1,"x",true,null]}}"#),
            Some(vec![ContextUpdate])
        );
        // Unknown keys are no kind; two known ones are both named (the decoder refuses it).
        assert_eq!(kinds(r#"{"extra":1.5e3,"n":-2}"#), Some(vec![]));
        assert_eq!(
            kinds(r#"{"realtimeInput":{},"client_content":{}}"#),
            Some(vec![ClientContent, RealtimeInput])
        );
        assert_eq!(kinds("{}"), Some(vec![]));
    }

    #[test]
    fn what_it_cannot_read_exactly_is_left_to_the_decoder() {
        for frame in [
            r#"{"\u0073etup":{}}"#,
            r#"{"setup":{"text":"\u00e9"}}"#,
            r#"{"setup":{}"#,
            r#"{"setup":{}} trailing"#,
            r#"["setup"]"#,
            r#"{"setup" {}}"#,
            "",
        ] {
            assert_eq!(ClientKeys::peek(frame.as_bytes()), None, "{frame}");
            assert!(client_frame_may_be(frame.as_bytes(), &[ToolResponse]));
        }
    }

    /// The peek's promise: whatever decodes to a kind has that kind's key at its top level.
    #[test]
    fn a_frame_that_decodes_to_a_kind_is_never_ruled_out_for_it() {
        let frames = [
            r#"{"setup":{"model":"models/m","tools":[{"functionDeclarations":[{"name":"f"}]}]}}"#,
            r#"{"clientContent":{"turns":[{"role":"user","parts":[{"text":"Hi \"you\""}]}],"turnComplete":true}}"#,
            r#"{"realtime_input":{"audio":{"data":"AAAA","mimeType":"audio/pcm"}}}"#,
            r#"{"toolResponse":{"functionResponses":[{"id":"a","response":{"x":[1,2]}}]},"extra":{}}"#,
            r#"{"context_update":{"systemInstruction":{"parts":[{"text":"be brief"}]}}}"#,
        ];
        for frame in frames {
            let kind = decode_client(frame.as_bytes()).unwrap().kinds()[0];
            assert!(client_frame_may_be(frame.as_bytes(), &[kind]), "{frame}");
            let others: Vec<_> = ALL.into_iter().filter(|k| *k != kind).collect();
            assert!(!client_frame_may_be(frame.as_bytes(), &others), "{frame}");
        }
    }
}
