"""Small comparison helpers shared by the corpus mappers."""

from __future__ import annotations

from typing import Any


def first(expected: Any) -> Any:
    """jc returns a list for some parsers and an object for others."""
    return expected[0] if isinstance(expected, list) and expected else expected


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
