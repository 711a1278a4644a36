"""A test's reel options: from the command line, the ini file and its `reel` marker.

One `reel serve` runs per distinct set of options (its mode, matching, rules, redaction and
tapes directory are the server's), so a marker that changes them gets a server of its own.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Optional

#: reel serve's modes.
MODES = ("replay", "once", "auto", "record", "passthrough")

#: vcrpy's and pytest-recording's record modes, as reel serve's modes.
RECORD_MODES = {"none": "replay", "once": "once", "new_episodes": "auto", "all": "record"}

#: reel serve's matching.
MATCHES = ("strict", "loose")

#: The keyword arguments `@pytest.mark.reel(...)` takes.
MARKER_KEYS = ("mode", "record_mode", "match", "rules", "redact")


class OptionError(ValueError):
    """A `reel` marker or option names something reel serve does not have."""


def mode_of(mode: Optional[str], record_mode: Optional[str]) -> Optional[str]:
    """The reel serve mode of `mode` (reel's name) or `record_mode` (vcrpy's name)."""
    if mode is not None and record_mode is not None:
        raise OptionError(f"both mode={mode!r} and record_mode={record_mode!r} given; give one")
    if record_mode is not None:
        if record_mode not in RECORD_MODES:
            raise OptionError(
                f"record_mode {record_mode!r} is not one of {', '.join(RECORD_MODES)}"
            )
        return RECORD_MODES[record_mode]
    if mode is not None and mode not in MODES:
        raise OptionError(f"mode {mode!r} is not one of {', '.join(MODES)}")
    return mode


@dataclass(frozen=True)
class ServeOptions:
    """What one `reel serve` is started with (everything but the binary and upstream)."""

    tapes: Path
    mode: Optional[str] = None
    match: Optional[str] = None
    rules: Optional[Path] = None
    redact: Optional[Path] = None

    def with_marker(self, kwargs: dict, base: Path) -> "ServeOptions":
        """These options changed by a `reel` marker's keyword arguments (files relative to
        `base`, the test file's directory)."""
        unknown = sorted(set(kwargs) - set(MARKER_KEYS))
        if unknown:
            raise OptionError(
                f"@pytest.mark.reel does not take {', '.join(unknown)} "
                f"(it takes {', '.join(MARKER_KEYS)})"
            )
        mode = mode_of(kwargs.get("mode"), kwargs.get("record_mode")) or self.mode
        match = kwargs.get("match", self.match)
        if match is not None and match not in MATCHES:
            raise OptionError(f"match {match!r} is not one of {', '.join(MATCHES)}")
        rules = _file(kwargs.get("rules"), base) or self.rules
        redact = _file(kwargs.get("redact"), base) or self.redact
        return ServeOptions(self.tapes, mode, match, rules, redact)

    def args(self, mode: str) -> list:
        """The `reel serve` arguments for these options in `mode` (not the mode's or the
        tapes'). Redaction rules apply to what is recorded: reel serve refuses them in
        replay mode, where nothing is, so they are left out there."""
        args = []
        if self.match is not None:
            args += ["--match", self.match]
        if self.rules is not None:
            args += ["--rules", str(self.rules)]
        if self.redact is not None and mode != "replay":
            args += ["--redact", str(self.redact)]
        return args


def _file(value, base: Path) -> Optional[Path]:
    if value is None:
        return None
    path = Path(value)
    return path if path.is_absolute() else base / path
