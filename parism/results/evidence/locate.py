"""Where each parsed value came from: spans located over the masked text after the parse.

Why after the parse and not inside every parser: the parse without evidence must cost nothing
extra (``ls -la /usr/bin`` is on the latency budget), and the 21 row- and record-shaped parsers
read their lines in 21 different ways (``str.split`` templates, regexes, header slices). The
parsed value and the masked text together determine the spans: each value is looked up in the
line(s) its row was read from, with the readers' own conventions —

- **rows** (the parser's ``rows_key`` array): rows come from lines in order. A row starts at the
  first line, at or after the previous row's, that holds its first value and (single-line
  tables) at least half of its first values; multi-line records (``git log``, ``stat``) run to
  the next row's start.
- **values in reading order**: a row's values are searched left to right from where the
  previous one ended, so repeated texts (``root root``, ``0.0 0.0``) go to the columns in the
  order the parser filled them; a value found nowhere after that is searched from the row's
  start (nested values such as ``permissions.owner`` read inside an earlier token).
- **labels** (records: ``free``, ``id``, ``env``, ``stat``, the rest of a parsed object): a
  value whose key is printed as a label (``Mem:``, ``uid=``, ``SHELL=``, ``Inode:``) is looked
  for after that label first.

Every span is verified before it is kept: its text is the value (``verbatim``, strings) or its
transform gives the value (``derived``: ``parseInt``, ``human_to_bytes``, ``date_iso`` …, see
``transforms.py``). A value without such text gets no span (``source_kind: "none"``).
"""

from __future__ import annotations

import re
from array import array
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from parism.results.evidence.transforms import CODES, NUMERIC, TRANSFORMS, verify
from parism.results.pack import utf8_len

MULTILINE = frozenset({"git-log", "stat"})  # parsers whose rows span several lines
ROW_WINDOW = 256  # lines scanned for a row's start before the row is left without evidence
SPAN_INTS = 4  # start, end, line, transform code (start = -1: no span)

_NUMBER = re.compile(r"[+-]?\d[\d,]*(?:\.\d+)?(?:[KMGTPEZYkmgtpe]i?B?|B|%)?")
_DATE = re.compile(
    r"[A-Z][a-z]{2}\s+[A-Z][a-z]{2}\s+\d{1,2}\s+\d\d:\d\d:\d\d\s+\d{4}(?:\s+[+-]\d{4})?"
    r"|\d{4}-\d\d-\d\d[ T]\d\d:\d\d(?::\d\d(?:\.\d+)?)?(?:\s*[+-]\d\d:?\d\d|Z)?"
    r"|[A-Z][a-z]{2}\s+\d{1,2}\s+(?:\d{4}|\d{1,2}:\d\d)"
    r"|\d\d-\d\d \d\d:\d\d")
_ISO_VALUE = re.compile(r"\d{4}-\d\d-\d\d")
_TOKEN = re.compile(r"\S+")

Path = tuple[str, ...]


@dataclass
class Unit:
    """Spans of one array of rows (``prefix`` = its key) or of the record (``prefix`` None)."""

    prefix: str | None
    n: int
    rows: array  # per row: first line, last line (1-based; 0 = not found), byte start, byte end
    fields: dict[Path, array] = field(default_factory=dict)  # per row: SPAN_INTS ints

    def nbytes(self) -> int:
        return self.rows.itemsize * len(self.rows) + sum(
            a.itemsize * len(a) + sum(len(p) for p in k) + 16 for k, a in self.fields.items())


@dataclass
class Evidence:
    mode: str  # "rows" | "fields"
    units: list[Unit]
    records: bool = False  # NUL-separated records: ``line`` numbers count records
    located: int = 0  # values with a span
    missing: int = 0  # values without one

    def nbytes(self) -> int:
        return sum(u.nbytes() for u in self.units)


