"""head, tail and cat on real coreutils output of files built here."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.parsers.text.realrun import parse, run_parsed


@pytest.fixture()
def files(tmp_path: Path) -> Path:
    (tmp_path / "a.txt").write_text("1\n2\n\n==> fake <==\n5\n")
    (tmp_path / "b c.txt").write_text("x\ny")  # no final newline
    (tmp_path / "crlf.txt").write_bytes(b"r1\r\nr2\r\n")
    (tmp_path / "ff.txt").write_text("a\fb\n")
    return tmp_path


def test_lines_have_no_bogus_trailing_empty_string(files: Path) -> None:
    assert run_parsed("cat", ["a.txt"], files) == {"lines": ["1", "2", "", "==> fake <==", "5"]}
    assert run_parsed("cat", ["b c.txt"], files) == {"lines": ["x", "y"]}


def test_only_newline_splits(files: Path) -> None:
    assert run_parsed("cat", ["ff.txt"], files) == {"lines": ["a\fb"]}


def test_crlf_is_reported(files: Path) -> None:
    assert run_parsed("cat", ["crlf.txt"], files) == {"lines": ["r1", "r2"], "crlf": True}


def test_head_banners_become_sections(files: Path) -> None:
    got = run_parsed("head", ["-n", "4", "a.txt", "b c.txt"], files)
    assert got == {"files": [{"file": "a.txt", "lines": ["1", "2", "", "==> fake <=="]},
                             {"file": "b c.txt", "lines": ["x", "y"]}]}


def test_tail_banners_and_quiet(files: Path) -> None:
    got = run_parsed("tail", ["-n", "1", "a.txt", "b c.txt"], files)
    assert got == {"files": [{"file": "a.txt", "lines": ["5"]}, {"file": "b c.txt", "lines": ["y"]}]}
    assert run_parsed("tail", ["-q", "-n", "1", "a.txt", "b c.txt"], files) == {"lines": ["5", "y"]}


def test_content_that_looks_like_a_banner_stays_content(files: Path) -> None:
    assert run_parsed("tail", ["-n", "+4", "a.txt"], files) == {"lines": ["==> fake <==", "5"]}


def test_cat_numbered(files: Path) -> None:
    assert run_parsed("cat", ["-n", "a.txt"], files)["lines"][:3] == [
        {"number": 1, "text": "1"}, {"number": 2, "text": "2"}, {"number": 3, "text": ""}]
    assert run_parsed("cat", ["-b", "a.txt"], files)["lines"][2:4] == [
        {"text": ""}, {"number": 3, "text": "==> fake <=="}]


def test_follow_and_display_flags_are_out_of_range() -> None:
    out = parse("tail", ["-f", "x.log"], "")
    assert out.parse_error is not None and out.parse_error.reason == "unsupported_format"
    assert out.parse_error.hint is not None and out.parse_error.hint.args == ["x.log"]
    out = parse("cat", ["-A", "x"], "a$\n")
    assert out.parse_error is not None and out.parse_error.hint.args == ["x"]


def test_banner_missing_is_unrecognized() -> None:
    out = parse("head", ["a", "b"], "no banner here\n")
    assert out.parse_error is not None and out.parse_error.reason == "unrecognized_output"
