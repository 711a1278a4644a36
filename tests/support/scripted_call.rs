//! A call between an example's fluent agent and a scripted model on a loopback
//! `ScriptedServer`, recorded under paused time: how every example's "the bundled tape is
//! what reel records today" test makes its recording.

use std::fmt::Debug;
use std::sync::Arc;
use std::time::Duration;

use reel_actors::clock::TokioClock;
use reel_actors::testing::{ScriptedServer, ServerConn};
use reel_actors::{EventStream, LiveHandle};
use reel_fluent::LiveBuilder;
use reel_recorder::journal::{JournalSink, MemoryJournalSink, StateMutation};
use reel_recorder::wire_log::{MemoryWireRecorder, WireEntry, WireRecorder};

/// What a scripted call left: what the example's conversation returned, the wire log and
/// the state journal.
pub struct ScriptedCall<C> {
    /// What the example's `converse` returned.
    pub call: C,
    /// Every frame that crossed the wire, as recorded.
    pub wire: Vec<WireEntry>,
    /// Every state mutation, in order.
    pub journal: Vec<StateMutation>,
}

/// Connects `agent` (its clock anchored at `start_ms`, its wire and journal recorded) to a
/// scripted model that `play`s its side on a loopback server, runs the example's
/// `converse`, waits 400 ms of paused time for the last frames and disconnects; the call
/// must end with the client's own close.
pub async fn talk<C, E: Debug>(
    agent: LiveBuilder,
    start_ms: u64,
    play: impl AsyncFnOnce(&mut ServerConn),
    converse: impl AsyncFnOnce(&LiveHandle, &mut EventStream) -> Result<C, E>,
) -> ScriptedCall<C> {
    let mut server = ScriptedServer::bind().await;
    let recorder = Arc::new(MemoryWireRecorder::new());
    let journal = Arc::new(MemoryJournalSink::new());
    let agent = agent
        .record_wire_to(recorder.clone() as Arc<dyn WireRecorder>)
        .journal_to(journal.clone() as Arc<dyn JournalSink>)
        .customize(move |session| session.clock(Arc::new(TokioClock::anchored_at(start_ms))));
    let mut events = agent.subscribe();
    let endpoint = server.endpoint().without_credential();
    let model = async {
        let mut conn = server.accept().await;
        play(&mut conn).await;
    };
    let caller = async {
        let handle = agent.connect(endpoint).await.unwrap();
        let call = converse(&handle, &mut events).await.unwrap();
        tokio::time::advance(Duration::from_millis(400)).await;
        (call, handle.disconnect().await)
    };
    let ((), (call, end)) = tokio::join!(model, caller);
    assert_eq!(end.reason, "closed with code 1000: client disconnect");
    ScriptedCall {
        call,
        wire: recorder.entries(),
        journal: journal.entries(),
    }
}
