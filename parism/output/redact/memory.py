"""A secret masked once stays masked: a hashed memory of what the redactor masked (issue 9).

A secret masked in one output (``cat .env``) used to come back in slices printed by another
command (``tail -c +2``, ``head -c 20``, ``grep -o ............``): without its key or prefix no
rule recognises a slice. The memory keeps, for every masked value, hashes of its windows —
never its text — and ``spans`` finds every substring of ``WINDOW`` (12) or more characters of a
remembered value in a later text, so the redactor masks it there too.

Why it is linear and cheap (clean text costs one pass of C iterators, no Python loop):
- a slice of 12+ characters holds 7 consecutive starts of 6-character windows, so one of them
  is at a multiple of 7: hashing the text's 6-windows at every 7th position and testing them
  against the remembered 6-windows finds a candidate in every slice (``len(text) / 7`` hashes);
- only at a candidate are the (at most 7) 12-windows around it tested; the union of the
  matching 12-windows is exactly the slice, since each of its 12-windows is remembered;
- a hash is Python's ``hash`` of a str: SipHash under the interpreter's random per-process key
  (unless ``PYTHONHASHSEED`` fixes it), 64 bits, so a false match is practically impossible.

Bounds: two generations of at most ``MAX_VALUES / 2`` values and ``MAX_WINDOWS / 2``
12-windows each; when the current one is full the older one is forgotten (so between half and
all of the bound is kept: measured 3.5 MiB when full). A value contributes its first
``MAX_VALUE_CHARS`` characters, and each of its lines is remembered on its own (a PEM body is
printed line by line): values are cut at line breaks, JSON-escaped ones (``\\n``) and PEM armour
lines (``-----BEGIN PRIVATE KEY-----`` is public text that a masked value may carry, and
remembering it would mask every armour line later).
"""

from __future__ import annotations

import re
import threading
from collections.abc import Iterator
from itertools import compress

from parism.output.redact.engine import Span, merge

WINDOW = 12  # the shortest slice of a remembered value that is masked
PROBE = 6  # sampled window: STRIDE apart, one lies inside every WINDOW-character slice
STRIDE = WINDOW - PROBE + 1
MAX_VALUES = 1024
MAX_WINDOWS = 16384
MAX_VALUE_CHARS = 4096
# where a masked value is cut into the pieces that are remembered (see the module docstring)
PIECE_BREAKS = re.compile(r"[\r\n]|\\r\\n|\\[nr]|-----(?:BEGIN|END) [A-Z0-9 ]{1,40}-----")


def _hashes(text: str, width: int, step: int = 1) -> Iterator[int]:
    """Hashes of ``text[i:i + width]`` for i = 0, step, 2·step … (C iterators only)."""
    starts = range(0, len(text) - width + 1, step)
    return map(hash, map(text.__getitem__, map(slice, starts, range(width, len(text) + 1, step))))


class _Generation:
    """Window hashes (and value hashes, for de-duplication) remembered since a point in time."""

    def __init__(self) -> None:
        self.values: set[int] = set()
        self.long: set[int] = set()  # WINDOW-character windows
        self.short: set[int] = set()  # PROBE-character windows

    def add(self, key: int, long: list[int], short: list[int]) -> None:
        self.values.add(key)
        self.long.update(long)
        self.short.update(short)


class SecretMemory:
    """Hashed windows of masked values: ``remember`` them, then find ``spans`` in later texts.

    ``seen`` holds both generations (what ``spans`` tests), ``current`` the newer one; when
    ``current`` is full, ``seen`` becomes ``current`` (the older generation is forgotten)."""

    def __init__(self, max_values: int = MAX_VALUES, max_windows: int = MAX_WINDOWS) -> None:
        self.max_values = max_values
        self.max_windows = max_windows
        self._seen = _Generation()
        self._current = _Generation()
        self._windows = 0  # 12-windows added to the current generation
        self._lock = threading.Lock()

    def __len__(self) -> int:
        """How many values (lines of masked values) are remembered."""
        return len(self._seen.values)

    def remember(self, value: str) -> None:
        """Keep the window hashes of each line of ``value`` that is WINDOW characters or more."""
        for line in PIECE_BREAKS.split(value[:MAX_VALUE_CHARS]):
            if len(line) < WINDOW:
                continue
            key = hash(line)
            with self._lock:
                if key in self._current.values:
                    continue
                long, short = list(_hashes(line, WINDOW)), list(_hashes(line, PROBE))
                if (len(self._current.values) >= self.max_values // 2
                        or self._windows + len(long) > self.max_windows // 2):
                    self._seen, self._current, self._windows = self._current, _Generation(), 0
                self._current.add(key, long, short)
                self._seen.add(key, long, short)
                self._windows += len(long)

    def spans(self, text: str) -> list[Span]:
        """Merged spans of ``text`` that are slices (WINDOW+ characters) of remembered values."""
        seen = self._seen
        if not seen.long or len(text) < WINDOW:
            return []
        found: list[Span] = []
        probes = range(0, len(text) - PROBE + 1, STRIDE)
        for at in compress(probes, map(seen.short.__contains__, _hashes(text, PROBE, STRIDE))):
            for start in range(max(0, at + PROBE - WINDOW), min(at, len(text) - WINDOW) + 1):
                if hash(text[start:start + WINDOW]) in seen.long:
                    found.append((start, start + WINDOW))
        return merge(found)
