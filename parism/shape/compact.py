"""``compact`` format (§6.3): fold arrays of objects into ``{schema, rows}`` — losslessly.

v1 lost data (first-row schema, ``|``-joined nested arrays, crash on ``null``). This version is
a total function: the schema is the union of the row keys in first-seen order; a key a row lacks
becomes ``null`` (parsers drop ``None`` fields, so absent and null mean the same thing); nested
values stay JSON values; arrays that are not all objects stay as they are. Anything that cannot
be represented (nesting deeper than ``MAX_DEPTH``) is reported, never silently mangled.
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import chain
from typing import Any

MAX_DEPTH = 64
_SCALARS = frozenset({str, int, float, bool, type(None)})


@dataclass(frozen=True)
class CompactOutcome:
    ok: bool
    value: Any = None
    reason: str | None = None  # "representation_not_lossless"
    message: str | None = None


def _deeper_than(value: Any, limit: int) -> bool:
    """Is ``value`` nested more than ``limit`` levels deep (a scalar is one level)?

    Iterative (no recursion limit), and only containers are pushed: a parsed listing is
    thousands of scalars in flat rows, and visiting each one dominated a call's shaping time.
    """
    if limit < 1 or not isinstance(value, (dict, list)):
        return limit < 1
    stack: list[tuple[dict[str, Any] | list[Any], int]] = [(value, 1)]
    while stack:
        node, d = stack.pop()
        items = node.values() if isinstance(node, dict) else node
        if not items:
            continue
        if d >= limit:
            return True  # its items sit at d + 1
        if not _SCALARS.issuperset(map(type, items)):  # a row of scalars is checked at C speed
            stack.extend([(v, d + 1) for v in items if isinstance(v, (dict, list))])
    return False


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
