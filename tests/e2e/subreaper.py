"""Run the real server under a subreaper and report what its process tree left behind (JSON on
stdout): ``python -m tests.e2e.subreaper WORKDIR CALLS``, or, for a shutdown under load,
``python -m tests.e2e.subreaper WORKDIR eof|sigterm N`` (:func:`shutdown`).

A process of its own, because ``PR_SET_CHILD_SUBREAPER`` lasts for the life of the process
that sets it: in pytest's process every orphan of every later test would come to pytest.
Before the server starts, a control orphans a ``sleep`` and checks that it is re-parented
here, so a count of zero means nothing came, not that the count cannot see.
"""

from __future__ import annotations

import ctypes
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from tests.e2e.rawrpc import RawServer

PR_SET_CHILD_SUBREAPER = 36

#: One call of each kind, in turn: a pid-namespace sandbox, a host_procs one (no pid
#: namespace), git (its repository is read first), the output cap and the timeout (both kill
#: the sandbox while its command runs).
CALLS: list[dict[str, object]] = [
    {"cmd": "ls", "args": ["-la"]},
    {"cmd": "ps", "args": ["aux"]},
    {"cmd": "git", "args": ["status"]},
    {"cmd": "ls", "args": ["-laR", "/usr"]},
    {"cmd": "ls"},
    {"cmd": "ps", "args": ["-ef"]},
    {"cmd": "git", "args": ["log", "-n", "1"]},
    {"cmd": "ls", "args": ["-la"]},
    {"cmd": "ps", "args": ["aux"]},
    {"cmd": "sleep", "args": ["30"]},
]

CONFIG = """\
[guard]
allowed_commands = ["ls", "ps", "git", "sleep"]
allowed_paths = ["{workdir}", "/usr"]
timeout_ms = 1000
max_output_bytes = 65536

[guard.command_policies.sleep]
positionals = "any"
"""


def children(pid: int) -> list[int]:
    kids: list[int] = []
    for task in os.listdir(f"/proc/{pid}/task"):
        try:
            kids += [int(p) for p in Path(f"/proc/{pid}/task/{task}/children").read_text().split()]
        except OSError:
            continue
    return kids


def describe(pid: int) -> str:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return "gone"
    name, _, rest = stat.partition("(")[2].rpartition(")")
    return f"{name}:{rest.split()[0]}"  # comm and state (Z = zombie)


def reap_all() -> int:
    reaped = 0
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return reaped
        if pid == 0:
            return reaped
        reaped += 1


def control() -> bool:
    """An orphan does come here: ``sh`` exits leaving ``sleep`` behind, which is waited for."""
    subprocess.run(["/bin/sh", "-c", "sleep 0.2 & exit 0"], check=True)
    orphans = children(os.getpid())  # only it: the server is not started yet
    for pid in orphans:
        os.waitpid(pid, 0)
    return len(orphans) == 1


def main(workdir: Path, calls: int) -> dict[str, object]:
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_CHILD_SUBREAPER)")
    report: dict[str, object] = {"control_orphan_seen": control()}
    subprocess.run(["git", "init", "-q", str(workdir)], check=True)
    (workdir / "parism-test.toml").write_text(CONFIG.format(workdir=workdir))
    server = RawServer(workdir)
    kinds: dict[str, int] = {}
    try:
        server.initialize()
        for i in range(calls):
            answer = server.request("tools/call", {"name": "run", "arguments": CALLS[i % len(CALLS)]})
            env = answer["result"]["structuredContent"]
            kind = "ok" if env["ok"] else f"{env['failure']['kind']}/{env['failure']['reason']}"
            kinds[kind] = kinds.get(kind, 0) + 1
        time.sleep(2)  # every teardown (the reaper thread's included) is over
        mine = os.getpid()
        orphans = [describe(p) for p in children(mine) if p != server.proc.pid]
        zombies = [describe(p) for p in children(server.proc.pid) if describe(p).endswith(":Z")]
    finally:
        server.close()
        reap_all()
    report.update(calls=calls, answers=kinds, orphans=orphans, server_zombies=zombies)
    return report


SHUTDOWN_CONFIG = """\
[guard]
allowed_commands = ["sleep"]
timeout_ms = 60000
max_concurrency = 4

[guard.command_policies.sleep]
positionals = "any"
"""


def shutdown(workdir: Path, how: str, calls: int) -> dict[str, object]:
    """``calls`` ``run sleep`` calls in flight (``max_concurrency`` of them running, the rest
    queued), then stdin closed (``eof``) or SIGTERM: the seconds until the server has exited,
    and what is left of its tree once it has — orphans re-parented here (the subreaper) and
    sleeps alive anywhere."""
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_CHILD_SUBREAPER)")
    report: dict[str, object] = {"control_orphan_seen": control()}
    (workdir / "parism-test.toml").write_text(SHUTDOWN_CONFIG)
    mark = f"{500 + os.getpid() % 400}.{time.time_ns() % 10**6:06d}"
    server = RawServer(workdir)
    try:
        server.initialize()
        assert "result" in server.request("tools/list", {})
        for i in range(calls):
            server.send(json.dumps({"jsonrpc": "2.0", "id": f"c{i}", "method": "tools/call",
                                    "params": {"name": "run", "arguments": {"cmd": "sleep", "args": [mark]}}}).encode())
        deadline = time.monotonic() + 15
        while len(running := [p for p in sleeping(mark) if describe(p).startswith("sleep:")]) < 4 \
                and time.monotonic() < deadline:
            time.sleep(0.05)
        report["running_before"] = len(running)
        time.sleep(0.3)  # every request has been read: the rest are queued
        started = time.monotonic()
        if how == "eof":
            assert server.proc.stdin is not None
            server.proc.stdin.close()
        else:
            server.proc.send_signal(signal.SIGTERM)
        try:
            status = server.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            status = None
        report["exit_s"] = round(time.monotonic() - started, 3)
        report["status"] = status
        time.sleep(0.5)  # whatever outlived the server has been re-parented by now
        report["orphans"] = [describe(p) for p in children(os.getpid()) if p != server.proc.pid]
        report["sleeps_left"] = len(sleeping(mark))
    finally:
        server.close()
        reap_all()
    return report


def sleeping(mark: str) -> list[int]:
    """Pids of live ``sleep MARK`` processes anywhere (by /proc, not just our descendants)."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            argv = Path(f"/proc/{entry}/cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if mark.encode() in argv and describe(int(entry)).split(":")[-1] != "Z":
            found.append(int(entry))
    return found


if __name__ == "__main__":
    if sys.argv[2] in ("eof", "sigterm"):
        print(json.dumps(shutdown(Path(sys.argv[1]), sys.argv[2], int(sys.argv[3]))))
    else:
        print(json.dumps(main(Path(sys.argv[1]), int(sys.argv[2]))))
