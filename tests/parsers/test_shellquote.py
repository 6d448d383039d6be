"""Shell-quoted names (uutils, GNU on a terminal): decoded only when the listing says so.

Every quoted form below is real output: uutils 0.0.17 (``/usr/lib/cargo/bin/coreutils/ls -1``)
and GNU ls 9.1 ``--quoting-style=shell-escape`` on files created with these exact names.
"""

from __future__ import annotations

import pytest

from parism.parsers import shellquote
from tests.parsers.fs._util import ok

REAL = [  # (printed, true name)
    ("'a b'", "a b"),
    ('"it\'s"', "it's"),
    ("'dq\"x'", 'dq"x'),
    ("'$dollar'", "$dollar"),
    ("'nl'$'\\n''line'", "nl\nline"),
    ("'tab'$'\\t''x'", "tab\tx"),
    ("'esc'$'\\033'", "esc\x1b"),
    ("'cr'$'\\r'", "cr\r"),
    ("'it'\\''s $x'", "it's $x"),  # GNU and uutils: an escaped quote between two quoted parts
    ("'both'\\''\"'", "both'\""),
    ("''$'\\377'", "\udcff"),  # GNU: a byte that is not UTF-8, kept exactly (surrogateescape; issue #25)
    ("\"it's'$'\\t''tab\"", "it's\ttab"),  # uutils' double-quoted control character (its bug)
    ("\"q'nl'$'\\n\"", "q'nl\n"),
    ("'~home'", "~home"),
    ("'#hash'", "#hash"),
]


@pytest.mark.parametrize("printed,name", REAL)
def test_real_quoted_forms_decode(printed: str, name: str) -> None:
    assert shellquote.shell_quoted([printed, "plain"])
    assert shellquote.decode(printed) == name


@pytest.mark.parametrize("names", [
    ["a b", "'x y'"],  # a bare name with a space: GNU's literal style
    ["'x'", "plain"],  # 'x' needs no quotes, so the quotes are part of the name
    ["it's", "'a b'"],  # a bare quote
    ["plain", "other"],  # nothing quoted at all
])
def test_literal_listings_are_left_alone(names: list[str]) -> None:
    assert not shellquote.shell_quoted(names)


def test_gnu_terminal_padding_is_not_part_of_the_name() -> None:
    text = ("-rw-r--r-- 1 root root 0 Dec  1 21:12 'a b'\n"
            "-rw-r--r-- 1 root root 0 Dec  1 21:12  plain\n"
            "lrwxrwxrwx 1 root root 5 Dec  1 21:12  lp -> plain\n")
    res = ok(["ls", "-l"], text)
    assert [(e["name"], e.get("target")) for e in res["entries"]] == [("a b", None), ("plain", None), ("lp", "plain")]


def test_link_split_outside_the_quotes() -> None:
    text = "lrwxrwxrwx 1 root root 6 Dec  1 21:12 'arrow -> link' -> 'a -> b'\n"
    (row,) = ok(["ls", "-l"], text)["entries"]
    assert (row["name"], row["target"]) == ("arrow -> link", "a -> b")
    assert "ambiguous_link" not in row


def test_literal_gnu_listing_keeps_quote_characters() -> None:
    text = ("-rw-r--r-- 1 root root 0 Dec  1 21:12 'x'\n"
            "-rw-r--r-- 1 root root 0 Dec  1 21:12 a b\n")
    res = ok(["ls", "-l"], text)
    assert [e["name"] for e in res["entries"]] == ["'x'", "a b"]
    assert "warnings" not in res
