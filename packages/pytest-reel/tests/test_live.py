"""The plugin against the real google-genai SDK: Live sessions through `reel serve`.

reel's `cargo test` runs this file three times (tests/it/sdk_test_helpers.rs): in `once` mode
through a stand-in API, which records each test's tape; then with `CI=true` and no reachable
API, which replays them; then with a changed prompt, which must fail on the tape (except for
the test whose marker makes its server ignore the prompt's text). The
environment says what each run expects: `REEL_EXPECT` (`recorded` or `replayed`) and
`REEL_PROMPT` (the user's text).
"""

from __future__ import annotations

import asyncio
import os

import pytest
from google.genai import types

MODEL = "gemini-live-2.5-flash"
PROMPT = os.environ.get("REEL_PROMPT", "What's the weather in Paris?")
EXPECT = os.environ.get("REEL_EXPECT", "replayed")


async def one_turn(client) -> str:
    """Opens a Live session, sends the prompt, returns the model's text for the turn."""
    config = types.LiveConnectConfig(response_modalities=[types.Modality.TEXT])
    async with client.aio.live.connect(model=MODEL, config=config) as session:
        await session.send_client_content(
            turns=types.Content(role="user", parts=[types.Part(text=PROMPT)]),
            turn_complete=True,
        )
        text = ""
        async for message in session.receive():
            if message.text:
                text += message.text
            if message.server_content and message.server_content.turn_complete:
                break
    return text


def test_a_text_turn(reel_server):
    text = asyncio.run(asyncio.wait_for(one_turn(reel_server.client()), 30))
    assert text == "Sunny in Paris."
    [report] = reel_server.wait_for_reports(1)
    assert report["outcome"] == EXPECT, report
    assert report["test"] == "test_a_text_turn"


def test_live_and_generate_content(reel_server):
    """A test that opens a Live session and calls generateContent: one server for both."""
    client = reel_server.client()

    async def both() -> tuple:
        spoken = await one_turn(client)
        summary = await client.aio.models.generate_content(
            model="gemini-2.5-flash", contents="Summarize the weather in one sentence."
        )
        return spoken, summary.text

    assert asyncio.run(asyncio.wait_for(both(), 30)) == ("Sunny in Paris.", "It is sunny.")
    outcomes = sorted(r["outcome"] for r in reel_server.wait_for_reports(2))
    assert outcomes == sorted([EXPECT, "rest_" + EXPECT]), outcomes


def test_two_sessions_in_one_test(reel_server):
    async def both() -> list:
        return [await one_turn(reel_server.client()), await one_turn(reel_server.client())]

    assert asyncio.run(asyncio.wait_for(both(), 30)) == ["Sunny in Paris."] * 2
    reports = reel_server.wait_for_reports(2)
    assert [r["outcome"] for r in reports] == [EXPECT, EXPECT], reports
    if EXPECT == "recorded":
        files = sorted(os.path.basename(r["recording"]) for r in reports)
        assert files == [
            "test_two_sessions_in_one_test.2.wire.jsonl",
            "test_two_sessions_in_one_test.wire.jsonl",
        ]


@pytest.mark.reel(match="loose", rules="rules/any_prompt.json")
def test_a_marker_that_ignores_the_prompt(reel_server):
    """Its own server matches loosely, ignoring the user's text: any prompt replays."""
    text = asyncio.run(asyncio.wait_for(one_turn(reel_server.client()), 30))
    assert text == "Sunny in Paris."
    [report] = reel_server.wait_for_reports(1)
    assert report["outcome"] == EXPECT, report


@pytest.mark.reel(redact="rules/hide_prompt.json", rules="rules/any_prompt.json")
def test_a_marker_that_redacts_the_prompt(reel_server):
    """Its tape keeps "(redacted)" for the user's text; it replays by ignoring the text."""
    text = asyncio.run(asyncio.wait_for(one_turn(reel_server.client()), 30))
    assert text == "Sunny in Paris."
    [report] = reel_server.wait_for_reports(1)
    assert report["outcome"] == EXPECT, report


@pytest.mark.reel(record_mode="none")
def test_a_marker_in_vcrpy_words(reel_server):
    """`record_mode="none"` is reel's replay: a server of its own that never records."""
    assert reel_server.server.mode == "replay"
