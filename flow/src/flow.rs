//! [`Flow`]: the value, built with the closed vocabulary of verbs, and read and written as
//! JSON.

use serde::{Deserialize, Serialize};

use crate::error::FlowError;
use crate::guard::Guard;

/// One node of a flow: a conversation stage (it has a posture) or a tool milestone (its
/// `done` is `called_ok(tool)`).
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Step {
    /// The step's name, unique in the flow.
    pub id: String,
    /// The steps that must be done before this one is eligible (the DAG's edges).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub after: Vec<String>,
    /// Extra eligibility beyond the dependencies.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gate: Option<Guard>,
    /// The instruction imposed on the model while the step is active.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub posture: Option<String>,
    /// State-interpolated fact lines projected while active: `{key}`, `{key?yes:no}`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub ground: Vec<String>,
    /// Tools admitted while the step is active.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub allow: Vec<String>,
    /// Tools refused while the step is active.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub deny: Vec<String>,
    /// The completion condition; latches. Required unless the step is terminal.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub done: Option<Guard>,
    /// Completes as soon as it is eligible (so it is never active).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub terminal: bool,
}

impl Step {
    fn new(id: String) -> Step {
        Step {
            id,
            after: Vec::new(),
            gate: None,
            done: None,
            posture: None,
            ground: Vec::new(),
            allow: Vec::new(),
            deny: Vec::new(),
            terminal: false,
        }
    }
}

/// `before(first, then)`: step `then` is not eligible until step `first` is done.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Before {
    /// The step that must be done first.
    pub first: String,
    /// The step that waits for it.
    pub then: String,
}

/// `never(tool).until(guard)`: the tool is refused until the guard holds.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Never {
    /// The tool.
    pub tool: String,
    /// What must hold before it is admitted.
    pub until: Guard,
}

/// `commit(tool, until)`: `once(tool)` + `never(tool).until(until)` + the user's
/// confirmation before each call (the session's `ConfirmationProvider`).
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Commit {
    /// The committing tool (a payment, a booking, a transfer).
    pub tool: String,
    /// What must hold before it is admitted.
    pub until: Guard,
}

/// A workflow as one DAG of [`Step`]s with cross-cutting tool constraints, built with the
/// closed vocabulary below and checked by [`Flow::build`] / [`Flow::compile`].
///
/// Step verbs (`after`, `gate`, `done`, `posture`, `ground`, `allow`, `deny`, `terminal`)
/// apply to the step declared last with [`Flow::step`].
///
/// ```
/// use reel_flow::{Flow, Guard};
///
/// let flow = Flow::new()
///     .step("verify")
///         .allow(["lookup_account"])
///         .done(Guard::is_true("identity_verified"))
///     .step("close").after("verify").terminal()
///     .never("close_account").until(Guard::done("verify"))
///     .require(["close"])
///     .build()?;
/// assert_eq!(flow.steps.len(), 2);
/// # Ok::<(), reel_flow::FlowError>(())
/// ```
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Flow {
    /// The steps, in declaration order.
    pub steps: Vec<Step>,
    /// Tools that may run at most once.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub once: Vec<String>,
    /// Ordering invariants between steps.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub before: Vec<Before>,
    /// Tools forbidden until a guard holds.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub never: Vec<Never>,
    /// The steps that must be done for the flow to be complete.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub require: Vec<String>,
    /// Committing tools: once + never…until + confirmation.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub commit: Vec<Commit>,
    /// A step verb used before any `step(..)`: reported by `build`.
    #[serde(skip)]
    stray_verb: Option<&'static str>,
}

/// `flow.never(tool)`, waiting for its `.until(guard)`.
#[must_use = "a never(..) takes effect with .until(guard)"]
pub struct NeverClause {
    flow: Flow,
    tool: String,
}

impl NeverClause {
    /// Forbids the tool until `guard` holds.
    pub fn until(mut self, guard: Guard) -> Flow {
        self.flow.never.push(Never {
            tool: self.tool,
            until: guard,
        });
        self.flow
    }
}

fn names<I, S>(items: I) -> impl Iterator<Item = String>
where
    I: IntoIterator<Item = S>,
    S: Into<String>,
{
    items.into_iter().map(Into::into)
}

impl Flow {
    /// An empty flow.
    pub fn new() -> Flow {
        Flow::default()
    }

    /// Declares a step; the step verbs that follow apply to it.
    pub fn step(mut self, id: impl Into<String>) -> Flow {
        self.steps.push(Step::new(id.into()));
        self
    }

    fn last(&mut self, verb: &'static str, edit: impl FnOnce(&mut Step)) -> &mut Flow {
        match self.steps.last_mut() {
            Some(step) => edit(step),
            None => {
                self.stray_verb.get_or_insert(verb);
            }
        }
        self
    }

