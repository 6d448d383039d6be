"""A small, bounded pool of pre-started single-use sandboxes, keyed by the whole plan.

A fresh bwrap plus the helper's start costs tens of milliseconds; a pooled one costs only the
hand-over (one pipe write). Entries are single use: ``take`` removes the entry, the caller
hands it one argv, and the executor kills its tree afterwards. The end of the command
schedules a refill of that plan on the pool's own long-lived thread — long-lived on purpose:
bwrap's ``--die-with-parent`` is a PDEATHSIG, which fires when the *thread* that forked it exits.

The refill waits ``refill_delay_s`` first: the call is still parsing and replying then, and a
refill started at once competed with it (Popen holds the GIL while it forks; bwrap and the
helper's start take ~20 ms of CPU on a 2-core machine). Measured interleaved in one engine
(120 ms between calls): engine total ``ls -la /usr/bin`` 28.0 → 21.5 ms, ``ps aux`` 28.2 →
25.8 ms, ``git log`` 8.7 → 7.9 ms at the median. A call that finds no ready sandbox (the
refill not begun or not finished) starts one of its own, as any miss does; the refill still
comes, and after a miss it does not wait (on a loaded machine a refill can take ~100 ms: the
delay alone raised the misses at 120 ms between calls from 3 to 18 in 75). (Handing such a
call the sandbox still being started was tried: in a burst each call then waited for the one
before it, where two sandboxes starting side by side overlap.)

Bounds: ``per_plan`` ready entries for at most ``max_plans`` plans (least recently used plan
evicted); an entry older than ``max_age_s``, or whose bind sources are no longer the inodes it
bound (a directory deleted and recreated), or whose working directory is not the inode the
guard checked, is replaced by a cold start.
``close`` kills every unused entry; it runs at interpreter exit too. If the server dies
without closing, each helper reads EOF on its control pipe and exits, ending its sandbox.
"""

from __future__ import annotations

import atexit
import queue
import threading
import time
from collections import OrderedDict, deque

from parism.run.sandbox.launcher import DevIno, Prepared
from parism.run.sandbox.plan import Plan

REFILL_DELAY_S = 0.025  # measured: started at once, the refill slowed the end of its own call (parse, reply)


class Pool:
    def __init__(self, per_plan: int = 1, max_plans: int = 4, max_age_s: float = 600.0,
                 refill_delay_s: float = REFILL_DELAY_S) -> None:
        self.per_plan = per_plan
        self.max_plans = max_plans
        self.max_age_s = max_age_s
        self.refill_delay_s = refill_delay_s
        self._ready: OrderedDict[Plan, deque[tuple[float, Prepared]]] = OrderedDict()
        self._lock = threading.Lock()
        self._todo: queue.SimpleQueue[tuple[Plan, float] | None] = queue.SimpleQueue()
        self._closed = threading.Event()  # set once by close(), under the lock
        self.hits = 0
        self.misses = 0
        self._late = False  # the last take found nothing ready: the next refill does not wait
        self._thread = threading.Thread(target=self._refill_loop, name="parism-sandbox-pool",
                                        daemon=True)
        self._thread.start()
        atexit.register(self.close)

    def take(self, plan: Plan, cwd_id: DevIno | None = None) -> Prepared:
        """A ready sandbox for ``plan`` (pooled if one is alive and fresh and bound the working
        directory ``cwd_id`` — the inode the guard checked —, else started now).

        The refill is queued when the command is over (not at take): started during the call
        it would compete with the command for the CPU."""
        entry = self._pop(plan, cwd_id)
        self._late = entry is None
        if entry is not None:
            self.hits += 1
        else:
            self.misses += 1
            entry = Prepared(plan)
        entry.on_end = lambda: None if self._closed.is_set() else self._todo.put((plan, time.monotonic()))
        return entry

    def _pop(self, plan: Plan, cwd_id: DevIno | None) -> Prepared | None:
        stale: list[Prepared] = []
        found: Prepared | None = None
        with self._lock:
            ready = self._ready.get(plan)
            while ready and found is None:
                born, entry = ready.popleft()
                if time.monotonic() - born < self.max_age_s and entry.current(cwd_id):
                    found = entry
                else:
                    stale.append(entry)
            if plan in self._ready:
                self._ready.move_to_end(plan)
        for entry in stale:
            entry.discard()
        return found

    def _refill_loop(self) -> None:
        while (job := self._todo.get()) is not None:
            plan, ended_at = job
            delay = 0.0 if self._late else self.refill_delay_s
            if self._closed.wait(max(0.0, ended_at + delay - time.monotonic())):
                return
            try:
                self._refill(plan)
            except OSError:
                continue  # the next take starts cold and reports the error itself

    def _refill(self, plan: Plan) -> None:
        evicted: list[Prepared] = []
        with self._lock:
            if self._closed.is_set():
                return
            ready = self._ready.setdefault(plan, deque())
            self._ready.move_to_end(plan)
            missing = self.per_plan - len(ready)
            while len(self._ready) > self.max_plans:
                _, old = self._ready.popitem(last=False)
                evicted.extend(e for _, e in old)
        for entry in evicted:
            entry.discard()
        for _ in range(max(0, missing)):
            entry = Prepared(plan)
            try:
                entry.wait_ready()
            except OSError:
                entry.discard()
                raise
            with self._lock:
                keep = not self._closed.is_set() and plan in self._ready
                if keep:
                    self._ready[plan].append((time.monotonic(), entry))
            if not keep:  # closed or evicted while it was starting
                entry.discard()

    def ready_count(self, plan: Plan | None = None) -> int:
        with self._lock:
            if plan is not None:
                return len(self._ready.get(plan, ()))
            return sum(len(d) for d in self._ready.values())

    def close(self) -> None:
        """Kill every pre-started sandbox that was never used; later takes start cold."""
        with self._lock:
            self._closed.set()  # the refill thread's delay ends at once
            entries = [e for d in self._ready.values() for _, e in d]
            self._ready.clear()
        self._todo.put(None)
        for entry in entries:
            entry.discard()
        if threading.current_thread() is not self._thread:
            self._thread.join(5.0)  # a sandbox being started right now is discarded by it
