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


IO_CONFIG = """\
[guard]
allowed_commands = ["cat", "sha256sum", "sleep"]
timeout_ms = 60000
max_stdin_bytes = 2000000
max_output_bytes = 4194304

[guard.command_policies.sleep]
positionals = "any"

[guard.command_policies.sha256sum]
positionals = "path"
"""


@pytest.fixture
async def io_session(workdir: Path):  # type: ignore[no-untyped-def]
    from tests.e2e.conftest import open_session

    (workdir / "parism-test.toml").write_text(IO_CONFIG)
    async with open_session(workdir) as s:
        yield s


async def test_stdin_reaches_the_sandboxed_command_whole(io_session: ClientSession, workdir: Path) -> None:
    import hashlib

    described = payload(await io_session.call_tool("describe", {}))
    text = "".join(f"{i:07d} ✓\n" for i in range(150_000))  # 1.5 MB: past every pipe buffer
    env = payload(await io_session.call_tool("run", {"cmd": "sha256sum", "cwd": str(workdir), "stdin": text}))
    assert env["ok"] is True, env.get("failure")
    assert env["stdout"]["raw"].split()[0] == hashlib.sha256(text.encode()).hexdigest()
    echoed = payload(await io_session.call_tool("run", {"cmd": "cat", "cwd": str(workdir), "stdin": "a\nb\n",
                                                        "format": "json"}))
    assert echoed["stdout"]["raw"] == "a\nb\n"
    assert described["sandbox"]["active"] is True  # sandboxed here: the helper handed stdin over


async def test_stdin_is_redacted_where_echoed_and_bounded(io_session: ClientSession, workdir: Path) -> None:
    secret = "ghp_" + "Z9y8X7w6V5u4T3s2R1q0P9o8N7m6L5k4J3i2"
    result = await io_session.call_tool("run", {"cmd": "cat", "cwd": str(workdir), "stdin": f"x {secret}\n"})
    env = payload(result)
    assert secret not in result.model_dump_json() and "[REDACTED]" in str(env["stdout"])
    big = await io_session.call_tool("run", {"cmd": "cat", "cwd": str(workdir), "stdin": "x" * 2_000_001})
    refused = payload(big)
    assert big.is_error is True and refused["failure"]["reason"] == "invalid_request"
    assert "guard.max_stdin_bytes (2000000)" in refused["failure"]["message"]
    paged = await io_session.call_tool("run_paged", {"cmd": "cat", "cwd": str(workdir), "stdin": "x"})
    assert "'stdin'" in error_text(paged)
