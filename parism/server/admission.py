"""Admission of the calls that execute (``run``, ``run_paged``): ``guard.max_concurrency`` slots
and a bounded queue in front of them, on the event loop.

Why not the engine's slots alone: a call waiting there held a worker thread, and anyio's pool
has 40 — with ~45 queued ``run`` calls every thread was taken, the transport's reader (which
reads the wire in a worker thread) could not read the ``notifications/cancelled`` that would
have freed them, and ``ping`` waited minutes (issue 27). Here a queued call is a future on the
event loop: it holds no thread, a cancelled one leaves the queue at once (its handler's
cancellation is the future's), and what does not execute (``ping``, ``describe``, ``dry_run``,
the result tools) never passes through it. A call is admitted for its whole pipeline (guard,
execution, parse), so ``max_concurrency`` also bounds how many outputs are held at once
(docs/configuration.md, ``server.max_queued``).

The slots are taken on the loop (:meth:`take`) or without waiting by the transport's reader
thread (:meth:`try_take`, the early start); a slot is given back from any thread
(:meth:`release`), always handed on to the oldest waiter on the loop.
"""

from __future__ import annotations

import asyncio
import threading


class QueueFull(Exception):
    """``server.max_queued`` calls already wait for a slot."""

    def __init__(self, queued: int, slots: int) -> None:
        super().__init__(queued, slots)
        self.queued = queued
        self.slots = slots

    def text(self) -> str:
        return (f"server busy: {self.queued} calls already wait for an execution slot "
                f"(server.max_queued = {self.queued}; guard.max_concurrency = {self.slots} run at once); "
                f"nothing was run — retry once some calls have answered, or cancel calls you no longer need")


class Admission:
    """``slots`` execution slots; at most ``max_queued`` calls wait for one, in arrival order."""

    def __init__(self, slots: int, max_queued: int, loop: asyncio.AbstractEventLoop | None = None) -> None:
        self.slots = max(1, slots)
        self.max_queued = max_queued
        self._loop = loop or asyncio.get_running_loop()
        self._lock = threading.Lock()
        self._free = self.slots
        self._waiters: dict[asyncio.Future[None], None] = {}  # insertion-ordered: a FIFO with O(1) removal

    @property
    def queued(self) -> int:
        return len(self._waiters)

    @property
    def running(self) -> int:
        return self.slots - self._free

    def try_take(self) -> bool:
        """A slot now, from any thread, only if nobody waits for one (never jumps the queue)."""
        with self._lock:
            if self._free > 0 and not self._waiters:
                self._free -= 1
                return True
            return False

    async def take(self) -> None:
        """Wait (on the loop, holding nothing) for a slot; :class:`QueueFull` when the queue is
        full. Cancelled while waiting, the call leaves the queue and holds no slot."""
        with self._lock:
            if self._free > 0 and not self._waiters:
                self._free -= 1
                return
            if len(self._waiters) >= self.max_queued:
                raise QueueFull(self.max_queued, self.slots)
            waiter: asyncio.Future[None] = self._loop.create_future()
            self._waiters[waiter] = None
        try:
            await waiter
        except BaseException:
            with self._lock:
                self._waiters.pop(waiter, None)  # cancelled while queued: it leaves the queue
            if waiter.done() and not waiter.cancelled():
                self._release_on_loop()  # granted, then cancelled before it resumed: hand the slot on
            raise

    def release(self) -> None:
        """Give a slot back (any thread): the oldest waiter gets it, else it is free again."""
        if threading.get_ident() == self._thread:
            self._release_on_loop()
            return
        try:
            self._loop.call_soon_threadsafe(self._release_on_loop)
        except RuntimeError:  # the loop is closed: the server is exiting, nobody waits
            pass

    @property
    def _thread(self) -> int | None:
        return getattr(self._loop, "_thread_id", None)

    def _release_on_loop(self) -> None:
        with self._lock:
            while self._waiters:
                waiter = next(iter(self._waiters))
                del self._waiters[waiter]
                if not waiter.done():  # on the loop: a cancelled waiter is already done
                    waiter.set_result(None)
                    return
            self._free = min(self.slots, self._free + 1)
