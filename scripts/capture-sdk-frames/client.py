#!/usr/bin/env python3
"""Drive the official Python SDK (`google-genai`) through Live sessions against
the local capture server (server.py), so that the server records the frames the
SDK really sends.

Usage: client.py PORT      (the server must speak TLS: the SDK always uses wss://
                            when given an API key; trust its self-signed
                            certificate through SSL_CERT_FILE)

Session 1 (automatic activity detection on):
  setup (every config field the SDK offers that the Google AI API takes) ->
  client_content text turn -> tool call -> tool_response (WHEN_IDLE) ->
  context update -> realtime text -> realtime audio (2 chunks), deprecated
  media chunk, video frame -> audio_stream_end -> audio answer.
Session 2 (automatic activity detection off, resuming with the handle from 1):
  activity_start -> audio -> deprecated session.send() media -> activity_end ->
  audio answer.

Every wait is bounded; the script exits non-zero if the SDK did not see the
server's scripted answers.
"""

from __future__ import annotations

import asyncio
import json
import math
import struct
import sys
import warnings

from google import genai
from google.genai import types

API_KEY = "test-key-not-real"
MODEL = "gemini-live-2.5-flash-native-audio"
RECV_TIMEOUT = 10.0

# The deprecated session.send() is used on purpose (it produces a legacy wire form).
warnings.simplefilter("ignore", DeprecationWarning)


def pcm_tone(rate: int = 16000, ms: int = 100, freq: float = 440.0) -> bytes:
    """Deterministic PCM16LE mono sine tone."""
    n = rate * ms // 1000
    return struct.pack(
        f"<{n}h", *(int(8000 * math.sin(2 * math.pi * freq * i / rate)) for i in range(n))
    )


PCM = pcm_tone()                      # 100 ms at 16 kHz = 3200 bytes
AUDIO_MIME = "audio/pcm;rate=16000"
# Not a real picture: just the JPEG start/end markers, enough for a wire fixture.
JPEG_STUB = b"\xff\xd8\xff\xd9"


def supported(model_cls, **fields):
    """Keep only the fields this SDK version's model class has."""
    known = model_cls.model_fields
    dropped = [k for k in fields if k not in known]
    if dropped:
        print(f"[python] {model_cls.__name__} lacks {dropped}; not sent")
    return {k: v for k, v in fields.items() if k in known}


def enum(name: str, member: str):
    """types.<name>.<member> if this SDK version has it, else the plain string."""
    cls = getattr(types, name, None)
    return getattr(cls, member, member) if cls else member


def weather_tool() -> types.Tool:
    decl = supported(
        types.FunctionDeclaration,
        name="get_weather",
        description="Get the current weather for a city.",
        parameters=types.Schema(
            type=types.Type.OBJECT,
            properties={"city": types.Schema(type=types.Type.STRING, description="City name")},
            required=["city"],
        ),
        behavior=enum("Behavior", "NON_BLOCKING"),
    )
    return types.Tool(function_declarations=[types.FunctionDeclaration(**decl)])


def session1_config() -> types.LiveConnectConfig:
    fields = dict(
        response_modalities=[types.Modality.AUDIO],
        temperature=0.7,
        max_output_tokens=1024,
        media_resolution=enum("MediaResolution", "MEDIA_RESOLUTION_LOW"),
        speech_config=types.SpeechConfig(
            voice_config=types.VoiceConfig(
                prebuilt_voice_config=types.PrebuiltVoiceConfig(voice_name="Kore")
            ),
            language_code="en-US",
        ),
        thinking_config=types.ThinkingConfig(include_thoughts=True, thinking_budget=1024),
        enable_affective_dialog=True,
        system_instruction=types.Content(
            parts=[types.Part(text="You are a helpful assistant.")]
        ),
        tools=[weather_tool()],
        input_audio_transcription=types.AudioTranscriptionConfig(),
        output_audio_transcription=types.AudioTranscriptionConfig(),
        realtime_input_config=types.RealtimeInputConfig(
            automatic_activity_detection=types.AutomaticActivityDetection(
                disabled=False,
                start_of_speech_sensitivity=enum("StartSensitivity", "START_SENSITIVITY_LOW"),
                end_of_speech_sensitivity=enum("EndSensitivity", "END_SENSITIVITY_LOW"),
                prefix_padding_ms=20,
                silence_duration_ms=500,
            ),
            activity_handling=enum("ActivityHandling", "START_OF_ACTIVITY_INTERRUPTS"),
            turn_coverage=enum("TurnCoverage", "TURN_INCLUDES_ONLY_ACTIVITY"),
        ),
        session_resumption=types.SessionResumptionConfig(),
        context_window_compression=types.ContextWindowCompressionConfig(
            trigger_tokens=25600,
            sliding_window=types.SlidingWindow(target_tokens=12800),
        ),
    )
    if hasattr(types, "ProactivityConfig"):
        fields["proactivity"] = types.ProactivityConfig(proactive_audio=True)
    return types.LiveConnectConfig(**supported(types.LiveConnectConfig, **fields))


