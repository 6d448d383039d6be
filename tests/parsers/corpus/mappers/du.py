"""du: jc ``size`` (int, in du's own unit) / ``name`` ↔ Parism ``size`` (printed) / ``path``."""

from __future__ import annotations

from typing import Any

from tests.parsers.fs.corpus_helpers import rows, same


def check(parsed: Any, expected: list[dict], entry: dict) -> list[str]:
    problems: list[str] = []
    got = rows(parsed, "entries", expected, problems)
    block = parsed.get("block_size")
    for i, (g, e) in enumerate(zip(got, expected)):
        where = f"row {i} ({e['name']!r})"
        same(problems, where, "path", g.get("path"), e["name"])
        same(problems, where, "size", int(g["size"]) if g.get("size", "").isdigit() else g.get("size"), e["size"])
        if block is not None and isinstance(e["size"], int):
            same(problems, where, "size_bytes", g.get("size_bytes"), e["size"] * block)
    return problems
