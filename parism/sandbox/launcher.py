"""Start sandboxes and hand a command to them (the executor's ``Launcher`` protocol).

A sandbox is started *before* its command is known (``prestart``): bwrap builds the mounts and
namespaces, the helper inside waits on the control pipe, stdout/stderr pipes already exist.
``Prepared.handover`` then writes the argv — that write is all a pooled call pays. The cold
path is the same two steps back to back, so pooled and cold sandboxes cannot differ.

bwrap is spawned with a scrubbed environment (its PID-1 reaper keeps bwrap's own env, readable
from /proc/1/environ inside — notes §2.1), in its own session, with only the two protocol pipes
inherited, and — when the identity rule says so — already switched to the unprivileged uid.
"""

from __future__ import annotations

import json
import os
import signal
import struct
import subprocess
import time
from functools import lru_cache
from pathlib import Path
from typing import BinaryIO

import psutil

from parism.sandbox.bwrap import build_argv
from parism.sandbox.plan import Plan

BWRAP_ENV = {"PATH": "/usr/bin:/bin"}
KILL_WAIT_S = 2.0
CHOOM = "/usr/bin/choom"


@lru_cache(maxsize=1)
def helper_code() -> str:
    return Path(__file__).with_name("_helper.py").read_text(encoding="utf-8")


def oom_prefix(score: int) -> list[str]:
    """Run bwrap under ``choom`` so bwrap, its PID 1, the helper and the command all inherit the
    raised OOM score (it is inherited across fork; raising it needs no privilege). choom
    exec's bwrap, so bwrap's pid and process group are unchanged."""
    return [CHOOM, "-n", str(score), "--"] if os.path.exists(CHOOM) else []


def helper_command(plan: Plan, control_fd: int, status_fd: int) -> list[str]:
    """The system Python running _helper.py, isolated (-I) and without site (-S): fast start,
    nothing from the environment or the working directory is imported."""
    return [plan.python, "-I", "-S", "-c", helper_code(), str(control_fd), str(status_fd)]


class Prepared:
    """A started sandbox whose helper waits for exactly one argv (single use)."""

    def __init__(self, plan: Plan) -> None:
        self.plan = plan
        control_r, self._control_w = os.pipe2(os.O_CLOEXEC)
        self._status_r, status_w = os.pipe2(os.O_CLOEXEC)
        self._info_r, info_w = os.pipe2(os.O_CLOEXEC | os.O_NONBLOCK)
        user = plan.run_as
        argv = [*oom_prefix(plan.oom_score_adj), plan.bwrap,
                *build_argv(plan, helper_command(plan, control_r, status_w), info_w)]
        try:
            self.proc = subprocess.Popen(
                argv, env=BWRAP_ENV, stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True,
                close_fds=True, pass_fds=(control_r, status_w, info_w),
                user=user.uid if user.switch else None, group=user.gid if user.switch else None,
                extra_groups=[] if user.switch else None,
            )
        except BaseException:
            for fd in (self._control_w, self._status_r, self._info_r):
                os.close(fd)
            raise
        finally:
            for fd in (control_r, status_w, info_w):
                os.close(fd)
        self.used = False

    @property
    def alive(self) -> bool:
        return self.proc.poll() is None

    def handover(self, argv: list[str]) -> "SandboxStarted":
        """Send the argv; the sandbox is spent from here on, whatever happens."""
        if self.used:
            raise RuntimeError("a pre-started sandbox serves exactly one command")
        self.used = True
        limits = {name: value for name, value in self.plan.rlimits}
        body = json.dumps({"argv": argv, "limits": limits, "oom_score_adj": self.plan.oom_score_adj,
                           "deny_unix_sockets": self.plan.deny_unix_sockets}).encode()
        try:
            os.write(self._control_w, struct.pack(">I", len(body)) + body)
        except OSError:
            pass  # the sandbox died while waiting: wait() reports bwrap's own status and stderr
        finally:
            os.close(self._control_w)
        return SandboxStarted(self.proc, self._status_r, self._info_r)

    def discard(self) -> None:
        """Kill an unused sandbox (pool shutdown, eviction)."""
        if not self.used:
            self.used = True
            os.close(self._control_w)
        kill_sandbox(self.proc, self._info_r)
        os.close(self._status_r)
        for pipe in (self.proc.stdout, self.proc.stderr):
            if pipe is not None:
                pipe.close()


