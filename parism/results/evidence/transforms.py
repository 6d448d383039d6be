"""The transforms a ``derived`` span may name, each a function from the span's text to the value.

A span is kept only when its transform, applied to the bytes it covers, gives the parsed value
back (``verify``); the property test applies the same functions, so a span can never claim a
source it does not have. ``verbatim`` is the identity, for strings only.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from parism.parsers import dates
from parism.parsers.table import human_to_bytes

_INT = re.compile(r"[+-]?\d+")
_FLOAT = re.compile(r"[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?")


def _int(text: str) -> int | None:
    t = text.replace(",", "")
    return int(t) if _INT.fullmatch(t) else None


def _float(text: str) -> float | None:
    t = text.replace(",", ".") if text.count(",") == 1 and "." not in text else text
    return float(t) if _FLOAT.fullmatch(t) else None


def _percent(text: str) -> float | None:
    return _float(text[:-1]) if text.endswith("%") else None


def _scaled(factor: int) -> Callable[[str], int | None]:
    def apply(text: str) -> int | None:
        n = _int(text)
        return None if n is None else n * factor
    return apply


def _date_iso(text: str) -> str | None:
    t = " ".join(text.split())
    for fn in (dates.listing_date_to_iso, dates.gnu_to_iso, dates.ctime_zone_to_iso):
        try:
            iso = fn(t)
        except (ValueError, TypeError):
            iso = None
        if iso:
            return iso
    return None


#: name → apply(text) -> value | None; the order is the order the locator tries them in
TRANSFORMS: dict[str, Callable[[str], Any]] = {
    "parseInt": _int,
    "parseFloat": _float,
    "parsePercent": _percent,
    "human_to_bytes": lambda t: human_to_bytes(t) if t[:1].isdigit() else None,
    "human_to_bytes_si": lambda t: human_to_bytes(t, base=1000) if t[:1].isdigit() else None,
    "kib_to_bytes": _scaled(1024),
    "blocks512_to_bytes": _scaled(512),
    "mib_to_bytes": _scaled(1024 * 1024),
    "collapse_space": lambda t: " ".join(t.split()),
    "date_iso": _date_iso,
}
NUMERIC = ("parseInt", "parseFloat", "parsePercent", "human_to_bytes", "human_to_bytes_si",
           "kib_to_bytes", "blocks512_to_bytes", "mib_to_bytes")
CODES: dict[str, int] = {"verbatim": 0, **{name: i + 1 for i, name in enumerate(TRANSFORMS)}}
NAMES: dict[int, str] = {code: name for name, code in CODES.items()}


def same(a: Any, b: Any) -> bool:
    """Equality as the contract verifies it: numbers numerically (``"0.0"`` matches ``0``),
    everything else exactly; a bool is never a number."""
    if isinstance(a, bool) or isinstance(b, bool):
        return a is b
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return float(a) == float(b)
    return type(a) is type(b) and a == b


def verbatim_text(value: Any) -> str | None:
    """The text a verbatim span of ``value`` must cover. Only strings have one: a number is
    always ``derived`` (``parseInt`` of ``"1"`` is 1, as the contract's own example shows)."""
    return value if isinstance(value, str) else None


def verify(text: str, value: Any, transform: str) -> bool:
    """Does ``text`` (the bytes a span covers, decoded) give ``value`` under ``transform``?"""
    if transform == "verbatim":
        return verbatim_text(value) == text
    fn = TRANSFORMS.get(transform)
    if fn is None:
        return False
    try:
        got = fn(text)
    except (ValueError, TypeError, OverflowError):
        return False
    return got is not None and same(got, value)
