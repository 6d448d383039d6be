"""Run one argv and capture its output under hard limits (contract §8.9, mcp-notes §1.10).

Why this shape:
- no shell, ``stdin=/dev/null`` (or the call's ``stdin`` bytes as a sealed in-memory file, never
  a terminal), own session (process group), ``close_fds`` — the child can
  neither read the MCP wire nor be mistaken for part of our own group;
- stdout and stderr are drained by one selector loop, each under a hard byte cap: at a cap we
  stop reading, kill the tree and report ``output_limit``; we never hold more than cap + one
  chunk, whatever the command prints;
- a timeout, a cap, a cancellation *and* the normal end of the leader all kill the whole tree:
  ``killpg`` SIGTERM → short grace → SIGKILL, then a psutil sweep of every descendant seen while
  running (descendants that called ``setsid()`` left the group but not our records). Nothing a
  call started outlives the call. A launcher whose teardown kills the whole tree by itself (a
  PID namespace) says so with ``contains_tree`` and the scans are skipped.

The launcher is pluggable: ``DirectLauncher`` spawns on the host; the sandbox supplies a
bubblewrap launcher with the same ``start(spec) -> Started`` protocol.
"""

from __future__ import annotations

import errno
import os
import selectors
import signal
import subprocess
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import IO, Protocol

from parism.run.proctree import SCAN_INTERVAL_S, Tracker, kill_process_group

CHUNK = 64 * 1024
DRAIN_AFTER_KILL_S = 1.0  # bytes already in the pipes are still read, but not for ever
EOF_READS = 32  # reads of what the pipes hold once the leader ended (a full pipe is 64 KiB)


@dataclass(frozen=True)
class ExecSpec:
    """What to run. ``argv[0]`` is an absolute host path (see ``resolve_binary``)."""

    argv: list[str]
    cwd: str
    env: dict[str, str]
    timeout_s: float
    max_stdout: int  # bytes; 0 = unlimited is not offered: every capture is bounded
    max_stderr: int
    stdin: bytes | None = None  # the command's standard input; None: /dev/null
    # a job (parism/jobs.py): past max_stdout the capture stops growing but the pipes are still
    # read (and teed, CancelToken.tee) instead of the tree being killed for output_limit
    drain_past_cap: bool = False


@dataclass(frozen=True)
class SpawnError:
    """Why no process ran. ``code`` is the errno name (ENOENT, EACCES, ...)."""

    code: str
    message: str
    target: str = "binary"  # "binary" | "cwd" (ENOENT on either looks the same) | "launcher" | "unmounted"


@dataclass
class Capture:
    stdout: bytes = b""
    stderr: bytes = b""
    exit_code: int | None = None
    signal: str | None = None
    timed_out: bool = False
    output_limit: bool = False
    cancelled: bool = False
    stdout_truncated: bool = False
    stderr_truncated: bool = False
    spawn_error: SpawnError | None = None
    duration_ms: int = 0


class Started(Protocol):
    """A running child as the executor sees it (implemented by every launcher).

    A launcher whose command can fail to start *after* the launcher process started (bwrap)
    may also expose ``spawn_error: str | None`` ("ENAME: message"), read after ``wait``, and
    ``contains_tree: bool`` — True only when ``kill_tree`` kills every process the command
    started, wherever it moved (its PID namespace dies with it): the executor then skips the
    descendant scans that cost a /proc walk each. Absent means False (``_DirectStarted``)."""

    # read-only members: a launcher's own narrower types (BinaryIO) satisfy them
    @property
    def pid(self) -> int: ...

    @property
    def stdout(self) -> IO[bytes]: ...

    @property
    def stderr(self) -> IO[bytes]: ...

    def wait(self, timeout: float | None = None) -> int | None:
        """Return code (negative = killed by that signal), or None if still running."""

    def kill_tree(self) -> None:
        """Kill the child and everything in its process group; must not raise."""


class Launcher(Protocol):
    def start(self, spec: ExecSpec) -> Started:
        """Spawn; raise ``OSError`` when the spawn itself fails."""


