//! `P::`: an instruction composed from sections, and the phase modifiers as text rendered
//! from the state.

use std::fmt;
use std::ops::Add;

use reel_actors::conversation::modifiers::Modifier;
use reel_actors::state::State;
use std::sync::Arc;

/// What a [`PromptSection`] is, which decides how it renders.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PromptSectionKind {
    /// `You are {text}.`
    Role,
    /// `Your task: {text}`
    Task,
    /// `Constraint: {text}`
    Constraint,
    /// `Output format: {text}`
    Format,
    /// `Example:\nInput: {input}\nOutput: {output}`
    Example,
    /// `Context: {text}`
    Context,
    /// `Persona: {text}`
    Persona,
    /// `Guidelines:\n- {a}\n- {b}`
    Guidelines,
    /// The text as it is.
    Text,
}

/// One section of a prompt, already rendered.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PromptSection {
    /// The section's kind.
    pub kind: PromptSectionKind,
    /// The section as it renders.
    pub text: String,
}

/// An instruction built from sections (`+` appends), rendered with a blank line between
/// sections, then the phase modifiers' lines (`P::with_state`, `P::when`,
/// `P::context_fn`), which read the state when the agent runs.
///
/// ```
/// use reel_compose::P;
///
/// let prompt = P::role("a senior financial analyst")
///     + P::task("Review the quarterly report")
///     + P::guidelines(&["Start with a summary", "End with risks"]);
/// let instruction: String = prompt.into();
/// assert_eq!(
///     instruction,
///     "You are a senior financial analyst.\n\nYour task: Review the quarterly report\n\nGuidelines:\n- Start with a summary\n- End with risks"
/// );
/// ```
#[derive(Clone, Default)]
pub struct Prompt {
    sections: Vec<PromptSection>,
    modifiers: Vec<Modifier>,
}

impl fmt::Debug for Prompt {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Prompt")
            .field("sections", &self.sections)
            .field("modifiers", &self.modifiers)
            .finish()
    }
}

impl Prompt {
    fn section(kind: PromptSectionKind, text: String) -> Self {
        Prompt {
            sections: vec![PromptSection { kind, text }],
            modifiers: Vec::new(),
        }
    }

    fn modifier(modifier: Modifier) -> Self {
        Prompt {
            sections: Vec::new(),
            modifiers: vec![modifier],
        }
    }

    /// The sections, in order.
    pub fn sections(&self) -> &[PromptSection] {
        &self.sections
    }

    /// The state keys `P::with_state` reads (for the contracts).
    pub fn reads(&self) -> Vec<String> {
        self.modifiers
            .iter()
            .flat_map(|modifier| match modifier {
                Modifier::StateAppend(keys) => keys.clone(),
                _ => Vec::new(),
            })
            .collect()
    }

    /// Whether the prompt has neither sections nor modifiers.
    pub fn is_empty(&self) -> bool {
        self.sections.is_empty() && self.modifiers.is_empty()
    }

    /// The sections alone, joined by blank lines (no state, so no modifier lines).
    pub fn render_static(&self) -> String {
        let texts: Vec<&str> = self.sections.iter().map(|s| s.text.as_str()).collect();
        texts.join("\n\n")
    }

    /// The instruction for `state`: the sections, then a blank line and each modifier's
    /// line that renders something (the live phases' rendering, one line each).
    pub fn render(&self, state: &State) -> String {
        let mut text = self.render_static();
        if let Some(lines) =
            reel_actors::conversation::modifiers::render_all(&self.modifiers, state)
        {
            if !text.is_empty() {
                text.push_str("\n\n");
            }
            text.push_str(&lines);
        }
        text
    }
}

impl Add for Prompt {
    type Output = Prompt;

    /// `self`'s sections and modifiers, then `rhs`'s.
    fn add(mut self, rhs: Prompt) -> Prompt {
        self.sections.extend(rhs.sections);
        self.modifiers.extend(rhs.modifiers);
        self
    }
}

impl From<&str> for Prompt {
    fn from(text: &str) -> Prompt {
        P::text(text)
    }
}

impl From<String> for Prompt {
    fn from(text: String) -> Prompt {
        P::text(text)
    }
}

impl From<Prompt> for String {
    /// The static rendering ([`Prompt::render_static`]).
    fn from(prompt: Prompt) -> String {
        prompt.render_static()
    }
}

/// The `P::` namespace: prompt sections ([`Prompt`]).
#[derive(Debug, Clone, Copy)]
pub struct P;

impl P {
    /// `You are {role}.`
    pub fn role(role: impl Into<String>) -> Prompt {
        Prompt::section(PromptSectionKind::Role, format!("You are {}.", role.into()))
    }

    /// `Your task: {task}`
    pub fn task(task: impl Into<String>) -> Prompt {
        Prompt::section(
            PromptSectionKind::Task,
            format!("Your task: {}", task.into()),
        )
    }

    /// `Constraint: {constraint}`
    pub fn constraint(constraint: impl Into<String>) -> Prompt {
        Prompt::section(
            PromptSectionKind::Constraint,
            format!("Constraint: {}", constraint.into()),
        )
    }

    /// `Output format: {format}`
    pub fn format(format: impl Into<String>) -> Prompt {
        Prompt::section(
            PromptSectionKind::Format,
            format!("Output format: {}", format.into()),
        )
    }

    /// `Example:\nInput: {input}\nOutput: {output}`
    pub fn example(input: impl Into<String>, output: impl Into<String>) -> Prompt {
        Prompt::section(
            PromptSectionKind::Example,
            format!(
                "Example:\nInput: {}\nOutput: {}",
                input.into(),
                output.into()
            ),
        )
    }

    /// `Context: {context}`
    pub fn context(context: impl Into<String>) -> Prompt {
        Prompt::section(
            PromptSectionKind::Context,
            format!("Context: {}", context.into()),
        )
    }

    /// `Persona: {persona}`
    pub fn persona(persona: impl Into<String>) -> Prompt {
        Prompt::section(
            PromptSectionKind::Persona,
            format!("Persona: {}", persona.into()),
        )
    }

    /// `Guidelines:` and one `- {item}` line per guideline.
    pub fn guidelines(items: &[&str]) -> Prompt {
        let lines: Vec<String> = items.iter().map(|item| format!("- {item}")).collect();
        Prompt::section(
            PromptSectionKind::Guidelines,
            format!("Guidelines:\n{}", lines.join("\n")),
        )
    }

    /// The text as it is.
    pub fn text(text: impl Into<String>) -> Prompt {
        Prompt::section(PromptSectionKind::Text, text.into())
    }

    /// `[Context: k=v, …]` for the listed keys present in the state, rendered when the
    /// agent runs: the live phases' `with_state` modifier.
    pub fn with_state(keys: &[&str]) -> Prompt {
        Prompt::modifier(Modifier::StateAppend(
            keys.iter().map(|key| (*key).to_owned()).collect(),
        ))
    }

    /// `text` when `predicate` holds on the state as the agent runs: the live phases'
    /// `when` modifier.
    pub fn when(
        predicate: impl Fn(&State) -> bool + Send + Sync + 'static,
        text: impl Into<String>,
    ) -> Prompt {
        Prompt::modifier(Modifier::Conditional(Arc::new(predicate), text.into()))
    }

    /// What `f` returns for the state as the agent runs, unless empty: the live phases'
    /// `with_context` modifier.
    pub fn context_fn(f: impl Fn(&State) -> String + Send + Sync + 'static) -> Prompt {
        Prompt::modifier(Modifier::CustomAppend(Arc::new(f)))
    }
}
