"""The plugin's option handling, without a server."""

from pathlib import Path

import pytest

from pytest_reel import OptionError, ServeOptions, tape_name, tapes_dir
from pytest_reel.options import mode_of


def test_vcrpy_record_modes_map_to_reel_modes():
    assert [mode_of(None, m) for m in ["none", "once", "new_episodes", "all"]] == [
        "replay",
        "once",
        "auto",
        "record",
    ]


def test_unknown_and_doubled_modes_are_refused_with_what_exists():
    with pytest.raises(OptionError) as error:
        mode_of(None, "sometimes")
    assert str(error.value) == (
        "record_mode 'sometimes' is not one of none, once, new_episodes, all"
    )
    with pytest.raises(OptionError) as error:
        mode_of("replay", "all")
    assert str(error.value) == "both mode='replay' and record_mode='all' given; give one"


def test_a_marker_changes_the_options_and_the_arguments():
    base = ServeOptions(tapes=Path("/t"), mode="once")
    marked = base.with_marker({"match": "loose", "rules": "r.json", "redact": "/x.json"}, Path("/tests"))
    assert marked == ServeOptions(Path("/t"), "once", "loose", Path("/tests/r.json"), Path("/x.json"))
    assert marked.args("once") == [
        "--match", "loose", "--rules", "/tests/r.json", "--redact", "/x.json"
    ]
    # Nothing is recorded in replay mode, where reel serve refuses redaction rules.
    assert marked.args("replay") == ["--match", "loose", "--rules", "/tests/r.json"]
    with pytest.raises(OptionError) as error:
        base.with_marker({"matcher": "loose"}, Path("/tests"))
    assert str(error.value) == (
        "@pytest.mark.reel does not take matcher (it takes mode, record_mode, match, rules, redact)"
    )


def test_tapes_sit_beside_the_test_file_in_a_folder_per_module():
    assert tapes_dir(Path("/p/tests/test_app.py"), Path("/p"), None) == Path("/p/tests/tapes/test_app")
    assert tapes_dir(Path("/p/tests/test_app.py"), Path("/p"), Path("/t")) == Path("/t/tests/test_app")
    assert tape_name("tests/test_app.py::TestCity::test_weather[paris]") == (
        "TestCity__test_weather_paris_"
    )
