//! Tools that consume the user's live input while they run ([`InputStreamingTool`]).
//!
//! Such a tool is a [`StreamingTool`](super::StreamingTool) that also receives, from the
//! moment the model calls it until it returns, what the user sends in real time: audio,
//! video frames, streamed text, activity signals ([`ToolInput`]). A tool that listens for a
//! spoken confirmation code, measures how loud the caller is, or watches the camera for a
//! document is one. It runs in the background like any streaming tool, its results go out
//! as `willContinue` responses, and a replay hands it the recorded input in the same order,
//! so it sends the same results again. See [`tool_input`](super::tool_input) for which
//! input a call receives.

use std::sync::Arc;

use futures_util::future::BoxFuture;
use serde_json::Value;

use super::streaming::stream_results;
use super::{DEFAULT_INPUT_CAPACITY, ToolContext, ToolError, ToolFunction, ToolInput, ToolStream};

/// A tool that receives the user's live input while it runs, and streams results.
///
/// ```
/// use futures_util::future::{BoxFuture, FutureExt};
/// use reel_actors::tools::{InputEvent, InputStreamingTool, ToolContext, ToolError, ToolInput, ToolStream};
/// use reel_protocol::UserInput;
/// use serde_json::{Value, json};
///
/// /// Tells how many milliseconds of speech the caller has sent, every second of it.
/// struct SpeechMeter;
///
/// impl InputStreamingTool for SpeechMeter {
///     fn name(&self) -> &str { "measure_speech" }
///     fn description(&self) -> &str { "Measures how long the caller speaks." }
///     fn parameters(&self) -> Option<Value> { None }
///     fn run(&self, _args: Value, _ctx: ToolContext, mut input: ToolInput, results: ToolStream)
///         -> BoxFuture<'static, Result<(), ToolError>> {
///         async move {
///             let mut ms = 0;
///             while let Some(event) = input.recv().await {
///                 match event {
///                     // 16 kHz, 2 bytes a sample: 32 bytes a millisecond.
///                     InputEvent::Input(piece) => match piece.input {
///                         UserInput::Audio(pcm) => {
///                             let before = ms / 1000;
///                             ms += pcm.len() / 32;
///                             if ms / 1000 > before {
///                                 results.send(json!({ "speech_ms": ms }));
///                             }
///                         }
///                         UserInput::ActivityEnd => break,
///                         _ => {}
///                     },
///                     _ => {}
///                 }
///             }
///             Ok(())
///         }
///         .boxed()
///     }
/// }
/// ```
pub trait InputStreamingTool: Send + Sync + 'static {
    /// The name the model calls it by.
    fn name(&self) -> &str;

    /// What it does, for the model.
    fn description(&self) -> &str;

    /// Its parameters (as [`ToolFunction::parameters`]).
    fn parameters(&self) -> Option<Value>;

    /// How many pieces of input a call's queue holds before input is dropped
    /// ([`InputEvent::Missed`](super::InputEvent::Missed)).
    fn input_capacity(&self) -> usize {
        DEFAULT_INPUT_CAPACITY
    }

    /// Runs one call: `input` receives the user's input from the call on, `results` sends
    /// results as they come. Runs on its own task under the tool's timeout and the call's
    /// cancellation, like any tool.
    fn run(
        &self,
        args: Value,
        ctx: ToolContext,
        input: ToolInput,
        results: ToolStream,
    ) -> BoxFuture<'static, Result<(), ToolError>>;
}

/// An [`InputStreamingTool`] as a [`ToolFunction`]: what the dispatcher registers
/// ([`ToolDispatcher::register_input_streaming`](super::ToolDispatcher::register_input_streaming)).
pub struct InputStreaming(pub Arc<dyn InputStreamingTool>);

impl ToolFunction for InputStreaming {
    fn name(&self) -> &str {
        self.0.name()
    }

    fn description(&self) -> &str {
        self.0.description()
    }

    fn parameters(&self) -> Option<Value> {
        self.0.parameters()
    }

    fn streams(&self) -> bool {
        true
    }

    fn input_capacity(&self) -> Option<usize> {
        Some(self.0.input_capacity())
    }

    fn call(&self, args: Value, ctx: ToolContext) -> BoxFuture<'static, Result<Value, ToolError>> {
        let input = ctx.take_input().unwrap_or_else(ToolInput::closed);
        stream_results(ctx.partials(), |results| {
            self.0.run(args, ctx, input, results)
        })
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Mutex;

    use bytes::Bytes;
    use futures_util::FutureExt;
    use reel_protocol::{FunctionCall, UserInput};
    use serde_json::json;
    use tokio_util::sync::CancellationToken;

    use super::*;
    use crate::state::State;
    use crate::tools::{InputEvent, StampedInput, ToolInputs};

    /// Sends the number of audio bytes of each piece, until the activity ends.
    struct ByteCounter;

    impl InputStreamingTool for ByteCounter {
        fn name(&self) -> &str {
            "count_bytes"
        }
        fn description(&self) -> &str {
            "Counts audio bytes."
        }
        fn parameters(&self) -> Option<Value> {
            None
        }
        fn run(
            &self,
            _args: Value,
            _ctx: ToolContext,
            mut input: ToolInput,
            results: ToolStream,
        ) -> BoxFuture<'static, Result<(), ToolError>> {
            async move {
                while let Some(InputEvent::Input(piece)) = input.recv().await {
                    match piece.input {
                        UserInput::Audio(pcm) => results.send(json!(pcm.len())),
                        _ => break,
                    }
                }
                Ok(())
            }
            .boxed()
        }
    }

    fn ctx() -> ToolContext {
        let call = FunctionCall {
            id: Some("c1".into()),
            name: Some("count_bytes".into()),
            ..FunctionCall::default()
        };
        ToolContext::for_call(&call, State::new().with_delta(), CancellationToken::new())
    }

    #[tokio::test]
    async fn the_tool_reads_the_input_of_its_call_and_streams_what_it_finds() {
        let inputs = Arc::new(ToolInputs::default());
        let (mut feed, input) = inputs.open(8, 0);
        for (seq, input) in [
            UserInput::Audio(Bytes::from_static(&[0; 640])),
            UserInput::Audio(Bytes::from_static(&[0; 320])),
            UserInput::ActivityEnd,
        ]
        .into_iter()
        .enumerate()
        {
            feed.deliver(&StampedInput {
                seq: seq as u64 + 1,
                part: 0,
                ts_ms: 0,
                dropped_before: 0,
                input,
            });
        }
        let sent = Arc::new(Mutex::new(Vec::new()));
        let sink = Arc::clone(&sent);
        let ctx = ctx()
            .with_input(input)
            .with_partials(Arc::new(move |value| sink.lock().unwrap().push(value)));
        let tool = InputStreaming(Arc::new(ByteCounter));
        assert_eq!(
            ToolFunction::input_capacity(&tool),
            Some(DEFAULT_INPUT_CAPACITY)
        );
        assert_eq!(
            tool.call(json!({}), ctx).await,
            Ok(json!({"results_sent": 2}))
        );
        assert_eq!(*sent.lock().unwrap(), [json!(640), json!(320)]);
    }

    #[tokio::test]
    async fn called_without_input_it_sees_none() {
        let tool = InputStreaming(Arc::new(ByteCounter));
        assert_eq!(
            tool.call(json!({}), ctx()).await,
            Ok(json!({"results": []}))
        );
    }
}
