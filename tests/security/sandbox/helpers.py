"""Shared pieces of the sandbox containment tests.

Every test builds the sandbox from real settings in ``required`` mode and runs commands through
the real executor with a hand-made decision: the guard is bypassed on purpose (sh, python3,
touch… are "allowed"), so what is tested is the kernel confinement alone. Limits are small so a
failure of the sandbox cannot take the machine down.
"""

from __future__ import annotations

import grp
import os
import pwd
import shutil
import tempfile
import threading
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import psutil
import pytest

from parism.config.model import SandboxLimits, SandboxSettings
from parism.run.executor import Capture, ExecSpec, execute
from parism.run.sandbox import BwrapLauncher, Sandbox, SandboxRequest

SH = "/bin/sh"
PY3 = "/usr/bin/python3"
ENV = {"PATH": "/usr/local/bin:/usr/bin:/bin", "LC_ALL": "C.UTF-8", "LANG": "C.UTF-8"}
SMALL = {"nproc": 32, "as_mb": 256, "fsize_mb": 8, "cpu_grace_s": 2, "nofile": 256}


def settings(*, mode: str = "required", writable: bool = False, tmp_mb: int = 16,
             bwrap_path: str = "", **limits: int) -> SandboxSettings:
    return SandboxSettings(mode=mode, writable_project=writable, tmp_size_mb=tmp_mb,
                           bwrap_path=bwrap_path, limits=SandboxLimits(**{**SMALL, **limits}))


def decision(*, network: bool = False, namespace: str = "isolated", binds: tuple[str, ...] = ()) -> SandboxRequest:
    """What the guard would hand over for an allowed command (its frozen sandbox record)."""
    return SandboxRequest(network=network, namespace=namespace, binds=binds)


@dataclass
class Run:
    """A confined call's capture, and what an observer outside the executor saw of its tree:
    ``tracked`` = every pid seen (bwrap, its PID 1, the helper, the command and descendants),
    ``peak`` = the most seen alive at once."""

    cap: Capture
    tracked: list[int] = field(default_factory=list)
    peak: int = 0

    @property
    def out(self) -> str:
        return self.cap.stdout.decode("utf-8", "replace")

    @property
    def err(self) -> str:
        return self.cap.stderr.decode("utf-8", "replace")


def make_spec(argv: list[str], cwd: str, *, timeout: float = 10.0,
              env: dict[str, str] | None = None) -> ExecSpec:
    return ExecSpec(argv=argv, cwd=cwd, env=dict(env or ENV), timeout_s=timeout,
                    max_stdout=1 << 20, max_stderr=1 << 20)


def run(sb: Sandbox, argv: list[str], cwd: str, *, timeout: float = 10.0, env: dict[str, str] | None = None,
        **dec: Any) -> Run:
    """Run ``argv`` confined; fail (never skip) when the sandbox is not really there."""
    spec = make_spec(argv, cwd, timeout=timeout, env=env)
    launcher = sb.launcher(decision(**dec), spec)
    assert isinstance(launcher, BwrapLauncher), f"sandbox unavailable: {sb.status()}"
    observer = TreeObserver()
    try:
        cap = execute(spec, _Observed(launcher, observer))
    finally:
        observer.stop()
    return Run(cap, list(observer.seen), observer.peak)


