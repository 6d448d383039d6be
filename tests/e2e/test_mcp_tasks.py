"""Task-augmented ``tools/call`` (MCP 2025-11-25) over raw JSON-RPC: no SDK client sends tasks, so
these are the wire messages themselves (issue 28, docs/jobs.md "Tasks"). A real server, real
sandboxed commands; processes found on the host by their unique argument."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.conftest import sleep_procs
from tests.e2e.rawrpc import INIT, RawServer

pytestmark = pytest.mark.timeout(120)

CONFIG = """\
[guard]
allowed_commands = ["sh", "sleep"]
timeout_ms = 60000

[guard.command_policies.sleep]
positionals = "any"

[guard.command_policies.sh]
flags = { "-c" = "data" }
positionals = "any"
"""
SCRIPT = "for i in 1 2 3; do echo tick $i; sleep 0.4; done"
EXPECTED = "tick 1\ntick 2\ntick 3\n"


@pytest.fixture
def server(workdir: Path) -> Iterator[RawServer]:
    (workdir / "parism-test.toml").write_text(CONFIG)
    raw = RawServer(workdir)
    yield raw
    raw.close()


def started(raw: RawServer, version: str = "2025-11-25") -> dict[str, Any]:
    answer = raw.request("initialize", {**INIT, "protocolVersion": version})
    raw.send(b'{"jsonrpc":"2.0","method":"notifications/initialized"}')
    return answer["result"]


def wait_status(raw: RawServer, task_id: str, want: str, within_s: float = 30) -> dict[str, Any]:
    deadline = time.monotonic() + within_s
    while True:
        task = raw.request("tasks/get", {"taskId": task_id})["result"]
        if task["status"] == want or time.monotonic() > deadline:
            return task
        time.sleep(0.1)


def wait_for(predicate: Any, within_s: float, what: str) -> None:
    deadline = time.monotonic() + within_s
    while not predicate():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.05)


def test_a_task_augmented_run_is_polled_and_its_result_fetched(server: RawServer, workdir: Path) -> None:
    init = started(server)
    assert init["capabilities"]["tasks"] == {"list": {}, "cancel": {}, "requests": {"tools": {"call": {}}}}
    tools = {t["name"]: t for t in server.request("tools/list")["result"]["tools"]}
    assert tools["run"]["execution"] == {"taskSupport": "optional"}
    assert "execution" not in tools["describe"]
    call = server.request("tools/call", {"name": "run", "arguments": {"cmd": "sh", "args": ["-c", SCRIPT],
                                                                   "cwd": str(workdir)}, "task": {"ttl": 60000}})
    task = call["result"]["task"]
    assert task["status"] == "working" and task["ttl"] == 60000 and task["pollInterval"] > 0
    assert task["createdAt"].endswith("Z") and "content" not in call["result"]  # a CreateTaskResult
    listed = server.request("tasks/list")["result"]["tasks"]
    assert [t["taskId"] for t in listed] == [task["taskId"]]
    done = wait_status(server, task["taskId"], "completed")
    assert done["status"] == "completed", done
    result = server.request("tasks/result", {"taskId": task["taskId"]})["result"]
    assert result["isError"] is False and result["structuredContent"]["stdout"]["raw"] == EXPECTED
    assert result["_meta"]["io.modelcontextprotocol/related-task"] == {"taskId": task["taskId"]}
    again = server.request("tasks/cancel", {"taskId": task["taskId"]})
    assert again["error"]["code"] == -32602 and "terminal" in again["error"]["message"]


def test_tasks_result_blocks_until_the_end(server: RawServer, workdir: Path) -> None:
    started(server)
    task = server.request("tools/call", {"name": "run", "arguments": {"cmd": "sh", "args": ["-c", SCRIPT],
                                                                   "cwd": str(workdir)}, "task": {}})["result"]["task"]
    t0 = time.monotonic()
    result = server.request("tasks/result", {"taskId": task["taskId"]})["result"]
    assert time.monotonic() - t0 > 0.5 and result["structuredContent"]["stdout"]["raw"] == EXPECTED


def test_a_cancelled_task_has_its_tree_gone(server: RawServer, workdir: Path, sleep_arg: str) -> None:
    started(server)
    call = server.request("tools/call", {"name": "run", "arguments": {
        "cmd": "sh", "args": ["-c", f"sleep {sleep_arg} & sleep {sleep_arg}; wait"], "cwd": str(workdir)},
        "task": {"ttl": 30000}})
    task_id = call["result"]["task"]["taskId"]
    wait_for(lambda: len(sleep_procs(sleep_arg)) == 2, 10, "both sleeps")
    cancelled = server.request("tasks/cancel", {"taskId": task_id})["result"]
    assert cancelled["status"] == "cancelled"
    wait_for(lambda: not sleep_procs(sleep_arg), 5, "the sleeps gone")
    assert server.request("tasks/get", {"taskId": task_id})["result"]["status"] == "cancelled"


def test_refusals(server: RawServer, workdir: Path) -> None:
    started(server)
    unknown = server.request("tasks/get", {"taskId": "j_nope"})
    assert unknown["error"]["code"] == -32602 and "not found" in unknown["error"]["message"]
    other = server.request("tools/call", {"name": "describe", "arguments": {}, "task": {}})
    assert other["error"]["code"] == -32601 and "only run" in other["error"]["message"]
    guard = server.request("tools/call", {"name": "run", "arguments": {"cmd": "rm", "args": ["-rf", "/"]},
                                          "task": {}})["result"]["task"]
    assert guard["status"] == "failed"  # refused before it ran: a task that is already over
    result = server.request("tasks/result", {"taskId": guard["taskId"]})["result"]
    assert result["isError"] is True and result["structuredContent"]["failure"]["kind"] == "guard"


def test_no_tasks_before_2025_11_25(server: RawServer, workdir: Path) -> None:
    init = started(server, "2025-06-18")
    assert "tasks" not in init["capabilities"]
    assert server.request("tasks/list")["error"]["code"] == -32601
    plain = server.request("tools/call", {"name": "run", "arguments": {"cmd": "sh", "args": ["-c", "echo plain"],
                                                                    "cwd": str(workdir), "format": "json"},
                                          "task": {}})["result"]
    assert plain["structuredContent"]["stdout"]["raw"] == "plain\n"  # an ordinary run: the field is not in 06-18


def test_the_session_end_kills_running_tasks(server: RawServer, workdir: Path, sleep_arg: str) -> None:
    started(server)
    server.request("tools/call", {"name": "run", "arguments": {"cmd": "sleep", "args": [sleep_arg],
                                                            "cwd": str(workdir)}, "task": {}})
    wait_for(lambda: len(sleep_procs(sleep_arg)) == 1, 10, "the sleep")
    assert server.close() == 0  # stdin EOF
    wait_for(lambda: not sleep_procs(sleep_arg), 5, "the sleep gone")
