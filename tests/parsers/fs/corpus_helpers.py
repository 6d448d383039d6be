"""Comparison helpers shared by the fs corpus mappers (ls, stat, du, df, find)."""

from __future__ import annotations

import datetime as dt
from typing import Any


def same(problems: list[str], where: str, field: str, got: Any, want: Any) -> None:
    """Record a mismatch; ``want is None`` (jc had no value) is not compared."""
    if want is None:
        return
    if got != want:
        problems.append(f"{where}: {field} = {got!r}, jc says {want!r}")


def collapse(text: str | None) -> str | None:
    return " ".join(text.split()) if text is not None else None


def iso_epoch(iso: str) -> int:
    """Epoch seconds of an ISO string with an offset (nanoseconds cut to microseconds)."""
    head, dot, rest = iso.partition(".")
    if dot:
        frac = rest[: len(rest) - len(rest.lstrip("0123456789"))]
        iso = head + "." + frac[:6] + rest[len(frac):]
    return int(dt.datetime.fromisoformat(iso).timestamp())


def rows(parsed: Any, key: str, expected: list[dict], problems: list[str]) -> list[dict]:
    """The parsed rows, with a count mismatch recorded."""
    got = parsed.get(key, []) if isinstance(parsed, dict) else []
    if len(got) != len(expected):
        problems.append(f"{key}: {len(got)} rows, jc has {len(expected)}")
    return got
