"""Pre-started sandboxes: identical to cold ones, single use, bounded, and never left behind."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import psutil
import pytest

from parism.run.sandbox.launcher import Prepared
from parism.run.sandbox.pool import Pool
from tests.security.sandbox.helpers import (PY3, SH, alive, decision, make_spec, marker, run,
                                            sandbox_factory, stragglers, workspace)

__all__ = ["sandbox_factory", "workspace"]

# Everything that defines the sandbox as the command sees it. /proc/self/mounts (not mountinfo:
# mount ids differ per instance by design) gives the mount table with options and tmpfs sizes.
INSPECT = ("cat /proc/self/mounts; cat /proc/self/limits; env | sort; id; cat /proc/self/oom_score_adj;"
           " grep -E '^(Cap|NoNewPrivs|Seccomp)' /proc/self/status; hostname; ls /; ls -d /proc/[0-9]*")


def _wait_ready(pool: Pool, plan, n: int = 1, timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while pool.ready_count(plan) < n:
        assert time.monotonic() < deadline, "pool did not refill"
        time.sleep(0.01)


def test_pooled_sandbox_equals_cold_one(sandbox_factory, workspace: Path) -> None:
    sb = sandbox_factory([str(workspace)])
    cold = run(sb, [SH, "-c", INSPECT], str(workspace))
    pool = sb._pool
    assert pool is not None and (pool.hits, pool.misses) == (0, 1)
    plan = sb.plan(decision(), make_spec([SH], str(workspace)))
    _wait_ready(pool, plan)
    warm = run(sb, [SH, "-c", INSPECT], str(workspace))
    assert (pool.hits, pool.misses) == (1, 1)
    assert cold.cap.exit_code == warm.cap.exit_code == 0
    assert "tmpfs /tmp tmpfs" in cold.out and "Max processes             32" in cold.out
    assert warm.out == cold.out


def test_entries_are_single_use(sandbox_factory, workspace: Path) -> None:
    sb = sandbox_factory([str(workspace)])
    plan = sb.plan(decision(), make_spec([SH], str(workspace)))
    prepared = Prepared(plan)
    started = prepared.handover(["/usr/bin/true"])
    with pytest.raises(RuntimeError):
        prepared.handover(["/usr/bin/true"])
    assert started.wait(10) == 0
    started.kill_tree()
    _wait_dead([started.pid])


def _wait_dead(pids: list[int], timeout: float = 3.0) -> None:
    """bwrap's own processes end right after the command (teardown in the background)."""
    deadline = time.monotonic() + timeout
    while alive(pids) and time.monotonic() < deadline:
        time.sleep(0.01)
    assert alive(pids) == []


def test_pooled_sandbox_dies_with_its_call(sandbox_factory, workspace: Path) -> None:
    """The command's processes are gone when the call returns; bwrap's own (PID 1, helper)
    finish their namespace teardown in the background right after."""
    sb = sandbox_factory([str(workspace)])
    plan = sb.plan(decision(), make_spec([SH], str(workspace)))
    run(sb, ["/usr/bin/true"], str(workspace))
    _wait_ready(sb._pool, plan)
    token = marker()
    r = run(sb, [SH, "-c", f"{PY3} -c 'import time; time.sleep(300)' {token} & echo started"], str(workspace))
    assert r.cap.exit_code == 0 and r.out == "started\n" and sb._pool.hits == 1
    assert stragglers(token) == []
    _wait_dead(r.tracked)


def test_close_kills_unused_sandboxes(sandbox_factory, workspace: Path) -> None:
    sb = sandbox_factory([str(workspace)])
    plan = sb.plan(decision(), make_spec([SH], str(workspace)))
    run(sb, ["/usr/bin/true"], str(workspace))
    _wait_ready(sb._pool, plan)
    pids = _pool_pids(sb._pool)
    assert pids and alive(pids) == pids
    sb.close()
    assert alive(pids) == []


def test_pool_is_bounded(sandbox_factory, tmp_path: Path) -> None:
    pool = Pool(per_plan=1, max_plans=2)
    try:
        sb = sandbox_factory()
        dirs = []
        for i in range(4):
            d = Path(f"/tmp/parism-sbx-bound-{os.getpid()}-{i}")
            d.mkdir(mode=0o755, exist_ok=True)
            dirs.append(d)
            plan = sb.plan(decision(), make_spec([SH], str(d)))
            pool.take(plan).discard()
            _wait_ready(pool, plan)
            assert pool.ready_count() <= 2
        assert pool.ready_count() == 2
    finally:
        pool.close()
        for d in dirs:
            d.rmdir()


