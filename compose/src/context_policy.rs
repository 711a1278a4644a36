//! `C::`: policies over the conversation an agent sends to its model.

use std::fmt;
use std::ops::Add;
use std::sync::Arc;

use reel_llm::BaseLlm;
use reel_protocol::Content;
use serde_json::Value;

use crate::context_summary::{ContextError, Summarize, transcript_line};

/// The state key a composed agent reads its conversation history from: a list of
/// `Content` (`{"role": "user", "parts": [{"text": "…"}]}`), oldest first. The agent sends
/// this history, shaped by its [`ContextPolicy`], before its input turn.
pub const HISTORY_KEY: &str = "conversation";

type PolicyFn = dyn Fn(Vec<Content>, &Value) -> Vec<Content> + Send + Sync;

#[derive(Clone)]
struct Step {
    label: String,
    reads: Vec<String>,
    run: Run,
}

/// How a step shapes the history.
#[derive(Clone)]
enum Run {
    /// At once, with no model.
    Sync(Arc<PolicyFn>),
    /// With a model call ([`C::summarize`]): only in [`ContextPolicy::apply_async`].
    Summarize(Summarize),
}

/// A chain of context policies, applied in order to a conversation (`+` chains them).
/// A composed agent applies its policy to the history at [`HISTORY_KEY`] and then appends
/// its input turn, so the input is always sent.
///
/// Most steps are synchronous; [`C::summarize`] calls a model, so a chain holding it
/// ([`ContextPolicy::calls_model`]) runs whole only in [`ContextPolicy::apply_async`] (what
/// a composed agent uses). The synchronous [`ContextPolicy::apply`] runs the other steps
/// and passes the history through such a step unchanged (decision 0070).
///
/// ```
/// use reel_compose::C;
/// use reel_protocol::Content;
///
/// let history = vec![Content::user_text("a"), Content::model_text("b"), Content::user_text("c")];
/// let kept = (C::window(2) + C::user_only()).apply(&history);
/// assert_eq!(kept, vec![Content::user_text("c")]);
/// ```
#[derive(Clone, Default)]
pub struct ContextPolicy {
    steps: Vec<Step>,
}

impl fmt::Debug for ContextPolicy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("ContextPolicy").field(&self.label()).finish()
    }
}

impl ContextPolicy {
    fn one(
        label: impl Into<String>,
        f: impl Fn(Vec<Content>, &Value) -> Vec<Content> + Send + Sync + 'static,
    ) -> Self {
        ContextPolicy {
            steps: vec![Step {
                label: label.into(),
                reads: Vec::new(),
                run: Run::Sync(Arc::new(f)),
            }],
        }
    }

    /// Whether the policy has no steps (the history is sent as it is).
    pub fn is_empty(&self) -> bool {
        self.steps.is_empty()
    }

    /// Whether a step calls a model ([`C::summarize`]): then only
    /// [`ContextPolicy::apply_async`] runs the whole chain.
    pub fn calls_model(&self) -> bool {
        self.steps
            .iter()
            .any(|step| matches!(step.run, Run::Summarize(_)))
    }

    /// The labels of the steps that call a model, in order (`C::summarize(4)`).
    pub fn model_steps(&self) -> Vec<String> {
        self.steps
            .iter()
            .filter(|step| matches!(step.run, Run::Summarize(_)))
            .map(|step| step.label.clone())
            .collect()
    }

    /// The policy applied to `history` with no state (`C::from_state` adds nothing). A
    /// step that calls a model ([`C::summarize`]) passes the history through unchanged:
    /// use [`ContextPolicy::apply_async`] for a chain that [`calls_model`](Self::calls_model).
    pub fn apply(&self, history: &[Content]) -> Vec<Content> {
        self.apply_with_state(history, &Value::Null)
    }

    /// The policy applied to `history`, `C::from_state` reading `state` (a JSON object of
    /// the state's keys). A step that calls a model passes the history through unchanged,
    /// as in [`ContextPolicy::apply`].
    pub fn apply_with_state(&self, history: &[Content], state: &Value) -> Vec<Content> {
        self.steps
            .iter()
            .fold(history.to_vec(), |contents, step| match &step.run {
                Run::Sync(f) => f(contents, state),
                Run::Summarize(_) => contents,
            })
    }

    /// The whole policy applied to `history`, `C::from_state` reading `state`: the
    /// synchronous steps at once, each [`C::summarize`] step with its model call, asking
    /// `llm` as `model` (the agent's own model and the model id its requests name) unless
    /// the step was given its own model. A chain that calls no model makes no call and
    /// gives what [`ContextPolicy::apply_with_state`] gives.
    pub async fn apply_async(
        &self,
        history: &[Content],
        state: &Value,
        llm: &dyn BaseLlm,
        model: &str,
    ) -> Result<Vec<Content>, ContextError> {
        let mut contents = history.to_vec();
        for step in &self.steps {
            contents = match &step.run {
                Run::Sync(f) => f(contents, state),
                Run::Summarize(summarize) => {
                    summarize.apply(&step.label, contents, llm, model).await?
                }
            };
        }
        Ok(contents)
    }

