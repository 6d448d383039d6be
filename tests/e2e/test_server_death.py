"""A server or library process that dies leaves none of its sandboxes behind.

The pool keeps pre-started sandboxes (bwrap plus the helper inside it) between calls. If the
process that owns them is killed, each must end with it — else every killed run leaves live
bwrap trees re-parented to pid 1, and a crowded host's ``ps aux`` passes the output cap.
The descendants are recorded by pid before the kill (processes this test started) and looked
at again after; the control shows the check sees a survivor when one exists.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import psutil
import pytest

from tests.e2e.conftest import REPO_ROOT
from tests.e2e.rawrpc import RawServer

CALLS = [("ls", ["-la"]), ("git", ["status"]), ("ls", ["-la", "home"]), ("ls", [])]


def _survivors(kids: list[psutil.Process], wait_s: float = 5.0) -> list[str]:
    deadline = time.monotonic() + wait_s
    while True:
        alive = []
        for k in kids:
            try:
                if k.is_running() and k.status() != psutil.STATUS_ZOMBIE:
                    alive.append(f"{k.pid} {k.name()} ppid={k.ppid()}")
            except psutil.NoSuchProcess:
                pass
        if not alive or time.monotonic() > deadline:
            return alive
        time.sleep(0.1)


def _warm_server(workdir: Path) -> tuple[RawServer, list[psutil.Process]]:
    server = RawServer(workdir)
    server.initialize()
    for cmd, args in CALLS:
        answer = server.request("tools/call", {"name": "run", "arguments": {"cmd": cmd, "args": args}})
        assert answer["result"]["isError"] is False, answer
    job = server.request("tools/call", {"name": "job_start", "arguments": {"cmd": "sleep", "args": ["600"]}})
    assert job["result"]["isError"] is False, job  # a running job: its sandbox must end too
    time.sleep(0.5)  # the pool's refills start after each call
    kids = psutil.Process(server.proc.pid).children(recursive=True)
    assert any(k.name() == "bwrap" for k in kids), [k.name() for k in kids]  # the pool is warm
    return server, kids


@pytest.mark.parametrize("how", ["SIGKILL", "SIGTERM", "stdin closed"])
def test_a_dead_server_leaves_no_sandbox(workdir: Path, how: str) -> None:
    server, kids = _warm_server(workdir)
    if how == "stdin closed":
        assert server.proc.stdin is not None
        server.proc.stdin.close()
    else:
        server.proc.send_signal(getattr(signal, how))
    server.proc.wait(timeout=30)
    assert _survivors(kids) == []


LIBRARY = """
import sys, time
from parism.engine import create_engine
engine = create_engine(sys.argv[1])
for args in (["-la"], ["-la", "home"], []):
    assert engine.run("ls", args, cwd=sys.argv[2]).ok
time.sleep(0.5)
print("ready", flush=True)
time.sleep(600)
"""


def test_a_killed_library_process_leaves_no_sandbox(workdir: Path) -> None:
    proc = subprocess.Popen([sys.executable, "-c", LIBRARY, str(workdir / "parism-test.toml"), str(workdir)],
                            stdout=subprocess.PIPE, cwd=workdir, env={**os.environ, "PYTHONPATH": str(REPO_ROOT),
                                                         "HOME": str(workdir / "home")})
    assert proc.stdout is not None
    assert proc.stdout.readline().strip() == b"ready"
    kids = psutil.Process(proc.pid).children(recursive=True)
    assert any(k.name() == "bwrap" for k in kids), [k.name() for k in kids]
    proc.kill()
    proc.wait(timeout=30)
    assert _survivors(kids) == []


def test_control_a_detached_child_is_seen_surviving() -> None:
    """The armed trap: a child that does not die with its parent is reported by the same check."""
    code = ("import subprocess, time; subprocess.Popen(['sleep', '61.25'], start_new_session=True); "
            "print('ready', flush=True); time.sleep(600)")
    proc = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE)
    assert proc.stdout is not None and proc.stdout.readline().strip() == b"ready"
    kids = psutil.Process(proc.pid).children(recursive=True)
    proc.kill()
    proc.wait(timeout=30)
    try:
        assert [s.split()[1] for s in _survivors(kids, wait_s=0.5)] == ["sleep"]
    finally:
        for k in kids:
            k.kill()
