//! [`PhaseBuilder`]: one conversation phase, configured inside
//! [`LiveBuilder::phase`](crate::LiveBuilder::phase).

use std::future::Future;

use reel_actors::phases::Phase;
use reel_actors::state::State;
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
