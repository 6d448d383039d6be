"""Start sandboxes and hand a command to them (the executor's ``Launcher`` protocol).

A sandbox is started *before* its command is known (``Prepared``): bwrap builds the mounts and
namespaces, the helper inside applies the limits and waits on the control pipe, the output
pipes already exist. ``Prepared.handover`` then writes the argv — that write is all a pooled
call pays. The cold path is the same two steps back to back, so pooled and cold sandboxes
cannot differ.

bwrap is spawned with a scrubbed environment (its PID-1 reaper keeps bwrap's own env, readable
from /proc/1/environ inside — sandbox-notes §2.1), in its own session, with only the protocol pipes
inherited, and — when the identity rule says so — already switched to the unprivileged uid.
Pipe layout (see _helper.py): bwrap's stdout is /dev/null, its stderr is the status pipe; the
command's stdout/stderr are extra fds that only the helper hands on.
"""

from __future__ import annotations

import errno
import os
import queue
import select
import struct
import subprocess
import threading
import time
from functools import lru_cache
from pathlib import Path
from collections.abc import Callable
from typing import Any, BinaryIO

from parism.run.executor import sealed_memfd
from parism.run.proctree import KILL_GRACE_S
from parism.run.sandbox._helper import AT_FDCWD, RESOLVE_NO_SYMLINKS, openat2
from parism.run.sandbox.bwrap import build_argv, userns_disabled
from parism.run.sandbox.cgroup import PidsCgroup
from parism.run.sandbox.identity import MapHandshake, RunAs, setpriv_prefix
from parism.run.sandbox.network import Egress, helper_filter, netns_code
from parism.run.sandbox.plan import UNIX_FILTER, Plan
from parism.run.sandbox.reap import KILL_WAIT_S, end_tree, only_child, pidfd

BWRAP_ENV = {"PATH": "/usr/bin:/bin"}
READY_TIMEOUT_S = 10.0
CHOOM = "/usr/bin/choom"
SETPRIV = "/usr/bin/setpriv"


@lru_cache(maxsize=1)
def helper_code() -> str:
    return Path(__file__).with_name("_helper.py").read_text(encoding="utf-8")


@lru_cache(maxsize=1)
def helper_source_fd() -> int:
    """The helper's source in a sealed memfd, made once per process and inherited by every
    sandbox, which runs it as ``/proc/self/fd/N``.

    Why not ``python -c SOURCE``: a command line is world-readable, and every ``ps aux`` of a
    ``host_procs`` call printed each pre-started sandbox's 7 KB of helper source (measured:
    142 KB of a 150 KB ``ps aux``, past the default output cap). Sealed, the file cannot be
    changed by anyone who later gets hold of the descriptor."""
    return sealed_memfd("parism-sandbox-helper", helper_code().encode())


@lru_cache(maxsize=1)
def netns_source_fd() -> int:
    """The network-namespace step's source (parism/run/egress/_netns.py), sealed like the helper's."""
    return sealed_memfd("parism-sandbox-netns", netns_code())


def options_fd(options: list[str]) -> int:
    """bwrap's options, NUL-separated in a sealed memfd for ``--args`` (bwrap reads them from
    there): its own command line, also printed by ``ps``, then only names the fd."""
    return sealed_memfd("parism-bwrap-args", b"".join(os.fsencode(o) + b"\0" for o in options))


def oom_prefix(score: int) -> list[str]:
    """Run bwrap under ``choom`` so bwrap, its PID 1, the helper and the command all inherit the
    raised OOM score (it is inherited across fork; raising it needs no privilege). choom
    exec's bwrap, so bwrap's pid and process group are unchanged."""
    return [CHOOM, "-n", str(score), "--"] if os.path.exists(CHOOM) else []


def switch_user(user: RunAs) -> tuple[list[str], dict[str, Any]]:
    """How bwrap gets the run-as identity: ``setpriv`` in the exec chain when present, else
    Popen's own switch. setpriv keeps our spawn a vfork: Popen falls back to a full fork of
    this (large) process whenever it must change uid/gid itself — ~10 ms of CPU per sandbox."""
    if not user.switch:
        return [], {}
    if os.path.exists(SETPRIV):
        return [SETPRIV, f"--reuid={user.uid}", f"--regid={user.gid}", "--clear-groups", "--"], {}
    return [], {"user": user.uid, "group": user.gid, "extra_groups": []}


