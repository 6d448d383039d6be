"""env, pwd and which on real output; values are the ones the test put into the environment."""

from __future__ import annotations

import os
from pathlib import Path

from tests.parsers.text.realrun import ENV, parse, parsed, run


def test_bug_50_multiline_value_and_equals(tmp_path: Path) -> None:
    env = {"PATH": "/usr/bin:/bin", "A": "x=1", "ML": "first\nSECOND=2 no\nthird", "E": ""}
    got = parsed("env", [], run("env", [], tmp_path, env))["vars"]
    assert got["A"] == "x=1" and got["E"] == ""
    # "SECOND=2 no" looks like an entry: only -0 output is exact for such values
    got0 = parsed("env", ["-0"], run("env", ["-0"], tmp_path, env))["vars"]
    assert got0 == env
    env2 = {"PATH": "/usr/bin", "ML": "first line\nsecond line = x\n"}
    assert parsed("env", [], run("env", [], tmp_path, env2))["vars"] == {
        "PATH": "/usr/bin", "ML": "first line\nsecond line = x\n"}


def test_env_with_a_command_is_out_of_range() -> None:
    out = parse("env", ["ls"], "")
    assert out.parse_error is not None and out.parse_error.reason == "unsupported_format"


def test_pwd_keeps_trailing_spaces(tmp_path: Path) -> None:
    d = tmp_path / "dir ends with space "
    d.mkdir()
    got = parsed("pwd", ["-P"], run("pwd", ["-P"], d))
    assert got == {"path": os.path.realpath(d)} and got["path"].endswith(" ")


def test_pwd_garbage_is_unrecognized() -> None:
    out = parse("pwd", [], "not a path\n")
    assert out.parse_error is not None and out.parse_error.reason == "unrecognized_output"


def test_which_found_and_not_found(tmp_path: Path) -> None:
    args = ["-a", "sh", "no-such-command-xyz"]
    got = parsed("which", args, run("which", args, tmp_path, ENV))
    assert got["paths"] == ["/usr/bin/sh", "/bin/sh"]  # PATH is /usr/bin:/bin, both hold sh
    assert got["not_found"] == ["no-such-command-xyz"]
    assert all(os.access(p, os.X_OK) for p in got["paths"])
