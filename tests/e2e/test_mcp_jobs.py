"""Jobs over MCP through the SDK client (issue 28, docs/jobs.md): a real server, real sandboxed
commands; processes found on the host by their unique argument, text checked against what the
script prints by construction."""

from __future__ import annotations

import os
import signal
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import anyio
import psutil
import pytest
from mcp import ClientSession

from tests.e2e.conftest import open_session, server_pid_of, sleep_procs, wait_until
from tests.e2e.test_mcp_stdio import error_text, payload

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(120)]

JOBS_CONFIG = """\
[guard]
allowed_commands = ["sh", "sleep", "ls"]
timeout_ms = 60000

[server]
max_jobs = 2
job_page_bytes = 1024

[guard.command_policies.sleep]
positionals = "any"

[guard.command_policies.sh]
flags = { "-c" = "data" }
positionals = "any"
"""

LINES = 30
#: a 3-second job: 30 lines of 100 bytes, one every 0.1 s
SCRIPT = f'i=1; while [ $i -le {LINES} ]; do printf "line %03d %s\\n" $i "$(printf "%090d" $i)"; sleep 0.1; i=$((i+1)); done'
EXPECTED = "".join(f"line {i:03d} {i:090d}\n" for i in range(1, LINES + 1))


@pytest.fixture
async def jobs(workdir: Path) -> AsyncIterator[ClientSession]:
    (workdir / "parism-test.toml").write_text(JOBS_CONFIG)
    async with open_session(workdir) as s:
        yield s


async def call(session: ClientSession, tool: str, **arguments: Any) -> dict[str, Any]:
    result = await session.call_tool(tool, arguments)
    assert result.is_error is False, result.content
    return payload(result)


async def test_a_3_second_job_started_polled_paged_and_its_envelope_fetched(jobs: ClientSession,
                                                                            workdir: Path) -> None:
    started = await call(jobs, "job_start", cmd="sh", args=["-c", SCRIPT], cwd=str(workdir))
    assert started["state"] == "running" and started["job_id"].startswith("j_")
    job_id = started["job_id"]
    pages: list[dict[str, Any]] = []
    cursor: str | None = None
    states = []
    for _ in range(200):  # poll and read while it runs, then to the end
        status = await call(jobs, "job_status", job_id=job_id)
        states.append(status["state"])
        page = await call(jobs, "job_output", job_id=job_id, **({"cursor": cursor} if cursor else {}))
        assert len(page["text"].encode()) <= 1024  # server.job_page_bytes
        assert page["text"] == "" or page["text"].endswith("\n")  # cut at line ends
        pages.append(page)
        cursor = page.get("next_cursor")
        if cursor is None:
            break
        if not page["more"]:
            await anyio.sleep(0.2)
    assert cursor is None, "the pages never ended"
    assert "running" in states and states[-1] == "done"
    text = "".join(p["text"] for p in pages)
    assert text == EXPECTED
    assert sum(1 for p in pages if p["text"]) >= 3  # 3000 bytes in pages of at most 1024
    assert all(p["skipped_bytes"] == 0 for p in pages)
    for before, after in zip(pages, pages[1:]):
        assert after["start"] == before["end"]  # no byte twice, none lost
    final = await call(jobs, "job_status", job_id=job_id)
    env = final["envelope"]
    assert final["exitCode"] == 0 and env["ok"] is True and env["stdout"]["raw"] == EXPECTED
    assert final["output_bytes"] == len(EXPECTED.encode()) and final["dropped_bytes"] == 0
    assert 2500 <= final["elapsed_ms"] < 30_000
    assert env["review"]["retained"] is True  # kept like a retain: true run
    described = await call(jobs, "describe")
    assert {"job_start", "job_status", "job_output", "job_stop"} <= set(described["tools"])