class CancelToken:
    """Set from another thread (the async caller); the drain loop polls it."""

    def __init__(self) -> None:
        self._event = threading.Event()
        #: set once the command has been started (or queued for a slot, or the call ended): the MCP
        #: server's early start waits on it (parism/server/early.py)
        self.handed_over = threading.Event()
        #: called with every chunk read from the command's stdout or stderr, in order (a job's
        #: output ring, parism/jobs.py); None: nothing is teed
        self.tee: Callable[[bytes], None] | None = None

    def cancel(self) -> None:
        self._event.set()

    @property
    def cancelled(self) -> bool:
        return self._event.is_set()


class _DirectStarted:
    """A ``Popen`` in its own session; its pid is the process group id."""

    def __init__(self, proc: subprocess.Popen[bytes]) -> None:
        assert proc.stdout is not None and proc.stderr is not None
        self._proc = proc
        self.pid = proc.pid
        self.stdout: IO[bytes] = proc.stdout
        self.stderr: IO[bytes] = proc.stderr

    def wait(self, timeout: float | None = None) -> int | None:
        try:
            return self._proc.wait(timeout)
        except subprocess.TimeoutExpired:
            return None

    def kill_tree(self) -> None:
        kill_process_group(self.pid, self._proc)


class DirectLauncher:
    """Spawn on the host, without a sandbox."""

    def start(self, spec: ExecSpec) -> Started:
        stdin = subprocess.DEVNULL if spec.stdin is None else stdin_file(spec.stdin)
        try:
            proc = subprocess.Popen(  # argv as bytes: an argument may hold bytes that are not UTF-8 (surrogateescape)
                [os.fsencode(a) for a in spec.argv], cwd=os.fsencode(spec.cwd), env=spec.env, shell=False,
                stdin=stdin, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                start_new_session=True, close_fds=True,
            )
        finally:
            if stdin != subprocess.DEVNULL:
                os.close(stdin)
        return _DirectStarted(proc)


def stdin_file(data: bytes) -> int:
    """``data`` in a sealed memfd read from its start (a child's standard input): no writer
    thread, no pipe to fill, and the child cannot change what it was given. The sandbox's
    helper makes the same file inside the sandbox (``_helper.stdin_file``)."""
    return sealed_memfd("parism-stdin", data)


def sealed_memfd(name: str, data: bytes) -> int:
    """A close-on-exec memfd holding ``data``, sealed against any change, positioned at its start
    (a child's stdin, the sandbox helper's code, a seccomp program handed to bwrap)."""
    import fcntl

    fd = os.memfd_create(name, os.MFD_CLOEXEC | os.MFD_ALLOW_SEALING)
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view):]
        fcntl.fcntl(fd, fcntl.F_ADD_SEALS,
                    fcntl.F_SEAL_SEAL | fcntl.F_SEAL_SHRINK | fcntl.F_SEAL_GROW | fcntl.F_SEAL_WRITE)
        os.lseek(fd, 0, os.SEEK_SET)
    except BaseException:
        os.close(fd)
        raise
    return fd


def resolve_binary(cmd: str, path: str, shown: Callable[[str], bool] | None = None) -> str | SpawnError:
    """Find ``cmd`` on ``path`` (the child's PATH) as the host sees it.

    Unlike ``shutil.which`` this distinguishes "absent" (ENOENT) from "present but not
    executable" (EACCES), which the availability block reports differently. ``shown``: which
    host paths the command's sandbox mounts (``BwrapLauncher.shows``); a copy outside them is skipped
    (it would not exist inside), and when it is the only one the error says where it is
    (``SpawnError.target == "unmounted"``) — it is installed, so no install hint applies."""
    candidates = [cmd] if "/" in cmd else [os.path.join(d or ".", cmd) for d in path.split(os.pathsep)]
    not_exec: str | None = None
    hidden: str | None = None
    for cand in candidates:
        if shown is not None and os.path.isfile(cand) and not shown(os.path.realpath(cand)):
            hidden = hidden or os.path.abspath(cand)
            continue
        if os.path.isfile(cand):
            if os.access(cand, os.X_OK):
                return os.path.abspath(cand)
            not_exec = not_exec or cand
    if not_exec is not None:
        return SpawnError("EACCES", f"spawn {cmd} EACCES: {not_exec} is not executable")
    if hidden is not None:
        return SpawnError("ENOENT", f"spawn {cmd} ENOENT: {cmd} is installed at {hidden} on the host, but the "
                          f"sandbox does not mount {os.path.dirname(hidden)}", target="unmounted")
    return SpawnError("ENOENT", f"spawn {cmd} ENOENT")


