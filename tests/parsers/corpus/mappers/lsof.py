"""lsof: jc ``lsof`` keeps ``(LISTEN)`` inside ``name``; Parism splits it into ``state``, so the
comparison rebuilds ``name + " (" + state + ")"``. ``node`` is not mapped (README; jc drops
the TCP/UDP node of socket rows); tid and size_off are compared too (jc turns ``0t0`` into 0)."""

from __future__ import annotations

from typing import Any

from tests.parsers.corpus.mappers._util import compare_rows, num, same


def _size_off(v: object) -> object:
    """lsof prints offsets as ``0tN`` (decimal) and jc converts them to N."""
    if isinstance(v, str) and v.startswith("0t") and v[2:].isdigit():
        return v[2:]
    return None if v is None else str(v)


_FIELDS = [("command", "command", same), ("pid", "pid", num), ("tid", "tid", num), ("user", "user", same),
           ("fd", "fd", same), ("type", "type", same), ("device", "device", same),
           ("size_off", "size_off", _size_off), ("full_name", "name", same)]


def check(parsed: dict[str, Any], expected: list[Any], entry: dict[str, Any]) -> list[str]:
    ours = []
    for r in parsed.get("entries", []):
        r = dict(r)
        r["full_name"] = f"{r['name']} ({r['state']})" if r.get("state") else r.get("name")
        ours.append(r)
    return compare_rows("entries", ours, expected, _FIELDS)
