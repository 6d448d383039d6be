"""Adaptive format (contract §6.4, [rec]): bigger outputs get *more* compression, never less.

Only applies when the caller did not choose a format. Thresholds are made monotonic
(``compact ≤ json_no_raw``): from ``compact`` rows on the result is compacted; from
``json_no_raw`` rows on it is compacted *and* ``raw`` is dropped (v1 inverted this).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pydantic import JsonValue

DEFAULTS = {"json": 0, "compact": 50, "json_no_raw": 200}


@dataclass(frozen=True)
class Choice:
    compact: bool
    drop_raw: bool


def row_count(value: JsonValue) -> int:
    """Items of the value (if a list) or of its first array-valued property (v1 rule)."""
    if isinstance(value, list):
        return len(value)
    if isinstance(value, dict):
        return next((len(v) for v in value.values() if isinstance(v, list)), 0)
    return 0


def choose(requested: str | None, value: JsonValue, thresholds: dict[str, int] | None) -> Choice:
    if requested is not None:
        return Choice(compact=requested == "compact", drop_raw=requested == "json-no-raw")
    t = {**DEFAULTS, **(thresholds or {})}
    compact_at = t["compact"]
    no_raw_at = max(t["json_no_raw"], compact_at)
    n = row_count(value)
    if n <= 0 or compact_at <= 0:
        return Choice(compact=False, drop_raw=False)
    return Choice(compact=n >= compact_at, drop_raw=n >= no_raw_at)
