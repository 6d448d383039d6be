"""find: jc ``{path, node}`` items ↔ Parism ``paths`` (``path + "/" + node``; ``{null, "."}`` is
``.``, ``{".", null}`` is ``./``); jc's ``{error}`` items come from merged stderr and are skipped."""

from __future__ import annotations

from typing import Any

from tests.parsers.fs.corpus_helpers import same


def _path(item: dict) -> str | None:
    path, node = item.get("path"), item.get("node")
    if path is None:
        return node
    if node is None:
        return path + "/"
    return f"{path}/{node}"


def check(parsed: Any, expected: list[dict], entry: dict) -> list[str]:
    problems: list[str] = []
    want = [_path(i) for i in expected if "error" not in i]
    got = parsed.get("paths", [])
    same(problems, "errors", "count", len(parsed.get("errors", [])), len(expected) - len(want))
    same(problems, "paths", "list", got, want)
    return problems
