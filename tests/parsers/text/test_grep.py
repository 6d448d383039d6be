"""grep on real GNU grep output over files built here; expected rows come from the files' content."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.parsers.text.realrun import parse, parsed, run, run_parsed


@pytest.fixture()
def tree(tmp_path: Path) -> Path:
    (tmp_path / "a:b.txt").write_text("hello\nworld\nhello again\n")
    (tmp_path / "c-1-d.txt").write_text("x\nhello\n")
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "n 2.txt").write_text("no\nno\nhello: yes\n")
    (tmp_path / "bin.dat").write_bytes(b"abc\0hello\n")
    return tmp_path


def test_n_several_files_with_colon_and_dash_names(tree: Path) -> None:
    rows = run_parsed("grep", ["-n", "hello", "a:b.txt", "c-1-d.txt"], tree)["matches"]
    assert rows == [
        {"file": "a:b.txt", "line": 1, "text": "hello"},
        {"file": "a:b.txt", "line": 3, "text": "hello again"},
        {"file": "c-1-d.txt", "line": 2, "text": "hello"},
    ]


def test_single_file_n_has_no_name(tree: Path) -> None:
    rows = run_parsed("grep", ["-n", "hello", "sub/n 2.txt"], tree)["matches"]
    assert rows == [{"line": 3, "text": "hello: yes"}]


def test_recursive_names_with_spaces(tree: Path) -> None:
    rows = run_parsed("grep", ["-rn", "yes", "."], tree)["matches"]
    assert rows == [{"file": "./sub/n 2.txt", "line": 3, "text": "hello: yes"}]


def test_context_lines_and_separators(tree: Path) -> None:
    rows = run_parsed("grep", ["-n", "-C1", "hello", "a:b.txt", "c-1-d.txt"], tree)["matches"]
    assert rows == [
        {"file": "a:b.txt", "line": 1, "text": "hello"},
        {"file": "a:b.txt", "line": 2, "text": "world", "context": True},
        {"file": "a:b.txt", "line": 3, "text": "hello again"},
        {"file": "c-1-d.txt", "line": 1, "text": "x", "context": True},
        {"file": "c-1-d.txt", "line": 2, "text": "hello"},
    ]


def test_before_context_without_n_uses_the_group_file(tree: Path) -> None:
    # "c-1-d.txt-x": the context line comes before its match; splitting at the first '-' is wrong
    rows = run_parsed("grep", ["-B1", "hello", "c-1-d.txt", "a:b.txt"], tree)["matches"]
    assert rows[0] == {"file": "c-1-d.txt", "text": "x", "context": True}
    assert rows[1] == {"file": "c-1-d.txt", "text": "hello"}


def test_null_names_are_exact(tree: Path) -> None:
    rows = run_parsed("grep", ["-rZn", "hello", "."], tree)["matches"]
    assert {(r["file"], r["line"]) for r in rows} == {
        ("./a:b.txt", 1), ("./a:b.txt", 3), ("./c-1-d.txt", 2), ("./sub/n 2.txt", 3)}


def test_files_with_matches_null(tree: Path) -> None:
    rows = run_parsed("grep", ["-rlZ", "hello", "."], tree)["matches"]
    assert sorted(r["file"] for r in rows) == ["./a:b.txt", "./bin.dat", "./c-1-d.txt", "./sub/n 2.txt"]


def test_bug_42_count_is_a_number_not_text(tree: Path) -> None:
    rows = run_parsed("grep", ["-c", "hello", "a:b.txt", "c-1-d.txt", "sub/n 2.txt"], tree)["matches"]
    assert rows == [{"file": "a:b.txt", "count": 2}, {"file": "c-1-d.txt", "count": 1},
                    {"file": "sub/n 2.txt", "count": 1}]
    assert run_parsed("grep", ["-c", "no", "sub/n 2.txt"], tree)["matches"] == [{"count": 2}]


def test_byte_offsets(tree: Path) -> None:
    rows = run_parsed("grep", ["-nb", "hello", "a:b.txt"], tree)["matches"]
    # "hello\n" is 6 bytes, "world\n" 6 more: the third line starts at byte 12
    assert rows == [{"line": 1, "byte_offset": 0, "text": "hello"},
                    {"line": 3, "byte_offset": 12, "text": "hello again"}]


def test_binary_notice_both_spellings() -> None:
    gnu = parsed("grep", ["x", "a", "b"], "grep: b: binary file matches\na:x\n")["matches"]
    bsd = parsed("grep", ["x", "a", "b"], "Binary file b matches\na:x\n", "macos")["matches"]
    for rows in (gnu, bsd):
        assert rows == [{"file": "b", "binary": True}, {"file": "a", "text": "x"}]


def test_no_output_is_an_empty_success(tree: Path) -> None:
    assert run_parsed("grep", ["-r", "nothing-matches-this", "."], tree) == {"matches": []}


def test_garbage_for_count_mode_is_unrecognized() -> None:
    out = parse("grep", ["-c", "x", "a", "b"], "this is not a count\n")
    assert out.parse_error is not None and out.parse_error.reason == "unrecognized_output"


def test_null_data_is_out_of_range_with_hint() -> None:
    out = parse("grep", ["-z", "-n", "x", "f"], "f\0")
    assert out.parse_error is not None and out.parse_error.reason == "unsupported_format"
    assert out.parse_error.hint is not None and out.parse_error.hint.args == ["-n", "x", "f"]


def test_no_pattern_is_out_of_range() -> None:
    out = parse("grep", ["-n"], "")
    assert out.parse_error is not None and out.parse_error.reason == "unsupported_format"


def test_live_run_is_stdout_only(tree: Path) -> None:
    text = run("grep", ["hello", "a:b.txt", "bin.dat"], tree)
    rows = parsed("grep", ["hello", "a:b.txt", "bin.dat"], text)["matches"]
    assert [r["text"] for r in rows if "text" in r] == ["hello", "hello again"]


def test_bsd_capital_z_is_decompress_not_null() -> None:
    # BSD grep(1): "-Z, --decompress  Force grep to behave as zgrep"; names still end with ':'
    rows = parsed("grep", ["-Z", "-n", "x", "a", "b"], "a:3:x\n", "macos")["matches"]
    assert rows == [{"file": "a", "line": 3, "text": "x"}]
    rows = parsed("grep", ["--null", "-n", "x", "a", "b"], "a:b\x003:x\n", "freebsd")["matches"]
    assert rows == [{"file": "a:b", "line": 3, "text": "x"}]
