#!/usr/bin/env python3
"""A scripted stand-in for the Gemini Live (Google AI) WebSocket endpoint.

It records every client frame exactly as received and answers with a fixed
script of server frames in the real wire protocol, so that an official SDK
session runs to its end against it.  When the expected number of connections
has closed (or a deadline passes) it writes the fixtures:

    OUT/NN-<topLevelKey>.json   the exact bytes of client frame NN
    OUT/manifest.json           SDK name/version, request path/query/headers,
                                and per frame: file, ws frame type, replies

Reply script (keys are read case-insensitively: snake_case == lowerCamelCase):

    setup                        -> setupComplete
    clientContent (1st)          -> serverContent(modelTurn text parts),
                                    serverContent(turnComplete), toolCall
    clientContent (later)        -> serverContent(modelTurn text + turnComplete)
    toolResponse                 -> serverContent(modelTurn text),
                                    serverContent(turnComplete) + usageMetadata,
                                    sessionResumptionUpdate
    realtimeInput.text           -> serverContent(modelTurn text + turnComplete)
    realtimeInput audio/media/video, activityStart, contextUpdate -> nothing
    realtimeInput.audioStreamEnd / activityEnd, or a quiet gap after audio
                                 -> inputTranscription, output audio inlineData,
                                    outputTranscription, generationComplete,
                                    turnComplete + usageMetadata

Everything is bounded: an idle timeout per connection and a global deadline.
Requires the `websockets` package (asyncio API, version 13 or newer).
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import http
import json
import math
import re
import ssl
import struct
import sys
import urllib.parse
from pathlib import Path

from websockets.asyncio.server import ServerConnection, serve
from websockets.exceptions import ConnectionClosed

# Accepted request path: the Google AI Live method, any API version, with one
# or more leading slashes (the JS SDK joins "ws://host:port/" + "/ws/..." and so
# sends "//ws/...").
PATH_RE = re.compile(
    r"^/+ws/google\.ai\.generativelanguage\.[a-z0-9]+\.GenerativeService\."
    r"BidiGenerateContent(Constrained)?$"
)

# Query parameters and headers whose values are secrets.
SECRET_QUERY = {"key", "access_token"}
SECRET_HEADERS = {"x-goog-api-key", "authorization"}
# Headers that change from run to run (or are plain WebSocket handshake) and
# so are left out of the manifest.
VOLATILE_HEADERS = {
    "host",
    "sec-websocket-key",
    "sec-websocket-version",
    "sec-websocket-extensions",
    "connection",
    "upgrade",
}

# Keys whose values are free-form user data (maps keyed by user names); their
# keys are not protocol field names and are skipped by the casing report.
USER_DATA_KEYS = {"args", "response", "properties", "labels"}


def pcm_tone_b64(rate: int, ms: int, freq: float = 440.0) -> str:
    """A deterministic PCM16LE mono sine tone, base64 encoded."""
    n = rate * ms // 1000
    samples = (int(8000 * math.sin(2 * math.pi * freq * i / rate)) for i in range(n))
    return base64.b64encode(struct.pack(f"<{n}h", *samples)).decode("ascii")


# 10 ms of 24 kHz output audio (480 bytes of PCM).
OUTPUT_AUDIO_B64 = pcm_tone_b64(24000, 10)

USAGE_TEXT = {
    "promptTokenCount": 12,
    "responseTokenCount": 9,
    "totalTokenCount": 21,
    "promptTokensDetails": [{"modality": "TEXT", "tokenCount": 12}],
    "responseTokensDetails": [{"modality": "TEXT", "tokenCount": 9}],
}
USAGE_AUDIO = {
    "promptTokenCount": 40,
    "responseTokenCount": 25,
    "totalTokenCount": 65,
    "promptTokensDetails": [
        {"modality": "TEXT", "tokenCount": 37},
        {"modality": "AUDIO", "tokenCount": 3},
    ],
    "responseTokensDetails": [{"modality": "AUDIO", "tokenCount": 25}],
}


def snake_to_camel(key: str) -> str:
    head, *rest = key.split("_")
    return head + "".join(p[:1].upper() + p[1:] for p in rest)


def camel_get(obj: dict, camel: str):
    """Look a key up in either its lowerCamelCase or its snake_case spelling."""
    for key, value in obj.items():
        if snake_to_camel(key) == camel:
            return value
    return None


def snake_case_paths(value, path: str = "") -> list[str]:
    """JSON paths of all object keys that contain an underscore."""
    found: list[str] = []
    if isinstance(value, dict):
        for key, child in value.items():
            child_path = f"{path}.{key}" if path else key
            if "_" in key:
                found.append(child_path)
            if key not in USER_DATA_KEYS:
                found.extend(snake_case_paths(child, child_path))
    elif isinstance(value, list):
        for i, child in enumerate(value):
            found.extend(snake_case_paths(child, f"{path}[{i}]"))
    return found


class Connection:
    """Per-connection script state."""

    def __init__(self, index: int):
        self.index = index
        self.client_content_seen = 0
        self.audio_pending = False


class Recorder:
    def __init__(self, args: argparse.Namespace):
        self.args = args
        self.frames: list[dict] = []
        self.connections: list[dict] = []
        self.closed = 0
        self.all_done = asyncio.Event()

    # ---- the reply script -------------------------------------------------

    def replies_for(self, conn: Connection, msg) -> list[dict]:
        if not isinstance(msg, dict) or len(msg) != 1:
            return []
        (key, body), = msg.items()
        kind = snake_to_camel(key)
        body = body if isinstance(body, dict) else {}

        if kind == "setup":
            return [{"setupComplete": {}}]

        if kind == "clientContent":
            conn.client_content_seen += 1
            if not camel_get(body, "turns"):
                return []
            if conn.client_content_seen == 1:
                return [
                    {"serverContent": {"modelTurn": {"role": "model", "parts": [
                        {"text": "Let me check "}, {"text": "the weather."}]}}},
                    {"serverContent": {"turnComplete": True}},
                    {"toolCall": {"functionCalls": [{
                        "id": "call-1", "name": "get_weather",
                        "args": {"city": "London"}}]}},
                ]
            return [{"serverContent": {
                "modelTurn": {"parts": [{"text": "Noted."}]}, "turnComplete": True}}]

        if kind == "toolResponse":
            return [
                {"serverContent": {"modelTurn": {"parts": [
                    {"text": "It is 21 degrees in London."}]}}},
                {"serverContent": {"turnComplete": True}, "usageMetadata": USAGE_TEXT},
                {"sessionResumptionUpdate": {"newHandle": "handle-1", "resumable": True}},
            ]

        if kind == "realtimeInput":
            if camel_get(body, "text") is not None:
                return [{"serverContent": {
                    "modelTurn": {"parts": [{"text": "Got your text."}]},
                    "turnComplete": True}}]
            if any(camel_get(body, k) is not None for k in ("audio", "mediaChunks")):
                conn.audio_pending = True
                return []
            if camel_get(body, "audioStreamEnd") or camel_get(body, "activityEnd") is not None:
                return self.audio_turn(conn)
            return []

        return []  # contextUpdate and anything unknown: no reply

    def audio_turn(self, conn: Connection) -> list[dict]:
        conn.audio_pending = False
        return [
            {"serverContent": {"inputTranscription": {"text": "What is the weather?"}}},
            {"serverContent": {"modelTurn": {"parts": [{"inlineData": {
                "mimeType": "audio/pcm;rate=24000", "data": OUTPUT_AUDIO_B64}}]}}},
            {"serverContent": {"outputTranscription": {"text": "It is sunny."}}},
            {"serverContent": {"generationComplete": True}},
            {"serverContent": {"turnComplete": True}, "usageMetadata": USAGE_AUDIO},
        ]

    # ---- WebSocket plumbing -----------------------------------------------

    def process_request(self, connection: ServerConnection, request):
        path, _, _ = request.path.partition("?")
        if not PATH_RE.match(path):
            print(f"[server] rejecting path {request.path!r}", file=sys.stderr)
            return connection.respond(http.HTTPStatus.NOT_FOUND, "unknown path\n")
        return None

    async def send_all(self, ws: ServerConnection, replies: list[dict]) -> None:
        for reply in replies:
            await ws.send(json.dumps(reply, separators=(",", ":")))

    async def handler(self, ws: ServerConnection) -> None:
        conn = Connection(len(self.connections) + 1)
        # Split by hand: urlsplit() would read "//ws/..." as a host name.
        path, _, raw_query = ws.request.path.partition("?")
        query = [
            [k, "REDACTED" if k in SECRET_QUERY else v]
            for k, v in urllib.parse.parse_qsl(raw_query, keep_blank_values=True)
        ]
        headers = {}
        for name, value in ws.request.headers.raw_items():
            lname = name.lower()
            if lname in VOLATILE_HEADERS:
                continue
            headers[lname] = "REDACTED" if lname in SECRET_HEADERS else value
        self.connections.append({
            "connection": conn.index,
            "path": path,
            "query": query,
            "headers": dict(sorted(headers.items())),
        })
        print(f"[server] connection {conn.index}: {path}", file=sys.stderr)

        try:
            while True:
                # After audio arrives, a short quiet gap ends the user's turn
                # (for an SDK that sends neither audioStreamEnd nor activityEnd).
                wait = self.args.audio_gap if conn.audio_pending else self.args.idle_timeout
                try:
                    raw = await asyncio.wait_for(ws.recv(), timeout=wait)
                except asyncio.TimeoutError:
                    if conn.audio_pending:
                        replies = self.audio_turn(conn)
                        mine = [f for f in self.frames if f["connection"] == conn.index]
                        mine[-1]["replies"].extend(replies)
                        await self.send_all(ws, replies)
                        continue
                    print(f"[server] connection {conn.index}: idle, closing", file=sys.stderr)
                    await ws.close(1000, "idle")
                    break
                await self.send_all(ws, self.record(conn, raw))
        except ConnectionClosed:
            pass
        finally:
            self.closed += 1
            print(f"[server] connection {conn.index} closed", file=sys.stderr)
            if self.closed >= self.args.connections:
                self.all_done.set()

    def record(self, conn: Connection, raw) -> list[dict]:
        """Store one client frame; return the server frames to answer with."""
        # websockets hands text frames over as str (decoded from valid UTF-8,
        # so encoding again gives back the exact bytes) and binary frames as bytes.
        frame_type = "text" if isinstance(raw, str) else "binary"
        data = raw.encode("utf-8") if isinstance(raw, str) else bytes(raw)
        try:
            msg = json.loads(data)
        except ValueError:
            msg = None
        if isinstance(msg, dict) and msg:
            key = "+".join(msg.keys())
        else:
            key = "unparsed"
        entry = {
            "file": f"{len(self.frames) + 1:02d}-{key}.json",
            "connection": conn.index,
            "ws_frame_type": frame_type,
            "top_level_key": key,
            "bytes": len(data),
            "snake_case_key_paths": snake_case_paths(msg),
            "replies": [],
            "_data": data,
        }
        self.frames.append(entry)
        replies = self.replies_for(conn, msg)
        entry["replies"] = replies
        print(f"[server]   <- {entry['file']} ({frame_type}, {len(data)} bytes), "
              f"{len(replies)} repl{'y' if len(replies) == 1 else 'ies'}", file=sys.stderr)
        return replies

    # ---- output -------------------------------------------------------------

    def write_fixtures(self) -> None:
        out = Path(self.args.out)
        out.mkdir(parents=True, exist_ok=True)
        # Remove the previous run's fixtures (only files this tool writes).
        for old in out.iterdir():
            if old.is_file() and (old.name == "manifest.json"
                                  or re.match(r"^\d\d-.*\.json$", old.name)):
                old.unlink()
        for frame in self.frames:
            (out / frame["file"]).write_bytes(frame.pop("_data"))
        manifest = {
            "sdk": self.args.sdk,
            "sdk_version": self.args.sdk_version,
            "runtime": self.args.runtime,
            "transport": "wss (TLS, self-signed)" if self.args.cert else "ws (plain)",
            "api_key_used": "test-key-not-real (shown as REDACTED)",
            "connections": self.connections,
            "frames": self.frames,
        }
        (out / "manifest.json").write_text(json.dumps(manifest, indent=2) + "\n")
        print(f"[server] wrote {len(self.frames)} frames + manifest.json to {out}",
              file=sys.stderr)


async def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", required=True, help="fixture directory to (re)write")
    ap.add_argument("--sdk", required=True, help="SDK package name for the manifest")
    ap.add_argument("--sdk-version", required=True)
    ap.add_argument("--runtime", default="", help="e.g. 'python 3.11.7' for the manifest")
    ap.add_argument("--cert", help="TLS certificate (PEM); plain ws:// without it")
    ap.add_argument("--key", help="TLS private key (PEM)")
    ap.add_argument("--port-file", required=True, help="the bound port is written here")
    ap.add_argument("--connections", type=int, default=1,
                    help="stop after this many connections have closed")
    ap.add_argument("--deadline", type=float, default=90.0, help="overall seconds")
    ap.add_argument("--idle-timeout", type=float, default=15.0,
                    help="close a connection after this many quiet seconds")
    ap.add_argument("--audio-gap", type=float, default=2.0,
                    help="quiet seconds after audio input that end the user's turn")
    args = ap.parse_args()

    ssl_ctx = None
    if args.cert:
        ssl_ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        ssl_ctx.load_cert_chain(args.cert, args.key)

    rec = Recorder(args)
    async with serve(rec.handler, "127.0.0.1", 0, ssl=ssl_ctx,
                     process_request=rec.process_request, max_size=16 * 2**20) as server:
        port = server.sockets[0].getsockname()[1]
        Path(args.port_file).write_text(f"{port}\n")
        print(f"[server] listening on 127.0.0.1:{port} "
              f"({'wss' if ssl_ctx else 'ws'})", file=sys.stderr)
        try:
            await asyncio.wait_for(rec.all_done.wait(), timeout=args.deadline)
        except asyncio.TimeoutError:
            print("[server] deadline reached", file=sys.stderr)

    rec.write_fixtures()
    ok = bool(rec.frames) and rec.closed >= args.connections
    if not ok:
        print(f"[server] FAILED: {len(rec.frames)} frames, "
              f"{rec.closed}/{args.connections} connections", file=sys.stderr)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
