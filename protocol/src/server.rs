//! Server → client frames.
//!
//! Unlike client frames, one server frame may carry several messages at once
//! (`serverContent` beside `usageMetadata`, for instance); every one of them is kept.

use serde_json::Value;

use crate::content::{Content, FunctionCall};
use crate::scalars::{Int64, ProtoDuration};
use crate::setup::Modality;
use crate::wire::{wire_enum, wire_struct};

wire_struct! {
    /// One server frame.
    pub struct ServerMessage {
        /// The setup was accepted; the session is live.
        setup_complete: SetupComplete = "setupComplete" | "setup_complete",
        /// Model output and turn signals.
        server_content: ServerContent = "serverContent" | "server_content",
        /// The model asks for function calls.
        tool_call: ToolCall = "toolCall" | "tool_call",
        /// Earlier function calls are no longer wanted.
        tool_call_cancellation: ToolCallCancellation = "toolCallCancellation" | "tool_call_cancellation",
        /// The server will end the connection soon.
        go_away: GoAway = "goAway" | "go_away",
        /// A new handle to resume this session with.
        session_resumption_update: SessionResumptionUpdate = "sessionResumptionUpdate" | "session_resumption_update",
        /// Token usage so far; rides on any frame.
        usage_metadata: UsageMetadata = "usageMetadata" | "usage_metadata",
        /// Voice activity of the user, when the server reports it.
        voice_activity: VoiceActivity = "voiceActivity" | "voice_activity",
        /// Explicit voice activity detection signal (Vertex, with `explicitVadSignal`).
        voice_activity_detection_signal: VoiceActivityDetectionSignal = "voiceActivityDetectionSignal" | "voice_activity_detection_signal",
    }
}

wire_struct! {
    /// `setupComplete`.
    pub struct SetupComplete {
        /// The server's id for the session, when it gives one.
        session_id: String = "sessionId" | "session_id",
        /// Voice-consent signature, for custom voices.
        voice_consent_signature: Value = "voiceConsentSignature" | "voice_consent_signature",
    }
}

wire_struct! {
    /// Model output and turn signals; any combination of fields may arrive in one frame.
    pub struct ServerContent {
        /// Model output: text, audio, thoughts.
        model_turn: Content = "modelTurn" | "model_turn",
        /// The model's turn is over.
        turn_complete: bool = "turnComplete" | "turn_complete",
        /// The model has finished generating (audio may still be playing).
        generation_complete: bool = "generationComplete" | "generation_complete",
        /// The user barged in: drop queued model audio.
        interrupted: bool = "interrupted",
        /// Transcription of the user's audio.
        input_transcription: Transcription = "inputTranscription" | "input_transcription",
        /// Transcription of the model's audio.
        output_transcription: Transcription = "outputTranscription" | "output_transcription",
        /// Search grounding for the turn.
        grounding_metadata: Value = "groundingMetadata" | "grounding_metadata",
        /// URL context retrieval for the turn.
        url_context_metadata: Value = "urlContextMetadata" | "url_context_metadata",
        /// Why the turn completed.
        turn_complete_reason: TurnCompleteReason = "turnCompleteReason" | "turn_complete_reason",
        /// The model waits for the user's input.
        waiting_for_input: bool = "waitingForInput" | "waiting_for_input",
        /// Low-latency transcription of the user, revised while they speak.
        interim_input_transcription: Transcription = "interimInputTranscription" | "interim_input_transcription",
        /// What the session is doing (`IN_PROGRESS`, `REQUIRES_ACTION`, `IDLE`).
        interaction_status: InteractionStatus = "interactionStatus" | "interaction_status",
    }
}

wire_struct! {
    /// A piece of transcription.
    pub struct Transcription {
        /// The transcribed text (a chunk; chunks concatenate).
        text: String = "text",
        /// This is the last chunk of the transcription.
        finished: bool = "finished",
        /// Detected language (BCP-47).
        language_code: String = "languageCode" | "language_code",
        /// Speaker label, with diarization.
        speaker_label: String = "speakerLabel" | "speaker_label",
        /// Word timings.
        words: Value = "words",
        /// Start of the chunk in the audio, a duration string.
        start_offset: String = "startOffset" | "start_offset",
        /// End of the chunk in the audio, a duration string.
        end_offset: String = "endOffset" | "end_offset",
    }
}

wire_enum! {
    /// What the session is doing.
    pub enum InteractionStatus {
        Unspecified = "INTERACTION_STATUS_UNSPECIFIED",
        /// The model is working on a response.
        InProgress = "IN_PROGRESS",
        /// The model waits for the client (a tool response, for instance).
        RequiresAction = "REQUIRES_ACTION",
        /// Nothing is going on.
        Idle = "IDLE",
    }
}

