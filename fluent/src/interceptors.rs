//! Hooks on what the runtime sends: tool responses on their way out, context at the turn
//! boundary, and the system instruction at each turn complete.
//!
//! All four run in the control lane and are always blocking (no `_concurrent` variant):
//! `before_tool_response` transforms what is sent, `on_turn_boundary`'s frames must go out
//! before `on_turn_complete` runs, and the instruction hooks are plain functions of the
//! state. So they run in event order and a replay sends the same frames again. Where they
//! sit in the turn pipeline: extractors, computed values, phase transitions, watchers and
//! temporal patterns, then the instruction (`instruction_template`, else
//! `instruction_amendment`), then `on_turn_boundary`, then `on_turn_complete`.
//!
//! When both instruction hooks are set, the template wins: the amendment is consulted
//! only on turns where the template returns `None`. An instruction update is sent only
//! when its text differs from the instruction last sent.

use std::future::Future;
use std::sync::Arc;

use reel_actors::state::State;
use reel_actors::writer::SessionWriter;
use reel_protocol::FunctionResponse;

use crate::builder::LiveBuilder;

impl LiveBuilder {
    /// Runs on every batch of tool responses just before it is sent (the registered
    /// tools', `on_tool_call`'s, running acknowledgements, background results); what it
    /// returns goes on the wire instead, still one frame per `toolCall` frame, in call
    /// order (nothing, if it returns no response). Redaction, augmentation, promoting
    /// results into the state. Always blocking.
    ///
    /// ```
    /// use reel_fluent::Live;
    /// use serde_json::json;
    ///
    /// let builder = Live::builder().before_tool_response(|mut responses, _state| async move {
    ///     for response in &mut responses {
    ///         if let Some(fields) = response.response.as_mut().and_then(|r| r.as_object_mut()) {
    ///             fields.remove("card_number");
    ///             fields.insert("redacted".into(), json!(true));
    ///         }
    ///     }
    ///     responses
    /// });
    /// # drop(builder);
    /// ```
    pub fn before_tool_response<F, Fut>(mut self, f: F) -> Self
    where
        F: Fn(Vec<FunctionResponse>, State) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Vec<FunctionResponse>> + Send + 'static,
    {
        self.interceptors.before_tool_response = Some(Arc::new(move |responses, state| {
            Box::pin(f(responses, state))
        }));
        self
    }

    /// Runs at each turn complete, after the extractors, phase transitions and the
    /// instruction update, and before `on_turn_complete`, with the runtime's writer:
    /// context stuffing. What it sends is the runtime's (a replay sends it again). Always
    /// blocking.
    ///
    /// ```
    /// use reel_fluent::Live;
    /// use reel_protocol::Content;
    ///
    /// let builder = Live::builder().on_turn_boundary(|state, writer| async move {
    ///     if let Some(city) = state.get::<String>("app:city") {
    ///         let note = Content::user_text(format!("(The user is in {city}.)"));
    ///         let _ = writer.send_client_content(vec![note], false);
    ///     }
    /// });
    /// # drop(builder);
    /// ```
    pub fn on_turn_boundary<F, Fut>(mut self, f: F) -> Self
    where
        F: Fn(State, SessionWriter) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = ()> + Send + 'static,
    {
        self.interceptors.on_turn_boundary =
            Some(Arc::new(move |state, writer| Box::pin(f(state, writer))));
        self
    }

    /// The whole system instruction, computed from the state at each turn complete (after
    /// the extractors and phase transitions): `Some(text)` replaces it, the current
    /// phase's included; `None` leaves it to the phases (and the amendment). Sent only
    /// when it differs from the instruction last sent. Wins over
    /// [`instruction_amendment`](LiveBuilder::instruction_amendment).
    ///
    /// ```
    /// use reel_fluent::Live;
    ///
    /// let builder = Live::builder()
    ///     .instruction("You are a concierge.")
    ///     .instruction_template(|state| {
    ///         let name = state.get::<String>("app:name")?;
    ///         Some(format!("You are a concierge. Address the guest as {name}."))
    ///     });
    /// # drop(builder);
    /// ```
    pub fn instruction_template<F>(mut self, f: F) -> Self
    where
        F: Fn(&State) -> Option<String> + Send + Sync + 'static,
    {
        self.interceptors.instruction_template = Some(Arc::new(f));
        self
    }

    /// Text appended, after a blank line, to the current phase's instruction (without
    /// phases, the session's instruction), at each turn complete without a phase
    /// transition; `None` means the phase's instruction alone. Sent only when the
    /// composed text differs from the instruction last sent. An
    /// [`instruction_template`](LiveBuilder::instruction_template) that returns `Some`
    /// wins over it.
    ///
    /// ```
    /// use reel_fluent::Live;
    ///
    /// let builder = Live::builder()
    ///     .instruction("Take the order.")
    ///     .instruction_amendment(|state| {
    ///         let items = state.get::<u32>("app:items")?;
    ///         Some(format!("The order has {items} items so far."))
    ///     });
    /// # drop(builder);
    /// ```
    pub fn instruction_amendment<F>(mut self, f: F) -> Self
    where
        F: Fn(&State) -> Option<String> + Send + Sync + 'static,
    {
        self.interceptors.instruction_amendment = Some(Arc::new(f));
        self
    }
}
