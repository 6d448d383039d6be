"""``max_items`` (contract §5.5): cut long row arrays so one call cannot flood the agent's context.

The cut keeps the first rows, adds ``_summary = {total, shown, truncated: true}`` (plus
``truncated_arrays`` naming other arrays that were cut) and returns an ``omission`` so the loss
is stated in the envelope, not only inside ``parsed``. A parser that already cut (its own
``_summary``) is left alone.
"""

from __future__ import annotations

from typing import Any, TYPE_CHECKING

from parism.wire.envelope import Omission

if TYPE_CHECKING:
    from pydantic import JsonValue


def main_array(value: dict[str, Any], rows_key: str | None) -> str | None:
    """The declared rows key, else the first top-level array."""
    if rows_key and isinstance(value.get(rows_key), list):
        return rows_key
    return next((k for k, v in value.items() if isinstance(v, list)), None)


def cut(value: JsonValue, rows_key: str | None, max_items: int) -> tuple[Any, Omission | None]:
    """Return (value with arrays cut to ``max_items``, omission or None). 0 = unlimited."""
    if max_items <= 0 or not isinstance(value, dict) or "_summary" in value:
        return value, None
    long = [k for k, v in value.items() if isinstance(v, list) and len(v) > max_items]
    if not long:
        return value, None
    key = main_array(value, rows_key)
    main = key if key in long else long[0]
    total = len(value[main])
    out = {k: (v[:max_items] if k in long else v) for k, v in value.items()}
    summary: dict[str, Any] = {"total": total, "shown": max_items, "truncated": True}
    others = [k for k in long if k != main]
    if others:
        summary["truncated_arrays"] = others
    out["_summary"] = summary
    return out, Omission(stage="projection", reason="max_items", rows_total=total,
                         rows_returned=max_items, rows_omitted=total - max_items)