@dataclass
class _Stream:
    """One pipe's capture, in one growing buffer: the pieces read were kept as a list of 64 KiB
    blocks and joined, and the freed blocks stayed in the heap (a 64 MiB output held RSS
    +74 MB after the join); a buffer this size is its own mapping, grown in place."""

    fd: int
    cap: int
    buf: bytearray = field(default_factory=bytearray)
    truncated: bool = False
    open: bool = True
    drain: bool = False  # past the cap, keep reading (a job): the cap is then not a limit

    def take(self, data: bytes) -> bool:
        """Keep data up to the cap; return True when the cap was hit (and is a limit)."""
        room = self.cap - len(self.buf)
        if len(data) > room:
            data = data[:room]
            self.truncated = True
        if data:
            self.buf += data
        return self.truncated and not self.drain

    def value(self) -> bytes:
        data = bytes(self.buf)
        self.buf = bytearray()  # the buffer goes as soon as it is copied (peak memory of a call)
        return data


def execute(spec: ExecSpec, launcher: Launcher | None = None, cancel: CancelToken | None = None,
            tracked: list[int] | None = None) -> Capture:
    """Run ``spec`` to completion, timeout, cap or cancellation. Never raises for child faults.

    ``tracked`` (optional) receives the pids of every descendant recorded, for tests and audit."""
    started_at = time.monotonic()
    cap = Capture()
    if not os.path.isdir(spec.cwd):
        cap.spawn_error = SpawnError("ENOENT", f"working directory '{spec.cwd}' does not exist", "cwd")
        return cap
    try:
        child = (launcher or DirectLauncher()).start(spec)
    except OSError as exc:
        name = errno.errorcode.get(exc.errno or 0, "EIO")
        target = "cwd" if exc.filename == spec.cwd else "binary"
        cap.spawn_error = SpawnError(name, f"spawn {os.path.basename(spec.argv[0])} {name}: {exc.strerror}", target)
        return cap
    except Exception as exc:  # noqa: BLE001 — a launcher bug is reported, never raised to the agent
        cap.spawn_error = SpawnError("EIO", f"launcher failed: {type(exc).__name__}: {exc}", "launcher")
        return cap
    if cancel is not None:
        cancel.handed_over.set()
    # the first periodic scan waits one interval: at spawn the command has not forked yet, so a
    # scan then finds nothing (a whole /proc walk, ~1 ms of CPU) and a command shorter than the
    # interval needs none — the group kill and the forced scan before any kill still apply
    tracker = Tracker(child.pid, active=not getattr(child, "contains_tree", False), first_after=SCAN_INTERVAL_S)
    try:
        _drain(child, spec, cap, tracker, cancel, started_at)
    finally:
        child.kill_tree()
        tracker.sweep()
        for pipe in (child.stdout, child.stderr):
            pipe.close()
        if tracked is not None:
            tracked.extend(tracker.pids)
    code = child.wait(DRAIN_AFTER_KILL_S)
    inner = getattr(child, "spawn_error", None)  # a sandbox reports "ENAME: message" from inside
    if inner:
        name, _, text = str(inner).partition(":")
        cap.spawn_error = SpawnError(name.strip(), f"spawn {os.path.basename(spec.argv[0])} {name.strip()}:{text}")
        return cap
    if code is not None and code < 0:
        cap.signal = signal.Signals(-code).name if -code in signal.valid_signals() else f"SIG{-code}"
    else:
        cap.exit_code = code
    cap.duration_ms = int((time.monotonic() - started_at) * 1000)
    return cap


def _drain(child: Started, spec: ExecSpec, cap: Capture, tracker: Tracker,
           cancel: CancelToken | None, started_at: float) -> None:
    """The selector loop: read both pipes until EOF, stopping early on cap/timeout/cancel."""
    drain = spec.drain_past_cap
    streams = {
        child.stdout.fileno(): _Stream(child.stdout.fileno(), spec.max_stdout, drain=drain),
        child.stderr.fileno(): _Stream(child.stderr.fileno(), spec.max_stderr, drain=drain),
    }
    tee = cancel.tee if cancel is not None else None
    deadline = started_at + spec.timeout_s
    stop_reading_at: float | None = None  # set once the tree has been killed
    with _selector(streams) as sel:
        while any(s.open for s in streams.values()):
            now = time.monotonic()
            if stop_reading_at is None:
                tracker.scan()
                reason = _stop_reason(cap, cancel, now >= deadline, child)
                if reason == "leader_exited" and _at_eof(sel, streams, cap, tee):
                    break  # the leader's output and EOF were only waiting in the pipes
                if reason:
                    tracker.scan(force=True)
                    child.kill_tree()
                    tracker.sweep()
                    stop_reading_at = time.monotonic() + DRAIN_AFTER_KILL_S
            elif now >= stop_reading_at:
                break
            _read_ready(sel, streams, cap, 0.05, tee)
    out, err = streams[child.stdout.fileno()], streams[child.stderr.fileno()]
    cap.stdout, cap.stderr = out.value(), err.value()
    cap.stdout_truncated, cap.stderr_truncated = out.truncated, err.truncated
    if stop_reading_at is None:  # pipes closed by themselves: wait for the leader, bounded
        _wait_leader(child, tracker, cap, cancel, deadline)


