"""A failing test's message from the server's report of its first mismatch: the tape, the
frame, the JSON path, the expected and the actual value, in a few lines."""

from __future__ import annotations

import json
from typing import Optional

#: The outcomes that say a test's traffic did not match its tapes.
MISMATCH_OUTCOMES = ("diverged", "no_tape", "rest_no_match")


def first_mismatch_report(reports: list) -> Optional[dict]:
    """The first report of `reports` whose outcome is a mismatch, if any."""
    for report in reports:
        if report.get("outcome") in MISMATCH_OUTCOMES:
            return report
    return None


def _value(value) -> str:
    return "(nothing)" if value is None else json.dumps(value, ensure_ascii=False)


def _lines(where: str, mismatch: Optional[dict]) -> list:
    if not mismatch:
        return [f"  {where}"]
    path = mismatch.get("path")
    at = f" at {path}" if path else " (past the end of the tape)"
    return [
        f"  {where}{at}",
        f"  expected: {_value(mismatch.get('expected'))}",
        f"  actual:   {_value(mismatch.get('actual'))}",
    ]


def mismatch_message(test: str, report: dict) -> str:
    """A few lines naming the test, its tape, the first mismatch's path and both values."""
    outcome = report.get("outcome")
    if outcome == "diverged":
        mismatch = report.get("first_mismatch") or {}
        head = f"pytest-reel: test {test} did not match its tape {report.get('tape')}"
        seq = mismatch.get("seq")
        frame = f"client frame {mismatch.get('frame')}" + (f" (tape seq {seq})" if seq else "")
        lines = [head] + _lines(frame, mismatch)
    elif outcome == "no_tape":
        closest = report.get("closest")
        head = f"pytest-reel: test {test} has no tape whose setup matches"
        if closest is None:
            lines = [head + " (and no tape to compare with)"]
        else:
            where = f"closest: {closest.get('tape')}"
            lines = [head] + _lines(where, closest.get("first_mismatch"))
    else:
        closest = report.get("closest")
        head = (
            f"pytest-reel: test {test}'s {report.get('method')} call to {report.get('model')} "
            "matches no recorded call"
        )
        if closest is None:
            lines = [head + " (and no cassette to compare with)"]
        else:
            where = f"closest: {closest.get('cassette')} call {closest.get('call')}"
            lines = [head] + _lines(where, closest.get("first_mismatch"))
    return "\n".join(lines)
