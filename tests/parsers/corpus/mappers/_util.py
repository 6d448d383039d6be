"""Comparison helpers shared by the corpus mappers: a mapper only states its field mapping."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

Norm = Callable[[Any], Any]


def diff(problems: list[str], where: str, ours: Any, theirs: Any) -> None:
    if ours != theirs:
        problems.append(f"{where}: parism={ours!r} jc={theirs!r}")


def close(problems: list[str], where: str, ours: float | None, theirs: float | None, rel: float) -> None:
    if ours is None or theirs is None:
        if ours != theirs:
            problems.append(f"{where}: parism={ours!r} jc={theirs!r}")
        return
    if abs(ours - theirs) > rel * max(abs(theirs), 1):
        problems.append(f"{where}: parism={ours!r} jc={theirs!r} (beyond {rel:.0%})")


def same(a: Any) -> Any:
    return a


def num(a: Any) -> Any:
    """Numbers compare numerically; jc's null for '-' matches a missing value."""
    if a is None or a == "-":
        return None
    if isinstance(a, str):
        t = a.strip().rstrip("%").replace(",", "")
        try:
            return float(t)
        except ValueError:
            return a
    return float(a)


def placeholder(a: Any) -> Any:
    """jc turns '-', '?' and '??' into null; Parism keeps the printed text."""
    return None if a in ("-", "?", "??", "", None) else a


def compare_rows(label: str, ours: Sequence[dict[str, Any]], theirs: Sequence[dict[str, Any]],
                 fields: Sequence[tuple[str, str, Norm]], limit: int = 20) -> list[str]:
    """Mismatches between two row lists, compared position by position on ``fields``."""
    problems: list[str] = []
    if len(ours) != len(theirs):
        problems.append(f"{label}: {len(ours)} rows, jc has {len(theirs)}")
    for i, (a, b) in enumerate(zip(ours, theirs)):
        for ours_key, jc_key, norm in fields:
            va, vb = norm(a.get(ours_key)), norm(b.get(jc_key))
            if va != vb:
                problems.append(f"{label}[{i}].{ours_key}: {va!r} != jc {jc_key} {vb!r}")
                if len(problems) >= limit:
                    return problems
    return problems
