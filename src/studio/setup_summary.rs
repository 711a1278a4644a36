//! The setup of a call in a few fields, for the top of the studio's call view: the model,
//! the voice, the system instruction, the tools, the response modalities.

use reel_protocol::Setup;
use serde::Serialize;
use serde_json::Value;

/// What a call's `setup` asked for.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct SetupSummary {
    /// The model.
    pub model: Option<String>,
    /// The prebuilt voice (`speechConfig.voiceConfig.prebuiltVoiceConfig.voiceName`).
    pub voice: Option<String>,
    /// The system instruction's text parts, joined.
    pub instruction: Option<String>,
    /// The declared functions by name, then the built-in tools (`googleSearch`,
    /// `codeExecution`, `urlContext`).
    pub tools: Vec<String>,
    /// The response modalities (`AUDIO`, `TEXT`); empty when the setup names none.
    pub modalities: Vec<String>,
}

impl SetupSummary {
    /// The summary of `setup`.
    pub fn of(setup: &Setup) -> Self {
        let config = setup.generation_config.as_ref();
        let voice = config
            .and_then(|c| c.speech_config.as_ref())
            .and_then(|s| s.voice_config.as_ref())
            .and_then(|v| v.prebuilt_voice_config.as_ref())
            .and_then(|p| p.voice_name.clone());
        let instruction: String = setup
            .system_instruction
            .iter()
            .flat_map(|content| content.parts.iter().flatten())
            .filter_map(|part| part.text.as_deref())
            .collect::<Vec<_>>()
            .join("\n");
        let mut tools = Vec::new();
        for tool in setup.tools.iter().flatten() {
            tools.extend(
                tool.function_declarations
                    .iter()
                    .flatten()
                    .filter_map(|declaration| declaration.name.clone()),
            );
            for (present, name) in [
                (tool.google_search.is_some(), "googleSearch"),
                (tool.code_execution.is_some(), "codeExecution"),
                (tool.url_context.is_some(), "urlContext"),
            ] {
                if present {
                    tools.push(name.to_owned());
                }
            }
        }
        let modalities = config
            .and_then(|c| c.response_modalities.as_ref())
            .into_iter()
            .flatten()
            .filter_map(|modality| match serde_json::to_value(modality) {
                Ok(Value::String(name)) => Some(name),
                _ => None,
            })
            .collect();
        SetupSummary {
            model: setup.model.clone(),
            voice,
            instruction: (!instruction.is_empty()).then_some(instruction),
            tools,
            modalities,
        }
    }
}