class Text:
    """The masked stdout split into lines (NUL records for ``-z``/``-print0`` output), with byte
    offsets computed once."""

    def __init__(self, text: str) -> None:
        self.sep = "\0" if text.count("\0") > text.count("\n") else "\n"
        self.lines = text.split(self.sep)
        self.byte_starts: list[int] = []
        pos = 0
        for ln in self.lines:
            self.byte_starts.append(pos)
            pos += utf8_len(ln) + 1
        self._numbers: dict[int, list[tuple[int, int, str]]] = {}

    def tokens(self, li: int) -> list[tuple[int, int]]:
        return [m.span() for m in _TOKEN.finditer(self.lines[li])]

    def byte(self, li: int, col: int) -> int:
        line = self.lines[li]
        return self.byte_starts[li] + (col if line.isascii() else utf8_len(line[:col]))

    def numbers(self, li: int) -> list[tuple[int, int, str]]:
        got = self._numbers.get(li)
        if got is None:
            got = self._numbers[li] = [(m.start(), m.end(), m.group()) for m in _NUMBER.finditer(self.lines[li])]
        return got


def estimate(parsed: Any, rows_key: str | None, mode: str) -> int:
    """Bytes the evidence of ``parsed`` will take, known before it is built (rows × leaves)."""
    rows = parsed.get(rows_key) if isinstance(parsed, dict) and rows_key else None
    n = len(rows) if isinstance(rows, list) else 0
    per_row = 1 if mode == "rows" or not n else 1 + len(_flat(rows[0]))
    rest = 0 if mode == "rows" else len(_flat(
        {k: v for k, v in parsed.items() if k != rows_key} if isinstance(parsed, dict) else parsed))
    return 8 * SPAN_INTS * (n * per_row + rest) + 64 * (per_row + rest)


def locate(text: str, parsed: Any, rows_key: str | None, parser_id: str | None, mode: str) -> Evidence:
    src = Text(text)
    ev = Evidence(mode=mode, units=[], records=src.sep == "\0")
    rows = parsed.get(rows_key) if isinstance(parsed, dict) and rows_key else None
    if isinstance(rows, list):
        ev.units.append(_rows_unit(src, rows, rows_key, parser_id in MULTILINE, mode, ev))
    if mode == "fields":
        rest = {k: v for k, v in parsed.items() if k != rows_key and not k.startswith("_")} \
            if isinstance(parsed, dict) else None
        if rest:
            unit = Unit(prefix=None, n=1, rows=array("q", [1, len(src.lines), 0, src.byte_starts[-1]]))
            _fill(src, unit, 0, _flat(rest), 0, len(src.lines), labels=True, ev=ev)
            ev.units.append(unit)
    return ev


# -- rows ---------------------------------------------------------------------------------


def _rows_unit(src: Text, rows: list[Any], key: str, multiline: bool, mode: str, ev: Evidence) -> Unit:
    unit = Unit(prefix=key, n=len(rows), rows=array("q", bytes(8 * 4 * len(rows))))
    starts: list[int] = []
    flats = [_flat(row) for row in rows]  # once: the row start and the fill both walk it
    p = 0
    for flat in flats:
        j = _row_start(src, flat, p, multiline)
        starts.append(j)
        if j >= 0:
            p = j + 1
    nlines = len(src.lines)
    layout: dict[Any, tuple[int, int, int, int, str] | None] | None = None if multiline else {}
    for i, j in enumerate(starts):
        if j < 0:
            continue
        end = j + 1
        if multiline:
            end = next((s for s in starts[i + 1:] if s > j), nlines)
            while end - 1 > j and not src.lines[end - 1].strip():
                end -= 1
        last = src.lines[end - 1]
        unit.rows[4 * i: 4 * i + 4] = array("q", [j + 1, end, src.byte(j, 0), src.byte(end - 1, len(last.rstrip("\r")))])
        if mode == "fields" or not isinstance(rows[i], (dict, list)):  # a scalar row is its own value
            _fill(src, unit, i, flats[i], j, end, labels=multiline, ev=ev, layout=layout)
    return unit


