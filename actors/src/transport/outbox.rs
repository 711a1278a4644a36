//! [`Outbox`]: the commands waiting for the live transport's writer task.
//!
//! Every command the application and the runtime send (`SessionWriter::send`, deferred
//! context) is pushed here, in order, instead of becoming a ractor message to the Transport
//! actor: a voice session sends fifty audio chunks a second, and a ractor message each (a
//! boxed message, an unbounded channel, the actor's wake and its select over four ports) was
//! a fifth of what a session cost with thousands of sessions (decision 0083). The writer
//! task ([`super::command_writer`]) is woken by a flag and a [`Bell`] and writes what waits
//! while the connection is live. The Transport actor keeps the connection's lifecycle and
//! says what the outbox does with a command ([`Flow`]): hold it while a connection is being
//! set up, let the writer send it once live, drop it once the session's connection is over.
//! A command pushed while live and the writer idle is written on the pusher's own task,
//! in place, when the link takes it without waiting (decision 0091,
//! [`super::command_writer::CommandWriter::write_in_place`]). The outbox lives inside the
//! writer ([`super::command_writer::CommandWriter`]), one allocation with the connection's
//! sender, so a command touches one session structure on its way out, not three.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use reel_protocol::SessionCommand;

use super::live_transport::HELD_AUDIO_CHUNKS;
use crate::bell::Bell;
use crate::events::lock;
use crate::mailbox::Origin;
use crate::telemetry::TelemetryShared;

/// A command and who sent it.
pub(crate) type Queued = (SessionCommand, Origin);

/// A command the outbox lets out, with the application's audio it dropped just before.
#[derive(Debug, PartialEq)]
pub(crate) struct Outgoing {
    /// The command.
    pub command: SessionCommand,
    /// Who sent it.
    pub origin: Origin,
    /// On the application's audio chunk: how many of its chunks held before it were
    /// dropped unsent (0 on every other command). Recorded with its frame and told to the
    /// running tools that consume the user's input (decision 0092).
    pub dropped_before: u64,
}

/// What [`Outbox::push`] did with a command.
#[derive(Debug, PartialEq)]
pub(crate) enum Pushed {
    /// Queued, or dropped once the connection is over: nothing for the caller to do.
    Queued,
    /// Queued while live with the writer idle; the outbox now counts it rung: the caller
    /// writes what waits in place, or rings the writer's task ([`Outbox::ring`]).
    Rung,
    /// Live, the writer idle and nothing waiting: not queued at all (decision 0096). The
    /// outbox counts it rung; the caller writes it first, in place, if the connection is
    /// still live then ([`Outbox::is_live`]), then what waits; or gives it back
    /// ([`Outbox::unpop`]) and rings.
    Write(Outgoing),
}

/// What the outbox does with the commands pushed to it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Flow {
    /// Hold them until the connection is live: audio beyond [`HELD_AUDIO_CHUNKS`] drops the
    /// oldest held chunk (counted); every other command is kept.
    Hold,
    /// The writer sends them.
    Live,
    /// The session's connection is over: dropped.
    Drop,
    /// The transport is gone: refused (the sender learns the session has ended).
    Stopped,
}

struct State {
    commands: VecDeque<Queued>,
    flow: Flow,
    /// The writer has been woken and has not yet found the outbox empty.
    rung: bool,
    /// The application's audio chunks dropped since the last of its chunks was let out:
    /// the next one carries the count. Only the oldest held audio is ever dropped, so every
    /// chunk dropped came just before the next one of the application's that goes out.
    dropped_unsent: u64,
}

/// Whether a queued command is audio.
fn is_audio((command, _): &Queued) -> bool {
    matches!(command, SessionCommand::SendAudio(_))
}

/// The commands waiting for the writer (see the [module docs](self)).
///
/// `repr(C)`, in this order: the lock, its state and the live flag — what every push
/// reads — in 57 bytes, one cache line of the [`CommandWriter`] that holds it; the bell
/// and the telemetry after.
///
/// [`CommandWriter`]: super::command_writer::CommandWriter
#[repr(C)]
pub(crate) struct Outbox {
    state: Mutex<State>,
    /// Whether the flow is [`Flow::Live`], written with it: read by a pusher about to write
    /// the command it was handed ([`Pushed::Write`]) without taking the lock again.
    live: AtomicBool,
    bell: Bell,
    telemetry: Arc<TelemetryShared>,
}

/// The bytes at the start of an [`Outbox`] that every push reads: its lock with the state,
/// and the live flag.
#[cfg(test)]
pub(crate) const HOT_BYTES: usize = std::mem::offset_of!(Outbox, live) + 1;

