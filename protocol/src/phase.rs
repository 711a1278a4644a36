//! The session phase: where a session is in its life and its conversation.
//!
//! [`PhaseTracker::apply`] is a pure transition function over [`PhaseInput`]s (lifecycle
//! steps, events, commands). It is total: every input in every phase gives a phase, so the
//! machine cannot get stuck. Inputs that make no sense in a phase (model audio while
//! disconnected, a stale tool response) leave it unchanged instead of being an error that
//! someone must remember to handle. Every change it makes is one that
//! [`SessionPhase::can_transition`] allows, which the property tests check.
//!
//! Tool calls are tracked by id: the phase is [`SessionPhase::ToolCallPending`] while any
//! call is unanswered, and returns to [`SessionPhase::Active`] once every call has a
//! response or was cancelled.

use std::collections::BTreeSet;
use std::fmt;

use crate::command::SessionCommand;
use crate::event::SessionEvent;

/// Where a session is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum SessionPhase {
    /// Not connected (initially, and after any disconnect).
    Disconnected,
    /// Opening the WebSocket.
    Connecting,
    /// Setup sent, waiting for `setupComplete`.
    SetupSent,
    /// Live and idle: nobody is speaking, no tool is pending.
    Active,
    /// The user is speaking (server VAD or transcription says so).
    UserSpeaking,
    /// The model is producing output.
    ModelSpeaking,
    /// The user barged in; the model's output was cut.
    Interrupted,
    /// The model asked for function calls that are not all answered yet.
    ToolCallPending,
    /// The client asked to close.
    Disconnecting,
}

impl SessionPhase {
    /// All phases.
    pub const ALL: [SessionPhase; 9] = [
        SessionPhase::Disconnected,
        SessionPhase::Connecting,
        SessionPhase::SetupSent,
        SessionPhase::Active,
        SessionPhase::UserSpeaking,
        SessionPhase::ModelSpeaking,
        SessionPhase::Interrupted,
        SessionPhase::ToolCallPending,
        SessionPhase::Disconnecting,
    ];

    /// The phase's name as reported in state (`session:phase`) and logs.
    pub fn as_str(self) -> &'static str {
        match self {
            SessionPhase::Disconnected => "Disconnected",
            SessionPhase::Connecting => "Connecting",
            SessionPhase::SetupSent => "SetupSent",
            SessionPhase::Active => "Active",
            SessionPhase::UserSpeaking => "UserSpeaking",
            SessionPhase::ModelSpeaking => "ModelSpeaking",
            SessionPhase::Interrupted => "Interrupted",
            SessionPhase::ToolCallPending => "ToolCallPending",
            SessionPhase::Disconnecting => "Disconnecting",
        }
    }

    /// Whether the session is set up and talking (not connecting, closing or closed).
    pub fn is_live(self) -> bool {
        matches!(
            self,
            SessionPhase::Active
                | SessionPhase::UserSpeaking
                | SessionPhase::ModelSpeaking
                | SessionPhase::Interrupted
                | SessionPhase::ToolCallPending
        )
    }

    /// The transition table. Staying in a phase is not a transition.
    pub fn can_transition(self, to: SessionPhase) -> bool {
        use SessionPhase::*;
        if self == to {
            return false;
        }
        match (self, to) {
            // Any phase can drop to Disconnected: the connection can always be lost.
            (_, Disconnected) => true,
            (Disconnected, Connecting) => true,
            (Connecting, SetupSent) => true,
            // A replayed or pre-connected session may see setupComplete from any early phase.
            (Disconnected | Connecting | SetupSent, Active) => true,
            // While live, any conversational phase can follow any other.
            (from, to) if from.is_live() && to.is_live() => true,
            (from, Disconnecting) => from.is_live() || matches!(from, Connecting | SetupSent),
            _ => false,
        }
    }
}

