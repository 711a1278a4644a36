//! [`SessionConfig`]: a builder for the setup frame.
//!
//! Equal configs give byte-identical setup frames: fields are written in a fixed order,
//! maps inside schemas are ordered by key, and function declarations are sorted by name,
//! so a dispatcher filled from a hash map cannot make two runs differ.

use serde_json::Value;

use crate::client::ClientMessage;
use crate::codec::encode;
use crate::command::CommandEncoder;
use crate::content::{Content, Part};
use crate::endpoint::Platform;
use crate::scalars::Int64Number;
use crate::setup::{
    AudioTranscriptionConfig, AutomaticActivityDetection, Behavior, ContextWindowCompression,
    FunctionDeclaration, GenerationConfig, Modality, PrebuiltVoiceConfig, Proactivity,
    RealtimeInputConfig, SessionResumptionConfig, Setup, SlidingWindow, SpeechConfig,
    ThinkingConfig, Tool, VoiceConfig,
};

/// The model used when none is named.
pub const DEFAULT_MODEL: &str = "gemini-live-2.5-flash-native-audio";

/// Everything the setup frame says, built step by step.
///
/// ```
/// use reel_protocol::{Platform, SessionConfig};
/// let config = SessionConfig::new("gemini-live-2.5-flash-native-audio")
///     .voice("Kore")
///     .system_instruction("You are a helpful assistant.")
///     .input_transcription()
///     .output_transcription();
/// let frame = config.setup_frame(&Platform::GoogleAi);
/// assert!(frame.starts_with(br#"{"setup":{"model":"models/gemini-live-2.5-flash-native-audio""#));
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct SessionConfig {
    setup: Setup,
}

impl Default for SessionConfig {
    fn default() -> Self {
        SessionConfig::new(DEFAULT_MODEL)
    }
}

impl SessionConfig {
    /// A config for `model` (bare name or resource name) answering with audio.
    pub fn new(model: impl Into<String>) -> Self {
        SessionConfig {
            setup: Setup {
                model: Some(model.into()),
                generation_config: Some(GenerationConfig {
                    response_modalities: Some(vec![Modality::Audio]),
                    ..GenerationConfig::default()
                }),
                ..Setup::default()
            },
        }
    }

    /// A config that starts from a setup message as it is (a recorded one, for instance).
    pub fn from_setup(setup: Setup) -> Self {
        SessionConfig { setup }
    }

    /// The model as given (not yet a resource name).
    pub fn model_name(&self) -> &str {
        self.setup.model.as_deref().unwrap_or(DEFAULT_MODEL)
    }

    fn generation(&mut self) -> &mut GenerationConfig {
        self.setup
            .generation_config
            .get_or_insert_with(Default::default)
    }

    fn realtime(&mut self) -> &mut RealtimeInputConfig {
        self.setup
            .realtime_input_config
            .get_or_insert_with(Default::default)
    }

    /// Sets the model.
    pub fn model(mut self, model: impl Into<String>) -> Self {
        self.setup.model = Some(model.into());
        self
    }

    /// Sets the prebuilt voice (`Kore`, `Puck`, `Charon`, …).
    pub fn voice(mut self, voice: impl Into<String>) -> Self {
        let speech = self
            .generation()
            .speech_config
            .get_or_insert_with(Default::default);
        speech.voice_config = Some(VoiceConfig {
            prebuilt_voice_config: Some(PrebuiltVoiceConfig {
                voice_name: Some(voice.into()),
                ..Default::default()
            }),
            ..Default::default()
        });
        self
    }

    /// Sets the output language (BCP-47).
    pub fn language(mut self, language_code: impl Into<String>) -> Self {
        let speech: &mut SpeechConfig = self
            .generation()
            .speech_config
            .get_or_insert_with(Default::default);
        speech.language_code = Some(language_code.into());
        self
    }

    /// Sets the response modalities.
    pub fn response_modalities(mut self, modalities: Vec<Modality>) -> Self {
        self.generation().response_modalities = Some(modalities);
        self
    }

    /// Answers with text instead of audio.
    pub fn text_only(self) -> Self {
        self.response_modalities(vec![Modality::Text])
    }

