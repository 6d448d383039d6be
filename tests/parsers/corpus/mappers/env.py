"""env: jc list of {name, value} ↔ Parism vars{name: value} (README mapping)."""

from __future__ import annotations


def check(parsed: dict, expected: list[dict], entry: dict) -> list[str]:
    got = parsed.get("vars", {})
    want = {e["name"]: e["value"] for e in expected}
    problems = [f"{k}: {got.get(k)!r} != {v!r}" for k, v in want.items() if got.get(k) != v]
    problems += [f"extra variable {k!r}" for k in got if k not in want]
    return problems
