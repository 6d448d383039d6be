"""``compact`` format (contract §6.3): fold arrays of objects into ``{schema, rows}`` — losslessly.

v1 lost data (first-row schema, ``|``-joined nested arrays, crash on ``null``). This version is
a total function: the schema is the union of the row keys in first-seen order; a key a row lacks
becomes ``null`` (parsers drop ``None`` fields, so absent and null mean the same thing); nested
values stay JSON values; arrays that are not all objects stay as they are. Anything that cannot
be represented (nesting deeper than ``MAX_DEPTH``) is reported, never silently mangled.
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import chain, compress
from typing import Any, TYPE_CHECKING

if TYPE_CHECKING:
    from pydantic import JsonValue

MAX_DEPTH = 64
_SCALARS = frozenset({str, int, float, bool, type(None)})
_CONTAINERS = frozenset({dict, list})
_PLAIN = _SCALARS | _CONTAINERS
_DICT = frozenset({dict})
_LIST = frozenset({list})


@dataclass(frozen=True)
class CompactOutcome:
    ok: bool
    value: Any = None
    reason: str | None = None  # "representation_not_lossless"
    message: str | None = None


def deeper_than(value: JsonValue, limit: int) -> bool:
    """Is ``value`` nested more than ``limit`` levels deep (a scalar is one level)?

    Level by level (no recursion limit), with per-item work done by C iterators: a parsed
    listing is thousands of rows of scalars, and a Python step per value dominated shaping.
    ``kinds`` holds the exact types of the level's containers when they are plain, so a level
    of only objects (or only arrays) is flattened without a Python step per container.
    """
    if limit < 1 or not isinstance(value, (dict, list)):
        return limit < 1
    level: list[Any] = [value]  # the containers at ``depth``
    kinds: set[type] | None = {type(value)} & _CONTAINERS or None
    depth = 1
    while True:
        if kinds == _DICT:
            items = list(chain.from_iterable(map(dict.values, level)))
        elif kinds == _LIST:
            items = list(chain.from_iterable(level))
        else:
            items = list(chain.from_iterable([n.values() if isinstance(n, dict) else n for n in level]))
        if not items:
            return False
        if depth >= limit:
            return True  # items sit at depth + 1
        kinds = set(map(type, items))
        if kinds <= _SCALARS:
            return False
        if kinds <= _CONTAINERS:
            level = items
        elif kinds <= _PLAIN:  # exact types: membership by type is isinstance
            level = list(compress(items, map(_CONTAINERS.__contains__, map(type, items))))
            kinds &= _CONTAINERS
        else:
            level = [v for v in items if isinstance(v, (dict, list))]
            kinds = None
        depth += 1


def fold(rows: list[Any]) -> Any:
    """One array: ``{schema, rows}`` when every element is an object, else unchanged."""
    if not rows:
        return {"schema": [], "rows": []}
    if not all(isinstance(r, dict) for r in rows):
        return rows
    return _fold(rows)


def _fold(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """Rows of a listing share a few key sequences.  The schema (the union of the row keys in
    first-seen order) is the union of the distinct sequences in first-seen order; a row whose
    keys are the schema's first keys, in order, becomes its values plus nulls — C-level copies,
    where a lookup per schema key per row was most of the folding time."""
    shapes = list(map(tuple, rows))
    pads: dict[tuple[str, ...], tuple[None, ...] | None] = dict.fromkeys(shapes)
    keys = list(dict.fromkeys(chain.from_iterable(pads)))
    width = len(keys)
    for sig in pads:
        n = len(sig)
        pads[sig] = (None,) * (width - n) if tuple(keys[:n]) == sig else None
    out = []
    for row, sig in zip(rows, shapes):
        pad = pads[sig]
        out.append([*row.values(), *pad] if pad is not None else list(map(row.get, keys)))
    return {"schema": keys, "rows": out}


def columns_deeper_than(columns: list[tuple[Any, ...]], kinds: list[set[type]], limit: int) -> bool:
    """Is any cell of a folded table's ``columns`` (``kinds``: the exact types of each column's
    cells) nested more than ``limit`` (≥ 1) levels deep?  A column of scalars (most of them)
    costs nothing more, only columns holding containers are walked."""
    for column, types in zip(columns, kinds):
        if not types <= _SCALARS and deeper_than(list(column), limit + 1):
            return True  # the list around the column adds the one level
    return False


def compact(value: JsonValue) -> CompactOutcome:
    """Fold every top-level array of ``value`` (an object); other shapes are returned unchanged.

    The depth check is the one ``deeper_than(value, MAX_DEPTH)`` would make, split by part:
    an object's values are allowed one level less; the values of a folded array two less
    (array, row), checked in its folded rows, where a missing key's null (one level) never
    counts because that limit stays above one."""
    refused = CompactOutcome(ok=False, reason="representation_not_lossless",
                             message=f"nesting deeper than {MAX_DEPTH} levels cannot be compacted")
    if not isinstance(value, dict):
        return refused if deeper_than(value, MAX_DEPTH) else CompactOutcome(ok=True, value=value)
    out: dict[str, Any] = {}
    for k, v in value.items():
        folded = fold(v) if isinstance(v, list) else v
        if folded is not v and v:
            columns = list(zip(*folded["rows"]))
            deep = columns_deeper_than(columns, [set(map(type, c)) for c in columns], MAX_DEPTH - 3)
        else:
            deep = deeper_than(v, MAX_DEPTH - 1)
        if deep:
            return refused
        out[k] = folded
    return CompactOutcome(ok=True, value=out)
