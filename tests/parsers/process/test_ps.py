"""ps: real output captured on this machine (tests/fixtures/linux/ps) and corpus lines checked by hand."""

from __future__ import annotations

from typing import Any

import pytest

from tests.parsers.network.fixtures import corpus_text, parse, parse_fixture


def _by_pid(parsed: dict[str, Any]) -> dict[int, dict[str, Any]]:
    return {row["pid"]: row for row in parsed["processes"]}


@pytest.mark.parametrize("name", ["u-p", "f-p", "o-custom", "o-noheader", "o-lstart"])
def test_procps_forms_match_proc(name: str) -> None:
    parsed, expected = parse_fixture("linux", "ps", name)
    rows = _by_pid(parsed)
    assert len(rows) == len(expected["processes"])
    for want in expected["processes"]:
        row = rows[want["pid"]]
        # args joined by single spaces, the double space inside the -c argument kept
        assert row["command"] == want["args"]
        if name in ("f-p", "o-custom", "o-noheader"):
            assert row["ppid"] == want["ppid"]
    assert "unparsed" not in parsed


def test_o_custom_keeps_comm_apart_from_args() -> None:
    parsed, expected = parse_fixture("linux", "ps", "o-custom")
    rows = _by_pid(parsed)
    for want in expected["processes"]:
        assert rows[want["pid"]]["comm"] == want["comm"]
        assert rows[want["pid"]]["user"] == want["user"]


def test_lstart_is_five_tokens() -> None:
    parsed, _ = parse_fixture("linux", "ps", "o-lstart")
    start = parsed["processes"][0]["start"]
    assert len(start.split()) == 5 and start.startswith(("Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"))


def test_busybox_ps() -> None:
    parsed, expected = parse_fixture("linux", "ps", "busybox")
    rows = _by_pid(parsed)
    for want in expected["processes"]:
        assert rows[want["pid"]]["user"] == want["user"]
        assert rows[want["pid"]]["command"] == want["args"]  # busybox's {comm} marker taken off
    assert rows[18858]["comm"] == "sleep"  # what the marker said


def test_macos_aux_question_marks_and_pm_times() -> None:
    text = corpus_text("ps/osx-10.14.6__ps-axu")
    rows = _by_pid(parse("ps", ["axu"], text, "macos").parsed)
    # line 12: kbrazil 560 0.2 1.1 5376996 180740 ?? S 12:10PM 2:56.43 /Applications/Sublime Text.app/...
    assert rows[560] == {"user": "kbrazil", "pid": 560, "cpu": 0.2, "mem": 1.1, "vsz": 5376996,
                         "rss": 180740, "tty": "??", "stat": "S", "start": "12:10PM", "time": "2:56.43",
                         "command": "/Applications/Sublime Text.app/Contents/MacOS/Sublime Text -psn_0_110619"}


def test_linux_truncated_user_and_kernel_thread() -> None:
    rows = _by_pid(parse("ps", ["axu"], corpus_text("ps/ubuntu-18.04__ps-axu")).parsed)
    assert rows[606]["user"] == "systemd+" and rows[606]["command"] == "/lib/systemd/systemd-timesyncd"
    assert rows[2]["command"] == "[kthreadd]" and rows[2]["tty"] == "?"


def test_macos_ef_numeric_uid() -> None:
    rows = _by_pid(parse("ps", ["-ef"], corpus_text("ps/osx-10.14.6__ps-ef"), "macos").parsed)
    assert rows[1] == {"uid": "0", "pid": 1, "ppid": 0, "c": 0, "start": "12:09PM", "tty": "??",
                       "time": "1:08.04", "command": "/sbin/launchd"}


def test_bug_43_other_layouts_and_spaces() -> None:
    """§22.3 #43: only the aux layout worked, spaces in the command collapsed, -ef gave null rows."""
    text = ("UID          PID    PPID  C STIME TTY          TIME CMD\n"
            "root           1       0  0 Nov29 ?        00:00:02 /sbin/init  --two-spaces\n")
    row = parse("ps", ["-ef"], text).parsed["processes"][0]
    assert row == {"uid": "root", "pid": 1, "ppid": 0, "c": 0, "start": "Nov29", "tty": "?",
                   "time": "00:00:02", "command": "/sbin/init  --two-spaces"}


def test_unknown_o_column_is_unsupported_with_hint() -> None:
    out = parse("ps", ["-eo", "pid,bogus"], "  PID BOGUS\n    1 x\n")
    assert out.parse_error is not None and out.parse_error.reason == "unsupported_format"
    assert out.parse_error.hint is not None and "-eo" in out.parse_error.hint.args


def test_no_headers_with_unknown_layout_is_unsupported() -> None:
    out = parse("ps", ["-l", "--no-headers"], "4 S     0     1     0  0  80   0 -  5000 -      ?        00:00:01 init\n")
    assert out.parse_error is not None and out.parse_error.reason == "unsupported_format"
    assert out.parse_error.hint is not None and out.parse_error.hint.args == ["-l"]


def test_no_headers_aux_uses_known_layout() -> None:
    line = "root           1  0.0  0.1 168000 12000 ?        Ss   Nov29   0:02 /sbin/init splash\n"
    row = parse("ps", ["aux", "--no-headers"], line).parsed["processes"][0]
    assert row["user"] == "root" and row["rss"] == 12000 and row["command"] == "/sbin/init splash"


def test_garbage_is_unrecognized_not_empty_success() -> None:
    out = parse("ps", ["aux"], "this is not\nps output at all\n")
    assert out.parsed is None and out.parse_error is not None
    assert out.parse_error.reason == "unrecognized_output"


def test_row_that_does_not_fit_is_reported() -> None:
    text = "  PID TTY          TIME CMD\n    1 ?        00:00:01 init\n  abc ?        00:00:00 x\n"
    parsed = parse("ps", [], text).parsed
    assert [r["pid"] for r in parsed["processes"]] == [1]
    assert parsed["unparsed"] == ["  abc ?        00:00:00 x"]


def test_bsd_o_takes_the_format_word() -> None:
    parsed, expected = parse_fixture("linux", "ps", "axo")
    rows = _by_pid(parsed)
    for want in expected["processes"]:
        assert (rows[want["pid"]]["ppid"], rows[want["pid"]]["comm"]) == (want["ppid"], want["comm"])


def test_bsd_word_rules() -> None:
    for args in (["ax", "pid"], ["axo"], ["1234"]):
        out = parse("ps", args, "  PID\n    1\n")
        assert out.parse_error is not None and out.parse_error.reason == "unsupported_format", args


def test_bsd_v_format_unknown_columns_go_to_other() -> None:
    parsed, expected = parse_fixture("linux", "ps", "v-p")
    rows = _by_pid(parsed)
    for want in expected["processes"]:
        row = rows[want["pid"]]
        assert row["command"] == want["args"]
        assert set(row["other"]) == {"majfl", "trs", "drs"} and row["other"]["majfl"].isdigit()
        assert isinstance(row["rss"], int) and isinstance(row["mem"], float)


def test_capital_o_adds_lstart_to_defaults() -> None:
    parsed, expected = parse_fixture("linux", "ps", "O-lstart")
    rows = _by_pid(parsed)
    for want in expected["processes"]:
        row = rows[want["pid"]]
        assert len(row["start"].split()) == 5 and row["command"] == want["args"] and row["tty"] == "?"
