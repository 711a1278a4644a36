//! [`PhaseBuilder`]: one conversation phase, configured inside
//! [`LiveBuilder::phase`](crate::LiveBuilder::phase).

use std::future::Future;

use reel_actors::phases::Phase;
use reel_actors::state::State;
use reel_actors::transcript::TranscriptTurn;
use reel_actors::writer::SessionWriter;

/// One phase of the conversation: its instruction, the tools it allows, its way out and
/// its hooks. Handed to the closure of [`LiveBuilder::phase`](crate::LiveBuilder::phase).
///
/// Transitions are evaluated at each turn complete, in the order they were added; the first
/// whose guard holds fires: the old phase's `on_exit` runs, then the new phase's
/// `on_enter`, and the new instruction is sent to the model.
///
/// ```
/// use reel_fluent::Live;
///
/// let builder = Live::builder()
///     .phase("greeting", |p| {
///         p.instruction("Greet the caller and ask for their name.")
///             .transition("booking", |state| state.contains("app:name"))
///     })
///     .phase("booking", |p| {
///         p.instruction("Book a table.")
///             .on_enter(|state, _writer| async move {
///                 let _ = state.set("app:booking_started", true);
///             })
///             .terminal()
///     });
/// assert!(builder.validate().is_ok());
/// ```
#[derive(Debug)]
#[must_use = "a phase builder does nothing until it is returned to `.phase(..)`"]
pub struct PhaseBuilder {
    phase: Phase,
}

impl PhaseBuilder {
    pub(crate) fn new(name: String) -> Self {
        PhaseBuilder {
            phase: Phase::new(name),
        }
    }

    pub(crate) fn into_phase(self) -> Phase {
        self.phase
    }

    /// The phase's name.
    ///
    /// ```
    /// use reel_fluent::Live;
    /// let _ = Live::builder().phase("greeting", |p| {
    ///     assert_eq!(p.name(), "greeting");
    ///     p
    /// });
    /// ```
    pub fn name(&self) -> &str {
        self.phase.name()
    }

    /// The instruction the model gets while in this phase. The initial phase's instruction
    /// is the session's system instruction; the others are sent when they are entered.
    ///
    /// ```
    /// use reel_fluent::Live;
    /// let builder = Live::builder().phase("greeting", |p| p.instruction("Greet the user."));
    /// let config = builder.session_config().unwrap();
    /// let instruction = config.setup().system_instruction.as_ref().unwrap();
    /// assert_eq!(instruction.parts()[0].text.as_deref(), Some("Greet the user."));
    /// ```
    pub fn instruction(mut self, text: impl Into<String>) -> Self {
        self.phase = self.phase.instruction(text);
        self
    }

    /// An instruction written from the state when the phase is entered.
    ///
    /// ```
    /// use reel_fluent::Live;
    /// let builder = Live::builder().phase("confirm", |p| {
    ///     p.dynamic_instruction(|state| {
    ///         let city = state.get::<String>("app:city").unwrap_or_default();
    ///         format!("Confirm the booking in {city}.")
    ///     })
    /// });
    /// assert!(builder.validate().is_ok());
    /// ```
    pub fn dynamic_instruction(
        mut self,
        f: impl Fn(&State) -> String + Send + Sync + 'static,
    ) -> Self {
        self.phase = self.phase.dynamic_instruction(f);
        self
    }

    /// Only these tools may be called in this phase; a call to another one is refused with
    /// an error the model reads. Without this, every tool may be called. Each name must be
    /// a registered tool.
    ///
    /// ```
    /// use reel_fluent::Live;
    /// let builder = Live::builder().phase("greeting", |p| p.tools(["get_weather"]));
    /// assert_eq!(
    ///     builder.validate().unwrap_err().to_string(),
    ///     "invalid phases: phase `greeting` allows tool `get_weather`, which is not declared; \
    ///      declared tools: []"
    /// );
    /// ```
    pub fn tools<I, S>(mut self, names: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.phase = self.phase.tools(names);
        self
    }