wire_enum! {
    /// Why a turn completed.
    pub enum TurnCompleteReason {
        Unspecified = "TURN_COMPLETE_REASON_UNSPECIFIED",
        /// The function call was malformed.
        MalformedFunctionCall = "MALFORMED_FUNCTION_CALL",
        /// The response was rejected.
        ResponseRejected = "RESPONSE_REJECTED",
        /// The model needs more input.
        NeedMoreInput = "NEED_MORE_INPUT",
    }
}

wire_struct! {
    /// Function calls the model asks for.
    pub struct ToolCall {
        /// The calls, each with its id.
        function_calls: Vec<FunctionCall> = "functionCalls" | "function_calls",
    }
}

wire_struct! {
    /// Function calls to cancel.
    pub struct ToolCallCancellation {
        /// Ids of the calls to cancel.
        ids: Vec<String> = "ids",
    }
}

wire_struct! {
    /// The server will close the connection.
    pub struct GoAway {
        /// Time left before it does.
        time_left: ProtoDuration = "timeLeft" | "time_left",
    }
}

wire_struct! {
    /// A new resumption handle.
    pub struct SessionResumptionUpdate {
        /// The handle to present on the next connect.
        new_handle: String = "newHandle" | "new_handle",
        /// Whether the session can be resumed at this point.
        resumable: bool = "resumable",
        /// Index of the last client message the server consumed.
        last_consumed_client_message_index: Int64 = "lastConsumedClientMessageIndex" | "last_consumed_client_message_index",
    }
}

wire_struct! {
    /// Token usage.
    pub struct UsageMetadata {
        /// Tokens in the prompt.
        prompt_token_count: i64 = "promptTokenCount" | "prompt_token_count",
        /// Tokens served from cache.
        cached_content_token_count: i64 = "cachedContentTokenCount" | "cached_content_token_count",
        /// Tokens in the response.
        response_token_count: i64 = "responseTokenCount" | "response_token_count",
        /// Tokens in tool-use prompts.
        tool_use_prompt_token_count: i64 = "toolUsePromptTokenCount" | "tool_use_prompt_token_count",
        /// Tokens spent thinking.
        thoughts_token_count: i64 = "thoughtsTokenCount" | "thoughts_token_count",
        /// All tokens.
        total_token_count: i64 = "totalTokenCount" | "total_token_count",
        /// Prompt tokens by modality.
        prompt_tokens_details: Vec<ModalityTokenCount> = "promptTokensDetails" | "prompt_tokens_details",
        /// Cached tokens by modality.
        cache_tokens_details: Vec<ModalityTokenCount> = "cacheTokensDetails" | "cache_tokens_details",
        /// Response tokens by modality.
        response_tokens_details: Vec<ModalityTokenCount> = "responseTokensDetails" | "response_tokens_details",
        /// Tool-use prompt tokens by modality.
        tool_use_prompt_tokens_details: Vec<ModalityTokenCount> = "toolUsePromptTokensDetails" | "tool_use_prompt_tokens_details",
        /// Traffic type (e.g. `ON_DEMAND`).
        traffic_type: String = "trafficType" | "traffic_type",
        /// Service tier.
        service_tier: String = "serviceTier" | "service_tier",
    }
}

wire_struct! {
    /// Tokens of one modality.
    pub struct ModalityTokenCount {
        /// Text, audio, image or video.
        modality: Modality = "modality",
        /// Tokens of that modality.
        token_count: i64 = "tokenCount" | "token_count",
    }
}

wire_struct! {
    /// The user's voice activity as the server sees it.
    pub struct VoiceActivity {
        /// Start or end of activity.
        /// Start or end of activity. The wire name is `type`; the SDKs' typings say
        /// `voiceActivityType`, so that is read too.
        voice_activity_type: VoiceActivityType = "type" | "voiceActivityType" | "voice_activity_type",
        /// Offset of the activity in the input audio.
        audio_offset: String = "audioOffset" | "audio_offset",
    }
}

wire_enum! {
    /// Voice activity transitions.
    pub enum VoiceActivityType {
        Unspecified = "TYPE_UNSPECIFIED",
        /// The user started speaking.
        ActivityStart = "ACTIVITY_START",
        /// The user stopped speaking.
        ActivityEnd = "ACTIVITY_END",
    }
}

wire_struct! {
    /// Explicit VAD signal.
    pub struct VoiceActivityDetectionSignal {
        /// Start or end of speech.
        vad_signal_type: VadSignalType = "vadSignalType" | "vad_signal_type",
    }
}

wire_enum! {
    /// Explicit VAD signal types.
    pub enum VadSignalType {
        Unspecified = "VAD_SIGNAL_TYPE_UNSPECIFIED",
        StartOfSpeech = "VAD_SIGNAL_TYPE_SOS",
        EndOfSpeech = "VAD_SIGNAL_TYPE_EOS",
    }
}
