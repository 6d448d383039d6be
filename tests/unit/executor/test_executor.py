"""Executor faults against real processes: caps, timeouts, tree kill, cancellation, queueing."""

from __future__ import annotations

import os
import shutil
import signal
import stat
import subprocess
import sys
import threading
import time
from pathlib import Path

import psutil
import pytest

from parism.executor import CancelToken, DirectLauncher, ExecSpec, Slots, execute, resolve_binary
from parism.proctree import Tracker

PY = sys.executable
SH = shutil.which("sh") or "/bin/sh"
ENV = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "LC_ALL": "C.UTF-8"}
MiB = 1024 * 1024


def spec(argv: list[str], *, timeout: float = 10.0, cap: int = MiB, cwd: str = "/tmp") -> ExecSpec:
    return ExecSpec(argv=argv, cwd=cwd, env=dict(ENV), timeout_s=timeout, max_stdout=cap, max_stderr=cap)


def alive(pid: int) -> bool:
    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


def test_exit_code_is_data_and_streams_are_separate() -> None:
    cap = execute(spec([SH, "-c", "echo out; echo err >&2; exit 3"]))
    assert (cap.stdout, cap.stderr, cap.exit_code, cap.signal) == (b"out\n", b"err\n", 3, None)
    assert not (cap.timed_out or cap.output_limit or cap.cancelled)


def test_killed_by_signal_reports_signal_name() -> None:
    cap = execute(spec([SH, "-c", "kill -KILL $$"]))
    assert cap.exit_code is None and cap.signal == "SIGKILL"


def test_stdin_is_dev_null() -> None:
    # with an inherited or open stdin pipe, cat would block until the timeout
    cap = execute(spec([shutil.which("cat") or "/bin/cat"], timeout=5))
    assert cap.exit_code == 0 and cap.stdout == b"" and not cap.timed_out


def test_binary_output_is_kept_byte_for_byte() -> None:
    cap = execute(spec([PY, "-c", "import sys; sys.stdout.buffer.write(bytes(range(256)))"]))
    assert cap.stdout == bytes(range(256))


def test_both_pipes_drained_concurrently() -> None:
    # 1 MiB to stderr before anything to stdout: a sequential reader would deadlock (pipe = 64 KiB)
    prog = "import sys; sys.stderr.write('e'*(1<<20)); sys.stderr.flush(); sys.stdout.write('o'*(1<<20))"
    cap = execute(spec([PY, "-c", prog], cap=4 * MiB, timeout=20))
    assert cap.exit_code == 0 and len(cap.stderr) == MiB and len(cap.stdout) == MiB


def test_env_is_exactly_the_spec_env() -> None:
    cap = execute(spec([shutil.which("env") or "/usr/bin/env"]))
    names = sorted(line.split("=", 1)[0] for line in cap.stdout.decode().splitlines())
    assert names == sorted(ENV)


TREE = """
import os, subprocess, sys, time
a = subprocess.Popen(['sleep', '300'])
b = subprocess.Popen(['sleep', '300'], start_new_session=True)   # escapes the process group
print(a.pid, b.pid, flush=True)
time.sleep(300)
"""


def test_timeout_kills_whole_tree_including_setsid_descendant() -> None:
    tracked: list[int] = []
    t0 = time.monotonic()
    cap = execute(spec([PY, "-c", TREE], timeout=1.5), tracked=tracked)
    assert time.monotonic() - t0 < 6
    assert cap.timed_out and cap.signal == "SIGTERM"
    a, b = (int(x) for x in cap.stdout.split())
    assert {a, b} <= set(tracked)
    time.sleep(0.2)
    assert not alive(a) and not alive(b)


def test_leader_exit_kills_background_children_holding_pipes() -> None:
    t0 = time.monotonic()
    cap = execute(spec([SH, "-c", "sleep 300 & echo $!"], timeout=30))
    assert time.monotonic() - t0 < 5 and cap.exit_code == 0 and not cap.timed_out
    time.sleep(0.2)
    assert not alive(int(cap.stdout))


def test_leader_closing_its_outputs_still_times_out() -> None:
    cap = execute(spec([SH, "-c", "exec >&- 2>&-; sleep 300"], timeout=1))
    assert cap.timed_out


@pytest.mark.parametrize("redirect", ["", ">&2"])
def test_one_gib_producer_is_capped_with_bounded_memory(redirect: str) -> None:
    me = psutil.Process()
    before = me.memory_info().rss
    t0 = time.monotonic()
    cap = execute(spec([SH, "-c", f"head -c 1073741824 /dev/zero {redirect}"], cap=MiB, timeout=60))
    grown = me.memory_info().rss - before
    assert cap.output_limit and time.monotonic() - t0 < 20
    got, flag = (cap.stderr, cap.stderr_truncated) if redirect else (cap.stdout, cap.stdout_truncated)
    assert len(got) == MiB and flag
    assert grown < 50 * MiB, f"RSS grew by {grown / MiB:.1f} MiB"


