//! [`UserInput`]: the user's realtime input — audio, video frames, streamed text and the
//! activity signals — the same whether it is read from a command about to be sent or from
//! a recorded frame.
//!
//! A live session knows what the application sent as a [`SessionCommand`]; a replay only
//! has the recorded `realtimeInput` frame. Both sides go through this module, so a tool
//! that consumes the user's input sees the same items live and in a replay.

use bytes::Bytes;

use crate::client::{ClientMessage, RealtimeInput};
use crate::command::SessionCommand;

/// One piece of the user's realtime input.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum UserInput {
    /// Audio: PCM16LE mono samples at 16 kHz.
    Audio(Bytes),
    /// A video frame (JPEG bytes).
    Video(Bytes),
    /// Text streamed like speech (`realtimeInput.text`).
    Text(String),
    /// The user started speaking (sent only with server VAD off).
    ActivityStart,
    /// The user stopped speaking (sent only with server VAD off).
    ActivityEnd,
    /// The audio stream paused.
    AudioStreamEnd,
}

impl UserInput {
    /// The input a command carries, if it is realtime input: turns of client content and
    /// tool responses are not.
    pub fn of_command(command: &SessionCommand) -> Option<UserInput> {
        Some(match command {
            SessionCommand::SendAudio(pcm) => UserInput::Audio(pcm.clone()),
            SessionCommand::SendVideo(jpeg) => UserInput::Video(jpeg.clone()),
            SessionCommand::SendRealtimeText(text) => UserInput::Text(text.clone()),
            SessionCommand::ActivityStart => UserInput::ActivityStart,
            SessionCommand::ActivityEnd => UserInput::ActivityEnd,
            SessionCommand::AudioStreamEnd => UserInput::AudioStreamEnd,
            _ => return None,
        })
    }

    /// The inputs of a frame, in the order they take effect: the start of activity, the
    /// media (the deprecated `mediaChunks` list first, by MIME type: `image/` and `video/`
    /// are video, anything else audio), the text, then the end of activity and of the
    /// audio stream.
    ///
    /// ```
    /// use reel_protocol::{CommandEncoder, SessionCommand, UserInput, decode_client, encode};
    ///
    /// let command = SessionCommand::SendAudio(vec![1, 0, 2, 0].into());
    /// let frame = CommandEncoder::default().to_message(&command).unwrap();
    /// let recorded = decode_client(&encode(&frame))?;
    /// assert_eq!(UserInput::of_message(&recorded), [UserInput::of_command(&command).unwrap()]);
    /// # Ok::<(), reel_protocol::DecodeError>(())
    /// ```
    pub fn of_message(message: &ClientMessage) -> Vec<UserInput> {
        message
            .realtime_input
            .as_ref()
            .map(UserInput::of_realtime)
            .unwrap_or_default()
    }

    fn of_realtime(input: &RealtimeInput) -> Vec<UserInput> {
        let mut inputs = Vec::new();
        if input.activity_start.is_some() {
            inputs.push(UserInput::ActivityStart);
        }
        for chunk in input.media_chunks.iter().flatten() {
            let data = chunk.data.clone().unwrap_or_default().0;
            let mime = chunk.mime_type.as_deref().unwrap_or_default();
            inputs.push(
                if mime.starts_with("image/") || mime.starts_with("video/") {
                    UserInput::Video(data)
                } else {
                    UserInput::Audio(data)
                },
            );
        }
        if let Some(audio) = &input.audio {
            inputs.push(UserInput::Audio(audio.data.clone().unwrap_or_default().0));
        }
        if let Some(video) = &input.video {
            inputs.push(UserInput::Video(video.data.clone().unwrap_or_default().0));
        }
        if let Some(text) = &input.text {
            inputs.push(UserInput::Text(text.clone()));
        }
        if input.activity_end.is_some() {
            inputs.push(UserInput::ActivityEnd);
        }
        if input.audio_stream_end == Some(true) {
            inputs.push(UserInput::AudioStreamEnd);
        }
        inputs
    }

    /// A short, stable name of the kind (`audio`, `video`, `text`, `activity_start`,
    /// `activity_end`, `audio_stream_end`).
    pub fn kind(&self) -> &'static str {
        match self {
            UserInput::Audio(_) => "audio",
            UserInput::Video(_) => "video",
            UserInput::Text(_) => "text",
            UserInput::ActivityStart => "activity_start",
            UserInput::ActivityEnd => "activity_end",
            UserInput::AudioStreamEnd => "audio_stream_end",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{CommandEncoder, decode_client, encode};

    /// Every command's input, read back from the frame it becomes, is the input itself:
    /// what a live session hands a tool is what its replay hands it.
    #[test]
    fn a_command_and_its_recorded_frame_carry_the_same_input() {
        let encoder = CommandEncoder {
            automatic_activity_detection: false,
            ..CommandEncoder::default()
        };
        let commands = [
            SessionCommand::SendAudio(Bytes::from_static(&[1, 2, 3, 4, 5])),
            SessionCommand::SendAudio(Bytes::new()),
            SessionCommand::SendVideo(Bytes::from_static(b"\xff\xd8jpeg")),
            SessionCommand::SendRealtimeText("two tickets".into()),
            SessionCommand::ActivityStart,
            SessionCommand::ActivityEnd,
            SessionCommand::AudioStreamEnd,
        ];
        for command in commands {
            let bytes = encoder.encode(&command).unwrap();
            let recorded = decode_client(&bytes).unwrap();
            assert_eq!(
                UserInput::of_message(&recorded),
                vec![UserInput::of_command(&command).unwrap()],
                "{command:?}"
            );
        }
    }

    #[test]
    fn turns_and_tool_responses_are_not_realtime_input() {
        let encoder = CommandEncoder::default();
        for command in [
            SessionCommand::SendText("hello".into()),
            SessionCommand::SendToolResponse(Vec::new()),
            SessionCommand::UpdateInstruction("be brief".into()),
        ] {
            assert_eq!(UserInput::of_command(&command), None);
            let message = encoder.to_message(&command).unwrap();
            assert_eq!(UserInput::of_message(&message), vec![], "{command:?}");
        }
    }

    #[test]
    fn a_frame_with_several_inputs_gives_them_in_the_order_they_take_effect() {
        let frame = br#"{"realtimeInput":{"activityEnd":{},"text":"hi","activityStart":{},
            "mediaChunks":[{"mimeType":"image/jpeg","data":"AQ=="},{"mimeType":"audio/pcm","data":"Ag=="}],
            "audio":{"mimeType":"audio/pcm;rate=16000","data":"Aw=="},"audioStreamEnd":true}}"#;
        let message = decode_client(frame).unwrap();
        assert_eq!(
            UserInput::of_message(&message),
            [
                UserInput::ActivityStart,
                UserInput::Video(Bytes::from_static(&[1])),
                UserInput::Audio(Bytes::from_static(&[2])),
                UserInput::Audio(Bytes::from_static(&[3])),
                UserInput::Text("hi".into()),
                UserInput::ActivityEnd,
                UserInput::AudioStreamEnd,
            ]
        );
        let kinds: Vec<_> = UserInput::of_message(&message)
            .iter()
            .map(UserInput::kind)
            .collect();
        assert_eq!(
            kinds,
            [
                "activity_start",
                "video",
                "audio",
                "audio",
                "text",
                "activity_end",
                "audio_stream_end"
            ]
        );
        // The round trip through `encode` keeps them.
        assert_eq!(
            UserInput::of_message(&decode_client(&encode(&message)).unwrap()).len(),
            7
        );
    }
}
