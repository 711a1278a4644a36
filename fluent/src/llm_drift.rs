//! [`LlmDrift`]: where a replay's out-of-band model calls parted from the cassette that
//! recorded them — a call with no recorded answer, a call asked more often than recorded,
//! a recorded call never made — and the replay-side cassette that notices them.

use std::fmt;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, PoisonError};

use futures_util::future::BoxFuture;
use reel_actors::llm::{
    BaseLlm, Cassette, CassetteError, LlmError, LlmInterceptor, LlmRequest, LlmResponse, LlmStream,
    RequestMismatch,
};
use serde_json::{Map, Value};

/// How many characters of a prompt a drift quotes.
const PROMPT_CHARS: usize = 80;

/// An out-of-band model call where a replay parted from its cassette. The replay's
/// frames may all match while its model calls do not: a prompt changed, an extractor
/// added or removed. [`ReplayedSession::llm_drift`](crate::ReplayedSession::llm_drift)
/// and [`ReplayOutcome::llm_drift`](crate::ReplayOutcome::llm_drift) list them.
///
/// ```
/// use std::path::PathBuf;
/// use reel_actors::llm::RequestMismatch;
/// use reel_fluent::LlmDrift;
/// use serde_json::json;
///
/// let miss = LlmDrift::Miss {
///     cassette: PathBuf::from("call.cassette.json"),
///     model: "gemini-2.5-flash".into(),
///     prompt: Some("Conversation (oldest turn first): …".into()),
///     nearest: Some((0, RequestMismatch {
///         path: "systemInstruction".into(),
///         recorded: Some(json!("Extract the mood.")),
///         actual: Some(json!("Extract the mood and urgency.")),
///     })),
/// };
/// assert_eq!(
///     miss.to_string(),
///     "the replay called gemini-2.5-flash (\"Conversation (oldest turn first): …\"), and \
///      `call.cassette.json` has no recorded answer: the nearest recorded request \
///      (interaction 0) differs at `systemInstruction`: recorded \"Extract the mood.\", \
///      got \"Extract the mood and urgency.\""
/// );
/// ```
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum LlmDrift {
    /// The replay made a call the cassette has no recorded answer for (the call failed).
    Miss {
        /// The cassette file.
        cassette: PathBuf,
        /// The model called.
        model: String,
        /// The call's last user text, shortened.
        prompt: Option<String>,
        /// The nearest recorded request (its 0-based interaction) and where the call's
        /// request differs from it.
        nearest: Option<(usize, RequestMismatch)>,
    },
    /// The replay made a recorded call more times than it was recorded (the extra call
    /// failed).
    Exhausted {
        /// The cassette file.
        cassette: PathBuf,
        /// The model called.
        model: String,
        /// The call's last user text, shortened.
        prompt: Option<String>,
        /// How many times the call was recorded.
        recorded: usize,
    },
    /// A recorded call the replay never made.
    Unused {
        /// The cassette file.
        cassette: PathBuf,
        /// The recorded call: its 0-based interaction in the cassette.
        interaction: usize,
        /// The model it called.
        model: String,
        /// Its last user text, shortened.
        prompt: Option<String>,
    },
}

impl fmt::Display for LlmDrift {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LlmDrift::Miss {
                cassette,
                model,
                prompt,
                nearest,
            } => {
                write!(
                    f,
                    "the replay called {model}{}, and `{}` has no recorded answer",
                    quoted(prompt),
                    cassette.display()
                )?;
                match nearest {
                    Some((index, mismatch)) => write!(
                        f,
                        ": the nearest recorded request (interaction {index}) differs {mismatch}"
                    ),
                    None => write!(f, ": it records no call"),
                }
            }
            LlmDrift::Exhausted {
                cassette,
                model,
                prompt,
                recorded,
            } => write!(
                f,
                "the replay called {model}{} more often than `{}` recorded it ({recorded} times)",
                quoted(prompt),
                cassette.display()
            ),
            LlmDrift::Unused {
                cassette,
                interaction,
                model,
                prompt,
            } => write!(
                f,
                "the replay never made the call recorded as interaction {interaction} of `{}`: \
                 {model}{}",
                cassette.display(),
                quoted(prompt)
            ),
        }
    }
}

/// ` ("the prompt")`, or nothing.
fn quoted(prompt: &Option<String>) -> String {
    prompt
        .as_ref()
        .map(|text| format!(" ({text:?})"))
        .unwrap_or_default()
}

/// The drift a failed call shows, if it is one.
fn drift_of(error: &LlmError) -> Option<LlmDrift> {
    match error {
        LlmError::Cassette(CassetteError::Miss {
            path,
            model,
            prompt,
            nearest,
        }) => Some(LlmDrift::Miss {
            cassette: path.clone(),
            model: model.clone(),
            prompt: prompt.clone(),
            nearest: nearest
                .as_ref()
                .map(|(index, mismatch)| (*index, (**mismatch).clone())),
        }),
        LlmError::Cassette(CassetteError::Exhausted {
            path,
            model,
            prompt,
            recorded,
        }) => Some(LlmDrift::Exhausted {
            cassette: path.clone(),
            model: model.clone(),
            prompt: prompt.clone(),
            recorded: *recorded,
        }),
        _ => None,
    }
}