def helper_command(plan: Plan, source_fd: int, control_fd: int, out_fd: int, err_fd: int) -> list[str]:
    """The system Python running _helper.py (read from ``source_fd``), isolated (-I) and
    without site (-S): fast start, nothing from the environment or the working directory is
    imported. The plan's limits and seccomp choice go on its command line: they are applied
    before the hand-over."""
    limits = ",".join(f"{name}={'-' if value is None else value}" for name, value in plan.rlimits)
    return [*setpriv_prefix(plan.run_as), plan.python, "-I", "-S", f"/proc/self/fd/{source_fd}", str(control_fd),
            str(out_fd), str(err_fd),
            helper_filter(plan.namespace, plan.network, plan.deny_unix_sockets, UNIX_FILTER), str(plan.oom_score_adj),
            limits, "0" if userns_disabled(plan) else "1"]


def _network_step(plan: Plan) -> tuple[Egress | None, list[str]]:
    """The exec-chain step that gives a network plan its own namespace (run/sandbox/network.py)."""
    if not plan.egress:
        return None, []
    egress = Egress(plan.network_allow, plan.resolvers)
    return egress, egress.prefix(plan.python, netns_source_fd())


class SandboxError(OSError):
    """bwrap could not build the sandbox; the message is its own diagnostics."""


DevIno = tuple[int, int]


def pin_sources(plan: Plan) -> dict[str, int]:
    """Open the working directory, its .git directories and the allowed paths once, without following a
    symlink anywhere in their (already realpath'd) names: bwrap binds these descriptors. An
    allowed path whose inode is not the one pinned at start (``plan.ro_ids``) is not bound.

    A name that became a symlink since it was planned is refused for the working directory and
    a .git (``SandboxError``) and left unbound for an allowed path (-1): nothing is ever
    bound through a symlink an agent may have planted."""
    fds: dict[str, int] = {}
    start_ids = dict(zip(plan.ro_paths, plan.ro_ids))
    try:
        for path in (plan.cwd, *plan.git_dirs, *plan.ro_paths):
            if path in fds:
                continue
            try:
                fds[path] = openat2(AT_FDCWD, path, os.O_PATH, RESOLVE_NO_SYMLINKS)
            except OSError as exc:
                if path == plan.cwd or path in plan.git_dirs:
                    raise SandboxError(exc.errno or errno.EIO,
                                       f"cannot open {path} without following a symlink: {exc.strerror}") from exc
                fds[path] = -1
                continue
            want = start_ids.get(path)
            if want is not None and path != plan.cwd and _dev_ino(fds[path]) != want:
                os.close(fds[path])  # an allowed root that is not the one pinned at start: never bound
                fds[path] = -1
    except BaseException:
        close_all(fds)
        raise
    return fds


def _dev_ino(fd: int) -> DevIno:
    st = os.fstat(fd)
    return st.st_dev, st.st_ino


def close_all(fds: dict[str, int]) -> None:
    for fd in fds.values():
        if fd >= 0:
            os.close(fd)
    fds.clear()


def cwd_root(plan: Plan) -> tuple[str, str]:
    """(root, rel): the outermost bound allowed path holding the working directory (or the
    working directory itself) and the cwd relative to it — where the helper walks from."""
    holders = [p for p in plan.ro_paths if plan.cwd.startswith(p.rstrip("/") + "/")]
    root = min(holders, key=len) if holders else plan.cwd
    return root, os.path.relpath(plan.cwd, root)


class _StatusPipe:
    """The read end of the status pipe: the helper's R/W/E lines and bwrap's diagnostics."""

    def __init__(self, fd: int) -> None:
        self.fd = fd
        self.data = b""
        self.eof = False

    def read_until(self, markers: tuple[bytes, ...], timeout: float | None) -> bool:
        """Read until one of ``markers`` was seen (True), EOF or the timeout (False; None
        blocks, 0 polls once)."""
        deadline = None if timeout is None else time.monotonic() + timeout
        while not self.seen(markers) and not self.eof and self.fd >= 0:
            left = None if deadline is None else max(0.0, deadline - time.monotonic())
            if not select.select([self.fd], [], [], left)[0]:
                return False
            chunk = os.read(self.fd, 4096)
            self.data += chunk
            self.eof = not chunk
        return self.seen(markers)

    def seen(self, markers: tuple[bytes, ...]) -> bool:
        return any(m in self.data for m in markers)

    def lines(self) -> list[str]:
        return self.data.decode("utf-8", "replace").splitlines()

    def diagnostics(self) -> str:
        """What bwrap itself printed (everything that is not a helper line)."""
        own = [ln for ln in self.lines() if ln != "R" and not ln.startswith(("W ", "E "))]
        return "\n".join(own).strip()

    def close(self) -> None:
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1