def _pool_pids(pool: Pool) -> list[int]:
    with pool._lock:
        return [e.proc.pid for d in pool._ready.values() for _, e in d]


CHILD = """
import sys, time
sys.path.insert(0, sys.argv[1])
from parism.run.sandbox import Sandbox, SandboxRequest
from parism.run.executor import ExecSpec, execute
sb = Sandbox(None, [], sys.argv[2])
spec = ExecSpec(argv=["/usr/bin/true"], cwd=sys.argv[2], env={"PATH": "/usr/bin"}, timeout_s=5,
                max_stdout=1024, max_stderr=1024)
dec = SandboxRequest()
execute(spec, sb.launcher(dec, spec))
while sb._pool.ready_count() < 1:
    time.sleep(0.01)
print(" ".join(str(e.proc.pid) for d in sb._pool._ready.values() for _, e in d), flush=True)
time.sleep(300)
"""


def test_server_killed_hard_leaves_no_sandbox(workspace: Path) -> None:
    """SIGKILL gives the server no chance to clean up: the helper sees EOF on its control
    pipe and bwrap dies with its parent, so the pre-started sandbox ends by itself."""
    root = str(Path(__file__).resolve().parents[2])
    child = subprocess.Popen([sys.executable, "-c", CHILD, root, str(workspace)], stdout=subprocess.PIPE, text=True)
    try:
        pids = [int(p) for p in child.stdout.readline().split()]
        assert pids and alive(pids) == pids
        descendants = [p.pid for pid in pids for p in psutil.Process(pid).children(recursive=True)]
        child.send_signal(signal.SIGKILL)
        child.wait(10)
        deadline = time.monotonic() + 5
        while alive(pids + descendants) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert alive(pids + descendants) == []
    finally:
        child.kill()
        child.wait()


def test_recreated_workspace_is_not_served_by_a_stale_sandbox(sandbox_factory, workspace: Path) -> None:
    """A pre-started sandbox binds the directory's inode: after `rm -rf ws && mkdir ws` it
    would show the deleted directory. It must be replaced, not used."""
    sb = sandbox_factory([str(workspace)])
    plan = sb.plan(decision(), make_spec([SH], str(workspace)))
    run(sb, ["/usr/bin/true"], str(workspace))
    _wait_ready(sb._pool, plan)
    shutil.rmtree(workspace)
    workspace.mkdir(mode=0o755)
    (workspace / "fresh.txt").write_text("new\n")
    r = run(sb, ["/usr/bin/ls"], str(workspace))
    assert r.out == "fresh.txt\n", r.out + r.err
    assert (sb._pool.hits, sb._pool.misses) == (0, 2)


def test_discarding_a_sandbox_during_its_setup_leaves_nothing(sandbox_factory, workspace: Path) -> None:
    """Killed half-way through its setup, bwrap can leave PID 1 waiting forever for a go-ahead;
    discard must let the setup finish (or fail) and then end every process of the sandbox.
    The workspace's unique name appears in the command line of all of them."""
    sb = sandbox_factory([str(workspace)])
    plan = sb.plan(decision(), make_spec([SH], str(workspace)))
    for _ in range(8):
        Prepared(plan).discard()
    deadline = time.monotonic() + 3
    while stragglers(workspace.name) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert stragglers(workspace.name) == []


def test_waiting_sandbox_command_lines_are_short_and_hold_no_source_or_env(sandbox_factory, workspace: Path) -> None:
    """Every ``ps aux`` of a host_procs call prints the command lines of the pre-started
    sandboxes: bwrap's options (mounts, environment) come from a memfd (``--args``) and the
    helper's source from another, so neither is on a command line."""
    sb = sandbox_factory([str(workspace)])
    plan = sb.plan(decision(), make_spec([SH], str(workspace)))
    prepared = Prepared(plan)
    try:
        prepared.wait_ready()
        tree = [psutil.Process(prepared.proc.pid), *psutil.Process(prepared.proc.pid).children(recursive=True)]
        lines = [" ".join(p.cmdline()) for p in tree]
        assert any("/proc/self/fd/" in line for line in lines), lines  # the helper is in the tree
        for line in lines:
            assert len(line) < 400, line
            assert "def main" not in line and "--setenv" not in line and "--ro-bind" not in line, line
    finally:
        prepared.discard()
    assert prepared.proc.poll() is not None
