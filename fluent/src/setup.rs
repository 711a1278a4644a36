//! What the setup frame says: model, voice, instruction, modalities, transcription,
//! activity detection, resumption, compression; and the greeting sent once it is accepted.

use reel_protocol::{AutomaticActivityDetection, Modality, SessionConfig, Setup};

use crate::builder::LiveBuilder;

impl LiveBuilder {
    /// The model, by bare name (`gemini-live-2.5-flash-preview`) or resource name.
    ///
    /// ```
    /// use reel_fluent::Live;
    /// let config = Live::builder().model("gemini-live-2.5-flash-preview").session_config().unwrap();
    /// assert_eq!(config.model_name(), "gemini-live-2.5-flash-preview");
    /// ```
    pub fn model(mut self, model: impl Into<String>) -> Self {
        self.config = self.config.model(model);
        self
    }

    /// The prebuilt voice the model speaks with (`Kore`, `Puck`, `Charon`, …).
    ///
    /// ```
    /// use reel_fluent::Live;
    /// let config = Live::builder().voice("Kore").session_config().unwrap();
    /// let speech = config.setup().generation_config.as_ref().unwrap().speech_config.as_ref().unwrap();
    /// let voice = speech.voice_config.as_ref().unwrap().prebuilt_voice_config.as_ref().unwrap();
    /// assert_eq!(voice.voice_name.as_deref(), Some("Kore"));
    /// ```
    pub fn voice(mut self, voice: impl Into<String>) -> Self {
        self.config = self.config.voice(voice);
        self
    }

    /// The system instruction. With phases, the initial phase's instruction (if it has
    /// one) takes its place.
    ///
    /// ```
    /// use reel_fluent::Live;
    /// let config = Live::builder().instruction("Be brief.").session_config().unwrap();
    /// let instruction = config.setup().system_instruction.as_ref().unwrap();
    /// assert_eq!(instruction.parts()[0].text.as_deref(), Some("Be brief."));
    /// ```
    pub fn instruction(mut self, instruction: impl Into<String>) -> Self {
        self.config = self.config.system_instruction(instruction);
        self
    }

    /// The sampling temperature.
    ///
    /// ```
    /// use reel_fluent::Live;
    /// let config = Live::builder().temperature(0.4).session_config().unwrap();
    /// assert_eq!(config.setup().generation_config.as_ref().unwrap().temperature, Some(0.4));
    /// ```
    pub fn temperature(mut self, temperature: f64) -> Self {
        self.config = self.config.temperature(temperature);
        self
    }

    /// Answers in text instead of audio.
    ///
    /// ```
    /// use reel_fluent::Live;
    /// use reel_protocol::Modality;
    /// let config = Live::builder().text_only().session_config().unwrap();
    /// let generation = config.setup().generation_config.as_ref().unwrap();
    /// assert_eq!(generation.response_modalities, Some(vec![Modality::Text]));
    /// ```
    pub fn text_only(mut self) -> Self {
        self.config = self.config.text_only();
        self
    }

    /// The response modalities (the default is audio).
    ///
    /// ```
    /// use reel_fluent::Live;
    /// use reel_protocol::Modality;
    /// let config = Live::builder().response_modalities(vec![Modality::Audio]).session_config().unwrap();
    /// let generation = config.setup().generation_config.as_ref().unwrap();
    /// assert_eq!(generation.response_modalities, Some(vec![Modality::Audio]));
    /// ```
    pub fn response_modalities(mut self, modalities: Vec<Modality>) -> Self {
        self.config = self.config.response_modalities(modalities);
        self
    }

    /// Transcribes the user's audio (`input`) and the model's (`output`); `false` turns a
    /// transcription off again.
    ///
    /// ```
    /// use reel_fluent::Live;
    /// let config = Live::builder().transcription(true, false).session_config().unwrap();
    /// assert!(config.setup().input_audio_transcription.is_some());
    /// assert!(config.setup().output_audio_transcription.is_none());
    /// ```
    pub fn transcription(self, input: bool, output: bool) -> Self {
        self.edit_setup(|setup| {
            setup.input_audio_transcription = input.then(Default::default);
            setup.output_audio_transcription = output.then(Default::default);
        })
    }

    /// Server-side voice activity detection with these settings (sensitivities, padding,
    /// silence).
    ///
    /// ```
    /// use reel_fluent::Live;
    /// use reel_protocol::AutomaticActivityDetection;
    /// let config = Live::builder()
    ///     .vad(AutomaticActivityDetection { silence_duration_ms: Some(800), ..Default::default() })
    ///     .session_config()
    ///     .unwrap();
    /// assert!(config.server_vad());
    /// ```
    pub fn vad(mut self, detection: AutomaticActivityDetection) -> Self {
        self.config = self.config.vad(detection);
        self
    }

    /// Server-side voice activity detection off: the application says when the user
    /// speaks (`LiveHandle::activity_start` / `activity_end`).
    ///
    /// ```
    /// use reel_fluent::Live;
    /// let config = Live::builder().manual_activity_detection().session_config().unwrap();
    /// assert!(!config.server_vad());
    /// ```
    pub fn manual_activity_detection(mut self) -> Self {
        self.config = self.config.manual_activity_detection();
        self
    }

