"""``wc``: line, word, character and byte counts per file.

Schema::

    {entries: [{file: str|null, lines?: int, words?: int, chars?: int, bytes?: int,
                max_line_length?: int}],
     total?: {lines?, words?, chars?, bytes?, max_line_length?}}

Which counts a row holds comes from the flags, in the order wc prints them (lines, words,
chars, bytes, max line length); no counter flag means the default three (lines words bytes).
``file`` is null for standard input. The ``total`` row (several files, or ``--total=always``)
is reported apart from the entries, never as a file named "total" (German: "insgesamt").  The name is
everything after the one space that follows the last count (leading spaces are part of it).  Names in shell quoting are
decoded: all of them when uutils ``wc`` quoted the listing (``'a b'``, a warning says so), and
the newline names GNU ``wc`` quotes (``'a'$'\\n''b'``).
"""

from __future__ import annotations

import re
from typing import Any

from pydantic import BaseModel

from parism.parsers import shellquote
from parism.parsers.contract import Contract, ParseInput, Parser, Unrecognized, always
from parism.parsers.l10n import TOTAL_WORDS
from parism.parsers.table import split_row, to_int
from parism.parsers.text._common import split_lines

COUNTERS = (  # (field, short flag, long flag) in output order
    ("lines", "-l", "--lines"),
    ("words", "-w", "--words"),
    ("chars", "-m", "--chars"),
    ("bytes", "-c", "--bytes"),
    ("max_line_length", "-L", "--max-line-length"),
)


#: The flags that choose wc's columns and how the parse reads each (docs/parsers.md, "wc"); the
#: live tests are in tests/parsers/fs/test_truth_live.py and tests/parsers/test_live_fs.py.
COLUMN_FLAGS: dict[str, str] = {
    "-l, -w, -m, -c, -L (and long forms)": "the counts shown, always in wc's order lines, words, chars, bytes, "
                                            "max_line_length, whatever the order of the flags; none: lines words bytes",
    "--total=auto|always|only|never": "the total row is reported apart (total), never as a file named 'total'",
    "names": "everything after the one space that follows the last count, leading spaces included; "
             "shell-quoted names (GNU's newline names, uutils) decoded to their exact bytes",
}

_TOTAL_NAMES = frozenset(TOTAL_WORDS.values())  # "total", German "insgesamt"


class Counts(BaseModel):
    lines: int | None = None
    words: int | None = None
    chars: int | None = None
    bytes: int | None = None
    max_line_length: int | None = None


class WcEntry(Counts):
    file: str | None = None


class WcResult(BaseModel):
    entries: list[WcEntry]
    total: Counts | None = None
    warnings: list[str] | None = None


_ROW: dict[int, re.Pattern[str]] = {}


def _counts_and_name(line: str, n: int) -> list[str] | None:
    """``n`` counts, then exactly one space and the name, which keeps its own leading spaces
    (GNU, BusyBox and BSD ``wc`` all print one space before it: ``3   lead`` is ``'  lead'``)."""
    pattern = _ROW.get(n)
    if pattern is None:
        pattern = _ROW[n] = re.compile(r"[ \t]*(\d+)" + r"[ \t]+(\d+)" * (n - 1) + r"(?: (.+))?")
    m = pattern.fullmatch(line.rstrip("\r"))
    if m is None:
        return None
    return [g for g in m.groups() if g is not None]


def columns(pin: ParseInput) -> list[str]:
    chosen = [name for name, short, long in COUNTERS if pin.tokens.has(short, long)]
    return chosen or ["lines", "words", "bytes"]


def parse(text: str, pin: ParseInput) -> dict[str, Any]:
    """Rows are plain dicts in the models' field order (counts, then ``file``), None left out."""
    cols = columns(pin)
    mode = (pin.tokens.values("--total") or ["auto"])[-1]
    rows: list[dict[str, Any]] = []
    for line in split_lines(text)[0]:
        if not line.strip():
            continue
        parts = _counts_and_name(line, len(cols)) or split_row(line, len(cols) + 1) or split_row(line, len(cols))
        counts = [to_int(p) for p in (parts or [])[: len(cols)]]
        if not parts or None in counts or len(counts) != len(cols):
            raise Unrecognized(f"wc: line is not {len(cols)} count(s) and a name: {line[:80]!r}")
        row: dict[str, Any] = dict(zip(cols, counts))
        if len(parts) > len(cols):
            row["file"] = parts[len(cols)]
        rows.append(row)
    out: dict[str, Any] = {"entries": rows}
    if ("'" in text or '"' in text) and shellquote.unquote_rows(rows, "file"):
        out["warnings"] = [shellquote.WARNING]
    else:
        for row in rows:
            name = row.get("file")
            if isinstance(name, str) and (value := shellquote.newline_name(name)) is not None:
                row["file"] = value
    if rows and (mode == "only" or (rows[-1].get("file") in _TOTAL_NAMES and (len(rows) > 2 or mode == "always"))):
        total = rows.pop()
        total.pop("file", None)
        out["total"] = total
    return out


PARSER = Parser(
    id="wc",
    evidence=True,
    contract=Contract(
        flags={f: "bool" for _, s, lg in COUNTERS for f in (s, lg)} | {"--total": "attached"},
        values={"--total": "auto|always|only|never"},
    ),
    parse=parse,
    schema=WcResult,
    rows_key="entries",
    row_fields=("file", "lines", "words", "chars", "bytes", "max_line_length"),
    prints_always=always,
    examples=(("-l", "src/app.py"), ("a.txt", "b.txt")),
)
