"""MCP server start-up: the collector is off while the long-lived objects are built, then on."""

from __future__ import annotations

import gc
from typing import Any

import anyio

from parism.server.app import GEN0_THRESHOLD, ParismServer, _warm_up


class _Built:
    """Stands in for ``LazyEngine``: the build itself is not under test here."""

    def __init__(self, fail: bool = False) -> None:
        self.fail = fail

    async def get(self) -> Any:
        if self.fail:
            raise RuntimeError("engine build failed")
        return object()


def _warm(engine: _Built) -> tuple[bool, int, int]:
    server = ParismServer("t", version="0")

    async def main() -> None:
        async def listed() -> None:
            await anyio.sleep(0.01)
            assert server.tools_listed is not None
            server.tools_listed.set()

        async with anyio.create_task_group() as tg:
            tg.start_soon(listed)
            try:
                await _warm_up(server, engine)  # type: ignore[arg-type]
            except RuntimeError:
                pass

    was, threshold = gc.isenabled(), gc.get_threshold()
    gc.disable()  # as ``parism serve`` starts
    try:
        anyio.run(main)
        return gc.isenabled(), gc.get_freeze_count(), gc.get_threshold()[0]
    finally:
        gc.unfreeze()
        gc.set_threshold(*threshold)
        if was:
            gc.enable()


def test_warm_up_freezes_what_was_built_and_turns_the_collector_on() -> None:
    enabled, frozen, young = _warm(_Built())
    assert enabled and frozen > 0
    assert young == GEN0_THRESHOLD > 700  # a call's answer does not set off dozens of collections


def test_collector_is_back_on_even_when_the_engine_build_fails() -> None:
    enabled, _, _ = _warm(_Built(fail=True))
    assert enabled


def test_the_sdk_request_span_is_kept_only_under_a_tracer_provider(monkeypatch: Any) -> None:
    from mcp.server._otel import OpenTelemetryMiddleware
    from opentelemetry import trace

    def traced(server: ParismServer) -> bool:
        return any(isinstance(m, OpenTelemetryMiddleware) for m in server.middleware)

    assert not traced(ParismServer("t", version="0"))  # no provider installed: a no-op span
    monkeypatch.setattr(trace, "get_tracer_provider", lambda: trace.NoOpTracerProvider())
    assert traced(ParismServer("t", version="0"))
