"""``run_paged`` (contract §4.1, contract §14): pages of lines from *one* execution, cached for 30 s.

v1 re-ran the command for every page, so page 2 could come from a different run than page 1.
Here the first successful execution of the same (cmd, args, cwd, policy hash) is kept for
``TTL_S`` seconds in a small LRU bounded by entry count *and* total bytes. Failed, truncated or
timed-out executions are never cached: the next page runs again and ``cache.reason`` says why
this one was not stored. Each page is also cut at a byte cap, on a line boundary.
"""

from __future__ import annotations

import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

TTL_S = 30.0
MAX_ENTRIES = 32
MAX_BYTES = 64 * 1024 * 1024

Key = tuple[str, tuple[str, ...], str, str]


@dataclass(frozen=True)
class Page:
    raw: str
    total_lines: int
    has_next: bool
    cut: bool  # the page hit the byte cap


def split_lines(text: str) -> list[str]:
    """Split on ``\\n``; one trailing empty element (final newline) is dropped; ``\\r`` is kept."""
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return lines


def count_lines(text: str) -> int:
    """``len(split_lines(text))`` without building the lines (a 64 MiB output is ~1M strings)."""
    if not text:
        return 0
    return text.count("\n") + (0 if text.endswith("\n") else 1)


def page_of(text: str, page: int, page_size: int, byte_cap: int) -> Page:
    """Lines ``[page*size, (page+1)*size)``, joined by ``\\n`` plus a trailing ``\\n``."""
    lines = split_lines(text)
    chosen = lines[page * page_size:(page + 1) * page_size]
    kept: list[str] = []
    size = 0
    for line in chosen:
        size += len(line.encode("utf-8", "replace")) + 1
        if byte_cap and size > byte_cap:
            break
        kept.append(line)
    raw = "\n".join(kept) + "\n" if kept else ""
    return Page(raw, len(lines), (page + 1) * page_size < len(lines), len(kept) < len(chosen))


@dataclass
class Entry:
    value: Any
    size: int
    at: float


class PageCache:
    """Thread-safe LRU with TTL purge on insert, bounded by entries and bytes."""

    def __init__(self, ttl_s: float = TTL_S, max_entries: int = MAX_ENTRIES, max_bytes: int = MAX_BYTES,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.ttl_s, self.max_entries, self.max_bytes = ttl_s, max_entries, max_bytes
        self._clock = clock
        self._items: OrderedDict[Key, Entry] = OrderedDict()
        self._bytes = 0
        self._lock = threading.Lock()

    def get(self, key: Key) -> tuple[Any, int] | None:
        """(value, age in ms) of a live entry, or None."""
        with self._lock:
            entry = self._items.get(key)
            if entry is None:
                return None
            age = self._clock() - entry.at
            if age > self.ttl_s:
                self._drop(key)
                return None
            self._items.move_to_end(key)
            return entry.value, int(age * 1000)

    def put(self, key: Key, value: object, size: int) -> bool:
        """Store unless ``size`` alone exceeds the byte bound; evicts expired, then LRU."""
        if size > self.max_bytes:
            return False
        with self._lock:
            now = self._clock()
            if key in self._items:
                self._drop(key)
            for k in [k for k, e in self._items.items() if now - e.at > self.ttl_s]:
                self._drop(k)
            while self._items and (len(self._items) >= self.max_entries or self._bytes + size > self.max_bytes):
                self._drop(next(iter(self._items)))
            self._items[key] = Entry(value, size, now)
            self._bytes += size
            return True

    def _drop(self, key: Key) -> None:
        self._bytes -= self._items.pop(key).size
