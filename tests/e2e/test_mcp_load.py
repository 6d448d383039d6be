"""The session under load (issue 27), raw JSON-RPC against the real server with its sandbox.

- a cancellation storm of 500 ``run sleep`` calls (``max_concurrency`` 4): a ``ping`` sent after
  it is answered within 1 s, no cancelled id is ever answered, no sleep is left, and a new call
  still runs (before: 64 in flight took every one of anyio's 40 worker threads, the reader could
  not read the cancellations, the ping took 28 s and 12 cancelled calls were answered);
- a running call that is cancelled has its tree killed within 0.5 s and gets no answer;
- ``ping``, ``describe``, ``dry_run`` and ``fetch_result`` answer while 500 calls are queued;
- ``server.max_queued`` refuses the call beyond it at once, as a tool error naming the setting;
- stdin EOF or SIGTERM with 500 in flight: the server exits within 2 s, under a subreaper
  (``tests/e2e/subreaper.py``, a process of its own), and leaves nothing behind.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
import uuid
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.conftest import REPO_ROOT, processes_with_arg, sleep_procs
from tests.e2e.rawrpc import RawServer

pytestmark = [pytest.mark.timeout(120)]

CONFIG = """\
[guard]
allowed_commands = ["ls", "sleep"]
timeout_ms = 60000
max_concurrency = 4
{extra}
[guard.command_policies.sleep]
positionals = "any"
"""


def started(workdir: Path, extra: str = "") -> RawServer:
    (workdir / "parism-test.toml").write_text(CONFIG.format(extra=extra))
    server = RawServer(workdir)
    server.initialize()
    assert "result" in server.request("tools/list", {})
    answer = server.request("tools/call", {"name": "run", "arguments": {"cmd": "ls"}})  # the engine is built
    assert answer["result"]["structuredContent"]["ok"] is True, answer
    return server


def mark() -> str:
    """A sleep duration nobody else uses, so the processes found by it are this test's."""
    return f"{600 + uuid.uuid4().int % 300}.{uuid.uuid4().int % 10**6:06d}"


def burst(server: RawServer, n: int, arg: str, prefix: str = "c") -> list[str]:
    ids = [f"{prefix}{i}" for i in range(n)]
    line = b"".join(json.dumps({"jsonrpc": "2.0", "id": rid, "method": "tools/call",
                                "params": {"name": "run", "arguments": {"cmd": "sleep", "args": [arg]}}}
                               ).encode() + b"\n" for rid in ids)
    server.send(line[:-1])
    return ids


def wait_for(predicate: Any, timeout: float, what: str) -> float:
    start = time.monotonic()
    while not predicate():
        if time.monotonic() - start > timeout:
            raise AssertionError(f"timed out after {timeout} s waiting for {what}")
        time.sleep(0.02)
    return time.monotonic() - start


def cancel(server: RawServer, rid: str) -> None:
    server.send(json.dumps({"jsonrpc": "2.0", "method": "notifications/cancelled",
                            "params": {"requestId": rid, "reason": "test"}}).encode())


def answers_until(server: RawServer, rid: str, timeout: float) -> tuple[dict[str, Any] | None, list[dict[str, Any]]]:
    """The answer to ``rid`` (None if it did not come within ``timeout``) and every other one
    that arrived before it."""
    others: list[dict[str, Any]] = []
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            answer = server.next_answer(max(0.01, deadline - time.monotonic()))
        except Exception:  # queue.Empty
            break
        if answer.get("id") == rid:
            return answer, others
        others.append(answer)
    return None, others


def kill_leftovers(arg: str) -> None:
    for proc in processes_with_arg(arg):
        try:
            proc.kill()
        except Exception:  # noqa: BLE001 - already gone
            pass


def test_cancellation_storm_of_500(workdir: Path) -> None:
    server = started(workdir)
    arg = mark()
    try:
        ids = burst(server, 500, arg)
        wait_for(lambda: len(sleep_procs(arg)) == 4, 15, "4 sleeps running")
        for rid in ids:
            cancel(server, rid)
        time.sleep(1)
        sent = time.monotonic()
        server.send(b'{"jsonrpc":"2.0","id":"after","method":"ping"}')
        pong, before = answers_until(server, "after", 1.0)
        latency = time.monotonic() - sent
        assert pong == {"jsonrpc": "2.0", "id": "after", "result": {}}, f"no ping answer within 1 s ({latency:.2f} s)"
        wait_for(lambda: not processes_with_arg(arg), 2, "no process of the storm left")
        answer = server.request("tools/call", {"name": "run", "arguments": {"cmd": "sleep", "args": ["0"]}})
        assert answer["result"]["structuredContent"]["ok"] is True, answer  # the session still runs calls
        time.sleep(0.5)
        late = []
        while not server.answers.empty():
            late.append(server.next_answer(1))
        answered = [a["id"] for a in before + late if a.get("id") in set(ids)]
        assert answered == [], f"{len(answered)} cancelled calls were answered: {answered[:5]}"
    finally:
        server.close()
        kill_leftovers(arg)


