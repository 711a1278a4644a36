"""pytest-reel: Gemini Live tests against `reel serve`, one tape per test.

The plugin starts one `reel serve --json` for the test session and gives each test a
`reel_server` fixture whose `client()` is a `google.genai.Client` pointed at it, with the
test's name in the `x-reel-test` header: the server replays that test's tape, or (in `once`
and `auto` modes, outside CI) records it through the real API.
"""

from pytest_reel.server import ReelServer, ReelTest, ServeError, test_name

__all__ = ["ReelServer", "ReelTest", "ServeError", "test_name"]
