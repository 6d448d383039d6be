"""Evidence spans (contract §10.4): where a parsed value came from in the masked raw text.

``locate`` (``locate.py``) builds an :class:`Evidence` after the parse, only when a run asks for
``evidence: "rows" | "fields"``; ``spans_of`` answers one JSON Pointer from it. Spans are
``[start, end)`` UTF-8 byte offsets over the *full* masked stdout of the retained result,
``line`` 1-based. ``describe(cmd)`` lists the parsers covered (those declaring ``Parser.evidence``).
"""

from __future__ import annotations

from dataclasses import dataclass

from parism.parsers import registry
from parism.results.evidence.locate import SPAN_INTS, Evidence, Unit, estimate, locate
from parism.results.evidence.transforms import NAMES, TRANSFORMS, verify

def __getattr__(name: str) -> frozenset[str]:
    """``PROVIDERS``: the ids of the parsers whose rows or records get spans (the table- and
    record-shaped parsers that declare ``Parser.evidence``), derived from the registry."""
    if name == "PROVIDERS":
        return frozenset(p.id for _cmd, top in registry.command_parsers() for p in registry.walk(top) if p.evidence)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


ROW_TRANSFORM = "parsed_row"  # a row pointer: the span is the line(s) the row was read from


@dataclass(frozen=True)
class Span:
    start: int
    end: int
    line: int  # 1-based line, or 1-based NUL record when ``record`` is set
    transform: str  # "verbatim" or a TRANSFORMS name or ROW_TRANSFORM
    record: bool = False


def spans_of(ev: Evidence, tokens: list[str]) -> Span | None:
    """The span of the value at ``tokens`` (a parsed JSON Pointer), or None."""
    for unit in ev.units:
        hit = _in_unit(unit, tokens)
        if hit is not None:
            return Span(hit.start, hit.end, hit.line, hit.transform, True) if ev.records else hit
    return None


def _in_unit(unit: Unit, tokens: list[str]) -> Span | None:
    if unit.prefix is not None:
        if len(tokens) < 2 or tokens[0] != unit.prefix or not tokens[1].isdigit():
            return None
        i, rel = int(tokens[1]), tuple(tokens[2:])
        if i >= unit.n:
            return None
        if not rel and () not in unit.fields:
            first, _last, start, end = unit.rows[4 * i: 4 * i + 4]
            return Span(start, end, first, ROW_TRANSFORM) if first else None
    else:
        i, rel = 0, tuple(tokens)
    slot = unit.fields.get(rel)
    if slot is None:
        return None
    start, end, line, code = slot[SPAN_INTS * i: SPAN_INTS * i + SPAN_INTS]
    return Span(start, end, line, NAMES[code]) if start >= 0 else None


__all__ = ["PROVIDERS", "ROW_TRANSFORM", "TRANSFORMS", "Evidence", "Span", "estimate", "locate",
           "spans_of", "verify"]
