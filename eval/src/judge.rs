//! [`Judge`]: the model that scores the model-judged criteria.
//!
//! Each judged case is one call: a fixed system instruction, the criterion and the
//! conversation as text, a JSON answer `{"score": 0..1, "reason": "…"}` asked for by
//! schema at temperature 0. The request depends only on the suite and the recording, so a
//! cassette answers a re-run of the suite with no model call.

use std::sync::Arc;

use reel_llm::{BaseLlm, Cassette, LlmError, LlmRequest};
use serde_json::{Value, json};

use crate::score::Score;

/// What the judge is told before every question.
const SYSTEM: &str = "You are an evaluator. You read a conversation between a user and an AI \
assistant and score it on one criterion, from 0 (not met at all) to 1 (fully met). Answer \
with JSON only: {\"score\": a number from 0 to 1, \"reason\": one sentence}.";

/// A judge call that gave no score.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum JudgeError {
    /// The call failed (for a cassette in replay mode: the cassette does not hold it).
    #[error("the judge's call failed: {0}")]
    Call(#[from] LlmError),
    /// The answer was not `{"score": 0..1, "reason": "…"}`.
    #[error("the judge's answer {answer:?} is not a score: {problem}")]
    Answer {
        /// The answer as the model gave it.
        answer: String,
        /// What is wrong with it.
        problem: String,
    },
}

/// The model scoring judged criteria.
#[derive(Clone)]
pub struct Judge {
    llm: Arc<dyn BaseLlm>,
}

impl std::fmt::Debug for Judge {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Judge")
            .field("model", &self.llm.model_id())
            .finish()
    }
}

impl Judge {
    /// `llm` as the judge. Wrap it in a cassette (record or auto) so a re-run is offline.
    pub fn new(llm: Arc<dyn BaseLlm>) -> Self {
        Judge { llm }
    }

    /// The cassette's model `model`, with no live model behind it: every call is answered
    /// from the cassette, and one it does not hold is an error, never a call out.
    pub fn from_cassette(cassette: &Cassette, model: impl Into<String>) -> Self {
        Judge::new(cassette.model(model))
    }

    /// The model asked.
    pub fn model(&self) -> &str {
        self.llm.model_id()
    }

    /// Scores `question` about `conversation`.
    pub async fn score(&self, question: &str, conversation: &str) -> Result<Score, JudgeError> {
        let request = LlmRequest::new(self.llm.model_id())
            .system(SYSTEM)
            .user(format!("{question}\n\nConversation:\n{conversation}"))
            .setting("temperature", json!(0))
            .json_schema(json!({
                "type": "OBJECT",
                "properties": {"score": {"type": "NUMBER"}, "reason": {"type": "STRING"}},
                "required": ["score", "reason"],
            }));
        let response = self.llm.generate(request).await?;
        let bad = |problem: &str| JudgeError::Answer {
            answer: response.text.clone(),
            problem: problem.to_owned(),
        };
        let value: Value = response
            .json()
            .map_err(|e| bad(&format!("not JSON ({e})")))?;
        let score = value
            .get("score")
            .and_then(Value::as_f64)
            .ok_or_else(|| bad("no number at `score`"))?;
        if !(0.0..=1.0).contains(&score) {
            return Err(bad("`score` is outside [0, 1]"));
        }
        let reason = value
            .get("reason")
            .and_then(Value::as_str)
            .unwrap_or_default();
        Ok(Score::new(score, format!("judge: {reason}")))
    }
}