def kill_sandbox(proc: subprocess.Popen[bytes], info_fd: int | None) -> None:
    """SIGKILL bwrap's group and its descendants, then wait for the sandbox's PID 1; never raises.

    With a pid namespace, bwrap's death ends everything inside (its PID 1 dies by PDEATHSIG and
    the kernel kills the namespace); bwrap may exit a moment before that teardown finishes,
    so we wait for PID 1 (its host pid comes from bwrap's --info-fd) to be gone. Without a pid
    namespace (host_procs, nested-weak) the descendant sweep catches what stayed in the tree.
    Closes ``info_fd`` (None: PID 1 was already waited for by an earlier kill)."""
    inner = _inner_pid(info_fd) if info_fd is not None else None
    if proc.poll() is None:  # once reaped, bwrap's pid may be reused: no signals by pid then
        try:
            kids = psutil.Process(proc.pid).children(recursive=True)
        except psutil.Error:
            kids = []
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        for kid in kids:
            try:
                kid.kill()
            except psutil.Error:
                continue
        try:
            proc.wait(KILL_WAIT_S)
        except subprocess.TimeoutExpired:
            pass
    if inner is not None:
        _wait_gone(inner)


def _inner_pid(info_fd: int) -> psutil.Process | None:
    """PID 1 of the sandbox, from the first JSON object bwrap wrote to the info pipe."""
    try:
        data = os.read(info_fd, 65536)
    except OSError:
        data = b""
    finally:
        os.close(info_fd)
    try:
        info, _ = json.JSONDecoder().raw_decode(data.decode("utf-8", "replace").lstrip())
        return psutil.Process(int(info["child-pid"]))
    except (ValueError, KeyError, TypeError, psutil.Error):
        return None


def _wait_gone(proc: psutil.Process) -> None:
    """Until ``proc`` is gone or a zombie (a zombie PID 1 means its namespace is empty)."""
    deadline = time.monotonic() + KILL_WAIT_S
    while time.monotonic() < deadline:
        try:
            if not proc.is_running() or proc.status() == psutil.STATUS_ZOMBIE:
                return
        except psutil.Error:
            return
        time.sleep(0.001)


class SandboxStarted:
    """``Started`` for a sandboxed command: bwrap's pid and pipes, the command's exact status."""

    def __init__(self, proc: subprocess.Popen[bytes], status_fd: int, info_fd: int) -> None:
        assert proc.stdout is not None and proc.stderr is not None
        self._proc = proc
        self._status_fd = status_fd
        self._info_fd: int | None = info_fd
        self._code: int | None = None
        self.pid = proc.pid
        self.stdout: BinaryIO = proc.stdout
        self.stderr: BinaryIO = proc.stderr
        self.spawn_error: str | None = None  # set when the command could not start inside

    def wait(self, timeout: float | None = None) -> int | None:
        """Return code with Popen's convention (negative = killed by that signal)."""
        if self._code is not None:
            return self._code
        try:
            outer = self._proc.wait(timeout)
        except subprocess.TimeoutExpired:
            return None
        self._code = self._read_status(outer)
        return self._code

    def _read_status(self, outer: int) -> int:
        """The helper's report wins over bwrap's 128+N; no report → bwrap's own status."""
        data = b""
        try:
            while chunk := os.read(self._status_fd, 4096):
                data += chunk
        except OSError:
            pass
        finally:
            os.close(self._status_fd)
        try:
            report = json.loads(data) if data.strip() else {}
        except ValueError:
            report = {}
        if "wait_status" in report:
            return os.waitstatus_to_exitcode(int(report["wait_status"]))
        if "error" in report:
            self.spawn_error = f"{report['error']}: {report.get('message', '')}"
            return 127
        return outer

    def kill_tree(self) -> None:
        info, self._info_fd = self._info_fd, None
        kill_sandbox(self._proc, info)