    /// The chain as written: `C::window(20) + C::exclude_tools()`.
    pub fn label(&self) -> String {
        let labels: Vec<&str> = self.steps.iter().map(|step| step.label.as_str()).collect();
        labels.join(" + ")
    }

    /// The state keys the policy reads (`C::from_state`'s).
    pub fn reads(&self) -> Vec<String> {
        self.steps
            .iter()
            .flat_map(|step| step.reads.iter().cloned())
            .collect()
    }
}

impl Add for ContextPolicy {
    type Output = ContextPolicy;

    /// `self`, then `rhs`.
    fn add(mut self, rhs: ContextPolicy) -> ContextPolicy {
        self.steps.extend(rhs.steps);
        self
    }
}

fn role_is(content: &Content, role: &str) -> bool {
    content.role.as_deref() == Some(role)
}

/// Whether `content`'s transcript line holds one of `markers` (lowercased), ignoring case.
fn holds_marker(content: &Content, markers: &[String]) -> bool {
    let line = transcript_line(content).to_lowercase();
    markers.iter().any(|marker| line.contains(marker.as_str()))
}

fn text_of(content: &Content) -> String {
    content
        .parts()
        .iter()
        .filter_map(|part| part.text.as_deref())
        .collect()
}

fn has_tool_part(content: &Content) -> bool {
    content
        .parts()
        .iter()
        .any(|part| part.function_call.is_some() || part.function_response.is_some())
}

/// The `C::` namespace: context policies ([`ContextPolicy`]).
#[derive(Debug, Clone, Copy)]
pub struct C;

impl C {
    /// Keeps the last `n` messages.
    pub fn window(n: usize) -> ContextPolicy {
        ContextPolicy::one(format!("C::window({n})"), move |contents, _| {
            let skip = contents.len().saturating_sub(n);
            contents.into_iter().skip(skip).collect()
        })
    }

    /// The same as [`C::window`].
    pub fn last(n: usize) -> ContextPolicy {
        let mut policy = C::window(n);
        policy.steps[0].label = format!("C::last({n})");
        policy
    }

    /// Keeps the first `n` messages.
    pub fn head(n: usize) -> ContextPolicy {
        ContextPolicy::one(format!("C::head({n})"), move |contents, _| {
            contents.into_iter().take(n).collect()
        })
    }

    /// Keeps the user's messages.
    pub fn user_only() -> ContextPolicy {
        ContextPolicy::one("C::user_only()", |contents, _| {
            contents
                .into_iter()
                .filter(|c| role_is(c, "user"))
                .collect()
        })
    }

    /// Keeps the model's messages.
    pub fn model_only() -> ContextPolicy {
        ContextPolicy::one("C::model_only()", |contents, _| {
            contents
                .into_iter()
                .filter(|c| role_is(c, "model"))
                .collect()
        })
    }

    /// Keeps the messages holding a text part.
    pub fn text_only() -> ContextPolicy {
        ContextPolicy::one("C::text_only()", |contents, _| {
            contents
                .into_iter()
                .filter(|c| c.parts().iter().any(|part| part.text.is_some()))
                .collect()
        })
    }

    /// Removes the messages holding a function call or a function response.
    pub fn exclude_tools() -> ContextPolicy {
        ContextPolicy::one("C::exclude_tools()", |contents, _| {
            contents.into_iter().filter(|c| !has_tool_part(c)).collect()
        })
    }

    /// Keeps every `n`-th message: positions 0, n, 2n, … (`n` of 0 or 1 keeps all).
    pub fn sample(n: usize) -> ContextPolicy {
        ContextPolicy::one(format!("C::sample({n})"), move |contents, _| {
            let step = n.max(1);
            contents.into_iter().step_by(step).collect()
        })
    }

    /// Keeps the most recent messages whose text adds up to at most `max_chars`
    /// characters (a message that would pass the budget is dropped with all before it).
    pub fn truncate(max_chars: usize) -> ContextPolicy {
        ContextPolicy::one(format!("C::truncate({max_chars})"), move |contents, _| {
            let mut budget = max_chars;
            let mut kept = Vec::new();
            for content in contents.into_iter().rev() {
                let chars = text_of(&content).chars().count();
                if chars > budget {
                    break;
                }
                budget -= chars;
                kept.push(content);
            }
            kept.reverse();
            kept
        })
    }

    /// Adds `content` at the start.
    pub fn prepend(content: Content) -> ContextPolicy {
        ContextPolicy::one("C::prepend(..)", move |mut contents, _| {
            contents.insert(0, content.clone());
            contents
        })
    }

    /// Adds `content` at the end.
    pub fn append(content: Content) -> ContextPolicy {
        ContextPolicy::one("C::append(..)", move |mut contents, _| {
            contents.push(content.clone());
            contents
        })
    }

