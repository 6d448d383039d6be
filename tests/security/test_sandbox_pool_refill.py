"""The pool's refill: delayed after a call, still there for a call that comes first, never left behind."""

from __future__ import annotations

import time
from pathlib import Path

from parism.run.sandbox.pool import Pool
from tests.security.sandbox.helpers import (
    alive,
    decision,
    make_spec,
    sandbox_factory,
    workspace,
)

__all__ = ["sandbox_factory", "workspace"]


def _plan(sb, ws: Path):
    return sb.plan(decision(), make_spec(["/bin/sh"], str(ws)))


def _used_once(pool: Pool, plan) -> None:
    """Take a sandbox and spend it: its end queues the refill, as a call's end does."""
    started = pool.take(plan).handover(["/usr/bin/true"])
    assert started.wait(10) == 0
    started.kill_tree()


def _wait_ready(pool: Pool, plan, timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while pool.ready_count(plan) < 1:
        assert time.monotonic() < deadline, "the refill never came"
        time.sleep(0.01)


def test_after_a_miss_the_refill_does_not_wait(sandbox_factory, workspace: Path) -> None:
    """A miss means the pool is not keeping up: its refill starts at once, whatever the delay."""
    sb = sandbox_factory([str(workspace)])
    plan = _plan(sb, workspace)
    pool = Pool(refill_delay_s=30)
    try:
        _used_once(pool, plan)
        assert (pool.hits, pool.misses) == (0, 1)
        _wait_ready(pool, plan)
    finally:
        pool.close()


def test_a_call_before_the_delayed_refill_starts_cold(sandbox_factory, workspace: Path) -> None:
    sb = sandbox_factory([str(workspace)])
    plan = _plan(sb, workspace)
    pool = Pool(refill_delay_s=1.0)
    try:
        _used_once(pool, plan)  # a miss: refilled at once
        _wait_ready(pool, plan)
        _used_once(pool, plan)  # a hit: this refill waits out its delay
        time.sleep(0.4)  # a refill started at once would be ready by now
        assert pool.ready_count(plan) == 0
        entry = pool.take(plan)  # the refill is still waiting: a sandbox of its own
        assert (pool.hits, pool.misses) == (1, 2) and pool.ready_count(plan) == 0
        started = entry.handover(["/usr/bin/true"])
        assert started.wait(10) == 0
        started.kill_tree()
        _wait_ready(pool, plan)  # the refills still come, and fill the pool once
        time.sleep(1.0)
        ready = [e.proc.pid for d in pool._ready.values() for _, e in d]
    finally:
        pool.close()
    assert len(ready) == 1 and alive(ready) == []


def test_close_during_the_delay_starts_nothing_and_does_not_wait_it_out(sandbox_factory, workspace: Path) -> None:
    sb = sandbox_factory([str(workspace)])
    plan = _plan(sb, workspace)
    pool = Pool(refill_delay_s=30)
    _used_once(pool, plan)
    _wait_ready(pool, plan)
    _used_once(pool, plan)  # a hit: its refill waits 30 s
    t0 = time.monotonic()
    pool.close()
    assert time.monotonic() - t0 < 5 and not pool._thread.is_alive()
    assert pool.ready_count() == 0
