"""Where a test's tapes live, independent of the directory pytest runs from.

pytest-recording keeps `tests/cassettes/<module>/<test>.yaml`; reel keeps a folder per test
module beside the test file, and names each tape after the test within its module:

    tests/test_app.py::test_weather[paris]
      -> tests/tapes/test_app/test_weather_paris_.wire.jsonl   (and .2.wire.jsonl, ...)

With `--reel-tapes DIR` (or the `reel_tapes` ini value) the folders go under DIR instead,
named by the module's path from the rootdir: `DIR/tests/test_app/test_weather_paris_...`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Optional


def test_name(name: str) -> str:
    """A name made a file name the way the server does.

    `test_weather[paris]` -> `test_weather_paris_` (ASCII letters, digits, `.`, `_` and `-`
    kept, anything else `_`).
    """
    return "".join(c if (c.isascii() and c.isalnum()) or c in "._-" else "_" for c in name)


def tape_name(nodeid: str) -> str:
    """The tape name of a pytest node id: the test's name within its module.

    `tests/test_app.py::TestCity::test_weather[paris]` -> `TestCity__test_weather_paris_`.
    """
    _, _, within = nodeid.partition("::")
    return test_name(within or nodeid)


def tapes_dir(module: Path, rootdir: Path, base: Optional[Path]) -> Path:
    """The folder of the tapes of the tests in `module` (a test file's absolute path).

    Without `base`: `tapes/<module stem>` beside the module. With `base` (absolute): the
    module's path from `rootdir`, without `.py`, under `base`.
    """
    module = Path(module).resolve()
    if base is None:
        return module.parent / "tapes" / module.stem
    try:
        relative = module.relative_to(Path(rootdir).resolve())
    except ValueError:
        relative = Path(module.name)
    return Path(base) / relative.with_suffix("")
