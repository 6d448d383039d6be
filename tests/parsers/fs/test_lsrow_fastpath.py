"""``RowParser.rows`` reads common rows with ``str.split`` instead of the row regex: every line
must come out exactly as ``RowParser.row`` (the regex) reads it — same keys, same order, same
values — including the lines the fast path has to hand back."""

from __future__ import annotations

import itertools
import json
import os
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from parism.parsers.fs._lsrow import RowParser, RowStyle

MODES = ["-rw-r--r--", "drwxr-xr-x", "lrwxrwxrwx", "-rwsr-sr-t", "crw-rw----", "-rw-r--r--.", "-rw-r--r--@",
         "drwxr-xr-x+", "-rw-r--r--x", "?rw-r--r--"]
SIZES = ["1234", "0", "1,  3", "1.5K", "0x1f", "²", "٣٣"]
DATES = ["Nov 30 07:34", "Feb 17  2023", "Feb 29 10:00", "Feb 30 10:00", "Foo 12 10:00", "Jan  1 10:00:00 2020",
         "2020-01-01 10:00", "2020-01-01", "Mär  3 10:00", "Nov 30 7:34"]
NAMES = ["name", " leading space", "a -> b", "a -> b -> c", "tab\there", "trailing ", "", "x -> y/", "ünï"]


def _lines() -> list[str]:
    out = []
    for mode, size, date, name in itertools.product(MODES, SIZES, DATES, NAMES):
        out.append(f"{mode} 1 root root {size:>6} {date} {name}")
    out += [
        "-rw-r--r-- 1 root 12 Jan  1 10:00 no group",
        "-rw-r--r--  12 root   root  12 Jan  1 10:00 wide",
        "-rw-r--r--\t1\troot\troot\t12\tJan\t1\t10:00 tabs",
        "-rw-r--r-- 1 root root 12 Jan 1 10:00\ttab before the name",
        "-rw-r--r-- 1 root root 12 Jan 1 10:00  two spaces",
        "-rw-r--r-- 1 root root 12 Jan 1 10:00\u00a0nbsp",
        "  -rw-r--r-- 1 root root 12 Jan  1 10:00 indented",
        "lrwxrwxrwx 1 root root 1 Jan  1 10:00 a -> b -> c",
        "lrwxrwxrwx 1 root root 6 Jan  1 10:00 a -> b -> c",
        "lrwxrwxrwx 1 root root 1 Jan  1 10:00 no target",
        "-rw-r--r-- 1 root root 12 Jan  1 10:00",
        "-rw-r--r-- 1 root root 12 Jan  1 10:00 ",
        "-rw-r--r-- ١ root root 12 Jan  1 10:00 arabic-indic links",
        "-rw-r--r-- x root root 12 Jan  1 10:00 letter links",
        "-rw-r--r-- ² root root 12 Jan  1 10:00 superscript links",
        "-rw-r--r-- 1 root root 12 Jan ١ 10:00 arabic-indic day",
        "d????????? ? ? ? ?            ? unreadable",
        "  12 -rw-r--r-- 1 root root 12 Jan  1 10:00 inode",
        "total 12",
        "",
        "garbage",
    ]
    return out


@pytest.mark.parametrize("now_year", [None, 2020])
@pytest.mark.parametrize("style", [RowStyle(), RowStyle(has_inode=True), RowStyle(classify=True)], ids=repr)
def test_rows_reads_every_line_as_the_row_regex_does(style: RowStyle, now_year: int | None) -> None:
    lines = _lines()
    fast = RowParser(style, now_year).rows(lines)
    slow = RowParser(style, now_year)
    for line, row in zip(lines, fast):
        expected = slow.row(line)
        assert (list(row.items()) if row else row) == (list(expected.items()) if expected else expected), line


