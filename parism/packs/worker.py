"""One long-lived worker process per pack, and the limits around every call to it.

Isolation (``parsers.external_isolation = "worker"``, the default): the worker runs inside
bubblewrap with every namespace unshared (no network), a file system holding only the
interpreter, its standard library and site-packages, the ``parism`` package and the pack's own
directory (all read-only), a private ``/tmp``, and what ``parsers.external_capabilities`` grants
(``fs_read`` binds, ``env`` values); ``RLIMIT_AS`` is ``external_memory_limit_mb``. It is
unprivileged on the host: a root server runs it as ``nobody`` through the identity map and
``setpriv`` (as the commands' sandbox does), with no capability, ``no_new_privs`` and the seccomp
program of :mod:`parism.packs.seccomp` (docs/security.md, "Parser packs"). The bwrap argv is
built in :func:`worker_argv` only. ``"none"`` imports the pack in a plain subprocess of its own
session (trusted packs only; honoured from the global configuration or ``PARISM_*``, never a
project).

Every failure that leaves the worker in doubt — a call over ``external_time_limit_ms``, a crash,
a memory overflow, bytes on the protocol stream that are not one JSON answer — kills the worker
and answers ``parser_exception`` naming which; the pack then fails fast for a back-off that
starts at 2 s and doubles to 30 s; the next call after it starts a new worker; a success resets
the back-off. An ordinary exception inside ``parse`` is reported and the worker lives on.
"""

from __future__ import annotations

import json
import os
import resource
import select
import shutil
import signal
import site
import subprocess
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from parism.packs import seccomp
from parism.run.sandbox.identity import NOBODY, SETPRIV, SWITCH_CAPS, MapHandshake, _allows, primary_gid
from parism.run.executor import sealed_memfd
from parism.run.sandbox.reap import end_bwrap

MAIN = Path(__file__).with_name("_worker_main.py")
ROOT = str(Path(__file__).resolve().parents[2])  # the directory holding the parism package
STARTUP_S = 2.0  # module import limit (contract §17.2)
BACKOFF_START_S, BACKOFF_MAX_S = 2.0, 30.0
MAX_ANSWER_BYTES = 64 * 1024 * 1024
TMP_BYTES = 64 * 1024 * 1024  # the worker's private /tmp


@dataclass(frozen=True)
class Limits:
    time_ms: int = 500
    memory_mb: int = 128
    isolation: str = "worker"
    fs_read: tuple[tuple[str, str], ...] = ()
    env: tuple[tuple[str, str], ...] = ()


class PackFailure(Exception):
    """A call that did not produce an answer; ``reason`` is the envelope's parse_error reason."""

    def __init__(self, reason: str, message: str) -> None:
        super().__init__(message)
        self.reason, self.message = reason, message


def _python_roots() -> list[str]:
    roots = {sys.base_prefix, sys.prefix, ROOT, *site.getsitepackages()}
    return sorted(r for r in roots if os.path.isdir(r))


@dataclass(frozen=True)
class Identity:
    """Who the worker runs as on the host: ``uid``/``gid``, and whether the server (root)
    maps the worker's user namespace with the identity map and lets ``setpriv`` switch to them
    inside (``full_map``), as the commands' sandbox does (``parism/run/sandbox/identity.py``)."""

    uid: int
    gid: int
    full_map: bool


def worker_identity(euid: int | None = None) -> Identity:
    """A root server runs its pack workers as ``nobody`` (65534) on the host — bwrap's own
    ``--uid`` would only rename host root inside its namespace (``uid_map 65534 0 1``); any
    other server runs them as itself."""
    euid = os.geteuid() if euid is None else euid
    if euid == 0:
        return Identity(NOBODY, primary_gid(NOBODY), True)
    return Identity(euid, os.getegid(), False)


def readable_problem(pack_dir: str, who: Identity) -> str | None:
    """Why the worker's uid could not load the pack (None: it can). Only the pack directory and
    its module count: the pack is bound on its own, so its parents need not be searchable."""
    if not who.full_map:
        return None  # the server's own uid: it reads what it found
    for path, want in ((pack_dir, 5), *((m, 4) for m in _module_files(pack_dir))):
        try:
            st = os.stat(path)
        except OSError as exc:
            return f"cannot read {path}: {exc.strerror}"
        if not _allows(st, who.uid, who.gid, want):
            return (f"{path} is not readable by uid {who.uid}, which runs pack workers "
                    "(make the pack world-readable: chmod -R o+rX)")
    return None


