//! The `setup` message: the first frame of every session, fixing model, output, tools and
//! the session's server-side behaviour.

use serde_json::Value;

use crate::content::Content;
use crate::scalars::Int64Number;
use crate::wire::{wire_enum, wire_struct};

wire_struct! {
    /// The first client frame of a session.
    pub struct Setup {
        /// `models/NAME` (Google AI) or the full Vertex resource name.
        model: String = "model",
        /// Sampling, output modalities, voice, thinking.
        generation_config: GenerationConfig = "generationConfig" | "generation_config",
        /// The system instruction.
        system_instruction: Content = "systemInstruction" | "system_instruction",
        /// Tools the model may use.
        tools: Vec<Tool> = "tools",
        /// How tools are called (function-calling mode).
        tool_config: Value = "toolConfig" | "tool_config",
        /// Session resumption, optionally from a previous handle.
        session_resumption: SessionResumptionConfig = "sessionResumption" | "session_resumption",
        /// Transcribe the user's audio.
        input_audio_transcription: AudioTranscriptionConfig = "inputAudioTranscription" | "input_audio_transcription",
        /// Transcribe the model's audio.
        output_audio_transcription: AudioTranscriptionConfig = "outputAudioTranscription" | "output_audio_transcription",
        /// Voice activity detection and turn handling.
        realtime_input_config: RealtimeInputConfig = "realtimeInputConfig" | "realtime_input_config",
        /// Context-window compression.
        context_window_compression: ContextWindowCompression = "contextWindowCompression" | "context_window_compression",
        /// Proactive audio: the model may choose not to answer.
        proactivity: Proactivity = "proactivity",
        /// Vertex only: the server sends explicit VAD signals.
        explicit_vad_signal: bool = "explicitVadSignal" | "explicit_vad_signal",
        /// How earlier history is handled.
        history_config: Value = "historyConfig" | "history_config",
        /// Avatar output settings.
        avatar_config: Value = "avatarConfig" | "avatar_config",
        /// Safety settings.
        safety_settings: Value = "safetySettings" | "safety_settings",
        /// Billing labels.
        labels: Value = "labels",
    }
}

wire_struct! {
    /// Generation parameters.
    pub struct GenerationConfig {
        /// What the model answers with: `AUDIO` or `TEXT`.
        response_modalities: Vec<Modality> = "responseModalities" | "response_modalities",
        /// Sampling temperature.
        temperature: f64 = "temperature",
        /// Nucleus sampling.
        top_p: f64 = "topP" | "top_p",
        /// Top-k sampling.
        top_k: f64 = "topK" | "top_k",
        /// Candidates to generate (Live supports 1).
        candidate_count: i32 = "candidateCount" | "candidate_count",
        /// Output token cap.
        max_output_tokens: i32 = "maxOutputTokens" | "max_output_tokens",
        /// Presence penalty.
        presence_penalty: f64 = "presencePenalty" | "presence_penalty",
        /// Frequency penalty.
        frequency_penalty: f64 = "frequencyPenalty" | "frequency_penalty",
        /// Sampling seed.
        seed: i32 = "seed",
        /// Resolution of media input.
        media_resolution: MediaResolution = "mediaResolution" | "media_resolution",
        /// Voice and language of audio output.
        speech_config: SpeechConfig = "speechConfig" | "speech_config",
        /// Thinking budget and thought summaries (Google AI only).
        thinking_config: ThinkingConfig = "thinkingConfig" | "thinking_config",
        /// Affective dialog: the model adapts to the user's tone.
        enable_affective_dialog: bool = "enableAffectiveDialog" | "enable_affective_dialog",
        /// Speech translation settings.
        translation_config: Value = "translationConfig" | "translation_config",
    }
}

wire_enum! {
    /// An output or token modality.
    pub enum Modality {
        Unspecified = "MODALITY_UNSPECIFIED",
        Text = "TEXT",
        Audio = "AUDIO",
        /// Images.
        Image = "IMAGE",
        Video = "VIDEO",
        /// Documents.
        Document = "DOCUMENT",
    }
}

wire_enum! {
    /// Resolution at which media input is read.
    pub enum MediaResolution {
        Unspecified = "MEDIA_RESOLUTION_UNSPECIFIED",
        Low = "MEDIA_RESOLUTION_LOW",
        Medium = "MEDIA_RESOLUTION_MEDIUM",
        High = "MEDIA_RESOLUTION_HIGH",
    }
}

wire_struct! {
    /// Voice and language of audio output.
    pub struct SpeechConfig {
        /// The voice.
        voice_config: VoiceConfig = "voiceConfig" | "voice_config",
        /// BCP-47 language, e.g. `en-US`.
        language_code: String = "languageCode" | "language_code",
    }
}

wire_struct! {
    /// Which voice speaks.
    pub struct VoiceConfig {
        /// One of the prebuilt voices.
        prebuilt_voice_config: PrebuiltVoiceConfig = "prebuiltVoiceConfig" | "prebuilt_voice_config",
    }
}

wire_struct! {
    /// A prebuilt voice by name.
    pub struct PrebuiltVoiceConfig {
        /// e.g. `Kore`, `Puck`, `Charon`.
        voice_name: String = "voiceName" | "voice_name",
    }
}

wire_struct! {
    /// Thinking controls.
    pub struct ThinkingConfig {
        /// Send thought summaries as `thought` parts.
        include_thoughts: bool = "includeThoughts" | "include_thoughts",
        /// Token budget for thinking (0 disables, -1 dynamic).
        thinking_budget: i32 = "thinkingBudget" | "thinking_budget",
        /// Coarse thinking level, for models that take one.
        thinking_level: String = "thinkingLevel" | "thinking_level",
    }
}