    /// Sets the system instruction.
    pub fn system_instruction(mut self, instruction: impl Into<String>) -> Self {
        self.setup.system_instruction = Some(Content {
            parts: Some(vec![Part::text(instruction)]),
            ..Content::default()
        });
        self
    }

    /// Sets the sampling temperature.
    pub fn temperature(mut self, temperature: f64) -> Self {
        self.generation().temperature = Some(temperature);
        self
    }

    /// Caps output tokens.
    pub fn max_output_tokens(mut self, tokens: i32) -> Self {
        self.generation().max_output_tokens = Some(tokens);
        self
    }

    /// Sets the thinking budget in tokens (Google AI only; stripped on Vertex).
    pub fn thinking_budget(mut self, tokens: i32) -> Self {
        let thinking: &mut ThinkingConfig = self
            .generation()
            .thinking_config
            .get_or_insert_with(Default::default);
        thinking.thinking_budget = Some(tokens);
        self
    }

    /// Asks for thought summaries (Google AI only; stripped on Vertex).
    pub fn include_thoughts(mut self) -> Self {
        let thinking = self
            .generation()
            .thinking_config
            .get_or_insert_with(Default::default);
        thinking.include_thoughts = Some(true);
        self
    }

    /// Turns affective dialog on or off.
    pub fn affective_dialog(mut self, enabled: bool) -> Self {
        self.generation().enable_affective_dialog = Some(enabled);
        self
    }

    /// Declares a function. Declarations are written sorted by name.
    pub fn function(mut self, declaration: FunctionDeclaration) -> Self {
        let tool = self.function_tool();
        tool.function_declarations
            .get_or_insert_with(Vec::new)
            .push(declaration);
        self
    }

    /// Declares a function from its parts; `parameters` is a JSON schema object.
    pub fn add_function(
        self,
        name: impl Into<String>,
        description: impl Into<String>,
        parameters: Option<Value>,
    ) -> Self {
        self.function(FunctionDeclaration {
            name: Some(name.into()),
            description: Some(description.into()),
            parameters,
            ..FunctionDeclaration::default()
        })
    }

    /// Marks the declared function `name` non-blocking: the model keeps talking while it
    /// runs (Google AI only; stripped on Vertex). Returns the config unchanged if no such
    /// function is declared.
    pub fn non_blocking(mut self, name: &str) -> Self {
        for tool in self.setup.tools.iter_mut().flatten() {
            for declaration in tool.function_declarations.iter_mut().flatten() {
                if declaration.name.as_deref() == Some(name) {
                    declaration.behavior = Some(Behavior::NonBlocking);
                }
            }
        }
        self
    }

    /// The names of the declared functions, sorted.
    pub fn function_names(&self) -> Vec<&str> {
        let mut names: Vec<&str> = self
            .setup
            .tools
            .iter()
            .flatten()
            .flat_map(|tool| tool.function_declarations.iter().flatten())
            .filter_map(|d| d.name.as_deref())
            .collect();
        names.sort_unstable();
        names
    }

    fn function_tool(&mut self) -> &mut Tool {
        let tools = self.setup.tools.get_or_insert_with(Vec::new);
        let index = match tools.iter().position(|t| t.function_declarations.is_some()) {
            Some(index) => index,
            None => {
                tools.push(Tool {
                    function_declarations: Some(Vec::new()),
                    ..Tool::default()
                });
                tools.len() - 1
            }
        };
        &mut tools[index]
    }

    fn builtin(mut self, set: impl FnOnce(&mut Tool)) -> Self {
        let mut tool = Tool::default();
        set(&mut tool);
        self.setup.tools.get_or_insert_with(Vec::new).push(tool);
        self
    }

    /// Enables the built-in Google Search tool.
    pub fn google_search(self) -> Self {
        self.builtin(|t| t.google_search = Some(Value::Object(Default::default())))
    }

    /// Enables the built-in code-execution tool.
    pub fn code_execution(self) -> Self {
        self.builtin(|t| t.code_execution = Some(Value::Object(Default::default())))
    }

