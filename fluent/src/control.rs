//! Control-lane callbacks: async closures run as lifecycle, tool and turn events arrive.
//!
//! Each runs blocking by default: the control lane awaits it before handling the next
//! event, so callbacks see events in order. The `_concurrent` variants spawn it instead and
//! the lane moves on at once. `on_interrupted` and `on_tool_call` are always blocking (the
//! interruption must be handled before audio resumes; the tool-call callback's result is
//! the response), so they have no concurrent variant.

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use reel_actors::callbacks::{AsyncCallback, CallbackMode};
use reel_actors::state::State;
use reel_actors::writer::SessionWriter;
use reel_protocol::{FunctionCall, FunctionResponse};

use crate::builder::LiveBuilder;

fn unit<F, Fut>(mode: CallbackMode, f: F) -> AsyncCallback<()>
where
    F: Fn() -> Fut + Send + Sync + 'static,
    Fut: Future<Output = ()> + Send + 'static,
{
    AsyncCallback::new(mode, move |()| f())
}

impl LiveBuilder {
    /// The session is live (the server accepted the setup; after a reconnect too). Gets a
    /// writer to send with.
    ///
    /// ```
    /// use reel_fluent::Live;
    /// let builder = Live::builder().on_connected(|writer| async move {
    ///     let _ = writer.update_instruction("Speak slowly.");
    /// });
    /// # drop(builder);
    /// ```
    pub fn on_connected<F, Fut>(mut self, f: F) -> Self
    where
        F: Fn(SessionWriter) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = ()> + Send + 'static,
    {
        self.control.on_connected = Some(AsyncCallback::new(CallbackMode::Blocking, f));
        self
    }

    /// [`on_connected`](LiveBuilder::on_connected), spawned.
    ///
    /// ```
    /// use reel_fluent::Live;
    /// let builder = Live::builder().on_connected_concurrent(|_writer| async { eprintln!("live") });
    /// # drop(builder);
    /// ```
    pub fn on_connected_concurrent<F, Fut>(mut self, f: F) -> Self
    where
        F: Fn(SessionWriter) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = ()> + Send + 'static,
    {
        self.control.on_connected = Some(AsyncCallback::new(CallbackMode::Concurrent, f));
        self
    }

    /// The connection ended: `Some(reason)` for an error close, `None` for a clean one.
    ///
    /// ```
    /// use reel_fluent::Live;
    /// let builder = Live::builder().on_disconnected(|reason| async move {
    ///     if let Some(reason) = reason {
    ///         eprintln!("lost the connection: {reason}");
    ///     }
    /// });
    /// # drop(builder);
    /// ```
    pub fn on_disconnected<F, Fut>(mut self, f: F) -> Self
    where
        F: Fn(Option<String>) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = ()> + Send + 'static,
    {
        self.control.on_disconnected = Some(AsyncCallback::new(CallbackMode::Blocking, f));
        self
    }

    /// [`on_disconnected`](LiveBuilder::on_disconnected), spawned.
    ///
    /// ```
    /// use reel_fluent::Live;
    /// let builder = Live::builder().on_disconnected_concurrent(|_reason| async {});
    /// # drop(builder);
    /// ```
    pub fn on_disconnected_concurrent<F, Fut>(mut self, f: F) -> Self
    where
        F: Fn(Option<String>) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = ()> + Send + 'static,
    {
        self.control.on_disconnected = Some(AsyncCallback::new(CallbackMode::Concurrent, f));
        self
    }

    /// The server will close the connection in this long.
    ///
    /// ```
    /// use reel_fluent::Live;
    /// let builder = Live::builder().on_go_away(|left| async move { eprintln!("closing in {left:?}") });
    /// # drop(builder);
    /// ```
    pub fn on_go_away<F, Fut>(mut self, f: F) -> Self
    where
        F: Fn(Duration) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = ()> + Send + 'static,
    {
        self.control.on_go_away = Some(AsyncCallback::new(CallbackMode::Blocking, f));
        self
    }

    /// [`on_go_away`](LiveBuilder::on_go_away), spawned.
    ///
    /// ```
    /// use reel_fluent::Live;
    /// let builder = Live::builder().on_go_away_concurrent(|_left| async {});
    /// # drop(builder);
    /// ```
    pub fn on_go_away_concurrent<F, Fut>(mut self, f: F) -> Self
    where
        F: Fn(Duration) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = ()> + Send + 'static,
    {
        self.control.on_go_away = Some(AsyncCallback::new(CallbackMode::Concurrent, f));
        self
    }

    /// A non-fatal error (the session goes on).
    ///
    /// ```
    /// use reel_fluent::Live;
    /// let builder = Live::builder().on_error(|message| async move { eprintln!("error: {message}") });
    /// # drop(builder);
    /// ```
    pub fn on_error<F, Fut>(mut self, f: F) -> Self
    where
        F: Fn(String) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = ()> + Send + 'static,
    {
        self.control.on_error = Some(AsyncCallback::new(CallbackMode::Blocking, f));
        self
    }

    /// [`on_error`](LiveBuilder::on_error), spawned.
    ///
    /// ```
    /// use reel_fluent::Live;
    /// let builder = Live::builder().on_error_concurrent(|_message| async {});
    /// # drop(builder);
    /// ```
    pub fn on_error_concurrent<F, Fut>(mut self, f: F) -> Self
    where
        F: Fn(String) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = ()> + Send + 'static,
    {
        self.control.on_error = Some(AsyncCallback::new(CallbackMode::Concurrent, f));
        self
    }