class Prepared:
    """A started sandbox whose helper waits for exactly one argv (single use).

    Two pidfds pin bwrap's processes, so they can be signalled with no pid-reuse risk even
    after bwrap was reaped: ``outer`` (bwrap itself, from the start) and ``inner`` (the
    sandbox's PID 1, bwrap's only child, looked up once the helper is ready)."""

    def __init__(self, plan: Plan) -> None:
        self.plan = plan
        control_r, self._control_w = os.pipe2(os.O_CLOEXEC)
        status_r, status_w = os.pipe2(os.O_CLOEXEC)
        out_r, out_w = os.pipe2(os.O_CLOEXEC)
        err_r, err_w = os.pipe2(os.O_CLOEXEC)
        user = plan.run_as
        handshake = MapHandshake() if user.full_map else None
        inherited = (control_r, out_w, err_w, *(handshake.child_fds if handshake else ()))
        source_fd = helper_source_fd()
        inner = helper_command(plan, source_fd, control_r, out_w, err_w)
        try:
            pins = pin_sources(plan)
        except BaseException:
            for fd in (*inherited, self._control_w, status_r, status_w, out_r, err_r):
                os.close(fd)
            if handshake:
                handshake.close()
            raise
        # what this sandbox binds: the pinned inodes (the rest by name, as planned)
        self.pinned = {path: _dev_ino(fd) for path, fd in pins.items() if fd >= 0}
        sources = (plan.cwd, *plan.git_dirs, *plan.ro_paths, *plan.binds)
        self.fingerprint = tuple(self.pinned.get(p, by_name) for p, by_name in zip(sources, plan.fingerprint()))
        self.cwd_id: DevIno = self.pinned[plan.cwd]
        copy_fds: list[int] = []
        try:
            copy_fds += (sealed_memfd("parism-file-copy", data) for _path, data in plan.file_copies)
            options = build_argv(plan, inner, handshake.child_fds if handshake else None,
                                 pins, copy_fds)[: -len(inner) - 1]  # everything before "--"
            args_fd = options_fd(options)
        except BaseException:
            close_all(pins)
            for fd in copy_fds:
                os.close(fd)
            raise
        self.cgroup = PidsCgroup.create(dict(plan.rlimits).get("nproc")) if user.rule == "root_masked" else None
        drop, popen_user = switch_user(user)
        self.egress, netns = _network_step(plan)
        argv = [*(self.cgroup.wrapper() if self.cgroup else []), *oom_prefix(plan.oom_score_adj), *drop,
                *netns, plan.bwrap, "--args", str(args_fd), "--", *inner]
        extra = (self.egress.child_fd, netns_source_fd()) if self.egress else ()
        try:
            self.proc = subprocess.Popen(
                argv, env=BWRAP_ENV, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                stderr=status_w, start_new_session=True, close_fds=True,
                pass_fds=(*inherited, source_fd, args_fd, *copy_fds, *(fd for fd in pins.values() if fd >= 0),
                          *extra),
                **popen_user,
            )
        except BaseException:
            for fd in (self._control_w, status_r, out_r, err_r):
                os.close(fd)
            if handshake:
                handshake.close()
            if self.cgroup:
                self.cgroup.remove()
            if self.egress:
                self.egress.close()
            raise
        finally:
            for fd in (*inherited, status_w, args_fd, *copy_fds):
                os.close(fd)
            close_all(pins)
            if self.egress:
                self.egress.spawned()
        if handshake:
            try:
                handshake.complete()
            except OSError:
                self.proc.kill()  # never let bwrap go on without the map; wait_ready reports why
        self.outer = pidfd(self.proc.pid)
        self.inner: int | None = None
        self.on_end: Callable[[], None] | None = None  # the pool's refill trigger
        self.status = _StatusPipe(status_r)
        self.stdout: BinaryIO = os.fdopen(out_r, "rb")
        self.stderr: BinaryIO = os.fdopen(err_r, "rb")
        self.used = False
        self.finished = False

    @property
    def alive(self) -> bool:
        return self.proc.poll() is None

    def current(self, cwd_id: DevIno | None = None) -> bool:
        """Still alive, its bind sources are still the inodes it bound, and its working
        directory is ``cwd_id`` (the one the guard checked) when given."""
        if cwd_id is not None and cwd_id != self.cwd_id:
            return False
        return self.alive and self.fingerprint == self.plan.fingerprint()

    def wait_ready(self, timeout: float = READY_TIMEOUT_S) -> None:
        """Block until the helper waits for its argv; raise ``SandboxError`` if bwrap failed."""
        if self.status.read_until((b"R\n",), timeout):
            if self.inner is None:
                self.inner = pidfd(only_child(self.proc.pid))
            if self.egress:
                try:
                    self.egress.attach()  # the namespace's sockets were sent before bwrap started
                except OSError as exc:
                    raise SandboxError(errno.EIO, f"network namespace: {exc}") from exc
            return
        code: int | None = self.proc.poll()
        if not self.status.eof and code is None:
            raise SandboxError(errno.ETIMEDOUT, f"sandbox not ready after {timeout:.0f} s")
        # bwrap is on its way out (or gone): its own diagnostics say why, so read them to EOF
        self.status.read_until((), KILL_WAIT_S)
        if code is None:
            try:
                code = self.proc.wait(KILL_WAIT_S)
            except subprocess.TimeoutExpired:
                code = None
        raise SandboxError(errno.EIO, self.status.diagnostics() or f"bwrap exited with {code}")

    def handover(self, argv: list[str], cwd_id: DevIno | None = None,
                 stdin: bytes | None = None) -> "SandboxStarted":
        """Send the argv; the sandbox is spent from here on, whatever happens.

        The helper runs it only in the directory ``cwd_id`` (the guard's; by default the one
        this sandbox bound), reached below its allowed root without a symlink. ``stdin`` (None:
        the command reads /dev/null) follows as a second frame: the helper gives it to the
        command as a sealed in-memory file on fd 0."""
        if self.used:
            raise RuntimeError("a pre-started sandbox serves exactly one command")
        self.used = True
        try:
            self.wait_ready()
        except SandboxError:
            self.discard()
            raise
        root, rel = cwd_root(self.plan)
        checks = [(root, rel, cwd_id or self.cwd_id), *((path, ".", id_) for path, id_ in self.pinned.items())]
        head = f"{len(checks)}{'' if stdin is None else 's'}"  # "s": a stdin frame follows
        fields = [head, *(f for base, rel_, (dev, ino) in checks for f in (base, rel_, f"{dev}:{ino}")), *argv]
        body = b"\0".join(os.fsencode(a) for a in fields)
        message = struct.pack(">I", len(body)) + body
        if stdin is not None:
            message += struct.pack(">I", len(stdin)) + stdin
        try:
            view = memoryview(message)
            while view:  # the helper reads it all before it runs anything
                view = view[os.write(self._control_w, view):]
        except OSError:
            self._close_control()  # the sandbox died after getting ready: wait() reports bwrap's status
        return SandboxStarted(self)

    def stop(self, grace_s: float) -> None:
        """Ask the helper to stop the command as the executor stops a direct child (SIGTERM to
        its group, SIGKILL after ``grace_s``) and wait, bounded, for its report."""
        if self._control_w < 0:
            return
        try:
            os.write(self._control_w, struct.pack(">I", max(1, round(grace_s * 1000))))
        except OSError:
            return
        finally:
            self._close_control()
        self.status.read_until(_REPORTS, grace_s + KILL_WAIT_S)

    def _close_control(self) -> None:
        if self._control_w >= 0:
            os.close(self._control_w)
            self._control_w = -1

    def end(self) -> None:
        """Kill the sandbox's tree, remove its cgroup (if any), close what it held. Once."""
        if self.finished:
            return
        self.finished = True
        self._close_control()
        end_tree(self.proc, self.outer, self.inner, sweep=not self.plan.pid_namespace)
        self.outer = self.inner = None
        self.status.close()
        if self.egress:
            self.egress.close()
        if self.cgroup and self.proc.poll() is not None:
            self.cgroup.remove()
            self.cgroup = None
        self.ended()

    def ended(self) -> None:
        """Tell the pool (once) that this sandbox is spent: its refill can start."""
        on_end, self.on_end = self.on_end, None
        if on_end is not None:
            on_end()

    def discard(self) -> None:
        """Kill an unused (or failed) sandbox and close its pipes.

        A sandbox still being set up is given time to finish first: killed half-way, bwrap
        can leave its PID 1 waiting forever for a go-ahead that never comes."""
        self.used = True
        self._close_control()
        if self.inner is None and not self.status.eof:
            try:
                self.wait_ready(KILL_WAIT_S)
            except SandboxError:
                pass
        self.end()
        self.stdout.close()
        self.stderr.close()


