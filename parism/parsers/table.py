"""One column reader for every table-shaped output.

Two ways to read a row:

- ``split_row(line, n)``: whitespace columns where only the *last* column may contain spaces
  (``ps aux`` COMMAND, ``ls -l`` names). Internal spacing of the last column is kept verbatim.
- ``HeaderTable``: columns located by the header's text positions (``df``, ``docker ps``,
  ``kubectl get``, ``systemctl``), for tables where a middle column may contain spaces or be
  empty. Each data token is assigned to the header column it overlaps, so left- and
  right-aligned columns both work; the last column takes the rest of the line.

Helpers for sizes live here too so that every parser converts units the same way.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from parism.parsers.contract import Unrecognized

_WS = re.compile(r"\S+")
_CELL_END = re.compile(r"\s{2,}|\s(?=\S)")  # where an overflowing cell of ``HeaderTable.slice`` ends


def split_row(line: str, n: int) -> list[str] | None:
    """Split into exactly ``n`` fields; the last keeps its inner spacing. None if fewer."""
    fields: list[str] = []
    pos = 0
    for _ in range(n - 1):
        m = _WS.search(line, pos)
        if m is None:
            return None
        fields.append(m.group())
        pos = m.end()
    rest = line[pos:]
    # drop exactly the separator run before the last field, keep its own spacing
    rest = rest.lstrip(" \t")
    if not rest:
        return None
    fields.append(rest.rstrip("\r\n"))
    return fields


def tokens_with_spans(line: str) -> list[tuple[int, int, str]]:
    return [(m.start(), m.end(), m.group()) for m in _WS.finditer(line)]


@dataclass(frozen=True)
class Column:
    name: str
    start: int
    end: int


@dataclass(frozen=True)
class HeaderTable:
    columns: tuple[Column, ...]

    @classmethod
    def from_header(cls, header: str, names: Sequence[str] | None = None) -> HeaderTable:
        """Locate columns. ``names`` lists multi-word header names (e.g. ``"MEM USAGE / LIMIT"``,
        ``"Mounted on"``) in order; without it each header word is one column."""
        cols: list[Column] = []
        if names is None:
            for s, e, w in tokens_with_spans(header):
                cols.append(Column(w, s, e))
        else:
            pos = 0
            for name in names:
                idx = header.find(name, pos)
                if idx < 0:
                    raise ValueError(f"header has no column {name!r}")
                cols.append(Column(name, idx, idx + len(name)))
                pos = idx + len(name)
        return cls(tuple(cols))

    def names(self) -> list[str]:
        return [c.name for c in self.columns]

    def slice(self, line: str) -> dict[str, str]:
        """Cut at the header's column starts — for left-aligned, space-padded tables (kubectl,
        docker, helm) where a cell may contain spaces (``3 (5m ago)``, ``Up 2 hours``). A cell that
        overflows into the next column's start (no padding left) is still split at that start,
        unless the character there is not preceded by a space, in which case the cut moves right
        to the next space run."""
        out: dict[str, str] = {}
        starts = [c.start for c in self.columns]
        pos = 0
        for i, col in enumerate(self.columns):
            end = starts[i + 1] if i + 1 < len(starts) else len(line)
            if i + 1 < len(starts) and end < len(line) and end > 0 and line[end - 1] != " ":
                m = _CELL_END.search(line, end)
                end = m.start() if m else len(line)
            out[col.name] = line[pos:end].strip()
            pos = end
        return out

    def read(self, line: str) -> dict[str, str]:
        """Assign each token to a column by position; the last column takes the rest."""
        cols = self.columns
        out = {c.name: "" for c in cols}
        if not cols:
            return out
        last = cols[-1]
        toks = tokens_with_spans(line)
        parts: dict[int, list[tuple[int, int, str]]] = {}
        for s, e, w in toks:
            if s >= last.start or (e > last.start and s >= _boundary(cols, len(cols) - 1)):
                idx = len(cols) - 1
            else:
                idx = _column_for(cols, s, e)
            parts.setdefault(idx, []).append((s, e, w))
        for idx, items in parts.items():
            if idx == len(cols) - 1:
                s0 = items[0][0]
                out[cols[idx].name] = line[s0:].rstrip("\r\n").rstrip()
            else:
                s0, e0 = items[0][0], items[-1][1]
                out[cols[idx].name] = line[s0:e0]
        return out


def read_table(text: str, first: str, multiword: Sequence[str] = ()) -> tuple[list[str], list[dict[str, str]]]:
    """Rows of a left-aligned table (kubectl, docker, helm, npm outdated) whose header starts
    with the word of ``first``, each sliced at the header's column starts. ``multiword`` lists
    header names that contain spaces (``"CONTAINER ID"``, ``"LAST SEEN"``)."""
    lines = [ln.rstrip("\r") for ln in text.splitlines()]
    idx = next((i for i, ln in enumerate(lines) if ln.split()[:1] == [first.split()[0]]), None)
    if idx is None:
        raise Unrecognized(f"no table header starting with {first!r}")
    header = lines[idx]
    names: list[str] = []
    pos = 0
    while (m := _WS.search(header, pos)) is not None:
        name = next((w for w in multiword if header.startswith(w, m.start())), m.group())
        names.append(name)
        pos = m.start() + len(name)
    table = HeaderTable.from_header(header, names)
    return names, [table.slice(ln) for ln in lines[idx + 1:] if ln.strip()]


def snake(name: str) -> str:
    """A header or label as a JSON key: ``"MEM USAGE / LIMIT"`` → ``mem_usage_limit``."""
    return _NON_WORD.sub("_", name.lower()).strip("_")


_NON_WORD = re.compile(r"[^a-z0-9]+")


def _boundary(cols: Sequence[Column], i: int) -> int:
    """Left edge of column i's territory: just after the previous header word."""
    return cols[i - 1].end + 1 if i > 0 else 0


