"""'Label: value' blocks as printed by Windows tools (ipconfig, systeminfo), with indented
continuation lines that belong to the previous label."""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field

from parism.parsers.table import snake as table_snake


@dataclass
class Item:
    label: str
    value: str
    raw_more: list[str] = field(default_factory=list)  # continuation lines, indentation kept

    @property
    def more(self) -> list[str]:
        return [ln.strip() for ln in self.raw_more]


def snake(label: str) -> str:
    """``"Hotfix(s)"`` → ``hotfixs`` (the plural marker kept as the letter jc and users expect)."""
    return table_snake(label.replace("(s)", "s").replace("(S)", "s"))


def by_column(lines: Iterable[str]) -> list[Item]:
    """systeminfo style: values start at one fixed column; a line indented up to that column
    continues the previous item. The column is where most values start."""
    lines = [ln.rstrip("\r") for ln in lines if ln.strip()]
    starts: dict[int, int] = {}
    for ln in lines:
        m = re.match(r"^(\S[^:]*:(?:[^:]*:)?)( +)\S", ln)
        if m:
            col = m.end() - 1
            starts[col] = starts.get(col, 0) + 1
    if not starts:
        return []
    col = max(starts, key=lambda c: starts[c])
    items: list[Item] = []
    for ln in lines:
        if ln[:1].isspace():
            if items:
                items[-1].raw_more.append(ln)
            continue
        head, tail = ln[:col], ln[col:]
        label = head.rstrip().rstrip(":")
        if ":" not in head:
            label, _, tail = ln.partition(":")
        items.append(Item(label.strip(), tail.strip()))
    return items


_DOTTED = re.compile(r"^\s+(?P<label>[^:]+?)[ .]*:(?: (?P<value>.*))?$")


def dotted(lines: Iterable[str]) -> list[Item]:
    """ipconfig style: '   Label . . . . : value'; deeper-indented lines continue."""
    items: list[Item] = []
    for ln in lines:
        ln = ln.rstrip("\r")
        if not ln.strip():
            continue
        m = _DOTTED.match(ln)
        if m and len(ln) - len(ln.lstrip()) < 10:
            items.append(Item(m.group("label").strip(" ."), (m.group("value") or "").strip()))
        elif items:
            items[-1].raw_more.append(ln)
    return items