wire_struct! {
    /// A tool offered to the model.
    pub struct Tool {
        /// Functions the client implements.
        function_declarations: Vec<FunctionDeclaration> = "functionDeclarations" | "function_declarations",
        /// Built-in Google Search (an empty object enables it).
        google_search: Value = "googleSearch" | "google_search",
        /// Built-in code execution (an empty object enables it).
        code_execution: Value = "codeExecution" | "code_execution",
        /// Built-in URL context (an empty object enables it).
        url_context: Value = "urlContext" | "url_context",
    }
}

wire_struct! {
    /// A function the model may call.
    pub struct FunctionDeclaration {
        /// Name, as the model will call it.
        name: String = "name",
        /// What it does, for the model.
        description: String = "description",
        /// Parameters as an OpenAPI-style schema.
        parameters: Value = "parameters",
        /// Parameters as JSON Schema (alternative to `parameters`).
        parameters_json_schema: Value = "parametersJsonSchema" | "parameters_json_schema",
        /// Result schema.
        response: Value = "response",
        /// Result as JSON Schema.
        response_json_schema: Value = "responseJsonSchema" | "response_json_schema",
        /// Blocking (default) or non-blocking (Google AI only).
        behavior: Behavior = "behavior",
    }
}

wire_enum! {
    /// Whether the model waits for a function's result.
    pub enum Behavior {
        /// Unspecified (blocking).
        Unspecified = "UNSPECIFIED",
        /// The model waits for the response.
        Blocking = "BLOCKING",
        /// The model keeps talking; the response arrives later.
        NonBlocking = "NON_BLOCKING",
    }
}

wire_struct! {
    /// Voice activity detection and turn handling.
    pub struct RealtimeInputConfig {
        /// Server-side voice activity detection.
        automatic_activity_detection: AutomaticActivityDetection = "automaticActivityDetection" | "automatic_activity_detection",
        /// What user activity does to a model turn in progress.
        activity_handling: ActivityHandling = "activityHandling" | "activity_handling",
        /// Which input counts towards the user's turn.
        turn_coverage: TurnCoverage = "turnCoverage" | "turn_coverage",
    }
}

wire_struct! {
    /// Server-side voice activity detection.
    pub struct AutomaticActivityDetection {
        /// Turn server VAD off; the client then sends `activityStart`/`activityEnd`.
        disabled: bool = "disabled",
        /// How readily speech start is detected.
        start_of_speech_sensitivity: StartSensitivity = "startOfSpeechSensitivity" | "start_of_speech_sensitivity",
        /// How readily speech end is detected.
        end_of_speech_sensitivity: EndSensitivity = "endOfSpeechSensitivity" | "end_of_speech_sensitivity",
        /// Audio kept before detected speech, in ms.
        prefix_padding_ms: i32 = "prefixPaddingMs" | "prefix_padding_ms",
        /// Silence that ends speech, in ms.
        silence_duration_ms: i32 = "silenceDurationMs" | "silence_duration_ms",
    }
}

wire_enum! {
    /// Start-of-speech sensitivity.
    pub enum StartSensitivity {
        Unspecified = "START_SENSITIVITY_UNSPECIFIED",
        High = "START_SENSITIVITY_HIGH",
        Low = "START_SENSITIVITY_LOW",
    }
}

wire_enum! {
    /// End-of-speech sensitivity.
    pub enum EndSensitivity {
        Unspecified = "END_SENSITIVITY_UNSPECIFIED",
        High = "END_SENSITIVITY_HIGH",
        Low = "END_SENSITIVITY_LOW",
    }
}

wire_enum! {
    /// What user activity does to a model turn in progress.
    pub enum ActivityHandling {
        /// Unspecified (interrupts).
        Unspecified = "ACTIVITY_HANDLING_UNSPECIFIED",
        /// Barge-in: the user interrupts the model.
        StartOfActivityInterrupts = "START_OF_ACTIVITY_INTERRUPTS",
        /// The model finishes its turn.
        NoInterruption = "NO_INTERRUPTION",
    }
}

wire_enum! {
    /// Which input counts towards the user's turn.
    pub enum TurnCoverage {
        Unspecified = "TURN_COVERAGE_UNSPECIFIED",
        /// Only input while the user is active.
        TurnIncludesOnlyActivity = "TURN_INCLUDES_ONLY_ACTIVITY",
        /// All input since the last turn.
        TurnIncludesAllInput = "TURN_INCLUDES_ALL_INPUT",
    }
}

wire_struct! {
    /// Session resumption.
    pub struct SessionResumptionConfig {
        /// The handle of the session to resume; absent for a new session.
        handle: String = "handle",
        /// Transparent resumption (Vertex).
        transparent: bool = "transparent",
    }
}

wire_struct! {
    /// Context-window compression.
    pub struct ContextWindowCompression {
        /// Context size, in tokens, that triggers compression.
        trigger_tokens: Int64Number = "triggerTokens" | "trigger_tokens",
        /// Compress with a sliding window.
        sliding_window: SlidingWindow = "slidingWindow" | "sliding_window",
    }
}

wire_struct! {
    /// Sliding-window compression.
    pub struct SlidingWindow {
        /// Tokens to keep after compression.
        target_tokens: Int64Number = "targetTokens" | "target_tokens",
    }
}

wire_struct! {
    /// Audio transcription settings (an empty object turns transcription on).
    pub struct AudioTranscriptionConfig {
        /// Languages to expect, BCP-47.
        language_codes: Vec<String> = "languageCodes" | "language_codes",
    }
}

wire_struct! {
    /// Proactivity settings.
    pub struct Proactivity {
        /// The model may decide not to answer input that is not meant for it.
        proactive_audio: bool = "proactiveAudio" | "proactive_audio",
    }
}
