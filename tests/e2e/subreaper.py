"""Run the real server under a subreaper and report what its process tree left behind (JSON on
stdout): ``python -m tests.e2e.subreaper WORKDIR CALLS``.

A process of its own, because ``PR_SET_CHILD_SUBREAPER`` lasts for the life of the process
that sets it: in pytest's process every orphan of every later test would come to pytest.
Before the server starts, a control orphans a ``sleep`` and checks that it is re-parented
here, so a count of zero means nothing came, not that the count cannot see.
"""

from __future__ import annotations

import ctypes
import json
import os
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


if __name__ == "__main__":
    print(json.dumps(main(Path(sys.argv[1]), int(sys.argv[2]))))
