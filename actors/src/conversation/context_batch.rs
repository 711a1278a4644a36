//! [`ContextBatch`]: every context turn of one turn boundary, in the order the pipeline
//! adds them, sent as one `clientContent` frame (the seed's single context buffer).

use reel_protocol::Content;

/// The context of one turn boundary: model-role turns, and whether the model is asked to
/// answer (`turnComplete: true` on the same frame).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ContextBatch {
    turns: Vec<Content>,
    prompt: bool,
}

impl ContextBatch {
    /// Adds a model-role turn holding `text`.
    pub fn push(&mut self, text: impl Into<String>) {
        self.turns.push(Content::model_text(text));
    }

    /// The model is asked to answer with this batch.
    pub fn prompt(&mut self) {
        self.prompt = true;
    }

    /// Whether the model is asked to answer.
    pub fn prompts(&self) -> bool {
        self.prompt
    }

    /// Whether there is nothing to send (no turn, no prompt).
    pub fn is_empty(&self) -> bool {
        self.turns.is_empty() && !self.prompt
    }

    /// The turns and the prompt flag.
    pub fn into_parts(self) -> (Vec<Content>, bool) {
        (self.turns, self.prompt)
    }
}