class TreeObserver:
    """Samples the process tree under the sandbox's bwrap from a thread of the test, every
    few milliseconds while the call runs. The executor does not record a tree that its
    launcher contains (a pid namespace), so what the call started is observed independently
    here, on the host's /proc."""

    INTERVAL_S = 0.005

    def __init__(self) -> None:
        self.seen: dict[int, psutil.Process] = {}
        self.peak = 0
        self._done = threading.Event()
        self._thread: threading.Thread | None = None

    def watch(self, pid: int) -> None:
        try:
            root = psutil.Process(pid)
        except psutil.NoSuchProcess:
            return
        self.seen[pid] = root
        self._thread = threading.Thread(target=self._loop, args=(root,), daemon=True)
        self._thread.start()

    def _loop(self, root: psutil.Process) -> None:
        while not self._done.is_set() and self.sample(root):
            self._done.wait(self.INTERVAL_S)

    def sample(self, root: psutil.Process) -> bool:
        """Record the live tree once; False when bwrap is gone (nothing left to observe)."""
        try:
            tree = [root, *root.children(recursive=True)]
        except psutil.Error:
            return False
        live = 0
        for proc in tree:
            self.seen.setdefault(proc.pid, proc)
            try:
                live += proc.status() != psutil.STATUS_ZOMBIE
            except psutil.Error:
                continue
        self.peak = max(self.peak, live)
        return True

    def stop(self) -> None:
        self._done.set()
        if self._thread is not None:
            self._thread.join(5)


class _Observed:
    """The sandbox's launcher, telling the observer which pid to watch as soon as it started."""

    def __init__(self, launcher: BwrapLauncher, observer: TreeObserver) -> None:
        self._launcher = launcher
        self._observer = observer

    def start(self, spec: ExecSpec) -> Any:
        started = self._launcher.start(spec)
        self._observer.watch(started.pid)
        return started


def marker() -> str:
    """A unique token to put in a command line, so a process scan can find stragglers."""
    return f"parism-sbx-{uuid.uuid4().hex[:12]}"


def stragglers(token: str) -> list[int]:
    """Live (non-zombie) processes whose command line contains ``token``."""
    found = []
    for proc in psutil.process_iter(["cmdline", "status"]):
        try:
            if proc.info["status"] != psutil.STATUS_ZOMBIE and token in " ".join(proc.info["cmdline"] or ()):
                found.append(proc.pid)
        except psutil.Error:
            continue
    return found


def alive(pids: list[int]) -> list[int]:
    out = []
    for pid in pids:
        try:
            if psutil.Process(pid).status() != psutil.STATUS_ZOMBIE:
                out.append(pid)
        except psutil.NoSuchProcess:
            continue
    return out


@pytest.fixture
def workspace() -> Iterator[Path]:
    """A root-owned project directory under /tmp that other users can enter and list (0755):
    as root the command then runs as ``nobody`` (rule unprivileged_uid)."""
    path = Path(tempfile.mkdtemp(prefix="parism-sbx-ws-", dir="/tmp"))
    path.chmod(0o755)
    (path / "README").write_text("hello\n")
    yield path
    shutil.rmtree(path, ignore_errors=True)


@pytest.fixture
def sandbox_factory() -> Iterator[Any]:
    """Build sandboxes for a test and close their pools afterwards."""
    made: list[Sandbox] = []

    def make(allowed: list[str] | None = None, server_cwd: str = "/tmp", **kw: Any) -> Sandbox:
        sb = Sandbox(settings(**kw), allowed or [], server_cwd)
        made.append(sb)
        return sb

    yield make
    for sb in made:
        sb.close()


def snapshot(root: Path) -> dict[str, tuple[int, int, bytes | None]]:
    """Every path under ``root`` with mode, size and content: "nothing changed on disk"."""
    out: dict[str, tuple[int, int, bytes | None]] = {}
    for dirpath, dirnames, filenames in os.walk(root):
        for name in dirnames + filenames:
            p = os.path.join(dirpath, name)
            st = os.lstat(p)
            data = Path(p).read_bytes() if os.path.isfile(p) and not os.path.islink(p) else None
            out[os.path.relpath(p, root)] = (st.st_mode, st.st_size, data)
    return out


def host_user(uid: int, missing: str | None = None) -> str:
    """The host's name for ``uid`` (passwd), else ``missing`` or the number: the ground truth."""
    try:
        return pwd.getpwuid(uid).pw_name
    except KeyError:
        return str(uid) if missing is None else missing


def host_group(gid: int, missing: str | None = None) -> str:
    try:
        return grp.getgrgid(gid).gr_name
    except KeyError:
        return str(gid) if missing is None else missing