def _read_ready(sel: selectors.BaseSelector, streams: dict[int, _Stream], cap: Capture, timeout: float,
                tee: Callable[[bytes], None] | None = None) -> int:
    """One read from each pipe that is ready within ``timeout``; how many were."""
    ready = sel.select(timeout=timeout)
    for key, _ in ready:
        st = streams[key.fd]
        data = os.read(key.fd, CHUNK)
        if data and tee is not None:
            tee(data)
        if data and st.take(data):
            cap.output_limit = True  # this stream is never read again: cap + one chunk
        if not data or (st.truncated and not st.drain):
            st.open = False
            sel.unregister(key.fd)
    return len(ready)


def _at_eof(sel: selectors.BaseSelector, streams: dict[int, _Stream], cap: Capture,
            tee: Callable[[bytes], None] | None = None) -> bool:
    """After the leader's end: read what the pipes already hold, without waiting; True when
    every pipe reached EOF, so nothing else holds them and no kill is due. The leader's last
    output and its EOF often arrive together with its exit status, and the loop sees the status
    first; without this, a quick command's normal end took the kill path (a forced /proc scan
    and sweep, ≈ 2.6 ms on ``ps aux`` in the host's process view). Bounded: a descendant
    still writing keeps a pipe open, and the kill path follows."""
    for _ in range(EOF_READS):
        if not any(s.open for s in streams.values()) or not _read_ready(sel, streams, cap, 0, tee):
            break
    return not any(s.open for s in streams.values())


def _stop_reason(cap: Capture, cancel: CancelToken | None, expired: bool, child: Started) -> str | None:
    """Why the loop must kill the tree now (None = keep going). Records the reason on ``cap``."""
    if cap.output_limit:
        return "output_limit"
    if cancel is not None and cancel.cancelled:
        cap.cancelled = True
        return "cancelled"
    if expired:
        cap.timed_out = True
        return "timeout"
    if child.wait(0) is not None:
        return "leader_exited"  # descendants still holding the pipes die with the call
    return None


def _wait_leader(child: Started, tracker: Tracker, cap: Capture, cancel: CancelToken | None,
                 deadline: float) -> None:
    """Both pipes hit EOF; the leader may still run (it closed its outputs)."""
    while child.wait(0.05) is None:
        tracker.scan()
        if cancel is not None and cancel.cancelled:
            cap.cancelled = True
            return
        if time.monotonic() >= deadline:
            cap.timed_out = True
            return


@contextmanager
def _selector(streams: dict[int, _Stream]) -> Iterator[selectors.BaseSelector]:
    sel = selectors.DefaultSelector()
    for fd in streams:
        sel.register(fd, selectors.EVENT_READ)
    try:
        yield sel
    finally:
        sel.close()


class Slots:
    """``max_concurrency``: executions queue for a slot; a cancelled waiter leaves the queue."""

    def __init__(self, n: int) -> None:
        self._sem = threading.BoundedSemaphore(max(1, n))

    @contextmanager
    def hold(self, cancel: CancelToken | None = None) -> Iterator[bool]:
        """Yield True once a slot is held, False if cancelled while queued. A call that has to
        queue says so on its token (``handed_over``): an early start stops waiting for it."""
        if not self._sem.acquire(blocking=False):
            if cancel is not None:
                cancel.handed_over.set()
            while not self._sem.acquire(timeout=0.05):
                if cancel is not None and cancel.cancelled:
                    yield False
                    return
        try:
            yield True
        finally:
            self._sem.release()
