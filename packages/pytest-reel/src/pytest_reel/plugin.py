"""The pytest plugin: options, the session's server, and the `reel_server` fixture."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from pytest_reel.server import ReelServer, ReelTest, ServeError, test_name


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("reel", "Gemini Live tests against reel serve")
    group.addoption(
        "--reel-bin",
        default=None,
        help="the reel binary (default: $REEL_BIN, else `reel` on PATH)",
    )
    group.addoption(
        "--reel-tapes",
        default=None,
        help="the tapes directory (default: the reel_tapes ini value, else tests/tapes)",
    )
    group.addoption(
        "--reel-mode",
        default=None,
        choices=["replay", "once", "auto", "record", "passthrough"],
        help="how reel serve treats tests (default: replay; once with --reel-upstream)",
    )
    group.addoption(
        "--reel-upstream",
        default=None,
        help="the API to record through (wss://generativelanguage.googleapis.com); the "
        "key comes from GEMINI_API_KEY in reel serve's environment",
    )
    group.addoption(
        "--reel-allow-record",
        action="store_true",
        default=False,
        help="with CI set, let once and auto record anyway",
    )
    parser.addini("reel_tapes", "the tapes directory, relative to the rootdir", default="tests/tapes")


def _binary(config: pytest.Config) -> str:
    chosen = config.getoption("--reel-bin") or os.environ.get("REEL_BIN")
    if chosen:
        return chosen
    found = shutil.which("reel")
    if found is None:
        raise pytest.UsageError(
            "pytest-reel: no `reel` binary: install it (cargo install reel), put it on PATH, "
            "or name it with --reel-bin or REEL_BIN"
        )
    return found


@pytest.fixture(scope="session")
def reel_serve(pytestconfig: pytest.Config, tmp_path_factory: pytest.TempPathFactory):
    """The session's `reel serve`, started on first use and stopped (SIGTERM) at the end."""
    tapes = pytestconfig.getoption("--reel-tapes") or pytestconfig.getini("reel_tapes")
    tapes_path = Path(tapes)
    if not tapes_path.is_absolute():
        tapes_path = Path(pytestconfig.rootpath) / tapes_path
    try:
        server = ReelServer.start(
            binary=_binary(pytestconfig),
            tapes=tapes_path,
            mode=pytestconfig.getoption("--reel-mode"),
            upstream=pytestconfig.getoption("--reel-upstream"),
            allow_record=pytestconfig.getoption("--reel-allow-record"),
            tls_dir=tmp_path_factory.mktemp("reel-tls"),
        )
    except ServeError as error:
        pytest.fail(f"pytest-reel: {error}", pytrace=False)
    yield server
    server.stop()


@pytest.fixture
def reel_server(request: pytest.FixtureRequest, reel_serve: ReelServer) -> ReelTest:
    """This test's view of `reel serve`: `client()` is a google-genai client whose Live
    sessions are replayed from (or recorded into) the tape named after the test."""
    return ReelTest(server=reel_serve, name=test_name(request.node.nodeid))