def _row_start(src: Text, flat: list[tuple[Path, Any]], p: int, multiline: bool) -> int:
    """The line row data starts on: multi-line records at the first line (from ``p``) holding the
    row's first value; table rows at the first line holding half of its first values, else the
    line in the window holding most of them."""
    probes = [v for _, v in flat if _searchable(v)][:6]
    if not probes:
        return -1
    need = 1 if multiline else (len(probes) + 1) // 2
    best, best_j = 0, -1
    for j in range(p, min(len(src.lines), p + ROW_WINDOW)):
        if not src.lines[j].strip():
            continue
        if multiline:
            if _in_line(src, j, probes[0], 0, ()) is not None:
                return j
            continue
        got = sum(1 for v in probes if _in_line(src, j, v, 0, ()) is not None)
        if got >= need:
            return j
        if got > best:
            best, best_j = got, j
    return best_j


# -- values ---------------------------------------------------------------------------------


def _fill(src: Text, unit: Unit, i: int, flat: list[tuple[Path, Any]], lo: int, hi: int, *, labels: bool, ev: Evidence,
          layout: dict[Any, tuple[int, int, int, int, str] | None] | None = None) -> None:
    """Spans for every leaf (``flat``: ``_flat`` of the row or record), searched in lines ``[lo, hi)``.

    ``layout`` (single-line rows) remembers where each value sat in the previous row, as
    (first token, offset in it, last token, offset from its end, transform): the next row of a
    table is tried there first and searched only when that span does not verify."""
    pos = (lo, 0)
    used: set[tuple[int, int, int]] = set()
    toks = src.tokens(lo) if layout is not None else None
    for path, v in flat:
        slot = unit.fields.get(path)
        if slot is None:
            slot = unit.fields[path] = array("q", [-1, 0, 0, 0] * unit.n)
        hit = None
        if toks is not None:
            guess = layout.get(path)  # type: ignore[union-attr]
            if guess:
                hit = _at(src.lines[lo], toks, guess, v)
                if hit is not None:
                    hit = (lo, *hit)
        if hit is None and (toks is None or (path, v) not in layout):  # type: ignore[operator]
            hit = _find(src, v, path, pos, lo, hi, used, labels)
            if toks is not None and hit is None:  # found nowhere: not searched again in later rows
                layout[(path, v)] = None  # type: ignore[index]
            elif toks is not None and hit is not None:
                layout[path] = _shape(toks, hit[1], hit[2], hit[3])  # type: ignore[index]
        if hit is None:
            ev.missing += 1
            continue
        li, s, e, transform = hit
        used.add((li, s, e))
        if (li, s) >= pos:
            pos = (li, e)
        k = SPAN_INTS * i
        slot[k] = src.byte(li, s)
        slot[k + 1] = src.byte(li, e)
        slot[k + 2] = li + 1
        slot[k + 3] = CODES[transform]
        ev.located += 1


def _shape(toks: list[tuple[int, int]], s: int, e: int, transform: str) -> tuple[int, int, int, int, str]:
    k1 = next((k for k, (ts, te) in enumerate(toks) if te > s), len(toks) - 1)
    k2 = next((k for k in range(len(toks) - 1, -1, -1) if toks[k][0] < e), k1)
    return k1, s - toks[k1][0], k2, toks[k2][1] - e, transform


def _at(line: str, toks: list[tuple[int, int]], guess: tuple[int, int, int, int, str], v: Any
        ) -> tuple[int, int, str] | None:
    k1, off1, k2, off2, transform = guess
    if k2 >= len(toks):
        return None
    s = toks[k1][0] + off1
    e = s + len(v) if transform == "verbatim" and isinstance(v, str) else toks[k2][1] - off2
    if e <= s or not verify(line[s:e], v, transform):
        return None
    if transform == "verbatim" and not _bounded(line, s, e) and off1 == 0 and off2 == 0:
        return None
    return s, e, transform


