//! [`TapeScan`]: what an offline replay needs from a wire log, gathered by the tape's reader
//! as it reads, so the log is read once.
//!
//! An offline replay needs three things from the log besides its frames: the recorded
//! setup (before the session starts), the runtime's recorded tool responses (when the
//! replayed model calls a tool), and the log's statistics (for the report). The scan
//! watches each entry on the reader's thread, before the replay gets it
//! ([`TapeScan::observe`]), and hands them out as they become known:
//!
//! - [`TapeScan::setup`] waits until the reader has passed the first frame the client sent;
//! - [`TapeScan::tool_callbacks`] answers a tool call with its recorded response, waiting
//!   until the reader has read that far: a response comes after its call, often hundreds of
//!   entries later (audio keeps flowing while a tool runs), so while a call waits the
//!   reader's read-ahead is lifted ([`ReadAhead::lift`]). A call gets no answer (`None`, as
//!   from [`RecordedToolResponses`]) once the reader has seen that none will come: the call
//!   cancelled, answered by the application, its connection closed, the log ended, or
//!   [`LIFTED_READ_AHEAD`] entries read ahead without its response;
//! - [`TapeScan::stats`] once the reader is at the end.

use std::collections::HashSet;
use std::sync::{Arc, LazyLock, Mutex, OnceLock, PoisonError};

use memchr::memmem;
use reel_actors::callbacks::ControlCallbacks;
use reel_protocol::{
    ClientMessage, FunctionCall, FunctionResponse, Setup, decode_client, decode_server,
};
use reel_recorder::wire_log::{Direction, WireEntry};
use tokio::sync::Notify;

use crate::log_stats::LogStats;
use crate::recorded_tools::RecordedToolResponses;
use crate::tape::{LIFTED_READ_AHEAD, ReadAhead};

/// Why a log has no setup to configure a replay with.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum MissingSetup {
    /// The first frame the client sent is something else.
    #[error("the first frame the client sent (seq {seq}) is not a setup")]
    NotASetup {
        /// Its sequence number.
        seq: u64,
    },
    /// The client sent nothing.
    #[error("the client sent no frame")]
    NoClientFrame,
}

/// A wire log's setup, statistics and recorded tool responses, gathered as it is read (see
/// the [module docs](self)).
#[derive(Debug, Default)]
pub struct TapeScan {
    state: Mutex<ScanState>,
    /// Woken whenever the scan learns something a waiter may be waiting for.
    changed: Notify,
    read_ahead: OnceLock<ReadAhead>,
}

#[derive(Debug, Default)]
struct ScanState {
    stats: LogStats,
    responses: RecordedToolResponses,
    /// Calls read whose outcome (a response, or none coming) is not known yet.
    open_calls: HashSet<String>,
    /// The reader is at the end.
    ended: bool,
}

/// The calls a server frame makes, or cancels.
pub(crate) enum CallFrame {
    Calls(Vec<String>),
    Cancelled(Vec<String>),
}

impl TapeScan {
    /// A scan that has seen nothing yet.
    pub fn new() -> Arc<TapeScan> {
        Arc::new(TapeScan::default())
    }