async def test_a_job_stopped_mid_way_has_its_tree_gone(jobs: ClientSession, workdir: Path, sleep_arg: str) -> None:
    started = await call(jobs, "job_start", cmd="sh", args=["-c", f"sleep {sleep_arg} & sleep {sleep_arg}; wait"],
                         cwd=str(workdir))
    await wait_until(lambda: len(sleep_procs(sleep_arg)) == 2, 10, "both sleeps running")
    stopped = await call(jobs, "job_stop", job_id=started["job_id"])
    assert stopped["state"] == "stopped" and stopped["envelope"]["failure"]["reason"] == "cancelled"
    await wait_until(lambda: not sleep_procs(sleep_arg), 5, f"sleep {sleep_arg} gone")
    again = await call(jobs, "job_status", job_id=started["job_id"])
    assert again["state"] == "stopped"


async def test_jobs_past_max_jobs_are_refused(jobs: ClientSession, workdir: Path, sleep_arg: str) -> None:
    ids = [(await call(jobs, "job_start", cmd="sleep", args=[sleep_arg], cwd=str(workdir)))["job_id"]
           for _ in range(2)]
    third = await jobs.call_tool("job_start", {"cmd": "sleep", "args": [sleep_arg], "cwd": str(workdir)})
    refused = payload(third)
    assert third.is_error is True and refused["failure"]["reason"] == "too_many_jobs"
    assert "server.max_jobs (2)" in refused["failure"]["message"]
    await wait_until(lambda: len(sleep_procs(sleep_arg)) == 2, 10, "two sleeps, not three")
    await call(jobs, "job_stop", job_id=ids[0])
    fourth = await call(jobs, "job_start", cmd="sleep", args=[sleep_arg], cwd=str(workdir))
    assert fourth["state"] == "running"
    for job_id in (ids[1], fourth["job_id"]):
        await call(jobs, "job_stop", job_id=job_id)


async def test_unknown_jobs_and_bad_arguments_are_refused(jobs: ClientSession, workdir: Path) -> None:
    unknown = await jobs.call_tool("job_status", {"job_id": "j_nope"})
    assert unknown.is_error is True and payload(unknown)["failure"]["reason"] == "unknown_job"
    bad = await jobs.call_tool("job_output", {"job_id": "j_nope", "bogus": 1})
    assert "'bogus'" in error_text(bad) and "job_id, cursor" in error_text(bad)
    guard = await jobs.call_tool("job_start", {"cmd": "rm", "args": ["-rf", "/"], "cwd": str(workdir)})
    refused = payload(guard)
    assert guard.is_error is True and refused["failure"]["kind"] == "guard" and "job_id" not in refused
    started = await call(jobs, "job_start", cmd="ls", cwd=str(workdir))
    tampered = await jobs.call_tool("job_output", {"job_id": started["job_id"], "cursor": "c1.e30.AAAA"})
    assert tampered.is_error is True and tampered.structured_content is not None  # (its message has ", ")
    assert tampered.structured_content["failure"]["reason"] == "cursor_invalid"


@pytest.mark.parametrize("end", ["stdin_eof", "sigterm"])
async def test_the_session_end_kills_every_job(workdir: Path, sleep_arg: str, end: str) -> None:
    (workdir / "parism-test.toml").write_text(JOBS_CONFIG)
    async with open_session(workdir) as session:
        for args in (["sleep", sleep_arg], ["sh", "-c", f"sleep {sleep_arg} & wait"]):
            await call(session, "job_start", cmd=args[0], args=args[1:], cwd=str(workdir))
        await wait_until(lambda: len(sleep_procs(sleep_arg)) == 2, 10, "both jobs running")
        server = server_pid_of(sleep_procs(sleep_arg)[0])
        if end == "sigterm":
            os.kill(server, signal.SIGTERM)  # the server is this test's child
            await wait_until(lambda: not _alive(server), 10, "the server exited")
    await wait_until(lambda: not sleep_procs(sleep_arg), 5, f"every sleep {sleep_arg} gone")


def _alive(pid: int) -> bool:
    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False