impl fmt::Display for SessionPhase {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// What can move the phase.
#[derive(Debug, Clone, Copy)]
pub enum PhaseInput<'a> {
    /// The transport started opening the connection.
    ConnectStarted,
    /// The setup frame went out.
    SetupSent,
    /// An event happened.
    Event(&'a SessionEvent),
    /// The application sent a command.
    Command(&'a SessionCommand),
}

/// The phase plus the one piece of state it needs: the ids of unanswered tool calls.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PhaseTracker {
    phase: SessionPhase,
    pending_calls: BTreeSet<String>,
}

impl Default for PhaseTracker {
    fn default() -> Self {
        PhaseTracker::new()
    }
}

impl PhaseTracker {
    /// A tracker in [`SessionPhase::Disconnected`].
    pub fn new() -> Self {
        PhaseTracker {
            phase: SessionPhase::Disconnected,
            pending_calls: BTreeSet::new(),
        }
    }

    /// The current phase.
    pub fn phase(&self) -> SessionPhase {
        self.phase
    }

    /// Ids of tool calls not yet answered or cancelled.
    pub fn pending_calls(&self) -> impl Iterator<Item = &str> {
        self.pending_calls.iter().map(String::as_str)
    }

    /// Applies an input. Returns `Some((from, to))` when the phase changed.
    pub fn apply(&mut self, input: PhaseInput<'_>) -> Option<(SessionPhase, SessionPhase)> {
        let from = self.phase;
        let to = self.next(input);
        debug_assert!(to == from || from.can_transition(to), "{from} -> {to}");
        self.phase = to;
        (to != from).then_some((from, to))
    }

    fn next(&mut self, input: PhaseInput<'_>) -> SessionPhase {
        use SessionPhase::*;
        let phase = self.phase;
        let live = phase.is_live();
        // The phase to return to when nothing else is going on.
        let settle = |pending: &BTreeSet<String>| {
            if pending.is_empty() {
                Active
            } else {
                ToolCallPending
            }
        };
        match input {
            PhaseInput::ConnectStarted => match phase {
                Disconnected => Connecting,
                _ => phase,
            },
            PhaseInput::SetupSent => match phase {
                Connecting => SetupSent,
                _ => phase,
            },
            PhaseInput::Command(command) => match command {
                SessionCommand::Disconnect if phase != Disconnected => Disconnecting,
                SessionCommand::SendToolResponse(responses) if live => {
                    for response in responses {
                        if let Some(id) = &response.id {
                            self.pending_calls.remove(id);
                        }
                    }
                    if phase == ToolCallPending {
                        settle(&self.pending_calls)
                    } else {
                        phase
                    }
                }
                _ => phase,
            },
            PhaseInput::Event(event) => match event {
                SessionEvent::Disconnected { .. } => {
                    self.pending_calls.clear();
                    Disconnected
                }
                SessionEvent::Connected { .. } => match phase {
                    Disconnected | Connecting | SetupSent => settle(&self.pending_calls),
                    _ => phase,
                },
                _ if !live => phase,
                SessionEvent::ToolCall(calls) => {
                    for call in calls {
                        // A call without an id cannot be answered by id; do not wait for it.
                        if let Some(id) = &call.id {
                            self.pending_calls.insert(id.clone());
                        }
                    }
                    settle(&self.pending_calls)
                }
                SessionEvent::ToolCallCancelled(ids) => {
                    for id in ids {
                        self.pending_calls.remove(id);
                    }
                    match phase {
                        ToolCallPending => settle(&self.pending_calls),
                        _ => phase,
                    }
                }
                SessionEvent::TextDelta(_)
                | SessionEvent::AudioData(_)
                | SessionEvent::Thought(_)
                | SessionEvent::Media { .. }
                | SessionEvent::OutputTranscription {
                    is_final: false, ..
                } => ModelSpeaking,
                SessionEvent::Interrupted => Interrupted,
                SessionEvent::VoiceActivityStart => UserSpeaking,
                SessionEvent::VoiceActivityEnd => match phase {
                    UserSpeaking => settle(&self.pending_calls),
                    _ => phase,
                },
                SessionEvent::InputTranscription {
                    is_final: false, ..
                } => match phase {
                    Active | Interrupted => UserSpeaking,
                    _ => phase,
                },
                SessionEvent::TurnComplete { .. } => settle(&self.pending_calls),
                _ => phase,
            },
        }
    }
}
