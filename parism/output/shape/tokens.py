"""Tokenizers of the token budget (contract §12.1): ``parism/approx`` 1.0.0 and ``byte``.

Why not a model's own tokenizer: the budget must give the same count on every host, offline and
without a vocabulary file; ``parism/approx`` is the contract's deterministic estimate (exact for
no model, says so with ``exact: false``), ``byte`` is exact for what it counts.  The o200k
figures of the benchmark come from ``scripts/tokenizer`` (node), never from here.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

#: What the budget counts: the compact JSON of the answer's structuredContent.
SCOPE = "parism-json-payload-only"

_WORD = re.compile(r"[A-Za-z0-9_]+")
_BLANKS = " \t\n\r"


def approx(text: str) -> int:
    """Each maximal run of ``[A-Za-z0-9_]`` counts ceil(len/4); every other character that is not
    space, TAB, LF or CR counts 1 per UTF-16 code unit (a non-BMP character counts 2, as upstream
    iterates code units); whitespace counts 0."""
    words = covered = 0
    for m in _WORD.finditer(text):
        n = m.end() - m.start()
        words += (n + 3) // 4
        covered += n
    blanks = sum(map(text.count, _BLANKS))
    astral = len(text.encode("utf-16-le")) // 2 - len(text) if not text.isascii() else 0
    return words + len(text) - covered - blanks + astral


def byte(text: str) -> int:
    return len(text.encode("utf-8", "surrogatepass"))


@dataclass(frozen=True)
class Tokenizer:
    id: str
    version: str
    exact: bool
    count: Callable[[str], int]


TOKENIZERS: dict[str, Tokenizer] = {
    "parism/approx": Tokenizer("parism/approx", "1.0.0", False, approx),
    "byte": Tokenizer("byte", "1.0.0", True, byte),
}


def count(text: str, tokenizer_id: str) -> int:
    """Tokens of ``text``; an unknown id is a programming error (the options model refuses it)."""
    return TOKENIZERS[tokenizer_id].count(text)