    /// Lets the scan lift `read_ahead` (the tape's, see [`crate::Tape::read_ahead`]) while a
    /// tool call waits for a response further on. Without it the scan can only answer
    /// from what the reader has read anyway.
    pub fn attach(&self, read_ahead: ReadAhead) {
        let _ = self.read_ahead.set(read_ahead);
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, ScanState> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Takes the next entry of the log, on the reader's side (before the replay gets it).
    pub fn observe(&self, entry: &WireEntry) {
        let mut state = self.lock();
        let knew_setup = state.stats.first_outbound_seq.is_some();
        state.stats.observe(entry);
        // The first client frame: whoever waits for the setup learns it now.
        let mut changed = !knew_setup && state.stats.first_outbound_seq.is_some();
        if entry.is_close_marker() {
            // A call is answered on its own connection, or not at all.
            changed |= !state.open_calls.is_empty();
            state.open_calls.clear();
        } else {
            match entry.dir {
                Direction::In => match call_frame(&entry.payload) {
                    Some(CallFrame::Calls(ids)) => state.open_calls.extend(ids),
                    Some(CallFrame::Cancelled(ids)) => {
                        for id in ids {
                            changed |= state.open_calls.remove(&id);
                        }
                    }
                    None => {}
                },
                Direction::Out => {
                    // Decoded once, for the recorded answers and the calls it settles.
                    if mentions(&entry.payload, &TOOL_RESPONSE)
                        && let Ok(message) = decode_client(&entry.payload)
                    {
                        // Answered by the runtime or by the application: settled either way.
                        for (id, _) in answers_of(&message) {
                            changed |= state.open_calls.remove(&id);
                        }
                        state.responses.observe_decoded(entry, message);
                    }
                }
            }
        }
        if !state.open_calls.is_empty()
            && self
                .read_ahead
                .get()
                .is_some_and(|read_ahead| read_ahead.buffered() + 1 >= LIFTED_READ_AHEAD)
        {
            tracing::warn!(
                calls = state.open_calls.len(),
                "no recorded tool response within {LIFTED_READ_AHEAD} entries of its call; the call stays unanswered"
            );
            state.open_calls.clear();
            changed = true;
        }
        drop(state);
        if changed {
            self.changed.notify_waiters();
        }
    }

    /// The reader is at the end of the log (or stopped at a bad entry).
    pub fn end(&self) {
        let mut state = self.lock();
        state.ended = true;
        state.open_calls.clear();
        drop(state);
        self.changed.notify_waiters();
    }

    /// Waits until `ready` holds of the scan's state, the read-ahead lifted meanwhile.
    async fn wait_until<T>(&self, mut ready: impl FnMut(&ScanState) -> Option<T>) -> T {
        let mut lift = None;
        loop {
            let notified = self.changed.notified();
            tokio::pin!(notified);
            notified.as_mut().enable();
            if let Some(value) = ready(&self.lock()) {
                return value;
            }
            if lift.is_none() {
                lift = self.read_ahead.get().map(ReadAhead::lift);
            }
            notified.await;
        }
    }

    /// The setup the session was configured with: the first frame the client sent, once the
    /// reader has passed it.
    pub async fn setup(&self) -> Result<Setup, MissingSetup> {
        self.wait_until(|state| {
            let stats = &state.stats;
            match stats.first_outbound_seq {
                Some(seq) => Some(stats.setup.clone().ok_or(MissingSetup::NotASetup { seq })),
                None if state.ended => Some(Err(MissingSetup::NoClientFrame)),
                None => None,
            }
        })
        .await
    }

    /// The log's statistics, once the reader is at its end.
    pub async fn stats(&self) -> LogStats {
        self.wait_until(|state| state.ended.then(|| state.stats.clone()))
            .await
    }

    /// The recorded responses to `calls` ([`RecordedToolResponses::answers`]), once the
    /// reader knows them (see the [module docs](self)).
    pub async fn answers(&self, calls: &[FunctionCall]) -> Option<Vec<FunctionResponse>> {
        self.wait_until(|state| {
            let settled = state.ended
                || calls
                    .iter()
                    .filter_map(|call| call.id.as_deref())
                    .all(|id| !state.open_calls.contains(id));
            settled.then(|| state.responses.answers(calls))
        })
        .await
    }

    /// The recorded response to the one call `call_id` of the tool `name` (with `args`, by
    /// which recorded responses may be matched), once the reader knows it.
    pub async fn answer(
        &self,
        call_id: &str,
        name: &str,
        args: Option<serde_json::Value>,
    ) -> Option<FunctionResponse> {
        let call = FunctionCall {
            id: Some(call_id.to_owned()),
            name: Some(name.to_owned()),
            args: args.map(reel_protocol::Args::from),
            ..FunctionCall::default()
        };
        self.answers(std::slice::from_ref(&call))
            .await?
            .into_iter()
            .find(|response| response.id.as_deref() == Some(call_id))
    }

    /// Control callbacks whose `on_tool_call` answers with [`TapeScan::answers`].
    pub fn tool_callbacks(self: &Arc<Self>) -> ControlCallbacks {
        let scan = Arc::clone(self);
        ControlCallbacks {
            on_tool_call: Some(Arc::new(move |calls, _state| {
                let scan = Arc::clone(&scan);
                Box::pin(async move { scan.answers(&calls).await })
            })),
            ..ControlCallbacks::default()
        }
    }
}

/// The call ids a server frame makes or cancels; `None` for every other frame (checked
/// for the key's name first, so an audio chunk is not decoded a second time).
pub(crate) fn call_frame(payload: &[u8]) -> Option<CallFrame> {
    mentions(payload, &TOOL_CALL).then_some(())?;
    let message = decode_server(payload).ok()?;
    if let Some(call) = message.tool_call {
        let ids = call
            .function_calls
            .unwrap_or_default()
            .into_iter()
            .filter_map(|c| c.id)
            .collect();
        return Some(CallFrame::Calls(ids));
    }
    let cancelled = message.tool_call_cancellation?;
    Some(CallFrame::Cancelled(cancelled.ids.unwrap_or_default()))
}

/// The calls a decoded client frame answers (a tool response's), each with whether the
/// answer is its last (a streaming tool's partial results carry `willContinue`; only the
/// last one closes the call).
pub(crate) fn answers_of(message: &ClientMessage) -> Vec<(String, bool)> {
    let Some(responses) = message
        .tool_response
        .as_ref()
        .and_then(|response| response.function_responses.as_ref())
    else {
        return Vec::new();
    };
    responses
        .iter()
        .filter_map(|response| {
            let last = response.will_continue != Some(true);
            Some((response.id.clone()?, last))
        })
        .collect()
}

/// A key's two spellings after its common start `"tool` (the wire's camelCase, and
/// snake_case): `Call`/`_call`, `Response`/`_response`.
type Spellings = [&'static [u8]; 2];

const TOOL_CALL: Spellings = [b"Call", b"_call"];

const TOOL_RESPONSE: Spellings = [b"Response", b"_response"];

/// The start every key searched for shares, searched for with a searcher built once:
/// building one per frame was a tenth of the tape reader's time.
static TOOL_KEY: LazyLock<memmem::Finder<'static>> =
    LazyLock::new(|| memmem::Finder::new("\"tool"));

/// Whether `payload` holds either spelling of a key: one scan for the shared start, each
/// hit's next bytes compared with the spellings (a frame that mentions no tool — an audio
/// chunk — is scanned once, not once per spelling).
fn mentions(payload: &[u8], spellings: &Spellings) -> bool {
    let start = TOOL_KEY.needle().len();
    TOOL_KEY.find_iter(payload).any(|at| {
        let rest = &payload[at + start..];
        spellings.iter().any(|tail| rest.starts_with(tail))
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use reel_protocol::{ClientMessage, encode};
    use reel_recorder::wire_log::{CloseMark, Source};
    use serde_json::json;

    fn inbound(seq: u64, payload: &str) -> WireEntry {
        WireEntry::frame(
            seq,
            Direction::In,
            seq,
            payload.as_bytes().to_vec(),
            None,
            false,
        )
    }

    fn response(seq: u64, id: &str, source: Option<Source>) -> WireEntry {
        let frame = encode(&ClientMessage::tool_response(vec![FunctionResponse::new(
            id,
            "f",
            json!({"n": seq}),
        )]));
        WireEntry {
            source,
            ..WireEntry::frame(seq, Direction::Out, seq, frame, None, false)
        }
    }

    fn call(id: &str) -> FunctionCall {
        FunctionCall {
            id: Some(id.into()),
            name: Some("f".into()),
            ..FunctionCall::default()
        }
    }

    fn call_frame(seq: u64, id: &str) -> WireEntry {
        inbound(
            seq,
            &format!(r#"{{"toolCall":{{"functionCalls":[{{"id":"{id}","name":"f"}}]}}}}"#),
        )
    }

    /// Starts waiting for the answers to `calls`, and checks it is still waiting.
    async fn waiting(
        scan: &Arc<TapeScan>,
        calls: Vec<FunctionCall>,
    ) -> tokio::task::JoinHandle<Option<Vec<FunctionResponse>>> {
        let waiter = {
            let scan = Arc::clone(scan);
            tokio::spawn(async move { scan.answers(&calls).await })
        };
        tokio::task::yield_now().await;
        assert!(!waiter.is_finished(), "the answer is not known yet");
        waiter
    }

    #[tokio::test]
    async fn a_call_waits_for_its_response_read_later_and_gets_the_first() {
        let scan = TapeScan::new();
        scan.observe(&call_frame(1, "a"));
        let waiter = waiting(&scan, vec![call("a")]).await;
        scan.observe(&inbound(2, r#"{"serverContent":{"turnComplete":true}}"#));
        assert!(!waiter.is_finished());
        scan.observe(&response(3, "a", None));
        scan.observe(&response(4, "a", None));
        let answered = waiter.await.unwrap().unwrap();
        assert_eq!(answered, [FunctionResponse::new("a", "f", json!({"n": 3}))]);
    }

    #[tokio::test]
    async fn no_answer_once_none_can_come() {
        // Cancelled by the server.
        let scan = TapeScan::new();
        scan.observe(&call_frame(1, "a"));
        let waiter = waiting(&scan, vec![call("a")]).await;
        scan.observe(&inbound(2, r#"{"toolCallCancellation":{"ids":["a"]}}"#));
        assert_eq!(waiter.await.unwrap(), None);

        // Answered by the application: replayed from the tape, not again.
        let scan = TapeScan::new();
        scan.observe(&call_frame(1, "a"));
        let waiter = waiting(&scan, vec![call("a")]).await;
        scan.observe(&response(2, "a", Some(Source::App)));
        assert_eq!(waiter.await.unwrap(), None);

        // Its connection closed.
        let scan = TapeScan::new();
        scan.observe(&call_frame(1, "a"));
        let waiter = waiting(&scan, vec![call("a")]).await;
        let mark = CloseMark {
            code: Some(1006),
            reason: None,
            client: false,
        };
        scan.observe(&WireEntry::close_mark(2, 2, None, mark));
        assert_eq!(waiter.await.unwrap(), None);

        // The log ended.
        let scan = TapeScan::new();
        scan.observe(&call_frame(1, "a"));
        let waiter = waiting(&scan, vec![call("a")]).await;
        scan.end();
        assert_eq!(waiter.await.unwrap(), None);
    }

    #[tokio::test]
    async fn a_frame_of_two_calls_waits_for_both() {
        let scan = TapeScan::new();
        scan.observe(&inbound(
            1,
            r#"{"toolCall":{"functionCalls":[{"id":"a","name":"f"},{"id":"b","name":"f"}]}}"#,
        ));
        let waiter = waiting(&scan, vec![call("a"), call("b")]).await;
        scan.observe(&response(2, "b", None));
        tokio::task::yield_now().await;
        assert!(!waiter.is_finished(), "a is still running");
        scan.observe(&inbound(3, r#"{"toolCallCancellation":{"ids":["a"]}}"#));
        let answered = waiter.await.unwrap().unwrap();
        assert_eq!(answered, [FunctionResponse::new("b", "f", json!({"n": 2}))]);
    }

    #[tokio::test]
    async fn the_setup_is_the_first_frame_the_client_sent() {
        let scan = TapeScan::new();
        scan.observe(&inbound(1, r#"{"setupComplete":{}}"#));
        scan.observe(&WireEntry::frame(
            2,
            Direction::Out,
            2,
            &br#"{"setup":{"model":"models/m"}}"#[..],
            None,
            false,
        ));
        let setup = scan.setup().await.unwrap();
        assert_eq!(setup.model.as_deref(), Some("models/m"));

        let scan = TapeScan::new();
        scan.observe(&response(4, "a", None));
        assert_eq!(scan.setup().await, Err(MissingSetup::NotASetup { seq: 4 }));

        let scan = TapeScan::new();
        scan.observe(&inbound(1, r#"{"setupComplete":{}}"#));
        scan.end();
        assert_eq!(scan.setup().await, Err(MissingSetup::NoClientFrame));
        assert_eq!(scan.stats().await.inbound, 1);
    }

    #[test]
    fn a_key_is_found_in_either_spelling_and_nowhere_else() {
        let found = |payload: &str| {
            [
                mentions(payload.as_bytes(), &TOOL_CALL),
                mentions(payload.as_bytes(), &TOOL_RESPONSE),
            ]
        };
        assert_eq!(found(r#"{"toolCall":{}}"#), [true, false]);
        assert_eq!(found(r#"{"tool_call":{}}"#), [true, false]);
        assert_eq!(found(r#"{"toolCallCancellation":{}}"#), [true, false]);
        assert_eq!(found(r#"{"toolResponse":{}}"#), [false, true]);
        assert_eq!(found(r#"{"tool_response":{}}"#), [false, true]);
        // A text that says "tools" first, the key after it: every hit is looked at.
        assert_eq!(
            found(r#"{"text":"\"tools\"","toolCall":{}}"#),
            [true, false]
        );
        assert_eq!(found(r#"{"text":"\"tools\" \"tool"}"#), [false, false]);
        assert_eq!(
            found(r#"{"realtimeInput":{"audio":"AAAA"}}"#),
            [false, false]
        );
        // The key's start at the very end of the payload.
        assert_eq!(found(r#"x"tool"#), [false, false]);
    }
}