def test_missing_binary_and_not_executable(tmp_path: Path) -> None:
    missing = resolve_binary("parism-no-such-binary", ENV["PATH"])
    assert not isinstance(missing, str) and missing.code == "ENOENT"
    f = tmp_path / "tool"
    f.write_text("#!/bin/sh\n")
    f.chmod(stat.S_IRUSR | stat.S_IWUSR)
    noexec = resolve_binary("tool", str(tmp_path))
    assert not isinstance(noexec, str) and noexec.code == "EACCES"
    f.chmod(0o755)
    assert resolve_binary("tool", str(tmp_path)) == str(f)
    cap = execute(spec([str(tmp_path / "gone")]))
    assert cap.spawn_error is not None and cap.spawn_error.code == "ENOENT"
    assert cap.spawn_error.target == "binary"


def test_nonexistent_cwd_is_a_spawn_error(tmp_path: Path) -> None:
    cap = execute(spec([SH, "-c", "true"], cwd=str(tmp_path / "nope")))
    assert cap.spawn_error is not None and cap.spawn_error.target == "cwd"
    assert cap.exit_code is None


def test_cancel_token_mid_run_kills_the_child() -> None:
    token = CancelToken()
    threading.Timer(0.5, token.cancel).start()
    t0 = time.monotonic()
    cap = execute(spec([SH, "-c", "echo $$; exec sleep 300"], timeout=60), cancel=token)
    assert cap.cancelled and not cap.timed_out and time.monotonic() - t0 < 5
    time.sleep(0.1)
    assert not alive(int(cap.stdout))


def test_concurrency_limit_queues_and_cancelled_waiter_leaves() -> None:
    slots = Slots(1)
    spans: list[tuple[float, float]] = []

    def job() -> None:
        with slots.hold() as held:
            assert held
            t0 = time.monotonic()
            execute(spec([SH, "-c", "sleep 0.4"]))
            spans.append((t0, time.monotonic()))

    threads = [threading.Thread(target=job) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    (s1, e1), (s2, e2) = sorted(spans)
    assert s2 >= e1 - 0.01, "the second execution started before the first ended"

    token = CancelToken()
    with slots.hold() as first:
        assert first
        threading.Timer(0.2, token.cancel).start()
        with slots.hold(token) as second:
            assert second is False


def test_cap_on_stdout_keeps_stderr() -> None:
    cap = execute(spec([SH, "-c", "echo warn >&2; head -c 10485760 /dev/zero"], cap=MiB))
    assert cap.output_limit and cap.stdout_truncated and not cap.stderr_truncated
    assert len(cap.stdout) == MiB and cap.stderr == b"warn\n"


def test_a_failing_launcher_is_a_spawn_error_not_an_exception() -> None:
    class Broken:
        def start(self, spec: ExecSpec) -> object:
            raise RuntimeError("pool exhausted")

    cap = execute(spec([SH, "-c", "true"]), launcher=Broken())  # type: ignore[arg-type]
    assert cap.spawn_error is not None and cap.spawn_error.target == "launcher"
    assert "pool exhausted" in cap.spawn_error.message


def test_tracker_records_the_same_descendants_as_psutil() -> None:
    proc = subprocess.Popen([SH, "-c", "sleep 30 & (sleep 30 & wait) & wait"], start_new_session=True)
    try:
        time.sleep(0.3)
        expected = {p.pid for p in psutil.Process(proc.pid).children(recursive=True)}
        tracker = Tracker(proc.pid)
        tracker.scan()
        assert len(expected) >= 3 and set(tracker.pids) == expected
    finally:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()


def test_a_launcher_that_contains_its_tree_skips_the_scans() -> None:
    """``contains_tree`` is the launcher's promise that its teardown kills every descendant:
    nothing is recorded (the direct launcher below keeps it, so the group kill still applies)."""
    class Contained:
        def start(self, spec: ExecSpec) -> object:
            started = DirectLauncher().start(spec)
            started.contains_tree = True  # type: ignore[attr-defined]
            return started

    tracked: list[int] = []
    cap = execute(spec([SH, "-c", "sleep 0.5 & sleep 0.5; wait"]), launcher=Contained(), tracked=tracked)  # type: ignore[arg-type]
    assert cap.exit_code == 0 and tracked == []
    tracked_direct: list[int] = []
    execute(spec([SH, "-c", "sleep 0.5 & sleep 0.5; wait"]), tracked=tracked_direct)
    assert tracked_direct


def test_the_first_periodic_scan_waits_but_a_forced_one_does_not() -> None:
    """The executor delays its first scan by one interval (at spawn nothing has forked yet);
    a forced scan — the one before any kill — still records at once."""
    proc = subprocess.Popen([SH, "-c", "sleep 30 & wait"], start_new_session=True)
    try:
        deadline = time.monotonic() + 5
        while not psutil.Process(proc.pid).children() and time.monotonic() < deadline:
            time.sleep(0.01)
        tracker = Tracker(proc.pid, first_after=60)
        tracker.scan()
        assert tracker.pids == []
        tracker.scan(force=True)
        assert len(tracker.pids) == 1
    finally:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
