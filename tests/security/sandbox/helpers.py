"""Shared pieces of the sandbox containment tests.

Every test builds the sandbox from real settings in ``required`` mode and runs commands through
the real executor with a hand-made decision: the guard is bypassed on purpose (sh, python3,
touch… are "allowed"), so what is tested is the kernel confinement alone. Limits are small so a
failure of the sandbox cannot take the machine down.
"""

from __future__ import annotations

import os
import shutil
import tempfile
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import psutil
import pytest

from parism.config.model import SandboxLimits, SandboxSettings
from parism.executor import Capture, ExecSpec, execute
from parism.sandbox import BwrapLauncher, Sandbox

SH = "/bin/sh"
PY3 = "/usr/bin/python3"
ENV = {"PATH": "/usr/local/bin:/usr/bin:/bin", "LC_ALL": "C.UTF-8", "LANG": "C.UTF-8"}
SMALL = {"nproc": 32, "as_mb": 256, "fsize_mb": 8, "cpu_grace_s": 2, "nofile": 256}


def settings(*, mode: str = "required", writable: bool = False, tmp_mb: int = 16,
             bwrap_path: str = "", **limits: int) -> SandboxSettings:
    return SandboxSettings(mode=mode, writable_project=writable, tmp_size_mb=tmp_mb,
                           bwrap_path=bwrap_path, limits=SandboxLimits(**{**SMALL, **limits}))


def decision(*, network: bool = False, namespace: str = "isolated", binds: tuple[str, ...] = ()) -> Any:
    """What the guard would hand over for an allowed command (only the sandbox fields)."""
    return SimpleNamespace(network=network, namespace_class=namespace, binds=list(binds), sandbox={})


@dataclass
class Run:
    cap: Capture
    tracked: list[int] = field(default_factory=list)

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
    tracked: list[int] = []
    cap = execute(spec, launcher, tracked=tracked)
    return Run(cap, tracked)


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