    /// Affective dialog on or off (the model adapts its tone to the user's).
    ///
    /// ```
    /// use reel_fluent::Live;
    /// let config = Live::builder().affective_dialog(true).session_config().unwrap();
    /// let generation = config.setup().generation_config.as_ref().unwrap();
    /// assert_eq!(generation.enable_affective_dialog, Some(true));
    /// ```
    pub fn affective_dialog(mut self, enabled: bool) -> Self {
        self.config = self.config.affective_dialog(enabled);
        self
    }

    /// Asks for thought summaries, delivered to [`on_thought`](LiveBuilder::on_thought)
    /// (Google AI only; left out of the setup on Vertex AI).
    ///
    /// ```
    /// use reel_fluent::Live;
    /// let config = Live::builder().include_thoughts().session_config().unwrap();
    /// let generation = config.setup().generation_config.as_ref().unwrap();
    /// assert_eq!(generation.thinking_config.as_ref().unwrap().include_thoughts, Some(true));
    /// ```
    pub fn include_thoughts(mut self) -> Self {
        self.config = self.config.include_thoughts();
        self
    }

    /// Compresses the context with a sliding window: once it reaches `trigger_tokens`,
    /// down to `target_tokens`.
    ///
    /// ```
    /// use reel_fluent::Live;
    /// let config = Live::builder().context_compression(4000, 2000).session_config().unwrap();
    /// assert!(config.setup().context_window_compression.is_some());
    /// ```
    pub fn context_compression(mut self, trigger_tokens: i64, target_tokens: i64) -> Self {
        self.config = self
            .config
            .context_compression(trigger_tokens, target_tokens);
        self
    }

    /// Asks the server for resumption handles (`true`); the latest is
    /// `LiveHandle::resume_handle`, and a dropped connection presents it when it reconnects.
    ///
    /// ```
    /// use reel_fluent::Live;
    /// let config = Live::builder().session_resume(true).session_config().unwrap();
    /// assert!(config.setup().session_resumption.is_some());
    /// ```
    pub fn session_resume(mut self, enabled: bool) -> Self {
        self.config = self.config.session_resume(enabled);
        self
    }

    /// Resumes the session that issued `handle` (from `LiveHandle::resume_handle`).
    ///
    /// ```
    /// use reel_fluent::Live;
    /// let config = Live::builder().session_resume_from("handle-1").session_config().unwrap();
    /// let resumption = config.setup().session_resumption.as_ref().unwrap();
    /// assert_eq!(resumption.handle.as_deref(), Some("handle-1"));
    /// ```
    pub fn session_resume_from(mut self, handle: impl Into<String>) -> Self {
        self.config = self.config.session_resume_from(handle);
        self
    }

    /// The built-in Google Search tool.
    ///
    /// ```
    /// use reel_fluent::Live;
    /// let config = Live::builder().google_search().session_config().unwrap();
    /// assert!(config.setup().tools.as_ref().unwrap()[0].google_search.is_some());
    /// ```
    pub fn google_search(mut self) -> Self {
        self.config = self.config.google_search();
        self
    }

    /// The built-in code-execution tool.
    ///
    /// ```
    /// use reel_fluent::Live;
    /// let config = Live::builder().code_execution().session_config().unwrap();
    /// assert!(config.setup().tools.as_ref().unwrap()[0].code_execution.is_some());
    /// ```
    pub fn code_execution(mut self) -> Self {
        self.config = self.config.code_execution();
        self
    }

    /// The built-in URL-context tool.
    ///
    /// ```
    /// use reel_fluent::Live;
    /// let config = Live::builder().url_context().session_config().unwrap();
    /// assert!(config.setup().tools.as_ref().unwrap()[0].url_context.is_some());
    /// ```
    pub fn url_context(mut self) -> Self {
        self.config = self.config.url_context();
        self
    }

    /// Changes the [`SessionConfig`] directly, for setup fields the chain does not name
    /// (language, thinking budget, proactive audio, max output tokens, …).
    ///
    /// ```
    /// use reel_fluent::Live;
    /// let config = Live::builder()
    ///     .configure(|config| config.language("fr-FR").max_output_tokens(256))
    ///     .session_config()
    ///     .unwrap();
    /// let generation = config.setup().generation_config.as_ref().unwrap();
    /// assert_eq!(generation.max_output_tokens, Some(256));
    /// ```
    pub fn configure(mut self, f: impl FnOnce(SessionConfig) -> SessionConfig) -> Self {
        self.config = f(self.config);
        self
    }

    /// A user turn sent as soon as the server has accepted the setup, so the model speaks
    /// first. It is sent as the application (like `LiveHandle::send_text`): recorded, and
    /// in a replay taken from the recording rather than sent again. With phases that steer
    /// the conversation (modifiers, navigation, enter prompts, repair) it follows the
    /// initial phase's context (decision 0050).
    ///
    /// ```
    /// use reel_fluent::Live;
    /// let builder = Live::builder().text_only().greeting("Hello!");
    /// assert!(builder.validate().is_ok());
    /// ```
    pub fn greeting(mut self, text: impl Into<String>) -> Self {
        self.greeting = Some(text.into());
        self
    }

    fn edit_setup(mut self, edit: impl FnOnce(&mut Setup)) -> Self {
        let mut setup = self.config.setup().clone();
        edit(&mut setup);
        self.config = SessionConfig::from_setup(setup);
        self
    }
}
