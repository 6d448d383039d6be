"""``compact`` format (§6.3): fold arrays of objects into ``{schema, rows}`` — losslessly.

v1 lost data (first-row schema, ``|``-joined nested arrays, crash on ``null``). This version is
a total function: the schema is the union of the row keys in first-seen order; a key a row lacks
becomes ``null`` (parsers drop ``None`` fields, so absent and null mean the same thing); nested
values stay JSON values; arrays that are not all objects stay as they are. Anything that cannot
be represented (nesting deeper than ``MAX_DEPTH``) is reported, never silently mangled.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

MAX_DEPTH = 64


@dataclass(frozen=True)
class CompactOutcome:
    ok: bool
    value: Any = None
    reason: str | None = None  # "representation_not_lossless"
    message: str | None = None


def _depth(value: Any, limit: int) -> int:
    """Nesting depth, stopping early once ``limit`` is exceeded (iterative: no recursion limit)."""
    deepest = 0
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        node, d = stack.pop()
        deepest = max(deepest, d)
        if deepest > limit:
            return deepest
        if isinstance(node, dict):
            stack.extend((v, d + 1) for v in node.values())
        elif isinstance(node, list):
            stack.extend((v, d + 1) for v in node)
    return deepest


def fold(rows: list[Any]) -> Any:
    """One array: ``{schema, rows}`` when every element is an object, else unchanged."""
    if not rows:
        return {"schema": [], "rows": []}
    if not all(isinstance(r, dict) for r in rows):
        return rows
    schema: dict[str, None] = {}
    for r in rows:
        schema.update(dict.fromkeys(r))
    keys = list(schema)
    return {"schema": keys, "rows": [[r.get(k) for k in keys] for r in rows]}


def compact(value: Any) -> CompactOutcome:
    """Fold every top-level array of ``value`` (an object); other shapes are returned unchanged."""
    if _depth(value, MAX_DEPTH) > MAX_DEPTH:
        return CompactOutcome(ok=False, reason="representation_not_lossless",
                              message=f"nesting deeper than {MAX_DEPTH} levels cannot be compacted")
    if not isinstance(value, dict):
        return CompactOutcome(ok=True, value=value)
    return CompactOutcome(ok=True, value={
        k: fold(v) if isinstance(v, list) else v for k, v in value.items()})
