"""find: §22 bug 49 (trailing spaces trimmed; -print0 not split on NUL)."""

from __future__ import annotations

import pytest

from tests.parsers.fs._util import err, ok


def test_bug49_no_trimming() -> None:
    assert ok(["find", "."], ".\n./a \n./ b\n")["paths"] == [".", "./a ", "./ b"]


def test_bug49_print0_records() -> None:
    res = ok(["find", ".", "-print0"], ".\x00./new\nline\x00./x y\x00")
    assert res["paths"] == [".", "./new\nline", "./x y"] and "warnings" not in res


def test_newline_names_without_print0_are_joined_and_reported() -> None:
    res = ok(["find", "src", "-name", "*.py"], "src/a.py\nsrc/new\nline.py\n")
    assert res["paths"] == ["src/a.py", "src/new\nline.py"]
    assert res["hint_args"] == ["src", "-name", "*.py", "-print0"]


def test_merged_stderr_lines_are_errors_not_paths() -> None:
    res = ok(["find", "."], ".\nfind: './secret': Permission denied\n./a\n")
    assert res["paths"] == [".", "./a"] and res["errors"] == ["find: './secret': Permission denied"]


def test_actions_that_change_the_output_are_unsupported() -> None:
    # -ls and -printf alone are read (test_find_printf_live.py); beside another action they interleave
    assert err(["find", ".", "-ls", "-print"], "x\n").reason == "unsupported_format"
    assert err(["find", ".", "-printf", "%p\\0", "-print0"], "x\0").reason == "unsupported_format"
    assert err(["find", ".", "-exec", "rm", "{}", ";"], "x\n").reason == "unsupported_format"


@pytest.mark.parametrize("args,hint", [
    ([".", "-printf", "%p %s\n"], [".", "-print0"]),  # the format is -printf's, not a starting point
    (["/tmp", "-name", "*.py", "-printf", "%s %p\n"], ["/tmp", "-name", "*.py", "-print0"]),
    ([".", "-fprintf", "out.txt", "%p\n"], [".", "-print0"]),
    ([".", "-type", "f", "-exec", "wc", "-l", "{}", "+"], [".", "-type", "f", "-print0"]),
    ([".", "-maxdepth", "1", "-ls", "-print"], [".", "-maxdepth", "1", "-print0"]),
])
def test_hint_drops_each_action_with_its_arguments(args: list[str], hint: list[str]) -> None:
    e = err(["find", *args], "x\n")
    assert e.reason == "unsupported_format"
    assert e.hint is not None and e.hint.args == hint