def session2_config(handle: str | None) -> types.LiveConnectConfig:
    return types.LiveConnectConfig(
        response_modalities=[types.Modality.AUDIO],
        realtime_input_config=types.RealtimeInputConfig(
            automatic_activity_detection=types.AutomaticActivityDetection(disabled=True)
        ),
        session_resumption=types.SessionResumptionConfig(handle=handle),
    )


async def receive_until(session, done, what: str) -> list[types.LiveServerMessage]:
    """Collect server messages until done(msg) is true, within RECV_TIMEOUT.

    session.receive() ends its iteration after each turnComplete, so it is
    re-entered until the wanted message has arrived.
    """

    async def collect():
        got = []
        while True:
            async for msg in session.receive():
                got.append(msg)
                if done(msg):
                    return got

    try:
        got = await asyncio.wait_for(collect(), RECV_TIMEOUT)
    except asyncio.TimeoutError:
        raise SystemExit(f"[python] timed out waiting for {what}")
    for msg in got:
        print("[python]   ->", json.dumps(msg.model_dump(exclude_none=True, mode="json")))
    return got


def turn_complete(msg: types.LiveServerMessage) -> bool:
    return bool(msg.server_content and msg.server_content.turn_complete)


async def session1(client: genai.Client) -> str | None:
    async with client.aio.live.connect(model=MODEL, config=session1_config()) as session:
        print("[python] session 1 open, setup_complete:", session.setup_complete)

        await session.send_client_content(
            turns=types.Content(role="user", parts=[types.Part(text="What's the weather in London?")]),
            turn_complete=True,
        )
        got = await receive_until(session, lambda m: m.tool_call is not None, "toolCall")
        call = got[-1].tool_call.function_calls[0]
        assert (call.id, call.name, call.args) == ("call-1", "get_weather", {"city": "London"}), call
        assert "".join(m.text or "" for m in got) == "Let me check the weather.", got

        response = supported(
            types.FunctionResponse,
            id=call.id,
            name=call.name,
            response={"temp_c": 21},
            will_continue=False,
            scheduling=enum("FunctionResponseScheduling", "WHEN_IDLE"),
        )
        await session.send_tool_response(function_responses=[types.FunctionResponse(**response)])
        got = await receive_until(
            session, lambda m: m.session_resumption_update is not None, "resumption update")
        assert any(m.usage_metadata and m.usage_metadata.total_token_count == 21 for m in got)
        handle = got[-1].session_resumption_update.new_handle

        if hasattr(session, "send_context_update"):
            await session.send_context_update(system_instruction="Answer briefly.")
        else:
            print("[python] this SDK has no send_context_update")

        await session.send_realtime_input(text="Hello from realtime text.")
        got = await receive_until(session, turn_complete, "text reply")
        assert "".join(m.text or "" for m in got) == "Got your text."

        half = len(PCM) // 2
        await session.send_realtime_input(audio=types.Blob(data=PCM[:half], mime_type=AUDIO_MIME))
        await session.send_realtime_input(audio=types.Blob(data=PCM[half:], mime_type=AUDIO_MIME))
        # `media` is the older spelling (wire: mediaChunks), still accepted by the SDK.
        await session.send_realtime_input(media=types.Blob(data=PCM[:320], mime_type=AUDIO_MIME))
        await session.send_realtime_input(video=types.Blob(data=JPEG_STUB, mime_type="image/jpeg"))
        await session.send_realtime_input(audio_stream_end=True)
        got = await receive_until(session, turn_complete, "audio reply")
        check_audio_turn(got)
    return handle


async def session2(client: genai.Client, handle: str | None) -> None:
    async with client.aio.live.connect(model=MODEL, config=session2_config(handle)) as session:
        print("[python] session 2 open (manual activity signals)")
        await session.send_realtime_input(activity_start=types.ActivityStart())
        await session.send_realtime_input(audio=types.Blob(data=PCM, mime_type=AUDIO_MIME))
        # The deprecated catch-all send(): a Blob becomes realtime_input.media_chunks.
        await session.send(input=types.Blob(data=PCM[:320], mime_type=AUDIO_MIME))
        await session.send_realtime_input(activity_end=types.ActivityEnd())
        got = await receive_until(session, turn_complete, "audio reply")
        check_audio_turn(got)


def check_audio_turn(got: list[types.LiveServerMessage]) -> None:
    audio = b"".join(m.data or b"" for m in got)
    assert len(audio) == 480, len(audio)
    sc = [m.server_content for m in got if m.server_content]
    assert any(c.input_transcription and c.input_transcription.text for c in sc)
    assert any(c.output_transcription and c.output_transcription.text == "It is sunny." for c in sc)
    assert any(c.generation_complete for c in sc)
    assert got[-1].usage_metadata.response_tokens_details[0].modality == types.MediaModality.AUDIO


async def main() -> None:
    port = int(sys.argv[1])
    # The trailing slash mirrors the SDK's own default base URL
    # ("https://generativelanguage.googleapis.com/"), so the request path is the
    # one the real service sees.
    client = genai.Client(
        api_key=API_KEY,
        http_options=types.HttpOptions(base_url=f"https://127.0.0.1:{port}/"),
    )
    handle = await session1(client)
    await session2(client, handle)
    print("[python] OK")


if __name__ == "__main__":
    asyncio.run(asyncio.wait_for(main(), 60))