impl std::fmt::Debug for Outbox {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let state = lock(&self.state);
        f.debug_struct("Outbox")
            .field("waiting", &state.commands.len())
            .field("flow", &state.flow)
            .finish()
    }
}

impl Outbox {
    /// An outbox holding what is pushed until the connection is live; held audio dropped
    /// is counted in `telemetry`.
    pub(crate) fn new(telemetry: Arc<TelemetryShared>) -> Self {
        Outbox {
            state: Mutex::new(State {
                commands: VecDeque::new(),
                flow: Flow::Hold,
                rung: false,
                dropped_unsent: 0,
            }),
            live: AtomicBool::new(false),
            bell: Bell::default(),
            telemetry,
        }
    }

    /// Takes `command` as its [`Flow`] says (see [`Pushed`]); gives it back only once the
    /// transport is gone.
    pub(crate) fn push(&self, command: SessionCommand, origin: Origin) -> Result<Pushed, Queued> {
        let mut state = lock(&self.state);
        match state.flow {
            Flow::Stopped => return Err((command, origin)),
            Flow::Drop => {
                tracing::debug!(
                    kind = command.kind(),
                    "dropping a command sent after disconnect"
                );
                return Ok(Pushed::Queued);
            }
            Flow::Hold => {
                if matches!(command, SessionCommand::SendAudio(_)) {
                    self.make_room_for_audio(&mut state);
                }
                state.commands.push_back((command, origin));
                return Ok(Pushed::Queued);
            }
            Flow::Live => {}
        }
        // Counted rung: whoever writes now (the caller in place, else the writer's task)
        // takes everything until it finds the outbox empty.
        if std::mem::replace(&mut state.rung, true) {
            state.commands.push_back((command, origin));
            return Ok(Pushed::Queued);
        }
        // Not rung and live means empty (going live with commands held rings, and the
        // writer counts itself idle only on finding nothing); should commands wait all the
        // same, this one goes behind them, never ahead.
        if !state.commands.is_empty() {
            state.commands.push_back((command, origin));
            return Ok(Pushed::Rung);
        }
        Ok(Pushed::Write(Self::outgoing(&mut state, command, origin)))
    }

    /// `command` let out now, carrying the count of the application's audio dropped before
    /// it if it is the application's next chunk.
    fn outgoing(state: &mut State, command: SessionCommand, origin: Origin) -> Outgoing {
        let dropped_before =
            if origin == Origin::App && matches!(command, SessionCommand::SendAudio(_)) {
                std::mem::take(&mut state.dropped_unsent)
            } else {
                0
            };
        Outgoing {
            command,
            origin,
            dropped_before,
        }
    }

    /// Whether the connection is live now (the flow is [`Flow::Live`]).
    pub(crate) fn is_live(&self) -> bool {
        self.live.load(Ordering::Acquire)
    }

    /// Gives back a command [`Outbox::push`] handed out ([`Pushed::Write`]) and the caller
    /// did not write: it goes first, ahead of everything pushed since, as if it had been
    /// queued, and is held (against the held audio's bound, as a push is) or dropped (the
    /// connection over, or the transport gone: its sender was told it went) as the flow
    /// says now. The outbox still counts the writer rung: the caller rings it, or pops
    /// until it finds the outbox empty.
    pub(crate) fn unpop(&self, out: Outgoing) {
        let Outgoing {
            command,
            origin,
            dropped_before,
        } = out;
        let mut state = lock(&self.state);
        match state.flow {
            // As a push after the connection ended.
            Flow::Drop | Flow::Stopped => return,
            Flow::Live => {}
            Flow::Hold => {
                let audio = matches!(command, SessionCommand::SendAudio(_));
                let held = state
                    .commands
                    .iter()
                    .filter(|queued| is_audio(queued))
                    .count();
                if audio && held >= HELD_AUDIO_CHUNKS {
                    // The oldest held chunk: dropped, and counted as a push would.
                    self.telemetry.audio_dropped(1);
                    if origin == Origin::App {
                        state.dropped_unsent += 1 + dropped_before;
                    }
                    return;
                }
            }
        }
        state.dropped_unsent += dropped_before;
        state.commands.push_front((command, origin));
    }

    /// Wakes the writer's task for what waits (the outbox already counts it rung): a write
    /// in place left the rest to it.
    pub(crate) fn ring(&self) {
        self.bell.ring();
    }

