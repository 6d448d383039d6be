"""wc on real coreutils output for files whose counts the test knows by construction."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.parsers.text.realrun import parse, parsed, run_parsed


@pytest.fixture()
def files(tmp_path: Path) -> Path:
    (tmp_path / "a.txt").write_text("one two\nthree\n")  # 2 lines, 3 words, 14 bytes
    (tmp_path / "with space.txt").write_text("é\n")  # 1 line, 1 word, 3 bytes, 2 chars
    return tmp_path


def test_bug_42_default_three_counts_and_total(files: Path) -> None:
    got = run_parsed("wc", ["a.txt", "with space.txt"], files)
    assert got["entries"] == [
        {"file": "a.txt", "lines": 2, "words": 3, "bytes": 14},
        {"file": "with space.txt", "lines": 1, "words": 1, "bytes": 3},
    ]
    assert got["total"] == {"lines": 3, "words": 4, "bytes": 17}


def test_single_counters_in_wc_order(files: Path) -> None:
    got = run_parsed("wc", ["-c", "-m", "with space.txt"], files)
    assert got == {"entries": [{"file": "with space.txt", "chars": 2, "bytes": 3}]}
    assert run_parsed("wc", ["-l", "a.txt"], files) == {"entries": [{"file": "a.txt", "lines": 2}]}


def test_total_only() -> None:
    # coreutils >= 9.2 (--total=only prints the total counts without a name); Debian 12 ships
    # 9.1 which lacks the option, so this output is built from the coreutils documentation
    assert parsed("wc", ["--total=only", "-l", "a", "b"], "3\n") == {"entries": [], "total": {"lines": 3}}


def test_stdin_has_null_file() -> None:
    # macOS/GNU ``wc`` reading stdin: counts only (corpus osx-10.14.6__wc-stdin shape)
    assert parsed("wc", [], "       1       3      16\n", "macos") == {
        "entries": [{"lines": 1, "words": 3, "bytes": 16}]}


def test_a_single_file_named_total_is_not_a_total() -> None:
    assert parsed("wc", ["-l", "total"], "3 total\n") == {"entries": [{"file": "total", "lines": 3}]}


def test_garbage_is_unrecognized() -> None:
    out = parse("wc", ["-l", "x"], "wc: x: No such file or directory\n")
    assert out.parse_error is not None and out.parse_error.reason == "unrecognized_output"
