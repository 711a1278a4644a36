"""pytest-reel: Gemini Live tests against `reel serve`, one tape per test.

The plugin starts one `reel serve --json` for the test session and gives each test a
`reel_server` fixture whose `client()` is a `google.genai.Client` pointed at it, with the
test's name in the `x-reel-test` header: the server replays that test's tape, or (in `once`
and `auto` modes, outside CI) records it through the real API. Tapes live beside the test
file, a folder per module (`tests/tapes/test_app/test_weather.wire.jsonl`); a test's
`@pytest.mark.reel(mode=..., match=..., rules=..., redact=...)` changes its server's options.
"""

from pytest_reel.layout import tape_name, tapes_dir, test_name
from pytest_reel.options import RECORD_MODES, OptionError, ServeOptions
from pytest_reel.server import ReelServer, ReelTest, ServeError

__all__ = [
    "RECORD_MODES",
    "OptionError",
    "ReelServer",
    "ReelTest",
    "ServeError",
    "ServeOptions",
    "tape_name",
    "tapes_dir",
    "test_name",
]
