"""curl -I: jc ``curl_head`` lists requests and responses; its response items map to Parism
``responses[]`` (``_response_status`` → status_code, ``_response_reason`` joined → status_text,
other keys → headers). jc splits some values into lists or ints and adds ``*_epoch_utc`` keys:
lists are joined back with ", ", numbers compared as text, epoch keys ignored."""

from __future__ import annotations

from typing import Any


def _jc_value(v: object) -> str:
    if isinstance(v, list):
        return ", ".join(str(x) for x in v)
    return str(v)


def _norm(v: str) -> str:
    return ", ".join(p.strip() for p in v.split(","))


def check(parsed: dict[str, Any], expected: list[Any], entry: dict[str, Any]) -> list[str]:
    problems: list[str] = []
    jc = [r for r in expected if r.get("_type") == "response"]
    ours = parsed.get("responses", [])
    if len(ours) != len(jc):
        problems.append(f"responses: {len(ours)}, jc has {len(jc)}")
    for i, (a, b) in enumerate(zip(ours, jc)):
        if a.get("status_code") != b.get("_response_status"):
            problems.append(f"responses[{i}].status_code {a.get('status_code')} != jc {b.get('_response_status')}")
        reason = " ".join(b.get("_response_reason") or []) or None
        if a.get("status_text") != reason:
            problems.append(f"responses[{i}].status_text {a.get('status_text')!r} != jc {reason!r}")
        for key, val in b.items():
            if key.startswith("_") or key.endswith("_epoch_utc") or key.endswith("_epoch"):
                continue
            mine = a.get("headers", {}).get(key)
            if mine is None or _norm(mine) != _norm(_jc_value(val)):
                problems.append(f"responses[{i}].headers[{key}]: {mine!r} != jc {val!r}")
    if ours and parsed.get("status_code") != ours[-1]["status_code"]:
        problems.append("top-level status_code is not the last response's")
    return problems[:20]