class SandboxStarted:
    """``Started`` for a sandboxed command: bwrap's pid, the command's pipes and exact status.

    The command is over when the helper reports its wait status: by then the helper (a
    subreaper) has killed and reaped every descendant, so only bwrap's own processes remain,
    tearing the namespaces down. ``wait`` returns at that report, and ``kill_tree`` leaves the
    teardown to a background reaper — the call does not pay for it. Without a report (timeout,
    cancellation, cap) the kill is synchronous and waits for the sandbox's PID 1.

    ``contains_tree`` (with a pid namespace): nothing the command starts can leave the
    namespace, and the namespace dies with its PID 1 — which every teardown kills — so the
    executor's /proc scans and sweep would only repeat what the kernel guarantees."""

    def __init__(self, prepared: Prepared) -> None:
        self._prepared = prepared
        self._code: int | None = None
        self.contains_tree = prepared.plan.pid_namespace
        self.pid = prepared.proc.pid
        self.stdout: BinaryIO = prepared.stdout
        self.stderr: BinaryIO = prepared.stderr
        self.spawn_error: str | None = None  # set when the command could not start inside
        self._ending = False  # the teardown is queued on the reaper

    def wait(self, timeout: float | None = None) -> int | None:
        """Return code with Popen's convention (negative = killed by that signal)."""
        if self._code is None:
            self._code = self._status(timeout)
        return self._code

    def _status(self, timeout: float | None) -> int | None:
        status = self._prepared.status
        status.read_until(_REPORTS, timeout)
        reported = self._reported()
        if reported is not None:
            return reported
        if not status.eof:
            return None  # still running
        try:  # bwrap and the helper are gone without a report: bwrap's own status
            return self._prepared.proc.wait(KILL_WAIT_S)
        except subprocess.TimeoutExpired:
            return None

    def _reported(self) -> int | None:
        """The helper's report, if it came: the exact wait status, or 127 for a failed exec."""
        for line in self._prepared.status.lines():
            kind, _, rest = line.partition(" ")
            if kind == "W" and rest.isdigit():
                return os.waitstatus_to_exitcode(int(rest))
            if kind == "E":
                name, _, text = rest.partition(" ")
                self.spawn_error = f"{name}: {text}"  # the executor's "ENAME: message"
                return 127
        return None

    def kill_tree(self) -> None:
        """End the call. A command still running (timeout, cap, cancellation) is stopped by
        the helper first — SIGTERM, grace, SIGKILL — so its reported status is the one it died
        with, as without the sandbox; then the sandbox is killed before the call returns."""
        prepared = self._prepared
        if prepared.finished or self._ending:
            return
        if self._reported() is not None:
            self._ending = True
            prepared.ended()  # the command is over: refill now, tear down in the background
            _reaper().put(prepared.end)
            return
        prepared.stop(KILL_GRACE_S)
        prepared.end()