    /// A way to phase `target`, taken at a turn complete when `guard` holds.
    ///
    /// ```
    /// use reel_fluent::Live;
    /// let builder = Live::builder()
    ///     .phase("a", |p| p.transition("b", |state| state.contains("app:done")))
    ///     .phase("b", |p| p);
    /// assert!(builder.validate().is_ok());
    /// ```
    pub fn transition(
        mut self,
        target: impl Into<String>,
        guard: impl Fn(&State) -> bool + Send + Sync + 'static,
    ) -> Self {
        self.phase = self.phase.transition(target, guard);
        self
    }

    /// A transition with a description, shown in
    /// [`LiveEvent::PhaseTransition`](reel_actors::LiveEvent::PhaseTransition) and reports.
    ///
    /// ```
    /// use reel_fluent::Live;
    /// let builder = Live::builder()
    ///     .phase("a", |p| p.transition_with("b", |s| s.contains("app:city"), "a city is known"))
    ///     .phase("b", |p| p);
    /// assert!(builder.validate().is_ok());
    /// ```
    pub fn transition_with(
        mut self,
        target: impl Into<String>,
        guard: impl Fn(&State) -> bool + Send + Sync + 'static,
        description: impl Into<String>,
    ) -> Self {
        self.phase = self.phase.transition_with(target, guard, description);
        self
    }

    /// Runs when the phase is entered (after the previous phase's `on_exit`), with the
    /// state and a writer to send with.
    ///
    /// ```
    /// use reel_fluent::Live;
    /// let builder = Live::builder().phase("booking", |p| {
    ///     p.on_enter(|_state, writer| async move {
    ///         let _ = writer.send_text("Let's book your table.");
    ///     })
    /// });
    /// assert!(builder.validate().is_ok());
    /// ```
    pub fn on_enter<F, Fut>(mut self, f: F) -> Self
    where
        F: Fn(State, SessionWriter) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = ()> + Send + 'static,
    {
        self.phase = self.phase.on_enter(f);
        self
    }

    /// Runs when the phase is left.
    ///
    /// ```
    /// use reel_fluent::Live;
    /// let builder = Live::builder().phase("greeting", |p| {
    ///     p.on_exit(|state, _writer| async move {
    ///         let _ = state.set("app:greeted", true);
    ///     })
    /// });
    /// assert!(builder.validate().is_ok());
    /// ```
    pub fn on_exit<F, Fut>(mut self, f: F) -> Self
    where
        F: Fn(State, SessionWriter) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = ()> + Send + 'static,
    {
        self.phase = self.phase.on_exit(f);
        self
    }

    /// The phase may be entered only when `guard` holds: a transition into it is skipped
    /// while it does not (the next transition is tried).
    ///
    /// ```
    /// use reel_fluent::Live;
    /// let builder = Live::builder()
    ///     .phase("greeting", |p| p.transition("verify", |_| true))
    ///     .phase("verify", |p| p.guard(|s| s.get::<bool>("disclosure_given") == Some(true)));
    /// assert!(builder.validate().is_ok());
    /// ```
    pub fn guard(mut self, guard: impl Fn(&State) -> bool + Send + Sync + 'static) -> Self {
        self.phase = self.phase.guard(guard);
        self
    }

    /// The state keys this phase gathers: the `[Navigation]` block lists those still
    /// missing, and repair ([`LiveBuilder::repair`](crate::LiveBuilder::repair)) counts the
    /// turns they stay missing.
    ///
    /// ```
    /// use reel_fluent::Live;
    /// let builder = Live::builder()
    ///     .phase("identify_caller", |p| p.needs(&["caller_name", "caller_org"]).navigation());
    /// assert!(builder.validate().is_ok());
    /// ```
    pub fn needs(mut self, keys: &[&str]) -> Self {
        self.phase = self.phase.needs(keys);
        self
    }

    /// Appends `[Context: k=v, …]` for these keys present in the state (the seed's
    /// `StateAppend`), after the defaults' modifiers.
    ///
    /// ```
    /// use reel_fluent::Live;
    /// let builder = Live::builder()
    ///     .phase("negotiate", |p| p.instruction("Negotiate.").with_state(&["emotional_state"]));
    /// assert!(builder.validate().is_ok());
    /// ```
    pub fn with_state(mut self, keys: &[&str]) -> Self {
        self.phase = self.phase.with_state(keys);
        self
    }

