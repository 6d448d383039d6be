"""Termination signals as cancellation, shared by ``parism serve`` and ``parism run``.

Python's default for SIGTERM is to die at once and for SIGINT to raise wherever the main thread
happens to be; either way the running command's process tree would be orphaned (mcp-notes
§1.10).  Here a signal cancels the call instead, and the engine's cancellation path kills the
tree before we exit with the conventional ``128 + signal`` status.
"""

from __future__ import annotations

import signal
from collections.abc import Awaitable, Callable
from typing import TypeVar

import anyio

SIGNALS = (signal.SIGTERM, signal.SIGINT, signal.SIGHUP)
T = TypeVar("T")


async def next_signal() -> int:
    """Wait for the first of :data:`SIGNALS` and return its number."""
    with anyio.open_signal_receiver(*SIGNALS) as received:
        async for signum in received:
            return int(signum)
    raise RuntimeError("signal receiver closed")  # pragma: no cover - the iterator never ends


def run_until_signal(call: Callable[[], Awaitable[T]]) -> T | int:
    """Run ``call`` in a fresh event loop; a signal cancels it and ``128 + signal`` is returned."""
    results: list[T] = []
    signals: list[int] = []

    async def main() -> None:
        async with anyio.create_task_group() as tg:

            async def watch() -> None:
                signals.append(await next_signal())
                tg.cancel_scope.cancel()

            tg.start_soon(watch)
            results.append(await call())
            tg.cancel_scope.cancel()

    anyio.run(main)
    return 128 + signals[0] if signals else results[0]
