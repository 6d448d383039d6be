"""``compact`` format (§6.3): fold arrays of objects into ``{schema, rows}`` — losslessly.

v1 lost data (first-row schema, ``|``-joined nested arrays, crash on ``null``). This version is
a total function: the schema is the union of the row keys in first-seen order; a key a row lacks
becomes ``null`` (parsers drop ``None`` fields, so absent and null mean the same thing); nested
values stay JSON values; arrays that are not all objects stay as they are. Anything that cannot
be represented (nesting deeper than ``MAX_DEPTH``) is reported, never silently mangled.
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import chain, compress
from typing import Any

MAX_DEPTH = 64
_SCALARS = frozenset({str, int, float, bool, type(None)})
_CONTAINERS = frozenset({dict, list})
_PLAIN = _SCALARS | _CONTAINERS


@dataclass(frozen=True)
class CompactOutcome:
    ok: bool
    value: Any = None
    reason: str | None = None  # "representation_not_lossless"
    message: str | None = None


def _deeper_than(value: Any, limit: int) -> bool:
    """Is ``value`` nested more than ``limit`` levels deep (a scalar is one level)?

    Level by level (no recursion limit), with per-item work done by C iterators: a parsed
    listing is thousands of rows of scalars, and a Python step per value dominated shaping.
    """
    if limit < 1 or not isinstance(value, (dict, list)):
        return limit < 1
    level: list[Any] = [value]  # the containers at ``depth``
    depth = 1
    while True:
        items = list(chain.from_iterable([n.values() if isinstance(n, dict) else n for n in level]))
        if not items:
            return False
        if depth >= limit:
            return True  # items sit at depth + 1
        kinds = set(map(type, items))
        if kinds <= _SCALARS:
            return False
        if kinds <= _PLAIN:  # exact types: membership by type is isinstance
            level = list(compress(items, map(_CONTAINERS.__contains__, map(type, items))))
        else:
            level = [v for v in items if isinstance(v, (dict, list))]
        depth += 1


def fold(rows: list[Any]) -> Any:
    """One array: ``{schema, rows}`` when every element is an object, else unchanged."""
    if not rows:
        return {"schema": [], "rows": []}
    if not all(isinstance(r, dict) for r in rows):
        return rows
    keys = list(dict.fromkeys(chain.from_iterable(rows)))  # union of row keys, first-seen order
    return {"schema": keys, "rows": [list(map(r.get, keys)) for r in rows]}


def compact(value: Any) -> CompactOutcome:
    """Fold every top-level array of ``value`` (an object); other shapes are returned unchanged."""
    if _deeper_than(value, MAX_DEPTH):
        return CompactOutcome(ok=False, reason="representation_not_lossless",
                              message=f"nesting deeper than {MAX_DEPTH} levels cannot be compacted")
    if not isinstance(value, dict):
        return CompactOutcome(ok=True, value=value)
    return CompactOutcome(ok=True, value={
        k: fold(v) if isinstance(v, list) else v for k, v in value.items()})
