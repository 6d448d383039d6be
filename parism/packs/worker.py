"""One long-lived worker process per pack, and the limits around every call to it.

Isolation (``parsers.external_isolation = "worker"``, the default): the worker runs inside
bubblewrap with every namespace unshared (no network), a file system holding only the
interpreter, its standard library and site-packages, the ``parism`` package and the pack's own
directory (all read-only), a private ``/tmp``, and what ``parsers.external_capabilities`` grants
(``fs_read`` binds, ``env`` values); ``RLIMIT_AS`` is ``external_memory_limit_mb``. The bwrap
argv is built in :func:`worker_argv` only. ``"none"`` imports the pack in a plain subprocess
(trusted packs only; honoured from the global configuration or ``PARISM_*``, never a project).

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
import site
import subprocess
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from parism.run.sandbox.reap import end_bwrap

MAIN = Path(__file__).with_name("_worker_main.py")
ROOT = str(Path(__file__).resolve().parents[2])  # the directory holding the parism package
STARTUP_S = 2.0  # module import limit (contract §17.2)
BACKOFF_START_S, BACKOFF_MAX_S = 2.0, 30.0
MAX_ANSWER_BYTES = 64 * 1024 * 1024


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


def worker_argv(pack_dir: str, limits: Limits) -> list[str]:
    """The whole sandbox of one pack worker, in one readable place."""
    py = [sys.executable, "-I", "-B", str(MAIN), ROOT, pack_dir]
    if limits.isolation == "none":
        return py
    bwrap = shutil.which("bwrap") or "/usr/bin/bwrap"
    # /tmp first: the interpreter, the checkout, the pack or an fs_read bind may lie below it
    argv = [bwrap, "--unshare-all", "--die-with-parent", "--new-session", "--clearenv",
            "--ro-bind", "/usr", "/usr", "--tmpfs", "/tmp"]
    for link in ("bin", "lib", "lib64", "sbin"):
        if os.path.islink(f"/{link}"):
            argv += ["--symlink", os.readlink(f"/{link}"), f"/{link}"]
    for root in _python_roots():
        if not root.startswith("/usr/"):
            argv += ["--ro-bind", root, root]
    argv += ["--ro-bind", pack_dir, pack_dir, "--proc", "/proc", "--dev", "/dev",
             "--setenv", "PATH", "/usr/bin:/bin", "--setenv", "LC_ALL", "C.UTF-8",
             "--setenv", "PYTHONDONTWRITEBYTECODE", "1", "--chdir", "/tmp"]
    for host, guest in limits.fs_read:
        argv += ["--ro-bind-try", host, guest]
    for name, value in limits.env:
        argv += ["--setenv", name, value]
    return [*argv, "--", *py]


class Worker:
    """The process of one pack and its back-off state; calls are serialised by a lock."""

    def __init__(self, pack_dir: str, limits: Limits) -> None:
        self.pack_dir, self.limits = pack_dir, limits
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

        self.proc = subprocess.Popen(worker_argv(self.pack_dir, self.limits), stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, preexec_fn=limit,
                                     env={} if self.limits.isolation != "none" else _plain_env(self.limits))
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
            if self.proc.poll() is None:
                self.proc.kill()
            self.proc.wait()
            for stream in (self.proc.stdin, self.proc.stdout):
                if stream is not None:
                    stream.close()
        self.proc = None


def _plain_env(limits: Limits) -> dict[str, str]:
    env = {"PATH": "/usr/bin:/bin", "LC_ALL": "C.UTF-8", "PYTHONDONTWRITEBYTECODE": "1"}
    env.update(dict(limits.env))
    return env
