"""Per-call ``timeout_ms`` and ``stdin`` over MCP through the SDK client (issue 28): a real
server, real (sandboxed) commands; a process found on the host by its unique argument."""

from __future__ import annotations

from pathlib import Path

import pytest
from mcp import ClientSession

from tests.e2e.conftest import sleep_procs, wait_until
from tests.e2e.test_mcp_stdio import error_text, payload

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(120)]


async def test_run_past_its_timeout_ms_is_a_timeout_and_the_tree_is_gone(
        session: ClientSession, workdir: Path, sleep_arg: str) -> None:
    result = await session.call_tool("run", {"cmd": "sleep", "args": [sleep_arg], "cwd": str(workdir),
                                             "timeout_ms": 700})
    assert result.is_error is True  # decision 11: a run that could not complete
    env = payload(result)
    assert env["failure"]["reason"] == "timeout" and "700 ms" in env["failure"]["message"]
    assert env["duration_ms"] < 10_000  # the server's configured timeout is 60 s
    await wait_until(lambda: not sleep_procs(sleep_arg), 5, f"sleep {sleep_arg} gone")


async def test_run_paged_past_its_timeout_ms_is_a_timeout(session: ClientSession, workdir: Path,
                                                         sleep_arg: str) -> None:
    result = await session.call_tool("run_paged", {"cmd": "sleep", "args": [sleep_arg], "cwd": str(workdir),
                                                   "timeout_ms": 500})
    env = payload(result)
    assert env["failure"]["reason"] == "timeout"
    await wait_until(lambda: not sleep_procs(sleep_arg), 5, f"sleep {sleep_arg} gone")


async def test_timeout_ms_above_the_bound_is_refused_naming_it(session: ClientSession, workdir: Path,
                                                              sleep_arg: str) -> None:
    result = await session.call_tool("run", {"cmd": "sleep", "args": [sleep_arg], "cwd": str(workdir),
                                             "timeout_ms": 600_001})
    env = payload(result)
    assert result.is_error is True and env["failure"]["reason"] == "invalid_request"
    assert "guard.max_timeout_ms" in env["failure"]["message"] and "600000" in env["failure"]["message"]
    assert not sleep_procs(sleep_arg)
    bad = await session.call_tool("run", {"cmd": "sleep", "args": ["1"], "timeout_ms": "1000"})
    assert "timeout_ms" in error_text(bad)
