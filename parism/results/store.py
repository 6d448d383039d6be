"""The result store: retained results of ``run(retain: true)`` for the three read tools (contract §13).

Invariants (each one is tested in ``tests/unit/store/``):

- **Memory only, per process.** Nothing is written to disk; nothing is ever re-executed to
  answer a miss. Only masked text reaches the store (the redactor ran before the parser).
- **Bounded.** At most ``max_items`` results and ``max_total_bytes`` of accounted bytes; a result
  over ``max_result_bytes`` is never stored. The accounted size is what the item really holds:
  the masked text, the parsed value as compact JSON bytes (not a tree of Python objects, whose
  overhead would be several times the data) and the evidence as packed integer arrays.
- **Accounted before built.** Producers ask :meth:`ResultStore.allowance` and stop building
  (``parism.results.pack``) as soon as an item would pass the per-result limit, so a huge result
  costs at most the limit in transient memory, never its full size.
- **Distinct misses.** ``unknown_id`` (never issued here), ``expired`` (idle longer than the
  TTL: each read — ``fetch_result``, ``explain_result``, ``compare_results`` — renews it), ``evicted`` (pushed out by newer results, or over the per-result limit
  — the message then gives the size), ``not_retained`` (issued without ``retain: true``, or the
  store was full). Miss reasons are remembered for the last ``MISS_MEMORY`` ids only, so the
  miss memory is bounded too; an id that fell out of it reads as ``unknown_id``.
- **Unguessable ids.** ``r_`` + 24 hex digits from :mod:`secrets` (96 bits): ids of another
  session cannot be guessed, and cursors (``cursor.py``) bind to them.
- **Thread-safe.** One lock guards every read and write; calls run in worker threads.
- **LRU.** A read moves an item to the most-recent end; eviction takes the least recent first.
"""

from __future__ import annotations

import secrets
import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal

MISS_MEMORY = 1024  # ids whose miss reason is remembered (oldest forgotten first)
NOTHING_RERUN = "nothing is re-executed; run the command again with retain: true"

MissReason = Literal["unknown_id", "expired", "evicted", "not_retained"]


@dataclass(frozen=True)
class StoreLimits:
    max_result_bytes: int = 2 * 1024 * 1024
    max_total_bytes: int = 32 * 1024 * 1024
    max_items: int = 16
    ttl_ms: int = 900_000  # idle time: 15 minutes after the last read (issue #26: 60 s from creation was agent speed)

    @classmethod
    def from_settings(cls, store: Any) -> StoreLimits:
        return cls(store.max_result_bytes, store.max_total_bytes, store.max_items, store.ttl_ms)


@dataclass(frozen=True)
class StoreMiss:
    reason: MissReason
    message: str


@dataclass
class StoredResult:
    """One retained result. ``parsed_json`` is the full parsed value *before* projection and
    budget (compact JSON); ``evidence`` is a :class:`parism.results.evidence.Evidence` or None."""

    result_id: str
    stdout: str
    stderr: str
    parsed_json: bytes | None
    rows_key: str | None
    row_fields: tuple[str, ...]
    parser_id: str | None
    evidence: Any
    evidence_mode: str
    review: dict[str, Any]
    cmd: str
    args: list[str]
    cwd: str
    exit_code: int
    ok: bool
    fingerprint: dict[str, Any]
    query: dict[str, Any]
    qhash: str
    size: int
    created: float = 0.0  # set by the store (its clock)
    used: float = 0.0  # the last put or read (the store's clock): the TTL counts from here
    extra: dict[str, Any] = field(default_factory=dict)  # failure, omissions of the original run


@dataclass(frozen=True)
class Stored:
    """The answer of :meth:`ResultStore.put`: retained or why not."""

    retained: bool
    reason: MissReason | None = None
    message: str | None = None


