"""A running `reel serve --json`, and one test's view of it."""

from __future__ import annotations

import json
import queue
import signal
import ssl
import subprocess
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Optional

#: The header a client names its test with (the server's `x-reel-test`).
TEST_HEADER = "x-reel-test"

#: How long `reel serve` has to print its ready line.
READY_TIMEOUT = 30.0


class ServeError(RuntimeError):
    """`reel serve` could not start, or stopped while a test needed it."""


@dataclass
class ReelServer:
    """One `reel serve --json` process for a test session.

    Start it with :meth:`start`; :meth:`stop` sends SIGTERM (the server finishes open
    recordings first) and waits. Every JSON line the server prints is kept in
    :attr:`reports` as it arrives.
    """

    process: subprocess.Popen
    ready: dict
    reports: list = field(default_factory=list)
    _lines: "queue.Queue[Optional[dict]]" = field(default_factory=queue.Queue)
    _stderr: list = field(default_factory=list)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    @classmethod
    def start(
        cls,
        binary: str,
        tapes: Path,
        mode: Optional[str] = None,
        upstream: Optional[str] = None,
        allow_record: bool = False,
        tls_dir: Optional[Path] = None,
        extra_args: tuple = (),
        env: Optional[dict] = None,
    ) -> "ReelServer":
        """Runs `binary serve --json` on a free loopback port, serving `tapes`.

        `mode` is `replay`, `once`, `auto`, `record` or `passthrough` (default: `replay`
        without an upstream, `once` with one). `tls_dir` makes it speak `wss://` with a fresh
        self-signed certificate written there (google-genai speaks `wss://` whenever it has
        an API key).
        """
        if mode is None:
            mode = "once" if upstream else "replay"
        args = [binary, "serve", "--json", "--mode", mode, "--port", "0"]
        if mode != "passthrough":
            tapes.mkdir(parents=True, exist_ok=True)
            args += ["--tapes", str(tapes)]
        if upstream and mode != "replay":
            # reel serve refuses an upstream in replay mode (a marker may ask for replay in
            # a session that records).
            args += ["--upstream", upstream]
        if allow_record:
            args.append("--allow-record")
        if tls_dir is not None:
            args += ["--tls-self-signed", "--tls-dir", str(tls_dir)]
        args += list(extra_args)
        try:
            process = subprocess.Popen(
                args,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
                env=env,
            )
        except OSError as error:
            raise ServeError(f"cannot run {binary!r}: {error}") from error
        server = cls(process=process, ready={})
        threading.Thread(target=server._read_stdout, daemon=True).start()
        threading.Thread(target=server._read_stderr, daemon=True).start()
        server.ready = server._wait_ready(" ".join(args))
        return server

    def _read_stdout(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            line = line.strip()
            if not line:
                continue
            try:
                event = json.loads(line)
            except json.JSONDecodeError:
                continue
            if event.get("event") == "connection":
                with self._lock:
                    self.reports.append(event)
            self._lines.put(event)
        self._lines.put(None)

    def _read_stderr(self) -> None:
        assert self.process.stderr is not None
        for line in self.process.stderr:
            self._stderr.append(line.rstrip("\n"))

    def _wait_ready(self, command: str) -> dict:
        deadline = time.monotonic() + READY_TIMEOUT
        while True:
            left = deadline - time.monotonic()
            try:
                event = self._lines.get(timeout=max(left, 0.01))
            except queue.Empty:
                self.process.kill()
                raise ServeError(f"`{command}` printed no ready line in {READY_TIMEOUT:.0f} s")
            if event is None:
                self.process.wait()
                raise ServeError(
                    f"`{command}` exited with {self.process.returncode}: "
                    + "\n".join(self._stderr)
                )
            if event.get("event") == "ready":
                return event

    @property
    def http_base_url(self) -> str:
        """The base URL to give an SDK (`https://127.0.0.1:PORT` with TLS)."""
        return self.ready["http_base_url"]

    @property
    def tls_cert(self) -> Optional[str]:
        """The certificate to trust, when the server speaks TLS."""
        return self.ready.get("tls_cert")

    @property
    def mode(self) -> str:
        """The mode the server runs in (after `CI` had its say)."""
        return self.ready["mode"]

    def ssl_context(self) -> Optional[ssl.SSLContext]:
        """An SSL context trusting the server's certificate (`None` without TLS)."""
        if not self.tls_cert:
            return None
        return ssl.create_default_context(cafile=self.tls_cert)

    def reports_of(self, test: str) -> list:
        """The connection reports of test `test` so far, in the order connections ended."""
        with self._lock:
            return [r for r in self.reports if r.get("test") == test]

    def wait_for_reports(self, test: str, count: int, timeout: float = 10.0) -> list:
        """Waits until test `test` has `count` reports; returns them."""
        deadline = time.monotonic() + timeout
        while True:
            found = self.reports_of(test)
            if len(found) >= count or time.monotonic() > deadline:
                return found
            time.sleep(0.01)

    def stop(self) -> int:
        """SIGTERM, then waits: open recordings are finished first. Returns the exit code."""
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        return self.process.returncode

    @property
    def stderr(self) -> list:
        """What the server printed on standard error (warnings, the CI note)."""
        return list(self._stderr)


@dataclass
class ReelTest:
    """One test's view of the server: its tape name and a client pointed at the server."""

    server: ReelServer
    name: str
    api_key: str = "reel-test-key"

    def http_options(self, **overrides: Any):
        """`google.genai.types.HttpOptions` for this test: the server's base URL, the
        `x-reel-test` header, and (with TLS) an SSL context trusting its certificate."""
        from google.genai import types

        headers = dict(overrides.pop("headers", None) or {})
        headers[TEST_HEADER] = self.name
        options: dict = {"base_url": self.server.http_base_url + "/", "headers": headers}
        context = self.server.ssl_context()
        if context is not None:
            # The Live WebSocket and aiohttp read `ssl`, httpx reads `verify`.
            options["async_client_args"] = {"ssl": context, "verify": context}
            options["client_args"] = {"verify": context}
        options.update(overrides)
        return types.HttpOptions(**options)

    def client(self, **kwargs: Any):
        """A `google.genai.Client` that talks to the server as this test."""
        from google import genai

        http_options = kwargs.pop("http_options", None) or self.http_options()
        # The server never forwards or records the client's key (a recording proxy presents
        # its own), so a placeholder is all a test needs.
        api_key = kwargs.pop("api_key", None) or self.api_key
        return genai.Client(api_key=api_key, http_options=http_options, **kwargs)

    def reports(self) -> list:
        """The server's reports of this test's connections so far."""
        return self.server.reports_of(self.name)

    def wait_for_reports(self, count: int = 1, timeout: float = 10.0) -> list:
        """Waits until this test has `count` connection reports; returns them."""
        return self.server.wait_for_reports(self.name, count, timeout)