def test_rows_takes_the_fast_path_for_common_rows() -> None:
    """The equality above would also hold if every line went through ``row``: count them."""
    parser = RowParser(RowStyle(), 2026)
    calls = []
    slow = parser.row
    parser.row = lambda line: calls.append(line) or slow(line)  # type: ignore[method-assign]
    rows = parser.rows(["-rw-r--r-- 1 root root 12 Jan  1 10:00 a", "lrwxrwxrwx 1 root root 1 Jan  1  2020 b -> c",
                        "-rw-r--r--. 1 u g 0 Dec 31 23:59 d", "-rw-r--r-- 1 root root 12 Jan  1 10:00  e"])
    assert calls == ["-rw-r--r-- 1 root root 12 Jan  1 10:00  e"]
    assert [r["name"] for r in rows if r] == ["a", "b", "d", " e"]


ROOT = Path(__file__).resolve().parents[3]
CORPUS = Path(os.environ.get("PARISM_CORPUS", ROOT.parent / "shared" / "corpus" / "jc"))


def _printed_lines() -> list[str]:
    """Every line of the real ls outputs: the project's fixtures and the shared corpus's."""
    files = sorted((ROOT / "tests" / "fixtures").glob("*/ls/*.out"))
    manifest = CORPUS / "manifest.json"
    if manifest.exists():
        files += [CORPUS / e["files"]["out"] for e in json.loads(manifest.read_text())["entries"]
                  if e["argv"] and e["argv"][0] == "ls"]
    return [line for f in files if f.exists() for line in f.read_text(errors="replace").splitlines()]


def _same_rows(lines: list[str], now_year: int | None) -> None:
    fast = RowParser(RowStyle(), now_year).rows(lines)
    slow = RowParser(RowStyle(), now_year)
    for line, row in zip(lines, fast, strict=True):
        expected = slow.row(line)
        assert (list(row.items()) if row else row) == (list(expected.items()) if expected else expected), line


@pytest.mark.parametrize("now_year", [None, 2020])
def test_rows_reads_every_printed_line_as_the_row_regex_does(now_year: int | None) -> None:
    lines = _printed_lines()
    assert len(lines) > 500
    _same_rows(lines, now_year)


FIELD = st.text(st.sampled_from("ab -.>1:\t"), max_size=4)
LINES = st.builds(
    "{}{} {:>{w}} {} {} {:>6} {} {:>2} {} {}".format,
    st.sampled_from(["", " ", "  12 "]), st.sampled_from(MODES), st.sampled_from(["1", "12", "x", "١"]),
    st.sampled_from(["root", "u g", ""]), st.sampled_from(["root", "wheel"]), st.sampled_from([*SIZES, "18", "6"]),
    st.sampled_from(["Jan", "Feb", "Mär", "Foo"]), st.sampled_from(["1", "29", "30", "١"]),
    st.sampled_from(["10:00", "2020", " 2020", "7:34", "10:00:00 2020"]),
    st.builds("".join, st.lists(st.one_of(FIELD, st.sampled_from([" -> ", "->", "name"])), max_size=5)),
    w=st.sampled_from([1, 3]))


@settings(max_examples=400, deadline=None)
@given(st.lists(LINES, min_size=1, max_size=6), st.sampled_from([None, 2020]))
def test_rows_reads_generated_lines_as_the_row_regex_does(lines: list[str], now_year: int | None) -> None:
    _same_rows(lines, now_year)


def test_conversions_kept_between_listings_follow_now_year() -> None:
    """Short dates' ISO forms outlive one listing: a pinned year must still decide the year."""
    line = "-rw-r--r-- 1 root root 12 Jan  1 10:00 a"
    years = [RowParser(RowStyle(), y).rows([line])[0]["modified_at"] for y in (2020, 2021, 2020)]  # type: ignore[index]
    assert years == ["2020-01-01T10:00:00", "2021-01-01T10:00:00", "2020-01-01T10:00:00"]
    first, again = (RowParser(RowStyle(), 2020).rows([line])[0] for _ in range(2))
    assert first == again and first is not again and first["permissions"] is not again["permissions"]  # type: ignore[index]
