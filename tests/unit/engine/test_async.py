"""``arun``: cancellation kills the tree before the call returns; the loop stays responsive;
``max_concurrency`` queues executions."""

from __future__ import annotations

import time
from pathlib import Path

import anyio
import psutil

from parism.engine import Engine
from tests.unit.engine.conftest import MakeEngine


def _alive(pid: int) -> bool:
    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


def _pid_from(path: Path) -> int:
    for _ in range(100):
        if path.exists() and path.read_text().strip():
            return int(path.read_text())
        time.sleep(0.02)
    raise AssertionError("the child never wrote its pid")


def test_cancellation_kills_the_child_tree_before_returning(engine: Engine, tmp_path: Path) -> None:
    pidfile = tmp_path / "pid"

    async def main() -> int:
        with anyio.move_on_after(0.8):
            await engine.arun("sh", ["-c", f"sleep 300 & echo $! > {pidfile}; wait"], cwd=str(tmp_path))
        return _pid_from(pidfile)

    t0 = time.monotonic()
    grandchild = anyio.run(main)
    assert time.monotonic() - t0 < 5
    assert not _alive(grandchild), "the grandchild survived the cancelled call"


def test_describe_answers_while_a_command_runs(engine: Engine, tmp_path: Path) -> None:
    async def main() -> tuple[float, float]:
        async with anyio.create_task_group() as tg:
            t0 = time.monotonic()
            tg.start_soon(engine.arun, "sh", ["-c", "sleep 1.5"], str(tmp_path))
            await anyio.sleep(0.1)
            engine.describe()
            answered = time.monotonic() - t0
        return answered, time.monotonic() - t0

    answered, total = anyio.run(main)
    assert answered < 1.0 and total >= 1.4


def test_max_concurrency_queues_executions(make_engine: MakeEngine, tmp_path: Path) -> None:
    engine = make_engine(guard={"max_concurrency": 1})

    async def main() -> float:
        t0 = time.monotonic()
        async with anyio.create_task_group() as tg:
            for _ in range(3):
                tg.start_soon(engine.arun, "sh", ["-c", "sleep 0.4"], str(tmp_path))
        return time.monotonic() - t0

    assert anyio.run(main) >= 1.2
    wide = make_engine(guard={"max_concurrency": 3})

    async def parallel() -> float:
        t0 = time.monotonic()
        async with anyio.create_task_group() as tg:
            for _ in range(3):
                tg.start_soon(wide.arun, "sh", ["-c", "sleep 0.4"], str(tmp_path))
        return time.monotonic() - t0

    assert anyio.run(parallel) < 1.1
