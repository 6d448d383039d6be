"""Resource limits and lifetime: nothing a call starts outlives it or takes the machine down.

Limits are deliberately small (32 processes, 256 MiB address space, 8 MiB files, 16 MiB /tmp).
"Gone when the call returns" is asserted by scanning every process on the host for a marker
that only the test's processes carry in their command line.
"""

from __future__ import annotations

import json
import os
import pty
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

from parism.run.executor import execute
from parism.run.sandbox.bwrap import build_argv
from parism.run.sandbox.cgroup import pids_root, sweep_pending
from tests.security.sandbox.helpers import (PY3, SH, alive, decision, make_spec, marker, run,
                                            sandbox_factory, stragglers, workspace)

__all__ = ["sandbox_factory", "workspace"]

MiB = 1024 * 1024
TEST_UID = 4242


def test_fork_bomb_is_capped_and_gone(sandbox_factory, workspace: Path) -> None:
    token = marker()
    bomb = ("import os, sys, time\nn = 0\nwhile True:\n    try:\n        os.fork(); n += 1\n"
            "    except OSError:\n        time.sleep(0.05)\n")
    sb = sandbox_factory([str(workspace)])
    r = run(sb, [PY3, "-c", bomb, token], str(workspace), timeout=3)
    assert r.cap.timed_out
    # observed from outside the executor (it does not scan a tree its pid namespace contains):
    # bwrap, its PID 1 and the helper, then the bomb's processes up to nproc (32) and no more
    assert 8 < r.peak <= 35, r.peak
    assert len(r.tracked) <= 40, len(r.tracked)
    assert stragglers(token) == []
    assert alive(r.tracked) == []


def test_memory_hog_hits_address_space_limit(sandbox_factory, workspace: Path) -> None:
    sb = sandbox_factory([str(workspace)])
    r = run(sb, [PY3, "-c", "b = bytearray(512 * 1024 * 1024); print('allocated')"], str(workspace))
    assert "allocated" not in r.out
    assert "MemoryError" in r.err
    assert r.cap.exit_code == 1


def test_readonly_disk_filler_stops_at_tmp_cap(sandbox_factory, workspace: Path) -> None:
    sb = sandbox_factory([str(workspace)], tmp_mb=16, fsize_mb=64)
    r = run(sb, [SH, "-c", "dd if=/dev/zero of=/tmp/fill bs=1M count=64 2>&1; stat -c %s /tmp/fill"],
            str(workspace))
    assert "No space left on device" in r.out
    size = int(r.out.split()[-1])
    assert 15 * MiB <= size <= 16 * MiB


@pytest.mark.skipif(os.geteuid() != 0, reason="mounting the small tmpfs workspace needs root")
def test_build_disk_filler_stops_at_file_size_limit(sandbox_factory) -> None:
    """The project is writable in build: the file-size limit (8 MiB) stops the writer before the
    (32 MiB) tmpfs under the workspace is full."""
    ws = Path(tempfile.mkdtemp(prefix="parism-sbx-tmpfs-", dir="/tmp"))
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=32m,mode=0755", "tmpfs", str(ws)], check=True)
    try:
        os.chown(ws, TEST_UID, TEST_UID)
        sb = sandbox_factory([str(ws)], writable=True, fsize_mb=8)
        r = run(sb, ["/usr/bin/dd", "if=/dev/zero", f"of={ws}/big", "bs=1M", "count=30"], str(ws))
        assert r.cap.signal == "SIGXFSZ", (r.cap, r.err)
        assert (ws / "big").stat().st_size == 8 * MiB
    finally:
        subprocess.run(["umount", str(ws)], check=False)
        shutil.rmtree(ws, ignore_errors=True)


@pytest.mark.parametrize("namespace", ["isolated", "host_procs"])  # with and without a pid namespace
def test_background_children_die_with_the_call(sandbox_factory, workspace: Path, namespace: str) -> None:
    token = marker()
    sleeper = f"{PY3} -c 'import time; time.sleep(300)' {token}"
    script = f"setsid {sleeper} & nohup {sleeper} >/dev/null 2>&1 & ({sleeper} &) ; echo started"
    sb = sandbox_factory([str(workspace)])
    r = run(sb, [SH, "-c", script], str(workspace), namespace=namespace)
    assert r.out.strip() == "started" and r.cap.exit_code == 0
    assert stragglers(token) == []


def test_sigterm_ignorer_is_killed_at_timeout(sandbox_factory, workspace: Path) -> None:
    token = marker()
    code = "import signal, time\nsignal.signal(signal.SIGTERM, signal.SIG_IGN)\nprint('up', flush=True)\ntime.sleep(300)"
    sb = sandbox_factory([str(workspace)])
    r = run(sb, [PY3, "-c", code, token], str(workspace), timeout=1)
    assert r.cap.timed_out and r.out == "up\n"
    assert stragglers(token) == []


@pytest.mark.parametrize("namespace", ["isolated", "host_procs"])
def test_no_new_user_namespace_inside(sandbox_factory, workspace: Path, namespace: str) -> None:
    """In every class and route (host_procs has no --disable-userns: the seccomp filter holds)."""
    assert subprocess.run(["/usr/bin/unshare", "-U", "/bin/true"]).returncode == 0  # armed trap: works outside
    sb = sandbox_factory([str(workspace)])
    r = run(sb, ["/usr/bin/unshare", "-U", "/bin/true"], str(workspace), namespace=namespace)
    assert r.cap.exit_code != 0
    assert "unshare failed" in r.err


