"""kill: signal listings captured from procps kill on this machine, checked against Python's
signal module; sending a signal prints nothing and parses to an empty ``messages`` list."""

from __future__ import annotations

import signal

from tests.parsers.network.fixtures import parse, parse_fixture


def test_list_names_match_signal_module() -> None:
    parsed, expected = parse_fixture("linux", "kill", "l")
    names = [s["name"] for s in parsed["signals"]]
    assert all("number" not in s for s in parsed["signals"])  # -l prints names only
    # procps prints one name per number (POLL for 29, no IOT/CLD aliases)
    assert set(names) <= set(expected["names"]) | {"POLL", "IO"}
    assert len(names) == 31 and names[0] == "HUP" and names[-1] == "SYS"


def test_table_pairs_match_signal_module() -> None:
    parsed, expected = parse_fixture("linux", "kill", "L")
    pairs = {(s["number"], s["name"]) for s in parsed["signals"]}
    assert len(pairs) == 31
    by_number = {v: n for v, n in expected["pairs"]}
    for number, name in pairs:
        assert by_number.get(number) == name or (number == signal.SIGIO and name == "POLL")


def test_number_to_name() -> None:
    parsed, expected = parse_fixture("linux", "kill", "l-9")
    assert parsed == {"signals": [{"name": n} for n in expected["names"]]}


def test_name_to_number() -> None:
    assert parse("kill", ["-l", "KILL"], "9\n").parsed == {"signals": [{"number": 9}]}


def test_bash_builtin_listing() -> None:
    text = " 1) SIGHUP\t 2) SIGINT\t 3) SIGQUIT\n"
    assert parse("kill", ["-l"], text).parsed["signals"] == [
        {"number": 1, "name": "HUP"}, {"number": 2, "name": "INT"}, {"number": 3, "name": "QUIT"}]


def test_sending_a_signal_has_no_output() -> None:
    for args in (["-TERM", "1234"], ["-9", "1234"], ["-s", "HUP", "1", "2"], ["1234"]):
        out = parse("kill", args, "")
        assert out.parse_error is None and out.parsed == {"messages": []}, args


def test_garbage_listing_is_unrecognized() -> None:
    out = parse("kill", ["-l"], "!!! ???\n")
    assert out.parse_error is not None and out.parse_error.reason == "unrecognized_output"


def test_unknown_flag_is_unsupported() -> None:
    out = parse("kill", ["--frobnicate", "1"], "")
    assert out.parse_error is not None and out.parse_error.reason == "unsupported_format"