    /// While holding: drops the oldest held audio chunk if [`HELD_AUDIO_CHUNKS`] wait;
    /// one of the application's is counted for its next chunk to carry.
    fn make_room_for_audio(&self, state: &mut State) {
        let held = state
            .commands
            .iter()
            .filter(|queued| is_audio(queued))
            .count();
        if held < HELD_AUDIO_CHUNKS {
            return;
        }
        let oldest = state.commands.iter().position(is_audio);
        if let Some((_, origin)) = oldest.and_then(|oldest| state.commands.remove(oldest)) {
            self.telemetry.audio_dropped(1);
            if origin == Origin::App {
                state.dropped_unsent += 1;
            }
        }
    }

    /// The next command to send, while live. `None` when nothing waits (the next push
    /// wakes the writer again) or the connection is not live.
    pub(crate) fn pop(&self) -> Option<Outgoing> {
        let mut state = lock(&self.state);
        if state.flow != Flow::Live {
            state.rung = false;
            return None;
        }
        let Some((command, origin)) = state.commands.pop_front() else {
            state.rung = false;
            return None;
        };
        Some(Self::outgoing(&mut state, command, origin))
    }

    /// Sets what happens to commands from now on: going live wakes the writer for what was
    /// held; dropping or stopping discards what waits.
    pub(crate) fn set_flow(&self, flow: Flow) {
        let mut state = lock(&self.state);
        if state.flow == Flow::Stopped {
            return; // final
        }
        state.flow = flow;
        self.live.store(flow == Flow::Live, Ordering::Release);
        match flow {
            Flow::Live if !state.commands.is_empty() && !state.rung => {
                state.rung = true;
                drop(state);
                self.bell.ring();
            }
            Flow::Drop | Flow::Stopped => {
                state.commands.clear();
                state.dropped_unsent = 0;
            }
            _ => {}
        }
    }

    /// Waits until the writer is woken (a push while live, or going live with commands held).
    pub(crate) async fn rung(&self) {
        self.bell.wait().await;
    }
}

#[cfg(test)]
mod tests {
    use bytes::Bytes;

    use super::*;

    fn audio(n: u8) -> SessionCommand {
        SessionCommand::SendAudio(Bytes::from(vec![n]))
    }

    fn drain(outbox: &Outbox) -> Vec<SessionCommand> {
        std::iter::from_fn(|| outbox.pop().map(|out| out.command)).collect()
    }

    #[test]
    fn held_audio_keeps_the_newest_chunks_and_every_other_command() {
        let telemetry = Arc::new(TelemetryShared::default());
        let outbox = Outbox::new(Arc::clone(&telemetry));
        assert!(
            outbox
                .push(SessionCommand::SendText("hi".into()), Origin::App)
                .is_ok()
        );
        for n in 0..(HELD_AUDIO_CHUNKS as u8 + 3) {
            assert!(outbox.push(audio(n), Origin::App).is_ok());
        }
        assert_eq!(outbox.pop(), None, "held until live");
        outbox.set_flow(Flow::Live);
        let sent = drain(&outbox);
        assert_eq!(sent.len(), 1 + HELD_AUDIO_CHUNKS);
        assert_eq!(sent[0], SessionCommand::SendText("hi".into()));
        assert_eq!(sent[1], audio(3), "the three oldest chunks were dropped");
        assert_eq!(telemetry.snapshot().audio_dropped, 3);
    }

    #[test]
    fn the_next_chunk_of_the_applications_carries_how_many_of_its_were_dropped() {
        let telemetry = Arc::new(TelemetryShared::default());
        let outbox = Outbox::new(Arc::clone(&telemetry));
        // The runtime's chunk is dropped first (counted, not told: no tool hears the
        // runtime's audio), then two of the application's.
        assert!(outbox.push(audio(0), Origin::Runtime).is_ok());
        for n in 1..(HELD_AUDIO_CHUNKS as u8 + 3) {
            assert!(outbox.push(audio(n), Origin::App).is_ok());
        }
        outbox.set_flow(Flow::Live);
        let mut dropped = Vec::new();
        while let Some(out) = outbox.pop() {
            dropped.push((out.command, out.dropped_before));
        }
        assert_eq!(dropped.len(), HELD_AUDIO_CHUNKS);
        assert_eq!(dropped[0], (audio(3), 2));
        assert!(dropped[1..].iter().all(|(_, n)| *n == 0), "told once");
        assert_eq!(telemetry.snapshot().audio_dropped, 3);
        // A push while live carries nothing.
        assert_eq!(
            outbox.push(audio(99), Origin::App),
            Ok(Pushed::Write(Outgoing {
                command: audio(99),
                origin: Origin::App,
                dropped_before: 0
            }))
        );
    }