def _module_files(pack_dir: str) -> list[str]:
    return [p for p in (os.path.join(pack_dir, n) for n in ("parser.py", "__init__.py")) if os.path.isfile(p)]


def _parents(path: str) -> list[str]:
    """Under the identity map bwrap (root) would create a bind's missing parents as 0700,
    closed to the worker's uid: they are made 0755 first (see ``run/sandbox/bwrap.py``)."""
    parts = [p for p in path.split("/") if p][:-1]
    out: list[str] = []
    for i in range(1, len(parts) + 1):
        out += ["--perms", "0755", "--dir", "/" + "/".join(parts[:i])]
    return out


@dataclass
class Setup:
    """The descriptors one worker start hands to bwrap: ``binds`` (path → an ``O_PATH``
    descriptor of it, bound with ``--ro-bind-fd``), the sealed seccomp program, and the
    identity-map handshake when ``who.full_map``. ``close`` releases the child's ends once
    bwrap has them."""

    who: Identity
    binds: tuple[tuple[str, int], ...] = ()
    seccomp_fd: int = -1
    handshake: MapHandshake | None = None

    @property
    def userns_fds(self) -> tuple[int, int] | None:
        return self.handshake.child_fds if self.handshake else None

    @property
    def pass_fds(self) -> tuple[int, ...]:
        return (*(fd for _p, fd in self.binds), self.seccomp_fd, *(self.userns_fds or ()))

    def close(self) -> None:
        for fd in (*(fd for _p, fd in self.binds), self.seccomp_fd):
            if fd >= 0:
                os.close(fd)
        self.binds, self.seccomp_fd = (), -1
        if self.handshake:
            self.handshake.close_child_ends()


def worker_argv(pack_dir: str, limits: Limits, setup: Setup | None = None) -> list[str]:
    """The whole sandbox of one pack worker, in one readable place.

    Every namespace is new (no network), no capability survives (``--cap-drop ALL``; under the
    identity map bwrap keeps only what ``setpriv`` needs to switch to the worker's uid and drop
    the rest), ``no_new_privs`` is set, the seccomp filter of ``parism/packs/seccomp.py`` is
    installed before the interpreter runs. The interpreter, its library, the ``parism``
    package and the pack are bound read-only by descriptor (``setup.binds``)."""
    py = [sys.executable, "-I", "-B", str(MAIN), ROOT, pack_dir]
    if limits.isolation == "none":
        return py
    if setup is None or setup.seccomp_fd < 0:
        raise ValueError("a pack worker needs its descriptors (Setup)")
    bwrap = shutil.which("bwrap") or "/usr/bin/bwrap"
    who = setup.who
    argv = [bwrap, "--unshare-user", "--unshare-ipc", "--unshare-pid", "--unshare-net", "--unshare-uts",
            "--unshare-cgroup-try"]
    if who.full_map:
        if setup.userns_fds is None:
            raise ValueError("the identity map needs the handshake fds")
        argv += ["--info-fd", str(setup.userns_fds[0]), "--userns-block-fd", str(setup.userns_fds[1])]
    argv += ["--die-with-parent", "--new-session", "--clearenv", "--cap-drop", "ALL"]
    for cap in SWITCH_CAPS if who.full_map else ():
        argv += ["--cap-add", cap]
    # /tmp first: the interpreter, the checkout, the pack or an fs_read bind may lie below it
    argv += ["--ro-bind", "/usr", "/usr", "--perms", "1777", "--size", str(TMP_BYTES), "--tmpfs", "/tmp"]
    for link in ("bin", "lib", "lib64", "sbin"):
        if os.path.islink(f"/{link}"):
            argv += ["--symlink", os.readlink(f"/{link}"), f"/{link}"]
    for path, fd in setup.binds:
        argv += [*(_parents(path) if who.full_map else []), "--ro-bind-fd", str(fd), path]
    argv += ["--proc", "/proc", "--dev", "/dev",
             "--setenv", "PATH", "/usr/bin:/bin", "--setenv", "LC_ALL", "C.UTF-8",
             "--setenv", "PYTHONDONTWRITEBYTECODE", "1", "--chdir", "/tmp"]
    for host, guest in limits.fs_read:
        argv += [*(_parents(guest) if who.full_map else []), "--ro-bind-try", host, guest]
    for name, value in limits.env:
        argv += ["--setenv", name, value]
    argv += ["--add-seccomp-fd", str(setup.seccomp_fd)]
    switch = ([SETPRIV, f"--reuid={who.uid}", f"--regid={who.gid}", "--clear-groups", "--inh-caps=-all",
               "--bounding-set=-all", "--no-new-privs", "--"] if who.full_map else [])
    return [*argv, "--", *switch, *py]