def _find(src: Text, v: Any, path: Path, pos: tuple[int, int], lo: int, hi: int,
          used: set[tuple[int, int, int]], labels: bool) -> tuple[int, int, int, str] | None:
    if not _searchable(v):
        return None
    if labels and path and not path[-1].isdigit() and len(path[-1]) >= 2:
        label = _label_rx(path[-1])
        for li in range(pos[0], hi):
            m = label.search(src.lines[li], pos[1] if li == pos[0] else 0)
            if m is not None:
                hit = _in_line(src, li, v, m.end(), used)
                if hit is not None:
                    return (li, *hit)
                break
    for start, skip in ((pos, used), ((lo, 0), used), ((lo, 0), ())):
        for li in range(start[0], hi):
            hit = _in_line(src, li, v, start[1] if li == start[0] else 0, skip)
            if hit is not None:
                return (li, *hit)
    return None


def _in_line(src: Text, li: int, v: Any, col: int, skip: Any) -> tuple[int, int, str] | None:
    """The first span of ``v`` in line ``li`` from column ``col`` (skipping spans in ``skip``)."""
    line = src.lines[li]
    if isinstance(v, str):
        loose = None
        at = line.find(v, col)
        while at >= 0:
            end = at + len(v)
            if (li, at, end) not in skip:
                if _bounded(line, at, end):
                    return at, end, "verbatim"
                loose = loose or (at, end, "verbatim")
            at = line.find(v, at + 1)
        if loose is not None:
            return loose
        if " " in v and " ".join(v.split()) == v:  # the value is the text with spaces collapsed
            m = _spaced_rx(v).search(line, col)
            if m is not None and (li, m.start(), m.end()) not in skip:
                return m.start(), m.end(), "collapse_space"
        if _ISO_VALUE.match(v):
            for m in _DATE.finditer(line, col):
                if verify(m.group(), v, "date_iso"):
                    return m.start(), m.end(), "date_iso"
        return None
    for s, e, tok in src.numbers(li):
        if s < col or (li, s, e) in skip:
            continue
        for name in NUMERIC:
            if verify(tok, v, name):
                return s, e, name
    return None


def _bounded(line: str, s: int, e: int) -> bool:
    return (s == 0 or not _word(line[s - 1])) and (e >= len(line) or not _word(line[e]))


def _word(c: str) -> bool:
    return c.isalnum() or c == "_"


def _searchable(v: Any) -> bool:
    if isinstance(v, bool) or v is None:
        return False
    if isinstance(v, str):
        return bool(v.strip())
    return isinstance(v, (int, float))


def _flat(value: Any) -> list[tuple[Path, Any]]:
    """Scalar leaves in the order the parser built them (dict order, list order); keys
    starting with ``_`` (``_summary``) are not parser output."""
    out: list[tuple[Path, Any]] = []
    _flat_into(value, (), out)
    return out


def _flat_into(value: Any, path: Path, out: list[tuple[Path, Any]]) -> None:
    if isinstance(value, dict):
        for k, v in value.items():
            if k.startswith("_"):
                continue
            if isinstance(v, (dict, list)):
                _flat_into(v, (*path, k), out)
            else:
                out.append(((*path, k), v))
    elif isinstance(value, list):
        for n, v in enumerate(value):
            if isinstance(v, (dict, list)):
                _flat_into(v, (*path, str(n)), out)
            else:
                out.append(((*path, str(n)), v))
    else:
        out.append((path, value))


@lru_cache(maxsize=512)
def _label_rx(key: str) -> re.Pattern[str]:
    return re.compile(r"(?<![A-Za-z0-9_])" + re.escape(key) + r"(?![A-Za-z0-9_])", re.IGNORECASE)


@lru_cache(maxsize=512)
def _spaced_rx(value: str) -> re.Pattern[str]:
    return re.compile(r"\s+".join(re.escape(w) for w in value.split()))


assert set(NUMERIC) <= set(TRANSFORMS)
