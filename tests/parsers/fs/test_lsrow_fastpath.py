"""``RowParser.rows`` reads common rows with ``str.split`` instead of the row regex: every line
must come out exactly as ``RowParser.row`` (the regex) reads it — same keys, same order, same
values — including the lines the fast path has to hand back."""

from __future__ import annotations

import itertools

import pytest

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
