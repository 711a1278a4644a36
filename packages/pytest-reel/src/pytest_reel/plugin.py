"""The pytest plugin: options, the session's server, and the `reel_server` fixture."""

from __future__ import annotations

import os
import shutil
import time
from pathlib import Path

import pytest

from pytest_reel.layout import tape_name, tapes_dir
from pytest_reel.mismatch import first_mismatch_report, mismatch_message
from pytest_reel.options import MODES, RECORD_MODES, OptionError, ServeOptions, mode_of
from pytest_reel.server import ReelServer, ReelTest, ServeError

#: How long a failed test waits for the server's report of a mismatch (it is printed when
#: the server closes the connection, which is what failed the test).
MISMATCH_WAIT = 5.0


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
        help="put every module's tape folder under this directory (default: the reel_tapes "
        "ini value, else `tapes/<module>/` beside each test file)",
    )
    group.addoption(
        "--reel-mode",
        default=None,
        choices=list(MODES),
        help="how reel serve treats tests (default: replay; once with --reel-upstream)",
    )
    group.addoption(
        "--record-mode",
        default=None,
        choices=list(RECORD_MODES),
        help="vcrpy's and pytest-recording's names for --reel-mode: none (replay), once, "
        "new_episodes (auto), all (record)",
    )
    group.addoption(
        "--reel-match",
        default=None,
        choices=["strict", "loose"],
        help="reel serve --match: strict, or loose (audio/video bytes and the rules' fields "
        "ignored)",
    )
    group.addoption(
        "--reel-rules",
        default=None,
        help="reel serve --rules: a JSON file of loose-matching rules (implies loose)",
    )
    group.addoption(
        "--reel-redact",
        default=None,
        help="reel serve --redact: a JSON file of redaction rules applied to what is recorded",
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
    parser.addini(
        "reel_tapes",
        "put every module's tape folder under this directory, relative to the rootdir "
        "(default: `tapes/<module>/` beside each test file)",
        default=None,
    )


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
    config.addinivalue_line(
        "markers",
        "reel(mode=None, record_mode=None, match=None, rules=None, redact=None): this test's "
        "reel serve options (mode: replay/once/auto/record/passthrough; record_mode: vcrpy's "
        "none/once/new_episodes/all; match: strict/loose; rules, redact: JSON files, relative "
        "to the test file)",
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
    if report.failed:
        mismatch = first_mismatch_report(reel_test.reports())
        if mismatch is None:
            mismatch = _wait_for_mismatch(reel_test)
        if mismatch is not None:
            report.longrepr = mismatch_message(reel_test.name, mismatch)
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


def _wait_for_mismatch(reel_test: ReelTest):
    """The test's mismatch report, if the server prints one within MISMATCH_WAIT."""
    deadline = time.monotonic() + MISMATCH_WAIT
    seen = len(reel_test.reports())
    while time.monotonic() < deadline:
        reports = reel_test.wait_for_reports(seen + 1, timeout=deadline - time.monotonic())
        found = first_mismatch_report(reports)
        if found is not None or len(reports) <= seen:
            return found
        seen = len(reports)
    return None


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    """Once the servers have stopped (every report is in): a session that ended early and was
    reported after its test finished fails the run, naming the test."""
    servers = getattr(session.config, "_reel_servers", None)
    if servers is None:
        return
    late: dict = {}
    for report in ended_early(servers.all_reports()):
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


class ReelServers:
    """The session's `reel serve` processes, one per set of options, started on first use."""

    def __init__(self, config: pytest.Config, tmp_path_factory: pytest.TempPathFactory):
        self.config = config
        self.tmp_path_factory = tmp_path_factory
        self.servers: dict = {}

    def server(self, options: ServeOptions) -> ReelServer:
        """The server for `options`, started if it is not yet."""
        server = self.servers.get(options)
        if server is None:
            upstream = self.config.getoption("--reel-upstream")
            mode = options.mode or ("once" if upstream else "replay")
            server = ReelServer.start(
                binary=_binary(self.config),
                tapes=options.tapes,
                mode=mode,
                upstream=upstream,
                allow_record=self.config.getoption("--reel-allow-record"),
                # A directory each: every server writes its own certificate.
                tls_dir=self.tmp_path_factory.mktemp("reel-tls"),
                extra_args=tuple(options.args(mode)),
            )
            self.servers[options] = server
        return server

    def all_reports(self) -> list:
        """Every server's connection reports."""
        return [report for server in self.servers.values() for report in list(server.reports)]

    def stop(self) -> None:
        """Stops every server (SIGTERM: open recordings are finished first)."""
        for server in self.servers.values():
            server.stop()


def _base(config: pytest.Config):
    """The directory every module's tape folder goes under, or None: beside the test file."""
    chosen = config.getoption("--reel-tapes") or config.getini("reel_tapes")
    if not chosen:
        return None
    path = Path(chosen)
    return path if path.is_absolute() else Path(config.rootpath) / path


def _session_options(config: pytest.Config, tapes: Path) -> ServeOptions:
    mode = mode_of(config.getoption("--reel-mode"), config.getoption("--record-mode"))
    rules = config.getoption("--reel-rules")
    redact = config.getoption("--reel-redact")
    return ServeOptions(
        tapes=tapes,
        mode=mode,
        match=config.getoption("--reel-match"),
        rules=Path(rules).resolve() if rules else None,
        redact=Path(redact).resolve() if redact else None,
    )


@pytest.fixture(scope="session")
def reel_servers(pytestconfig: pytest.Config, tmp_path_factory: pytest.TempPathFactory):
    """The session's `reel serve` processes, one per set of options (tapes folder, mode,
    matching, rules, redaction), each started on first use and stopped at the end."""
    servers = ReelServers(pytestconfig, tmp_path_factory)
    pytestconfig._reel_servers = servers
    yield servers
    servers.stop()


@pytest.fixture
def reel_server(request: pytest.FixtureRequest, reel_servers: ReelServers) -> ReelTest:
    """This test's view of `reel serve`: `client()` is a google-genai client whose Live
    sessions are replayed from (or recorded into) the test's tape,
    `tapes/<module>/<test>.wire.jsonl` beside the test file, with the options of the command
    line and of the test's `@pytest.mark.reel(...)`."""
    config = request.config
    module = Path(request.node.path)
    tapes = tapes_dir(module, Path(config.rootpath), _base(config))
    try:
        options = _session_options(config, tapes)
        marker = request.node.get_closest_marker("reel")
        if marker is not None:
            if marker.args:
                raise OptionError("@pytest.mark.reel takes keyword arguments only")
            options = options.with_marker(dict(marker.kwargs), module.parent)
    except OptionError as error:
        pytest.fail(f"pytest-reel: {request.node.nodeid}: {error}", pytrace=False)
    try:
        server = reel_servers.server(options)
    except ServeError as error:
        pytest.fail(f"pytest-reel: {error}", pytrace=False)
    return ReelTest(server=server, name=tape_name(request.node.nodeid))
