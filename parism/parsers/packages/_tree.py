"""Dependency trees drawn with box glyphs (Unicode or the ASCII fallback used under a C
locale): ``├──``/``└─┬``/``│`` and ``+--``/``\\`--``/``|``. Shared by npm, pnpm, yarn, cargo and
brew, which differ only in how wide one level of indentation is and how a label reads."""

from __future__ import annotations

import re
from collections.abc import Iterator

_GLYPHS = re.compile(r"^[│├└─┬┼|+`\- ]*")


def tree_lines(lines: list[str], unit: int) -> Iterator[tuple[int, str]]:
    """Yield (depth, label) for lines that carry a tree glyph. ``unit`` is the width of one
    indentation level: the glyph prefix of a level-N row is N units wide (``├── `` is level 1 for
    a 4-wide unit)."""
    for line in lines:
        line = line.rstrip("\r")
        m = _GLYPHS.match(line)
        prefix = m.group(0) if m else ""
        if not prefix.strip(" ") or not line[len(prefix):].strip():
            continue
        label = line[len(prefix):]
        yield len(prefix) // unit, label


def split_at_version(spec: str) -> tuple[str, str | None]:
    """'@scope/pkg@1.2.3' → ('@scope/pkg', '1.2.3'); a name without a version → (name, None)."""
    at = spec.rfind("@")
    if at <= 0:
        return spec, None
    return spec[:at], spec[at + 1:]