    /// Enables the built-in URL-context tool.
    pub fn url_context(self) -> Self {
        self.builtin(|t| t.url_context = Some(Value::Object(Default::default())))
    }

    /// Transcribes the user's audio.
    pub fn input_transcription(mut self) -> Self {
        self.setup.input_audio_transcription = Some(AudioTranscriptionConfig::default());
        self
    }

    /// Transcribes the model's audio.
    pub fn output_transcription(mut self) -> Self {
        self.setup.output_audio_transcription = Some(AudioTranscriptionConfig::default());
        self
    }

    /// Configures server-side voice activity detection.
    pub fn vad(mut self, detection: AutomaticActivityDetection) -> Self {
        self.realtime().automatic_activity_detection = Some(detection);
        self
    }

    /// Turns server-side voice activity detection off: the application sends
    /// `activityStart` / `activityEnd` itself.
    pub fn manual_activity_detection(self) -> Self {
        self.vad(AutomaticActivityDetection {
            disabled: Some(true),
            ..AutomaticActivityDetection::default()
        })
    }

    /// Whether server-side activity detection is on (it is unless disabled).
    pub fn server_vad(&self) -> bool {
        let disabled = self
            .setup
            .realtime_input_config
            .as_ref()
            .and_then(|r| r.automatic_activity_detection.as_ref())
            .and_then(|a| a.disabled);
        disabled != Some(true)
    }

    /// Asks the server for resumption handles (`true`) or not (`false`).
    pub fn session_resume(mut self, enabled: bool) -> Self {
        self.setup.session_resumption = enabled.then(SessionResumptionConfig::default);
        self
    }

    /// Resumes the session that issued `handle`.
    pub fn session_resume_from(mut self, handle: impl Into<String>) -> Self {
        self.setup.session_resumption = Some(SessionResumptionConfig {
            handle: Some(handle.into()),
            ..SessionResumptionConfig::default()
        });
        self
    }

    /// Compresses the context with a sliding window: at `trigger_tokens`, down to
    /// `target_tokens`.
    pub fn context_compression(mut self, trigger_tokens: i64, target_tokens: i64) -> Self {
        self.setup.context_window_compression = Some(ContextWindowCompression {
            trigger_tokens: Some(Int64Number(trigger_tokens)),
            sliding_window: Some(SlidingWindow {
                target_tokens: Some(Int64Number(target_tokens)),
                ..SlidingWindow::default()
            }),
            ..ContextWindowCompression::default()
        });
        self
    }

    /// Lets the model stay silent when input is not meant for it.
    pub fn proactive_audio(mut self, enabled: bool) -> Self {
        self.setup.proactivity = Some(Proactivity {
            proactive_audio: Some(enabled),
            ..Proactivity::default()
        });
        self
    }

    /// The setup message for `platform`: the model as a resource name, function
    /// declarations sorted by name, and on Vertex without what Vertex rejects
    /// (`thinkingConfig`, function `behavior`).
    pub fn to_setup(&self, platform: &Platform) -> Setup {
        let mut setup = self.setup.clone();
        setup.model = Some(platform.model_resource(self.model_name()));
        for tool in setup.tools.iter_mut().flatten() {
            if let Some(declarations) = &mut tool.function_declarations {
                declarations.sort_by(|a, b| a.name.cmp(&b.name));
                if !platform.supports_async_tools() {
                    for declaration in declarations {
                        declaration.behavior = None;
                    }
                }
            }
        }
        if !platform.supports_thinking()
            && let Some(generation) = &mut setup.generation_config
        {
            generation.thinking_config = None;
        }
        setup
    }

    /// The setup frame's bytes for `platform`.
    pub fn setup_frame(&self, platform: &Platform) -> Vec<u8> {
        encode(&ClientMessage::setup(self.to_setup(platform)))
    }

    /// The encoder for this session's commands on `platform`.
    pub fn command_encoder(&self, platform: &Platform) -> CommandEncoder {
        CommandEncoder {
            platform: platform.clone(),
            automatic_activity_detection: self.server_vad(),
        }
    }

    /// The setup as configured (before platform adjustments).
    pub fn setup(&self) -> &Setup {
        &self.setup
    }
}