    /// The user barged in: stop playing model audio. Always blocking: it finishes before
    /// audio resumes.
    ///
    /// ```
    /// use reel_fluent::Live;
    /// let builder = Live::builder().on_interrupted(|| async { eprintln!("interrupted") });
    /// # drop(builder);
    /// ```
    pub fn on_interrupted<F, Fut>(mut self, f: F) -> Self
    where
        F: Fn() -> Fut + Send + Sync + 'static,
        Fut: Future<Output = ()> + Send + 'static,
    {
        self.control.on_interrupted = Some(unit(CallbackMode::Blocking, f));
        self
    }

    /// The model asked for function calls. Return `Some(responses)` to answer them
    /// yourself, `None` to let the registered tools answer. Always blocking: its result is
    /// the response.
    ///
    /// ```
    /// use reel_fluent::Live;
    /// use reel_protocol::FunctionResponse;
    /// use serde_json::json;
    ///
    /// let builder = Live::builder().on_tool_call(|calls, _state| async move {
    ///     let answers = calls
    ///         .iter()
    ///         .map(|call| FunctionResponse {
    ///             id: call.id.clone(),
    ///             name: call.name.clone(),
    ///             response: Some(json!({"ok": true})),
    ///             ..FunctionResponse::default()
    ///         })
    ///         .collect();
    ///     Some(answers)
    /// });
    /// # drop(builder);
    /// ```
    pub fn on_tool_call<F, Fut>(mut self, f: F) -> Self
    where
        F: Fn(Vec<FunctionCall>, State) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Option<Vec<FunctionResponse>>> + Send + 'static,
    {
        self.control.on_tool_call = Some(Arc::new(move |calls, state| Box::pin(f(calls, state))));
        self
    }

    /// The server cancelled these calls (by id); their tools have been aborted.
    ///
    /// ```
    /// use reel_fluent::Live;
    /// let builder = Live::builder().on_tool_cancelled(|ids| async move { eprintln!("cancelled {ids:?}") });
    /// # drop(builder);
    /// ```
    pub fn on_tool_cancelled<F, Fut>(mut self, f: F) -> Self
    where
        F: Fn(Vec<String>) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = ()> + Send + 'static,
    {
        self.control.on_tool_cancelled = Some(AsyncCallback::new(CallbackMode::Blocking, f));
        self
    }

    /// [`on_tool_cancelled`](LiveBuilder::on_tool_cancelled), spawned.
    ///
    /// ```
    /// use reel_fluent::Live;
    /// let builder = Live::builder().on_tool_cancelled_concurrent(|_ids| async {});
    /// # drop(builder);
    /// ```
    pub fn on_tool_cancelled_concurrent<F, Fut>(mut self, f: F) -> Self
    where
        F: Fn(Vec<String>) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = ()> + Send + 'static,
    {
        self.control.on_tool_cancelled = Some(AsyncCallback::new(CallbackMode::Concurrent, f));
        self
    }

    /// The model's turn is over, after the turn pipeline (phase transitions, state).
    ///
    /// ```
    /// use reel_fluent::Live;
    /// let builder = Live::builder().on_turn_complete(|| async { eprintln!("your turn") });
    /// # drop(builder);
    /// ```
    pub fn on_turn_complete<F, Fut>(mut self, f: F) -> Self
    where
        F: Fn() -> Fut + Send + Sync + 'static,
        Fut: Future<Output = ()> + Send + 'static,
    {
        self.control.on_turn_complete = Some(unit(CallbackMode::Blocking, f));
        self
    }

    /// [`on_turn_complete`](LiveBuilder::on_turn_complete), spawned.
    ///
    /// ```
    /// use reel_fluent::Live;
    /// let builder = Live::builder().on_turn_complete_concurrent(|| async {});
    /// # drop(builder);
    /// ```
    pub fn on_turn_complete_concurrent<F, Fut>(mut self, f: F) -> Self
    where
        F: Fn() -> Fut + Send + Sync + 'static,
        Fut: Future<Output = ()> + Send + 'static,
    {
        self.control.on_turn_complete = Some(unit(CallbackMode::Concurrent, f));
        self
    }

    /// The model has finished generating its turn (its audio may still be playing).
    ///
    /// ```
    /// use reel_fluent::Live;
    /// let builder = Live::builder().on_generation_complete(|| async {});
    /// # drop(builder);
    /// ```
    pub fn on_generation_complete<F, Fut>(mut self, f: F) -> Self
    where
        F: Fn() -> Fut + Send + Sync + 'static,
        Fut: Future<Output = ()> + Send + 'static,
    {
        self.control.on_generation_complete = Some(unit(CallbackMode::Blocking, f));
        self
    }

    /// [`on_generation_complete`](LiveBuilder::on_generation_complete), spawned.
    ///
    /// ```
    /// use reel_fluent::Live;
    /// let builder = Live::builder().on_generation_complete_concurrent(|| async {});
    /// # drop(builder);
    /// ```
    pub fn on_generation_complete_concurrent<F, Fut>(mut self, f: F) -> Self
    where
        F: Fn() -> Fut + Send + Sync + 'static,
        Fut: Future<Output = ()> + Send + 'static,
    {
        self.control.on_generation_complete = Some(unit(CallbackMode::Concurrent, f));
        self
    }
}