def _column_for(cols: Sequence[Column], s: int, e: int) -> int:
    best, best_overlap = None, 0
    for i, c in enumerate(cols):
        ov = min(e, c.end) - max(s, c.start)
        if ov > best_overlap:
            best, best_overlap = i, ov
    if best is not None:
        return best
    # no overlap: the token sits in a gap; right-aligned numbers end at their header's end,
    # left-aligned text starts at its header's start. Pick the nearest header edge.
    dist = [min(abs(s - c.start), abs(e - c.end)) for c in cols]
    return dist.index(min(dist))


_UNITS = {"": 1, "B": 1, "K": 1024, "M": 1024**2, "G": 1024**3, "T": 1024**4, "P": 1024**5, "E": 1024**6}
_SIZE_RE = re.compile(r"^\s*([0-9]+(?:[.,][0-9]+)?)\s*([KMGTPE]?)(i?)([B]?)\s*$", re.IGNORECASE)


def human_to_bytes(text: str, base: int = 1024) -> int | None:
    """'4.0K' → 4096 (base 1024, the GNU -h convention); '1.5G', '12', '3Mi'. None if not a size."""
    m = _SIZE_RE.match(text)
    if not m:
        return None
    num = float(m.group(1).replace(",", "."))
    unit = m.group(2).upper()
    power = "KMGTPE".find(unit) + 1 if unit else 0
    return round(num * (base**power))


_INT = re.compile(r"[+-]?\d+")


def to_int(text: str | None) -> int | None:
    """'1,234' → 1234; anything that is not a plain (ASCII) integer → None. Hot in every table
    parser: plain digit strings take the C fast path."""
    if text is None:
        return None
    if text.isascii() and text.isdigit():
        return int(text)
    t = text.strip().replace(",", "")
    return int(t) if _INT.fullmatch(t) else None


def to_float(text: str | None) -> float | None:
    if text is None:
        return None
    t = text.strip().rstrip("%")
    try:
        return float(t)
    except ValueError:
        return None
