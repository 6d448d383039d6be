"""dig: jc ``dig`` returns one object per query; Parism has top-level fields of the first query,
``answers`` of every query and ``queries[]`` (README: query, query_type, answers, query_time_ms,
server)."""

from __future__ import annotations

from typing import Any

from tests.parsers.corpus.mappers._util import compare_rows, num, same


def _undot(v: Any) -> Any:
    return v[:-1] if isinstance(v, str) and v.endswith(".") and len(v) > 1 else v


def _value(v: object) -> object:
    """jc strips TXT quotes in some versions and keeps them in others; compare without them."""
    if not isinstance(v, str):
        return v
    text: str = _undot(v)
    return text[1:-1] if len(text) >= 2 and text[0] == text[-1] == '"' and text.count('"') == 2 else text


_RECORD = [("name", "name", _undot), ("ttl", "ttl", num), ("class", "class", same),
           ("type", "type", same), ("value", "data", _value)]


def check(parsed: dict[str, Any], expected: list[Any], entry: dict[str, Any]) -> list[str]:
    problems: list[str] = []
    jc_queries = [q for q in expected if "question" in q or "axfr" in q or "answer" in q]
    jc_answers = [r for q in jc_queries for r in q.get("answer", q.get("axfr", []))]
    problems += compare_rows("answers", parsed.get("answers", []), jc_answers, _RECORD)
    # +qr: jc also lists the sent message (its flags lack "qr"); Parism lists only responses
    with_question = [q for q in jc_queries if "question" in q and "qr" in q.get("flags", ["qr"])]
    ours = [q for q in parsed.get("queries", []) if "query" in q]
    if len(ours) != len(with_question):
        problems.append(f"queries: {len(ours)}, jc has {len(with_question)}")
    for i, (a, b) in enumerate(zip(ours, with_question)):
        pairs = [("query", _undot(b["question"]["name"])), ("query_type", b["question"]["type"]),
                 ("query_time_ms", b.get("query_time")), ("server", b.get("server")),
                 ("status", b.get("status"))]
        for key, want in pairs:
            if a.get(key) != want:
                problems.append(f"queries[{i}].{key}: {a.get(key)!r} != jc {want!r}")
    if with_question and parsed.get("query") != _undot(with_question[0]["question"]["name"]):
        problems.append(f"query: {parsed.get('query')!r}")
    return problems
