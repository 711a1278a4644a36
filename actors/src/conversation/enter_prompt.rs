//! [`EnterPrompt`]: the model-role bridge message sent when a phase is entered, after
//! which the model is asked to answer.

use std::fmt;
use std::sync::Arc;

use crate::state::State;
use crate::transcript::TranscriptTurn;

/// Text computed from the state and the finished turns.
pub type EnterPromptFn = Arc<dyn Fn(&State, &[TranscriptTurn]) -> String + Send + Sync>;

/// What a phase says as the model when it is entered (the seed's `enter_prompt` and
/// `enter_prompt_fn`). It should state the agent's intent, not facts about the user.
#[derive(Clone)]
pub enum EnterPrompt {
    /// Fixed text.
    Text(String),
    /// Computed from the state and the transcript when the phase is entered.
    Computed(EnterPromptFn),
}

impl fmt::Debug for EnterPrompt {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            EnterPrompt::Text(text) => f.debug_tuple("Text").field(text).finish(),
            EnterPrompt::Computed(_) => f.write_str("Computed(..)"),
        }
    }
}

impl EnterPrompt {
    /// The text for this entry; `None` when it is empty.
    pub fn render(&self, state: &State, transcript: &[TranscriptTurn]) -> Option<String> {
        let text = match self {
            EnterPrompt::Text(text) => text.clone(),
            EnterPrompt::Computed(f) => f(state, transcript),
        };
        (!text.is_empty()).then_some(text)
    }
}