INJECT = ("import fcntl, sys, termios\ntry:\n    fcntl.ioctl(0, termios.TIOCSTI, b'Z')\n    print('INJECTED')\n"
          "except OSError as e:\n    print('REFUSED', e.errno)\n")

# Runs in a child that owns the pty slave as its controlling terminal, like an interactive
# shell that started the server would: then the command's stdin is a real terminal.
# Under the identity map (root server) it also plays the server's part of the map handshake:
# the argv names the handshake fds as @INFO and @BLOCK.
TTY_PARENT = """
import fcntl, os, subprocess, sys, termios, json
os.setsid()
fd = os.open(sys.argv[1], os.O_RDWR)
fcntl.ioctl(fd, termios.TIOCSCTTY, 0)
argv, hs = json.loads(sys.argv[2]), None
if "@INFO" in argv:
    from parism.run.sandbox.identity import MapHandshake
    hs = MapHandshake()
    argv = [{"@INFO": str(hs.info_w), "@BLOCK": str(hs.block_r)}.get(a, a) for a in argv]
p = subprocess.Popen(argv, stdin=fd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                     pass_fds=hs.child_fds if hs else ())
if hs:
    hs.close_child_ends()
    hs.complete()
print(p.communicate()[0])
"""


def _inject_via_pty(argv: list[str]) -> tuple[str, bytes]:
    master, slave = pty.openpty()
    try:
        out = subprocess.run([sys.executable, "-c", TTY_PARENT, os.ttyname(slave), json.dumps(argv)],
                             capture_output=True, text=True, timeout=20).stdout
        os.set_blocking(master, False)
        try:
            typed = os.read(master, 100)
        except BlockingIOError:
            typed = b""
        return out, typed
    finally:
        os.close(master)
        os.close(slave)


def _legacy_tiocsti() -> bool:
    try:
        return Path("/proc/sys/dev/tty/legacy_tiocsti").read_text().strip() != "0"
    except OSError:
        return True  # older kernels: TIOCSTI always available


@pytest.mark.skipif(not _legacy_tiocsti(), reason="this kernel refuses TIOCSTI to everyone (dev.tty.legacy_tiocsti=0)")
def test_tiocsti_cannot_type_into_the_terminal(sandbox_factory, workspace: Path) -> None:
    """Control first: without the sandbox the injection works (so this check is real); with
    the sandbox's argv (--new-session) it is refused and nothing reaches the terminal."""
    out, typed = _inject_via_pty([PY3, "-c", INJECT])
    assert "INJECTED" in out and b"Z" in typed
    sb = sandbox_factory([str(workspace)])
    plan = sb.plan(decision(), make_spec([PY3], str(workspace)))
    argv = build_argv(plan, [PY3, "-c", INJECT], (-1, -2) if plan.run_as.full_map else None)
    handshake = {"-1": "@INFO", "-2": "@BLOCK"}
    out, typed = _inject_via_pty([plan.bwrap, *(handshake.get(a, a) for a in argv)])
    assert "REFUSED" in out, out
    assert b"Z" not in typed


@pytest.mark.skipif(os.geteuid() != 0, reason="rule root_masked only exists for a root server")
def test_uid0_sandbox_is_capped_by_its_pids_cgroup(sandbox_factory) -> None:
    """RLIMIT_NPROC does not bind host uid 0; the per-sandbox pids cgroup must. Bounded loop
    (60 sleepers at most), so even a broken cap cannot hurt the machine."""
    private = Path(tempfile.mkdtemp(prefix="parism-sbx-private-", dir="/tmp"))  # 0700: root_masked
    token = marker()
    code = ("import os, time\nn = 0\nfor _ in range(60):\n    try:\n        if os.fork() == 0:\n"
            "            time.sleep(3); os._exit(0)\n        n += 1\n    except OSError:\n        break\nprint(n)")
    mine = lambda: {d for d in os.listdir(pids_root()) if d.startswith(f"parism-{os.getpid()}-")}  # noqa: E731
    others = mine()  # pooled sandboxes of engines earlier tests in this process still hold
    try:
        sb = sandbox_factory([str(private)], nproc=16)
        assert sb.identity_for(str(private)).rule == "root_masked"
        r = run(sb, [PY3, "-c", code, token], str(private))
        assert 0 < int(r.out) < 16, r.out + r.err
        assert stragglers(token) == []
        sb.close()  # the pool's next sandbox has a cgroup of its own
        deadline = time.monotonic() + 5  # teardown and PID 1's reaping by the host's init are async
        while mine() - others and time.monotonic() < deadline:
            sweep_pending()
            time.sleep(0.05)
        assert not mine() - others
    finally:
        shutil.rmtree(private, ignore_errors=True)


@pytest.mark.parametrize(("namespace", "contained"), [("isolated", True), ("host_procs", False)])
def test_only_a_pid_namespace_spares_the_executor_its_scans(sandbox_factory, workspace: Path,
                                                            namespace: str, contained: bool) -> None:
    """With a pid namespace the executor records nothing (the kernel ends the tree); without
    one (ps's class) it still records and sweeps the command's descendants itself."""
    sb = sandbox_factory([str(workspace)])
    spec = make_spec([SH, "-c", "sleep 0.3 & sleep 0.3; wait"], str(workspace))
    launcher = sb.launcher(decision(namespace=namespace), spec)
    tracked: list[int] = []
    cap = execute(spec, launcher, tracked=tracked)
    assert cap.exit_code == 0
    assert (tracked == []) is contained, tracked
