#!/usr/bin/env python3
"""A Python SDK (google-genai) Live session through reel's recording proxy: one text turn.

Usage: SSL_CERT_FILE=CERT python proxy_client.py BASE_URL
       (BASE_URL is what `cargo run --example proxy` prints, e.g. https://127.0.0.1:9443/)

The SDK talks to the proxy exactly as it would to the API; the proxy forwards every frame
to its upstream with its own credential (the key below never leaves this machine) and
records the session as a reel wire log.
"""

import asyncio
import sys

from google import genai
from google.genai import types

MODEL = "gemini-live-2.5-flash-preview"
QUESTION = "In one sentence: what is a tape recorder?"


async def main(base_url: str) -> None:
    client = genai.Client(
        api_key="not-a-real-key-the-proxy-has-its-own",
        http_options=types.HttpOptions(base_url=base_url),
    )
    config = types.LiveConnectConfig(
        response_modalities=["TEXT"],
        # A Content, not a plain string: given a string, the SDK adds "role": "user".
        system_instruction=types.Content(parts=[types.Part(text="Answer in one short sentence.")]),
    )
    async with client.aio.live.connect(model=MODEL, config=config) as session:
        await session.send_client_content(
            turns=types.Content(role="user", parts=[types.Part(text=QUESTION)]),
            turn_complete=True,
        )
        answer = ""
        async for message in session.receive():
            content = message.server_content
            if content and content.model_turn:
                answer += "".join(part.text or "" for part in content.model_turn.parts)
            if content and content.turn_complete:
                break
    print(answer)


if __name__ == "__main__":
    asyncio.run(asyncio.wait_for(main(sys.argv[1]), 30))