    #[tokio::test]
    async fn a_push_while_live_hands_the_command_out_and_wakes_the_writer_once_until_it_finds_the_outbox_empty()
     {
        let outbox = Outbox::new(Arc::default());
        outbox.set_flow(Flow::Live);
        assert!(outbox.is_live());
        let first = outbox.push(audio(1), Origin::App);
        assert_eq!(
            first,
            Ok(Pushed::Write(Outgoing {
                command: audio(1),
                origin: Origin::App,
                dropped_before: 0
            })),
            "the writer was idle and nothing waited: handed out, not queued"
        );
        assert_eq!(
            outbox.push(audio(2), Origin::App),
            Ok(Pushed::Queued),
            "already rung"
        );
        // The pusher could not write in place: it gives its command back, ahead of what
        // came after it, and rings the writer's task.
        if let Ok(Pushed::Write(out)) = first {
            outbox.unpop(out);
        }
        outbox.ring();
        outbox.rung().await;
        assert_eq!(drain(&outbox), [audio(1), audio(2)]);
        assert!(matches!(
            outbox.push(audio(3), Origin::App),
            Ok(Pushed::Write(_))
        ));
        // Rung still (the pusher has not found the outbox empty): queued behind it.
        assert_eq!(outbox.push(audio(4), Origin::App), Ok(Pushed::Queued));
        assert_eq!(drain(&outbox), [audio(4)]);
        // The connection goes down with commands held, and comes back: going live rings the
        // writer for them.
        outbox.set_flow(Flow::Hold);
        assert!(!outbox.is_live());
        assert_eq!(outbox.push(audio(5), Origin::App), Ok(Pushed::Queued));
        assert_eq!(outbox.pop(), None, "held");
        outbox.set_flow(Flow::Live);
        outbox.rung().await;
        assert_eq!(drain(&outbox), [audio(5)]);
    }

    #[test]
    fn a_command_given_back_is_held_or_dropped_as_the_flow_says_then() {
        let telemetry = Arc::new(TelemetryShared::default());
        let outbox = Outbox::new(Arc::clone(&telemetry));
        outbox.set_flow(Flow::Live);
        let Ok(Pushed::Write(out)) = outbox.push(audio(0), Origin::App) else {
            panic!("handed out");
        };
        // The connection went down before the pusher could write it, with the hold full.
        outbox.set_flow(Flow::Hold);
        for n in 1..=(HELD_AUDIO_CHUNKS as u8) {
            assert_eq!(outbox.push(audio(n), Origin::App), Ok(Pushed::Queued));
        }
        outbox.unpop(out);
        outbox.set_flow(Flow::Live);
        let mut sent = Vec::new();
        while let Some(out) = outbox.pop() {
            sent.push((out.command, out.dropped_before));
        }
        assert_eq!(sent.len(), HELD_AUDIO_CHUNKS);
        assert_eq!(
            sent[0],
            (audio(1), 1),
            "the oldest chunk (the one given back) was dropped, and told"
        );
        assert_eq!(telemetry.snapshot().audio_dropped, 1);

        // With room in the hold it waits at the front, keeping the count it carried.
        let Ok(Pushed::Write(mut out)) = outbox.push(audio(7), Origin::App) else {
            panic!("handed out");
        };
        out.dropped_before = 2;
        assert_eq!(outbox.push(audio(8), Origin::App), Ok(Pushed::Queued));
        outbox.set_flow(Flow::Hold);
        outbox.unpop(out);
        outbox.set_flow(Flow::Live);
        assert_eq!(
            outbox.pop(),
            Some(Outgoing {
                command: audio(7),
                origin: Origin::App,
                dropped_before: 2
            })
        );
        assert_eq!(drain(&outbox), [audio(8)]);

        // Once the connection is over, given back is dropped, as a push then would be.
        let Ok(Pushed::Write(out)) = outbox.push(audio(9), Origin::App) else {
            panic!("handed out");
        };
        outbox.set_flow(Flow::Drop);
        outbox.unpop(out);
        outbox.set_flow(Flow::Live);
        assert_eq!(drain(&outbox), Vec::<SessionCommand>::new());
    }

    #[test]
    fn once_over_commands_are_dropped_and_once_stopped_refused() {
        let outbox = Outbox::new(Arc::default());
        assert!(outbox.push(audio(1), Origin::App).is_ok());
        outbox.set_flow(Flow::Drop);
        assert!(outbox.push(audio(2), Origin::App).is_ok());
        outbox.set_flow(Flow::Live);
        assert_eq!(drain(&outbox), Vec::<SessionCommand>::new(), "dropped");
        outbox.set_flow(Flow::Stopped);
        assert_eq!(
            outbox.push(audio(3), Origin::Runtime),
            Err((audio(3), Origin::Runtime))
        );
        outbox.set_flow(Flow::Live);
        assert!(
            outbox.push(audio(4), Origin::App).is_err(),
            "stopped is final"
        );
    }
}