def open_setup(pack_dir: str, who: Identity) -> Setup:
    """Open what one worker start binds: the interpreter's trees and the pack (each once, by
    descriptor — the bind is the directory that was opened: bwrap checks the inode it mounted
    against the descriptor; the pack's real path without following a symlink), the sealed seccomp
    program and, for a root server, the identity-map handshake."""
    setup = Setup(who)
    fds: list[tuple[str, int]] = []
    flags = os.O_PATH | os.O_DIRECTORY | os.O_CLOEXEC
    try:
        for path in dict.fromkeys(r for r in _python_roots() if not r.startswith("/usr/")):
            fds.append((path, os.open(path, flags)))  # the operator's trees, bound where they are named
        fds.append((pack_dir, os.open(pack_dir, flags | os.O_NOFOLLOW)))  # a real path: no symlink
        setup.binds = tuple(fds)
        setup.seccomp_fd = sealed_memfd("parism-pack-seccomp", seccomp.program())
        setup.handshake = MapHandshake() if who.full_map else None
    except BaseException:
        setup.binds = tuple(fds)
        setup.close()
        raise
    return setup


class Worker:
    """The process of one pack and its back-off state; calls are serialised by a lock."""

    def __init__(self, pack_dir: str, limits: Limits) -> None:
        # the real path: the worker is given the directory it is bound at
        self.pack_dir, self.limits = os.path.realpath(pack_dir), limits
        self.proc: subprocess.Popen[bytes] | None = None
        self.describe: dict[str, Any] | None = None
        self.failures = 0
        self.cool_until = 0.0
        self._lock = threading.Lock()

    # -- public ---------------------------------------------------------------------------

    def start(self) -> dict[str, Any]:
        """Start (or restart) the worker and return the pack's self-description."""
        with self._lock:
            return self._start()

    def call(self, request: dict[str, Any]) -> dict[str, Any]:
        """Send one request; the answer dict, or :class:`PackFailure`."""
        with self._lock:
            left = self.cool_until - time.monotonic()
            if left > 0:
                raise PackFailure("parser_exception", f"pack at {self.pack_dir} is in back-off after a failure "
                                  f"({left:.1f} s left); nothing was sent to it")
            if self.proc is None or self.proc.poll() is not None:
                self._start()  # its own limit (STARTUP_S): a restart does not eat the call's time
            deadline = time.monotonic() + self.limits.time_ms / 1000
            try:
                answer = self._exchange(request, deadline)
            except PackFailure as exc:
                self._fail()
                raise exc
            if answer.get("fatal"):
                self._fail()
                raise PackFailure(answer.get("reason", "parser_exception"), answer.get("message", ""))
            self.failures = 0
            return answer

    def stop(self) -> None:
        with self._lock:
            self._kill()

    # -- internals ------------------------------------------------------------------------

    def _start(self) -> dict[str, Any]:
        self._kill()
        mem = self.limits.memory_mb * 1024 * 1024

        def limit() -> None:  # in the child, before exec: bwrap and the worker inherit it
            if mem:
                resource.setrlimit(resource.RLIMIT_AS, (mem, mem))

        sandboxed = self.limits.isolation != "none"
        setup = None
        if sandboxed:
            who = worker_identity()
            why = readable_problem(self.pack_dir, who)
            if who.full_map and not os.path.exists(SETPRIV):
                why = f"{SETPRIV} (util-linux) is needed to switch a root server's pack worker to uid {who.uid}"
            if why:
                raise PackFailure("pack_invalid", f"the pack cannot be loaded unprivileged: {why}")
            try:
                setup = open_setup(self.pack_dir, who)
            except OSError as exc:
                raise PackFailure("pack_invalid", f"the pack's worker cannot be set up: {exc}") from None
        try:
            # own session: in "none" mode the worker's process group is what _kill ends
            self.proc = subprocess.Popen(worker_argv(self.pack_dir, self.limits, setup), stdin=subprocess.PIPE,
                                         stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, preexec_fn=limit,
                                         start_new_session=True, pass_fds=setup.pass_fds if setup else (),
                                         env={} if sandboxed else _plain_env(self.limits))
        finally:
            if setup is not None:
                setup.close()
        if setup is not None and setup.handshake is not None:
            try:
                setup.handshake.complete()
            except OSError as exc:
                self._kill()  # never let bwrap go on without the map
                raise PackFailure("pack_invalid", f"the pack's worker could not be mapped: {exc}") from None
        try:
            first = self._read(time.monotonic() + max(STARTUP_S, self.limits.time_ms / 1000))
        except PackFailure as exc:
            self._kill()
            raise PackFailure("pack_invalid", f"the pack did not start: {exc.message}") from None
        if not first.get("ok"):
            self._kill()
            raise PackFailure("pack_invalid", first.get("message", "the pack did not load"))
        self.describe = first["describe"]
        return self.describe

    def _exchange(self, request: dict[str, Any], deadline: float) -> dict[str, Any]:
        assert self.proc is not None and self.proc.stdin is not None
        try:
            self.proc.stdin.write((json.dumps(request) + "\n").encode())
            self.proc.stdin.flush()
        except OSError:
            raise PackFailure("parser_exception", "the pack's worker died (it crashed or was killed)") from None
        return self._read(deadline)

    def _read(self, deadline: float) -> dict[str, Any]:
        assert self.proc is not None and self.proc.stdout is not None
        fd, buf = self.proc.stdout.fileno(), bytearray()
        while not buf.endswith(b"\n"):
            left = deadline - time.monotonic()
            if left <= 0:
                raise PackFailure("parser_exception", f"the pack took longer than {self.limits.time_ms} ms "
                                  "(parsers.external_time_limit_ms)")
            ready, _, _ = select.select([fd], [], [], left)
            if not ready:
                continue
            chunk = os.read(fd, 1 << 20)
            if not chunk:
                code = self.proc.wait(timeout=1)
                what = "ran out of memory or crashed" if code else "exited"
                raise PackFailure("parser_exception", f"the pack's worker {what} (status {code})")
            buf += chunk
            if len(buf) > MAX_ANSWER_BYTES:
                raise PackFailure("parser_exception", "the pack's answer is larger than 64 MiB")
        try:
            answer = json.loads(bytes(buf))
            if not isinstance(answer, dict) or "ok" not in answer:
                raise ValueError
        except ValueError:
            raise PackFailure("parser_exception", "the pack wrote to the worker protocol stream: "
                              "its answer is not one JSON object") from None
        return answer

    def _fail(self) -> None:
        self._kill()
        self.failures += 1
        delay = min(BACKOFF_MAX_S, BACKOFF_START_S * 2 ** (self.failures - 1))
        self.cool_until = time.monotonic() + delay

    def _kill(self) -> None:
        if self.proc is not None:
            if self.limits.isolation != "none":
                end_bwrap(self.proc)  # bwrap's child first: each process is reaped by its parent
            elif _unreaped(self.proc):
                _kill_group(self.proc.pid)  # the worker's own group, while its pid still holds it
            if self.proc.poll() is None:
                self.proc.kill()
            self.proc.wait()
            for stream in (self.proc.stdin, self.proc.stdout):
                if stream is not None:
                    stream.close()
        self.proc = None


def _unreaped(proc: subprocess.Popen[bytes]) -> bool:
    """The worker is running or a zombie not yet waited for (its pid is still its own)."""
    if proc.returncode is not None:
        return False
    try:
        os.waitid(os.P_PID, proc.pid, os.WEXITED | os.WNOHANG | os.WNOWAIT)
    except ChildProcessError:
        return False
    return True


def _kill_group(pgid: int) -> None:
    """SIGKILL the process group the worker leads (it was started in a session of its own).
    Called only while the worker is not yet reaped: its pid, which is the group's id, cannot
    have been given to anyone else."""
    try:
        os.killpg(pgid, signal.SIGKILL)
    except OSError:
        pass


def _plain_env(limits: Limits) -> dict[str, str]:
    env = {"PATH": "/usr/bin:/bin", "LC_ALL": "C.UTF-8", "PYTHONDONTWRITEBYTECODE": "1"}
    env.update(dict(limits.env))
    return env