/// The last user text of a recorded request (`contents[].role == "user"`, its text parts
/// joined), shortened.
fn recorded_prompt(request: &Map<String, Value>) -> Option<String> {
    let turn = request
        .get("contents")?
        .as_array()?
        .iter()
        .rev()
        .find(|turn| turn.get("role").and_then(Value::as_str) == Some("user"))?;
    let text: String = turn
        .get("parts")?
        .as_array()?
        .iter()
        .filter_map(|part| part.get("text").and_then(Value::as_str))
        .collect();
    Some(match text.char_indices().nth(PROMPT_CHARS) {
        Some((cut, _)) => format!("{}…", &text[..cut]),
        None => text,
    })
}

/// A replay's cassette, in replay mode, and the drift its calls showed.
#[derive(Clone)]
pub(crate) struct ReplayCassette {
    cassette: Cassette,
    seen: Arc<Mutex<Vec<LlmDrift>>>,
}

impl fmt::Debug for ReplayCassette {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ReplayCassette")
            .field("cassette", &self.cassette)
            .finish_non_exhaustive()
    }
}

impl ReplayCassette {
    pub(crate) fn new(cassette: Cassette) -> Self {
        ReplayCassette {
            cassette,
            seen: Arc::default(),
        }
    }

    /// The cassette.
    pub(crate) fn cassette(&self) -> &Cassette {
        &self.cassette
    }

    /// The session's outermost interceptor: the cassette, its failures noted.
    pub(crate) fn interceptor(&self) -> Arc<dyn LlmInterceptor> {
        Arc::new(self.clone())
    }

    /// The misses so far, in the order the calls failed, then every recorded call not
    /// made (so far), in cassette order.
    pub(crate) async fn drift(&self) -> Vec<LlmDrift> {
        let mut drift = self
            .seen
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone();
        let unused = self.cassette.unused().await;
        if !unused.is_empty() {
            let file = self.cassette.snapshot().await;
            drift.extend(unused.into_iter().filter_map(|index| {
                let request = &file.interactions.get(index)?.request;
                Some(LlmDrift::Unused {
                    cassette: self.cassette.path().to_owned(),
                    interaction: index,
                    model: request
                        .get("model")
                        .and_then(Value::as_str)
                        .unwrap_or_default()
                        .to_owned(),
                    prompt: recorded_prompt(request),
                })
            }));
        }
        drift
    }

    fn note<T>(&self, result: &Result<T, LlmError>) {
        if let Some(drift) = result.as_ref().err().and_then(drift_of) {
            self.seen
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .push(drift);
        }
    }
}

impl LlmInterceptor for ReplayCassette {
    fn wrap(&self, llm: Arc<dyn BaseLlm>) -> Arc<dyn BaseLlm> {
        Arc::new(Noted {
            inner: self.cassette.wrap(llm),
            replay: self.clone(),
        })
    }
}

/// A model answered by the replay's cassette, its drift noted.
struct Noted {
    inner: Arc<dyn BaseLlm>,
    replay: ReplayCassette,
}

impl BaseLlm for Noted {
    fn model_id(&self) -> &str {
        self.inner.model_id()
    }

    fn generate_stream(&self, request: LlmRequest) -> BoxFuture<'_, Result<LlmStream, LlmError>> {
        Box::pin(async move {
            let result = self.inner.generate_stream(request).await;
            self.replay.note(&result);
            result
        })
    }

    fn generate(&self, request: LlmRequest) -> BoxFuture<'_, Result<LlmResponse, LlmError>> {
        Box::pin(async move {
            let result = self.inner.generate(request).await;
            self.replay.note(&result);
            result
        })
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn a_recorded_prompt_is_the_last_user_text_shortened() {
        let request = json!({"model": "m", "contents": [
            {"role": "user", "parts": [{"text": "first"}]},
            {"role": "model", "parts": [{"text": "answer"}]},
            {"role": "user", "parts": [{"text": "sec"}, {"text": "ond"}]}
        ]});
        let Value::Object(request) = request else {
            unreachable!()
        };
        assert_eq!(recorded_prompt(&request).as_deref(), Some("second"));

        let long = json!({"contents": [{"role": "user", "parts": [{"text": "é".repeat(100)}]}]});
        let Value::Object(long) = long else {
            unreachable!()
        };
        assert_eq!(recorded_prompt(&long), Some(format!("{}…", "é".repeat(80))));
        assert_eq!(recorded_prompt(&Map::new()), None);
    }

    #[test]
    fn unused_and_exhausted_say_what_was_recorded() {
        let unused = LlmDrift::Unused {
            cassette: "c.cassette.json".into(),
            interaction: 1,
            model: "gemini-2.5-flash".into(),
            prompt: Some("hi".into()),
        };
        assert_eq!(
            unused.to_string(),
            "the replay never made the call recorded as interaction 1 of `c.cassette.json`: \
             gemini-2.5-flash (\"hi\")"
        );
        let exhausted = LlmDrift::Exhausted {
            cassette: "c.cassette.json".into(),
            model: "gemini-2.5-flash".into(),
            prompt: None,
            recorded: 2,
        };
        assert_eq!(
            exhausted.to_string(),
            "the replay called gemini-2.5-flash more often than `c.cassette.json` recorded it \
             (2 times)"
        );
    }
}
