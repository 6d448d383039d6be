"""Executor faults against real processes: caps, timeouts, tree kill, cancellation, queueing."""

from __future__ import annotations

import os
import shutil
import stat
import sys
import threading
import time
from pathlib import Path

import psutil
import pytest

from parism.run.executor import CancelToken, DirectLauncher, ExecSpec, Slots, execute, resolve_binary
from parism.run.proctree import Tracker

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


class _ReportsExitFirst(DirectLauncher):
    """Returns only once the leader has exited (left unreaped): the executor's first look sees
    the exit status before it has read the output and EOF waiting in the pipes — the order a
    sandbox's status report often arrives in."""

    def start(self, spec: ExecSpec):  # type: ignore[no-untyped-def]
        started = super().start(spec)
        os.waitid(os.P_PID, started.pid, os.WEXITED | os.WNOWAIT)
        return started


@pytest.mark.parametrize(("script", "kill_path"), [
    ("printf done; printf oops >&2; exit 3", False),  # output and EOF only waiting: a normal end
    ("sleep 300 & echo $!", True),                    # a child still holds stdout: kill path
])
def test_leader_end_with_output_pending_takes_no_kill_path(script: str, kill_path: bool,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    forced: list[bool] = []
    scan = Tracker.scan
    monkeypatch.setattr(Tracker, "scan", lambda self, force=False: (forced.append(force), scan(self, force))[1])
    cap = execute(spec([SH, "-c", script], timeout=30), _ReportsExitFirst())
    assert any(forced) is kill_path
    if kill_path:
        time.sleep(0.2)
        assert cap.exit_code == 0 and not alive(int(cap.stdout))
    else:
        assert (cap.exit_code, cap.stdout, cap.stderr, cap.output_limit) == (3, b"done", b"oops", False)


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


def test_handed_over_is_set_at_the_start_and_when_queued() -> None:
    """The MCP early start waits on ``handed_over``: set once the child runs, and as soon as a
    call has to queue for a slot (else the reader would wait its whole timeout)."""
    started = CancelToken()
    execute(spec([SH, "-c", "exit 0"]), cancel=started)
    assert started.handed_over.is_set()
    assert not CancelToken().handed_over.is_set()

    slots, queued = Slots(1), CancelToken()
    with slots.hold() as held:
        assert held
        waiter = threading.Thread(target=lambda: slots.hold(queued).__enter__())
        waiter.start()
        assert queued.handed_over.wait(2), "a queued call did not say so"
        queued.cancel()
        waiter.join(2)
    free = CancelToken()
    with slots.hold(free) as held:
        assert held and not free.handed_over.is_set()  # a slot at once: nothing to say yet