class ResultStore:
    def __init__(self, limits: StoreLimits | None = None, clock: Callable[[], float] = time.monotonic) -> None:
        self.limits = limits or StoreLimits()
        self._clock = clock
        self._lock = threading.Lock()
        self._items: OrderedDict[str, StoredResult] = OrderedDict()
        self._total = 0
        self._misses: OrderedDict[str, StoreMiss] = OrderedDict()

    @staticmethod
    def new_id() -> str:
        return "r_" + secrets.token_hex(12)

    def allowance(self) -> int:
        """Bytes one result may take: producers stop building past this."""
        return min(self.limits.max_result_bytes, self.limits.max_total_bytes)

    def stats(self) -> dict[str, int]:
        with self._lock:
            return {"items": len(self._items), "bytes": self._total, "misses": len(self._misses)}

    def decline(self, result_id: str, reason: MissReason, message: str) -> Stored:
        """Remember an id that was shown to the caller but not stored (``not_retained``, or
        ``evicted`` for a result over the per-result limit). Every miss message says that
        nothing is re-executed."""
        if NOTHING_RERUN not in message:
            message = f"{message}; {NOTHING_RERUN}"
        with self._lock:
            self._remember(result_id, StoreMiss(reason, message))
        return Stored(False, reason, message)

    def too_large(self, result_id: str, size: int, *, at_least: bool = False) -> Stored:
        shown = f"at least {size}" if at_least else str(size)
        return self.decline(result_id, "evicted", (
            f"result {result_id} is {shown} bytes, over the {self.limits.max_result_bytes} byte "
            f"per-result limit (store.max_result_bytes), so it was not kept; {NOTHING_RERUN}"))

    def put(self, item: StoredResult) -> Stored:
        lim = self.limits
        if item.size > lim.max_result_bytes or item.size > lim.max_total_bytes:
            return self.too_large(item.result_id, item.size)
        with self._lock:
            now = self._clock()
            self._purge(now)
            old = self._items.pop(item.result_id, None)
            if old is not None:
                self._total -= old.size
            while self._items and (len(self._items) >= lim.max_items or self._total + item.size > lim.max_total_bytes):
                rid, gone = self._items.popitem(last=False)
                self._total -= gone.size
                self._remember(rid, StoreMiss("evicted", (
                    f"result {rid} was evicted to make room for newer results (store keeps "
                    f"{lim.max_items} results, {lim.max_total_bytes} bytes); {NOTHING_RERUN}")))
            if lim.max_items < 1:
                miss = StoreMiss("not_retained", f"result {item.result_id} was not kept: the result store is "
                                                 f"disabled (store.max_items = 0); {NOTHING_RERUN}")
                self._remember(item.result_id, miss)
                return Stored(False, miss.reason, miss.message)
            item.created = item.used = now
            self._items[item.result_id] = item
            self._total += item.size
            self._misses.pop(item.result_id, None)
        return Stored(True)

    def get(self, result_id: str) -> StoredResult | StoreMiss:
        with self._lock:
            now = self._clock()
            item = self._items.get(result_id)
            if item is not None:
                if self._expired(item, now):
                    self._drop_expired(result_id, item)
                    return self._misses[result_id]
                self._items.move_to_end(result_id)
                item.used = now  # a read renews the idle time
                return item
            miss = self._misses.get(result_id)
        if miss is not None:
            return miss
        return StoreMiss("unknown_id", f"no result {result_id!r} was issued by this server process; {NOTHING_RERUN}"
                         if len(result_id) <= 64 else f"no such result was issued by this server process; {NOTHING_RERUN}")

    def age_ms(self, item: StoredResult) -> int:
        return max(0, int((self._clock() - item.created) * 1000))

    # -- under the lock ---------------------------------------------------------------

    def _expired(self, item: StoredResult, now: float) -> bool:
        return (now - item.used) * 1000 >= self.limits.ttl_ms

    def _drop_expired(self, rid: str, item: StoredResult) -> None:
        del self._items[rid]
        self._total -= item.size
        self._remember(rid, StoreMiss("expired", (
            f"result {rid} expired: results are kept {self.limits.ttl_ms} ms after their last read "
            f"(store.ttl_ms; each fetch_result, explain_result or compare_results renews it); {NOTHING_RERUN}")))

    def _purge(self, now: float) -> None:
        for rid, item in [(r, i) for r, i in self._items.items() if self._expired(i, now)]:
            self._drop_expired(rid, item)

    def _remember(self, rid: str, miss: StoreMiss) -> None:
        self._misses[rid] = miss
        self._misses.move_to_end(rid)
        while len(self._misses) > MISS_MEMORY:
            self._misses.popitem(last=False)