_REPORTS = (b"\nW ", b"\nE ")
_reaper_queue: queue.SimpleQueue[Callable[[], None]] | None = None
_reaper_lock = threading.Lock()
_reaper_idle = threading.Condition(_reaper_lock)
_reaper_pending = 0  # teardowns queued or running


class _Reaper:
    """The background teardowns' queue: ``put`` counts each one until it has run."""

    def __init__(self, todo: queue.SimpleQueue[Callable[[], None]]) -> None:
        self._todo = todo

    def put(self, job: Callable[[], None]) -> None:
        global _reaper_pending
        with _reaper_lock:
            _reaper_pending += 1
        self._todo.put(job)


def _reaper() -> _Reaper:
    """A daemon thread that finishes sandboxes whose command is already over."""
    global _reaper_queue
    with _reaper_lock:
        if _reaper_queue is None:
            _reaper_queue = queue.SimpleQueue()
            threading.Thread(target=_reap_forever, args=(_reaper_queue,), name="parism-sandbox-reaper",
                             daemon=True).start()
        return _Reaper(_reaper_queue)


def _reap_forever(todo: queue.SimpleQueue[Callable[[], None]]) -> None:
    global _reaper_pending
    while True:
        job = todo.get()
        try:
            job()
        except Exception:  # a failed cleanup must not stop the next ones
            pass
        finally:
            with _reaper_lock:
                _reaper_pending -= 1
                if _reaper_pending == 0:
                    _reaper_idle.notify_all()


def settle(timeout: float) -> bool:
    """Wait (at most ``timeout`` s) until every background teardown has run: the server calls
    it before it exits, so a sandbox whose command was over is reaped by the server and not
    left to whatever sits above it (a cancelled call's bwrap was re-parented as a zombie when
    SIGTERM ended the server first). True when nothing is pending."""
    with _reaper_lock:
        return _reaper_idle.wait_for(lambda: _reaper_pending == 0, max(0.0, timeout))
