//! Fast-lane callbacks (and `on_usage`, run by the telemetry actor): plain `Fn`s called
//! synchronously as audio, text, transcripts and voice activity arrive. They must return
//! quickly and never wait: push into a queue, update a meter. Anything slow belongs in a
//! control-lane callback.

use std::sync::Arc;

use bytes::Bytes;
use reel_protocol::{SessionPhase, UsageMetadata};

use crate::builder::LiveBuilder;

impl LiveBuilder {
    /// Model audio as it arrives: PCM16LE mono 24 kHz.
    ///
    /// ```
    /// use std::sync::Arc;
    /// use std::sync::atomic::{AtomicUsize, Ordering};
    /// use reel_fluent::Live;
    ///
    /// let received = Arc::new(AtomicUsize::new(0));
    /// let counter = Arc::clone(&received);
    /// let builder = Live::builder().on_audio(move |pcm| {
    ///     counter.fetch_add(pcm.len(), Ordering::Relaxed);
    /// });
    /// # drop(builder);
    /// ```
    pub fn on_audio(mut self, f: impl Fn(&Bytes) + Send + Sync + 'static) -> Self {
        self.fast.on_audio = Some(Arc::new(f));
        self
    }

    /// A piece of answer text, as it arrives.
    ///
    /// ```
    /// use reel_fluent::Live;
    /// let builder = Live::builder().text_only().on_text(|delta| print!("{delta}"));
    /// # drop(builder);
    /// ```
    pub fn on_text(mut self, f: impl Fn(&str) + Send + Sync + 'static) -> Self {
        self.fast.on_text = Some(Arc::new(f));
        self
    }

    /// The whole answer text of a turn, once, at its end.
    ///
    /// ```
    /// use reel_fluent::Live;
    /// let builder = Live::builder().text_only().on_text_complete(|text| println!("assistant: {text}"));
    /// # drop(builder);
    /// ```
    pub fn on_text_complete(mut self, f: impl Fn(&str) + Send + Sync + 'static) -> Self {
        self.fast.on_text_complete = Some(Arc::new(f));
        self
    }

    /// Transcription of the user: the text, and whether it is final (partials are
    /// revisable; one final per turn carries the whole text). Needs
    /// [`transcription(true, _)`](LiveBuilder::transcription).
    ///
    /// ```
    /// use reel_fluent::Live;
    /// let builder = Live::builder()
    ///     .transcription(true, false)
    ///     .on_input_transcript(|text, is_final| if is_final { println!("user: {text}") });
    /// # drop(builder);
    /// ```
    pub fn on_input_transcript(mut self, f: impl Fn(&str, bool) + Send + Sync + 'static) -> Self {
        self.fast.on_input_transcript = Some(Arc::new(f));
        self
    }

    /// Transcription of the model's speech: the text, and whether it is final. Needs
    /// [`transcription(_, true)`](LiveBuilder::transcription).
    ///
    /// ```
    /// use reel_fluent::Live;
    /// let builder = Live::builder()
    ///     .transcription(false, true)
    ///     .on_output_transcript(|text, is_final| if is_final { println!("assistant: {text}") });
    /// # drop(builder);
    /// ```
    pub fn on_output_transcript(mut self, f: impl Fn(&str, bool) + Send + Sync + 'static) -> Self {
        self.fast.on_output_transcript = Some(Arc::new(f));
        self
    }

    /// A thought summary. Needs [`include_thoughts`](LiveBuilder::include_thoughts).
    ///
    /// ```
    /// use reel_fluent::Live;
    /// let builder = Live::builder().include_thoughts().on_thought(|thought| eprintln!("thinking: {thought}"));
    /// # drop(builder);
    /// ```
    pub fn on_thought(mut self, f: impl Fn(&str) + Send + Sync + 'static) -> Self {
        self.fast.on_thought = Some(Arc::new(f));
        self
    }

    /// The user started speaking (server voice activity detection).
    ///
    /// ```
    /// use reel_fluent::Live;
    /// let builder = Live::builder().on_vad_start(|| eprintln!("user speaking"));
    /// # drop(builder);
    /// ```
    pub fn on_vad_start(mut self, f: impl Fn() + Send + Sync + 'static) -> Self {
        self.fast.on_vad_start = Some(Arc::new(move |()| f()));
        self
    }

    /// The user stopped speaking.
    ///
    /// ```
    /// use reel_fluent::Live;
    /// let builder = Live::builder().on_vad_end(|| eprintln!("user silent"));
    /// # drop(builder);
    /// ```
    pub fn on_vad_end(mut self, f: impl Fn() + Send + Sync + 'static) -> Self {
        self.fast.on_vad_end = Some(Arc::new(move |()| f()));
        self
    }

    /// The session phase changed (connecting, active, model speaking, tool call pending…).
    ///
    /// ```
    /// use reel_fluent::Live;
    /// let builder = Live::builder().on_phase(|phase| eprintln!("now {phase:?}"));
    /// # drop(builder);
    /// ```
    pub fn on_phase(mut self, f: impl Fn(SessionPhase) + Send + Sync + 'static) -> Self {
        self.fast.on_phase = Some(Arc::new(f));
        self
    }

    /// Token usage, as the server reports it (run by the telemetry actor).
    ///
    /// ```
    /// use reel_fluent::Live;
    /// let builder = Live::builder().on_usage(|usage| eprintln!("{:?} tokens", usage.total_token_count));
    /// # drop(builder);
    /// ```
    pub fn on_usage(mut self, f: impl Fn(&UsageMetadata) + Send + Sync + 'static) -> Self {
        self.telemetry.on_usage = Some(Arc::new(f));
        self
    }
}
