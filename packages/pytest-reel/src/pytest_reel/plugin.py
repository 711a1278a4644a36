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


#: The marker of a test whose Live session is expected to end before its tape does.
INCOMPLETE_OK = "reel_incomplete_ok"

#: The `outcome` of a session that ended before its tape did.
INCOMPLETE = "incomplete"


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        f"{INCOMPLETE_OK}: the test's Live session may end before its tape does "
        "(without it, a session that ended early fails the test)",
    )
    # Tests already failed for a session that ended early, and tests allowed to end early.
    config._reel_flagged = set()
    config._reel_allowed = set()


def ended_early(reports: list) -> list:
    """The reports of sessions that ended before their tape did."""
    return [r for r in reports if r.get("outcome") == INCOMPLETE]


def _early_message(name: str, reports: list) -> str:
    lines = "\n".join(f"  {r.get('message', r)}" for r in reports)
    return (
        f"pytest-reel: the Live session of test {name} ended before its tape did "
        f"(mark the test @pytest.mark.{INCOMPLETE_OK} if that is expected):\n{lines}"
    )


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo):
    """A test that passed but whose session ended before its tape did fails, unless it is
    marked `reel_incomplete_ok`. The reports checked are those in by the end of the test
    (a test that waits for its reports has them all); a later one fails the run at its end."""
    outcome = yield
    report = outcome.get_result()
    if call.when != "call":
        return
    reel_test = getattr(item, "funcargs", {}).get("reel_server")
    if not isinstance(reel_test, ReelTest):
        return
    if item.get_closest_marker(INCOMPLETE_OK) is not None:
        item.config._reel_allowed.add(reel_test.name)
        return
    early = ended_early(reel_test.reports())
    if early:
        item.config._reel_flagged.add(reel_test.name)
        if report.passed:
            report.outcome = "failed"
            report.longrepr = _early_message(reel_test.name, early)


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    """Once the server has stopped (every report is in): a session that ended early and was
    reported after its test finished fails the run, naming the test."""
    server = getattr(session.config, "_reel_server", None)
    if server is None:
        return
    late: dict = {}
    for report in ended_early(list(server.reports)):
        name = report.get("test")
        if name in session.config._reel_allowed or name in session.config._reel_flagged:
            continue
        late.setdefault(name, []).append(report)
    if not late:
        return
    writer = session.config.get_terminal_writer()
    for name, reports in late.items():
        writer.line(_early_message(name, reports), red=True)
    session.exitstatus = pytest.ExitCode.TESTS_FAILED


def _binary(config: pytest.Config) -> str:
    chosen = config.getoption("--reel-bin") or os.environ.get("REEL_BIN")
    if chosen:
        return chosen
    found = shutil.which("reel")
    if found is None:
        raise pytest.UsageError(
            "pytest-reel: no `reel` binary: build it from reel's repository "
            "(`cargo install --locked --path .` in a checkout), put it on PATH, "
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
    pytestconfig._reel_server = server
    yield server
    server.stop()


@pytest.fixture
def reel_server(request: pytest.FixtureRequest, reel_serve: ReelServer) -> ReelTest:
    """This test's view of `reel serve`: `client()` is a google-genai client whose Live
    sessions are replayed from (or recorded into) the tape named after the test."""
    return ReelTest(server=reel_serve, name=test_name(request.node.nodeid))