    /// Adds a user message at the start holding the listed state keys that are set, one
    /// `key: value` line each (a string as it is, anything else as JSON), under
    /// `Context from state:`; nothing when none is set.
    pub fn from_state(keys: &[&str]) -> ContextPolicy {
        let keys: Vec<String> = keys.iter().map(|key| (*key).to_owned()).collect();
        let mut policy = ContextPolicy::one(format!("C::from_state({})", keys.join(", ")), {
            let keys = keys.clone();
            move |mut contents, state| {
                let lines: Vec<String> = keys
                    .iter()
                    .filter_map(|key| {
                        state.get(key).map(|value| match value {
                            Value::String(text) => format!("{key}: {text}"),
                            other => format!("{key}: {other}"),
                        })
                    })
                    .collect();
                if !lines.is_empty() {
                    let text = format!("Context from state:\n{}", lines.join("\n"));
                    contents.insert(0, Content::user_text(text));
                }
                contents
            }
        });
        policy.steps[0].reads = keys;
        policy
    }

    /// Keeps the last `keep_last` messages and replaces the ones before them with one user
    /// message, `Summary of the earlier conversation:` and a summary the agent's own model
    /// writes of them (one model call, through the agent's model, so a cassette records
    /// and replays it; no call when there are at most `keep_last` messages). The call's
    /// request is [`summary_request`](crate::summary_request) of the older messages: the
    /// same history always sends the same request. Runs only in
    /// [`ContextPolicy::apply_async`] (a composed agent's run); the synchronous
    /// [`ContextPolicy::apply`] passes the history through it unchanged.
    pub fn summarize(keep_last: usize) -> ContextPolicy {
        ContextPolicy {
            steps: vec![Step {
                label: format!("C::summarize({keep_last})"),
                reads: Vec::new(),
                run: Run::Summarize(Summarize {
                    keep_last,
                    llm: None,
                }),
            }],
        }
    }

    /// [`C::summarize`] with the summary written by `llm` (a smaller, cheaper model, say)
    /// rather than the agent's own model.
    pub fn summarize_with(keep_last: usize, llm: Arc<dyn BaseLlm>) -> ContextPolicy {
        ContextPolicy {
            steps: vec![Step {
                label: format!("C::summarize_with({keep_last}, {})", llm.model_id()),
                reads: Vec::new(),
                run: Run::Summarize(Summarize {
                    keep_last,
                    llm: Some(llm),
                }),
            }],
        }
    }

    /// Keeps at most `max` messages, the important ones first: the messages holding one
    /// of `markers` (ignoring case, in their text or, for a tool turn, in the function's
    /// name, arguments or result), the most recent first, then the most recent of the
    /// others while room is left; what is kept stays in conversation order. With no more
    /// than `max` messages, all are kept.
    ///
    /// ```
    /// use reel_compose::C;
    /// use reel_protocol::Content;
    ///
    /// let history = vec![
    ///     Content::user_text("My order is A-1042."),
    ///     Content::model_text("Thanks."),
    ///     Content::user_text("Nice weather."),
    ///     Content::model_text("Indeed."),
    /// ];
    /// assert_eq!(
    ///     C::priority(2, &["a-1042"]).apply(&history),
    ///     [history[0].clone(), history[3].clone()],
    /// );
    /// ```
    pub fn priority(max: usize, markers: &[&str]) -> ContextPolicy {
        let label = format!("C::priority({max}, [{}])", markers.join(", "));
        let markers: Vec<String> = markers.iter().map(|m| m.to_lowercase()).collect();
        ContextPolicy::one(label, move |contents, _| {
            if contents.len() <= max {
                return contents;
            }
            let important: Vec<bool> = contents
                .iter()
                .map(|content| holds_marker(content, &markers))
                .collect();
            let mut keep = vec![false; contents.len()];
            let mut room = max;
            for wanted in [true, false] {
                for index in (0..contents.len()).rev() {
                    if room == 0 {
                        break;
                    }
                    if important[index] == wanted {
                        keep[index] = true;
                        room -= 1;
                    }
                }
            }
            contents
                .into_iter()
                .zip(keep)
                .filter_map(|(content, kept)| kept.then_some(content))
                .collect()
        })
    }

    /// Removes a message equal to the one before it.
    pub fn dedup() -> ContextPolicy {
        ContextPolicy::one("C::dedup()", |mut contents, _| {
            contents.dedup();
            contents
        })
    }

    /// Sends no history (an isolated agent sees only its input).
    pub fn empty() -> ContextPolicy {
        ContextPolicy::one("C::empty()", |_, _| Vec::new())
    }

    /// Keeps the messages `keep` holds for.
    pub fn filter(keep: impl Fn(&Content) -> bool + Send + Sync + 'static) -> ContextPolicy {
        ContextPolicy::one("C::filter(fn)", move |contents, _| {
            contents.into_iter().filter(|c| keep(c)).collect()
        })
    }

    /// Replaces each message with what `f` returns for it.
    pub fn map(f: impl Fn(Content) -> Content + Send + Sync + 'static) -> ContextPolicy {
        ContextPolicy::one("C::map(fn)", move |contents, _| {
            contents.into_iter().map(&f).collect()
        })
    }

    /// Replaces the whole history with what `f` returns for it.
    pub fn custom(
        f: impl Fn(Vec<Content>) -> Vec<Content> + Send + Sync + 'static,
    ) -> ContextPolicy {
        ContextPolicy::one("C::custom(fn)", move |contents, _| f(contents))
    }
}
