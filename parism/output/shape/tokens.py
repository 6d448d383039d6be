"""Tokenizers of the token budget (contract §12.1): ``parism/approx`` 2.0.0 and ``byte``.

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

#: Runs the estimate counts: ASCII letters, digits, other ASCII marks, other characters.
_RUNS = re.compile(r"([A-Za-z]+)|([0-9]+)|([!-/:-@\[-`{-~]+)|([^\x00-\x7f]+)")


def approx(text: str) -> int:
    """o200k_base, estimated (issue #26; 1.0.0 counted each mark as a token and ran ~25-55 %
    above o200k on JSON answers).  Each maximal run of ASCII letters counts ceil(len/5), of
    digits ceil(len/3) (o200k groups digits by three), of other printable ASCII marks ceil(len/3)
    (``","`` and ``":[`` are one token each); every other character counts 1 per UTF-16 code unit
    (a non-BMP character 2); whitespace and control characters count 0.  Measured against
    o200k on the shared corpus (raw outputs, default and json answers): 1.02, 1.07 and 1.10 of
    the real count in total, 0.83-1.17 for nine files in ten (docs/envelope.md)."""
    n = 0
    for m in _RUNS.finditer(text):
        letters, digits, marks, other = m.groups()
        if letters is not None:
            n += (len(letters) + 4) // 5
        elif digits is not None:
            n += (len(digits) + 2) // 3
        elif marks is not None:
            n += (len(marks) + 2) // 3
        else:
            n += len(other.encode("utf-16-le")) // 2
    return n


def byte(text: str) -> int:
    return len(text.encode("utf-8", "surrogatepass"))


@dataclass(frozen=True)
class Tokenizer:
    id: str
    version: str
    exact: bool
    count: Callable[[str], int]


TOKENIZERS: dict[str, Tokenizer] = {
    "parism/approx": Tokenizer("parism/approx", "2.0.0", False, approx),
    "byte": Tokenizer("byte", "1.0.0", True, byte),
}


def count(text: str, tokenizer_id: str) -> int:
    """Tokens of ``text``; an unknown id is a programming error (the options model refuses it)."""
    return TOKENIZERS[tokenizer_id].count(text)
