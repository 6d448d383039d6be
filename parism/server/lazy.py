"""The engine the server's tools share, built once in a worker thread (:class:`LazyEngine`).

Its own module so the tool table and the early start can name it without importing the server
(:mod:`parism.server.app` imports them).
"""

from typing import TYPE_CHECKING

import anyio

if TYPE_CHECKING:
    from parism.config import LoadedConfig
    from parism.engine import Engine


class LazyEngine:
    """The engine, built once in a worker thread.

    Importing the pipeline costs about 100 ms of CPU; :func:`_serve` starts the build once the
    client has the tool list instead of before the handshake, so a client's ``tools/list`` does
    not wait for it.  Every tool awaits the same build; only the configuration (for the
    annotations) is loaded up front.
    """

    def __init__(self, cfg: "LoadedConfig", engine: "Engine | None" = None) -> None:
        self.cfg = cfg
        self._engine = engine
        self._lock = anyio.Lock()

    async def get(self) -> "Engine":
        if self._engine is None:
            async with self._lock:
                if self._engine is None:
                    self._engine = await anyio.to_thread.run_sync(self._build)
        return self._engine

    def ready(self) -> "Engine | None":
        """The engine if it is built (any thread), else None: nothing waits here."""
        return self._engine

    def _build(self) -> "Engine":
        from parism.engine import Engine

        return Engine(self.cfg)
