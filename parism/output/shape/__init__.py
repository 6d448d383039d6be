"""Shaping: the last step between a parsed value and the envelope (the formats of contract §6, ``max_items``).

``shape`` is one pure function so the engine only orchestrates: it cuts rows (``max_items``),
decides the format (explicit or adaptive) and compacts. Losses come back as ``omission``
entries; a compaction that would lose data leaves the value alone and reports
``representation_not_lossless``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, TYPE_CHECKING

from parism.wire.envelope import Omission
from parism.output.shape import lean, restate
from parism.output.shape.adaptive import choose
from parism.output.shape.compact import compact
from parism.output.shape.limits import cut

if TYPE_CHECKING:
    from pydantic import JsonValue
    from parism.parsers.contract import Parser

Format = Literal["json", "compact", "json-no-raw"]
FORMATS: tuple[str, ...] = ("json", "compact", "json-no-raw")


@dataclass
class Shaped:
    parsed: Any
    keep_raw: bool
    omissions: list[Omission] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)  # for review.warnings
    lossless_failure: str | None = None  # message when compaction was refused


def shape(parsed: JsonValue, *, requested: str | None, rows_key: str | None, max_items: int,
          thresholds: dict[str, int] | None, parser: Parser | None = None, args: Sequence[str] = (),
          text: str = "", paged: bool = False) -> Shaped:
    """``parser``: the parser when the call allows the default answer (no format, projection or
    evidence): its tables (:mod:`parism.output.shape.lean`), and raw left out when the parse restates
    ``text`` (:mod:`parism.output.shape.restate`) or the parse left out when it is the text itself
    (unless ``paged``: a budget pages the rows, whatever they are)."""
    value, omission = cut(parsed, rows_key, max_items)
    out = Shaped(parsed=value, keep_raw=True, omissions=[omission] if omission else [])
    if requested is None and parser is not None:
        if parser.id in restate.TEXT_ONLY and not paged:
            out.parsed, out.omissions = None, []  # the parse is the text's lines: raw alone says it all
            out.warnings.append("format_adapted:raw")
            return out
        out.parsed = lean.lean(value, parser.id, parser.row_fields, rows_key)
        whole = out.parsed if omission is None else lean.lean(parsed, parser.id, parser.row_fields, rows_key)
        out.keep_raw = not restate.restates(text, parsed, whole, parser, args)
        out.warnings.append("format_adapted:lean")
        return out
    choice = choose(requested, value, thresholds)
    if choice.drop_raw:
        out.keep_raw = False
        if requested is None:
            out.omissions.append(Omission(stage="projection", reason="raw_omitted_adaptive"))
    if choice.compact and value is not None:
        res = compact(value)
        if res.ok:
            out.parsed = res.value
        else:
            out.keep_raw = True  # the original JSON and raw are kept when folding would lose data
            out.lossless_failure = res.message
    if requested is None and (choice.compact or choice.drop_raw):
        out.warnings.append("format_adapted:" + ("compact" if not choice.drop_raw else "compact-no-raw"))
    return out
