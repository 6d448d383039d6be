"""``explain_result(result_id, pointer)``: one value of a retained result and its source span.

Refusals (``ok: false``, with ``reason`` and ``message``): the store's misses (``unknown_id``,
``expired``, ``evicted``, ``not_retained``), ``invalid_pointer`` (not RFC 6901) and
``pointer_not_found`` (no value there). A value without a span is ``ok: true`` with
``source_kind: "none"`` and the reason in ``warnings``.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import unquote

from parism.wire.envelope import ExplainResult, SourceSpan
from parism.results.evidence import ROW_TRANSFORM, spans_of
from parism.results.pack import unpack_json
from parism.results.store import StoredResult

_MISSING = object()


def parse_pointer(pointer: str) -> list[str] | None:
    """RFC 6901 tokens (``""`` and ``"#"`` are the root; ``#/a%20b`` is the URI fragment form)."""
    if pointer.startswith("#"):
        pointer = unquote(pointer[1:])
    if pointer == "":
        return []
    if not pointer.startswith("/"):
        return None
    tokens = []
    for raw in pointer[1:].split("/"):
        if "~" in raw.replace("~0", "").replace("~1", ""):
            return None
        tokens.append(raw.replace("~1", "/").replace("~0", "~"))
    return tokens


def resolve(value: Any, tokens: list[str]) -> Any:
    for tok in tokens:
        if isinstance(value, dict):
            value = value.get(tok, _MISSING)
        elif isinstance(value, list):
            if not tok.isdigit() or (tok != "0" and tok.startswith("0")) or int(tok) >= len(value):
                return _MISSING
            value = value[int(tok)]
        else:
            return _MISSING
        if value is _MISSING:
            return _MISSING
    return value


def explain(item: StoredResult, pointer: str, age_ms: int) -> ExplainResult:
    head: dict[str, Any] = {"result_id": item.result_id, "pointer": pointer}
    tokens = parse_pointer(pointer)
    if tokens is None:
        return ExplainResult(ok=False, **head, reason="invalid_pointer", message=(
            "pointer must be an RFC 6901 JSON Pointer into stdout.parsed: '' for the root, "
            "'/rows/0/name' for a value ('~1' is '/', '~0' is '~')"))
    parsed = unpack_json(item.parsed_json) if item.parsed_json is not None else None
    value = resolve(parsed, tokens)
    if parsed is None or value is _MISSING:
        return ExplainResult(ok=False, **head, reason="pointer_not_found", message=(
            f"nothing at {pointer!r} in the stored parsed value" if parsed is not None else
            "the stored result has no parsed value (stdout.parsed was null)"))
    if item.evidence is None:
        why = ("evidence_not_recorded: run with evidence: \"fields\" (or \"rows\") and retain: true"
               if item.parser_id is None or item.evidence_mode == "none" else
               f"evidence_not_recorded: the {item.parser_id} parser does not provide evidence")
        return ExplainResult(ok=True, **head, value=value, source_kind="none", source_spans=[], age_ms=age_ms,
                             warnings=[why])
    span = spans_of(item.evidence, tokens)
    if span is None:
        why = ("no_span: evidence was \"rows\"; run with evidence: \"fields\" for values"
               if item.evidence_mode == "rows" and not isinstance(value, (dict, list)) else
               "no_span: this value is not printed as such in the output (computed, or a default)")
        return ExplainResult(ok=True, **head, value=value, source_kind="none", source_spans=[], age_ms=age_ms,
                             warnings=[why])
    transform = None if span.transform == "verbatim" else span.transform
    return ExplainResult(
        ok=True, **head, value=value, source_kind="verbatim" if transform is None else "derived",
        source_spans=[SourceSpan(source="stdout", start=span.start, end=span.end,
                                 line=0 if span.record else span.line, record=span.line if span.record else None,
                                 transform=transform)],
        transform=transform, age_ms=age_ms,
        warnings=["a row's span covers the line(s) it was read from"] if span.transform == ROW_TRANSFORM else None)