    /// Adds a dependency of the current step (call again for several).
    pub fn after(mut self, dep: impl Into<String>) -> Flow {
        let dep = dep.into();
        self.last("after", |s| s.after.push(dep));
        self
    }

    /// Extra eligibility for the current step beyond its dependencies.
    pub fn gate(mut self, guard: Guard) -> Flow {
        self.last("gate", |s| s.gate = Some(guard));
        self
    }

    /// The current step's completion condition (latches).
    pub fn done(mut self, guard: Guard) -> Flow {
        self.last("done", |s| s.done = Some(guard));
        self
    }

    /// The instruction imposed while the current step is active.
    pub fn posture(mut self, text: impl Into<String>) -> Flow {
        let text = text.into();
        self.last("posture", |s| s.posture = Some(text));
        self
    }

    /// A fact line projected while the current step is active: `{key}` is the key's value,
    /// `{key?yes:no}` one of two texts (call again for several lines).
    pub fn ground(mut self, template: impl Into<String>) -> Flow {
        let template = template.into();
        self.last("ground", |s| s.ground.push(template));
        self
    }

    /// Tools admitted while the current step is active.
    pub fn allow<I, S>(mut self, tools: I) -> Flow
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.last("allow", |s| s.allow.extend(names(tools)));
        self
    }

    /// Tools refused while the current step is active.
    pub fn deny<I, S>(mut self, tools: I) -> Flow
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.last("deny", |s| s.deny.extend(names(tools)));
        self
    }

    /// Makes the current step complete as soon as it is eligible.
    pub fn terminal(mut self) -> Flow {
        self.last("terminal", |s| s.terminal = true);
        self
    }

    /// The tool may run at most once in the session.
    pub fn once(mut self, tool: impl Into<String>) -> Flow {
        self.once.push(tool.into());
        self
    }

    /// Step `then` is not eligible until step `first` is done.
    pub fn before(mut self, first: impl Into<String>, then: impl Into<String>) -> Flow {
        self.before.push(Before {
            first: first.into(),
            then: then.into(),
        });
        self
    }

    /// Forbids `tool` until the guard given to [`NeverClause::until`] holds.
    pub fn never(self, tool: impl Into<String>) -> NeverClause {
        NeverClause {
            flow: self,
            tool: tool.into(),
        }
    }

    /// Steps that must be done for the flow to be complete.
    pub fn require<I, S>(mut self, steps: I) -> Flow
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.require.extend(names(steps));
        self
    }

    /// A committing tool: at most once, refused until `until` holds, and confirmed by the
    /// user (the session's `ConfirmationProvider`) before each call.
    pub fn commit(mut self, tool: impl Into<String>, until: Guard) -> Flow {
        self.commit.push(Commit {
            tool: tool.into(),
            until,
        });
        self
    }

    /// The step named `id`.
    pub fn step_named(&self, id: &str) -> Option<&Step> {
        self.steps.iter().find(|s| s.id == id)
    }

    pub(crate) fn stray_verb(&self) -> Option<&'static str> {
        self.stray_verb
    }

    /// Reads a flow from its JSON file format (see the crate's README).
    pub fn from_json(text: &str) -> Result<Flow, FlowError> {
        let mut de = serde_json::Deserializer::from_str(text);
        let flow: Flow =
            serde_path_to_error::deserialize(&mut de).map_err(|e| FlowError::BadFile {
                message: format!("at {}: {}", e.path(), e.inner()),
            })?;
        de.end().map_err(|e| FlowError::BadFile {
            message: e.to_string(),
        })?;
        Ok(flow)
    }

    /// The flow as pretty JSON: its file format. A `custom(..)` guard cannot be written:
    /// [`FlowError::CustomGuard`] names where it is.
    pub fn to_json(&self) -> Result<String, FlowError> {
        if let Some(place) = self.custom_guard_place() {
            return Err(FlowError::CustomGuard { place });
        }
        serde_json::to_string_pretty(self).map_err(|e| FlowError::BadFile {
            message: e.to_string(),
        })
    }

    /// Where the first `custom(..)` guard is: `step "x" (done)`, `never(tool)`.
    fn custom_guard_place(&self) -> Option<String> {
        for step in &self.steps {
            for (what, guard) in [("gate", &step.gate), ("done", &step.done)] {
                if guard.as_ref().is_some_and(Guard::has_custom) {
                    return Some(format!("step \"{}\" ({what})", step.id));
                }
            }
        }
        let never = self.never.iter().map(|n| ("never", &n.tool, &n.until));
        let commit = self.commit.iter().map(|c| ("commit", &c.tool, &c.until));
        never
            .chain(commit)
            .find(|(_, _, g)| g.has_custom())
            .map(|(verb, tool, _)| format!("{verb}({tool})"))
    }
}