def test_a_cancelled_running_call_is_killed_within_half_a_second_and_not_answered(workdir: Path) -> None:
    server = started(workdir)
    arg = mark()
    try:
        for round_ in range(3):
            burst(server, 1, arg, prefix=f"one{round_}-")
            wait_for(lambda: len(sleep_procs(arg)) == 1, 10, "the sleep running")
            procs = processes_with_arg(arg)  # the sleep and its sandbox (bwrap)
            cancel(server, f"one{round_}-0")
            took = wait_for(lambda: not any(p.is_running() and p.status() != "zombie" for p in procs), 5,
                            "the tree gone")
            assert took <= 0.5, f"the cancelled call's tree lived {took:.2f} s"
            got = server.probe(b"")  # a blank line, then a ping: every answer up to the ping's
            assert got == [], got  # nothing for the cancelled id
        time.sleep(0.3)
        assert server.answers.empty()
    finally:
        server.close()
        kill_leftovers(arg)


def test_other_tools_answer_while_500_calls_wait(workdir: Path) -> None:
    server = started(workdir)
    arg = mark()
    try:
        ids = burst(server, 500, arg)
        wait_for(lambda: len(sleep_procs(arg)) == 4, 15, "4 sleeps running")
        time.sleep(0.3)
        for method, params in [
            ("ping", None),
            ("tools/call", {"name": "describe", "arguments": {}}),
            ("tools/call", {"name": "dry_run", "arguments": {"cmd": "ls", "args": ["-la"]}}),
            ("tools/call", {"name": "fetch_result", "arguments": {"result_id": "r_unknown", "cursor": "c"}}),
        ]:
            rid = f"q-{method}-{(params or {}).get('name')}"
            msg: dict[str, Any] = {"jsonrpc": "2.0", "id": rid, "method": method}
            if params is not None:
                msg["params"] = params
            sent = time.monotonic()
            server.send(json.dumps(msg).encode())
            answer, others = answers_until(server, rid, 2.0)
            assert answer is not None, f"{rid}: no answer within 2 s behind 496 queued runs"
            assert "result" in answer, answer
            assert not [a for a in others if a.get("id") in set(ids)], others  # nothing else finished
            assert time.monotonic() - sent < 2.0
    finally:
        server.close()
        kill_leftovers(arg)


def test_max_queued_refuses_beyond_the_queue(workdir: Path) -> None:
    server = started(workdir, extra="\n[server]\nmax_queued = 10\n")
    arg = mark()
    try:
        burst(server, 14, arg)  # 4 run, 10 wait
        wait_for(lambda: len(sleep_procs(arg)) == 4, 15, "4 sleeps running")
        time.sleep(0.3)
        answer = server.request("tools/call", {"name": "run", "arguments": {"cmd": "sleep", "args": [arg]}})
        result = answer["result"]
        assert result["isError"] is True, result
        text = result["content"][0]["text"]
        assert "server.max_queued = 10" in text and "busy" in text, text
        assert len(sleep_procs(arg)) == 4  # the refused call ran nothing
    finally:
        server.close()
        kill_leftovers(arg)


@pytest.mark.parametrize("how", ["eof", "sigterm"])
def test_shutdown_with_500_in_flight(workdir: Path, how: str) -> None:
    done = subprocess.run([sys.executable, "-m", "tests.e2e.subreaper", str(workdir), how, "500"], cwd=REPO_ROOT,
                          capture_output=True, text=True, timeout=90)
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["control_orphan_seen"] is True  # the count does see an orphan
    assert report["running_before"] == 4, report  # the calls were in flight
    assert report["status"] == (0 if how == "eof" else 128 + 15), report
    assert report["exit_s"] <= 2.0, report
    assert report["orphans"] == [], report
    assert report["sleeps_left"] == 0, report