    /// Appends `text` when `predicate` holds (the seed's `Conditional`).
    ///
    /// ```
    /// use reel_fluent::Live;
    /// let builder = Live::builder().phase("negotiate", |p| {
    ///     p.when(|s| s.get::<String>("risk").as_deref() == Some("high"), "Use extra empathy.")
    /// });
    /// assert!(builder.validate().is_ok());
    /// ```
    pub fn when(
        mut self,
        predicate: impl Fn(&State) -> bool + Send + Sync + 'static,
        text: impl Into<String>,
    ) -> Self {
        self.phase = self.phase.when(predicate, text);
        self
    }

    /// Appends what `f` returns, unless empty (the seed's `CustomAppend`).
    ///
    /// ```
    /// use reel_fluent::Live;
    /// let builder = Live::builder().phase("investigate", |p| {
    ///     p.with_context(|s| s.get::<String>("order").map(|o| format!("Order: {o}")).unwrap_or_default())
    /// });
    /// assert!(builder.validate().is_ok());
    /// ```
    pub fn with_context(mut self, f: impl Fn(&State) -> String + Send + Sync + 'static) -> Self {
        self.phase = self.phase.with_context(f);
        self
    }

    /// The phase carries the `[Navigation]` block, kept in `session:navigation_context`.
    ///
    /// ```
    /// use reel_fluent::Live;
    /// let builder = Live::builder().phase("greeting", |p| p.navigation());
    /// assert!(builder.validate().is_ok());
    /// ```
    pub fn navigation(mut self) -> Self {
        self.phase = self.phase.navigation();
        self
    }

    /// Said as the model when the phase is entered, after which the model answers. State
    /// the agent's intent, not facts about the user.
    ///
    /// ```
    /// use reel_fluent::Live;
    /// let builder = Live::builder()
    ///     .phase("verify", |p| p.enter_prompt("I'll now verify the caller's identity."));
    /// assert!(builder.validate().is_ok());
    /// ```
    pub fn enter_prompt(mut self, text: impl Into<String>) -> Self {
        self.phase = self.phase.enter_prompt(text);
        self
    }

    /// An enter prompt written from the state and the finished turns on entry.
    ///
    /// ```
    /// use reel_fluent::Live;
    /// let builder = Live::builder().phase("close", |p| {
    ///     p.enter_prompt_fn(|state, turns| {
    ///         let name = state.get::<String>("caller_name").unwrap_or_default();
    ///         format!("Wrapping up with {name} after {} turns.", turns.len())
    ///     })
    /// });
    /// assert!(builder.validate().is_ok());
    /// ```
    pub fn enter_prompt_fn(
        mut self,
        f: impl Fn(&State, &[TranscriptTurn]) -> String + Send + Sync + 'static,
    ) -> Self {
        self.phase = self.phase.enter_prompt_fn(f);
        self
    }

    /// Whether entering the phase asks the model to answer at once (overrides
    /// [`phase_defaults`](crate::LiveBuilder::phase_defaults); an enter prompt always does).
    ///
    /// ```
    /// use reel_fluent::Live;
    /// let builder = Live::builder().phase("greeting", |p| p.prompt_on_enter(true));
    /// assert!(builder.validate().is_ok());
    /// ```
    pub fn prompt_on_enter(mut self, prompt: bool) -> Self {
        self.phase = self.phase.prompt_on_enter(prompt);
        self
    }

    /// No transition leaves this phase.
    ///
    /// ```
    /// use reel_fluent::Live;
    /// let builder = Live::builder().phase("farewell", |p| p.terminal().transition("farewell", |_| true));
    /// assert_eq!(
    ///     builder.validate().unwrap_err().to_string(),
    ///     "invalid phases: phase `farewell` is terminal but has transitions; remove them or drop `.terminal()`"
    /// );
    /// ```
    pub fn terminal(mut self) -> Self {
        self.phase = self.phase.terminal();
        self
    }
}
